//! What a performance trace says, per navigation (an "insight set", named by its
//! navigation id as Chrome DevTools MCP names them): LCP and its four parts, CLS and
//! the shifts that made it, INP when there were interactions, long tasks and total
//! blocking time, render-blocking requests, the document request's latency, third
//! parties by main-thread time and bytes, and the DOM's size.
//!
//! Read from Chromium's own trace events (`largestContentfulPaint::Candidate`,
//! `LayoutShift`, `EventTiming`, `RunTask`, `Resource*`), so the figures are the ones
//! the browser reported to the page (`PerformanceObserver`), not a re-measurement.

use crate::ids::Deadline;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Value, json};

use crate::page::Page;

/// A task this long or longer blocks input (the long-task threshold).
const LONG_TASK_MS: f64 = 50.0;
/// A layout-shift session ends after this long without a shift, or at this length.
const SESSION_GAP_MS: f64 = 1000.0;
const SESSION_MAX_MS: f64 = 5000.0;
/// Content added to the layout this long before a shift is taken as its cause (a frame
/// and then some), in µs.
const INSERTION_WINDOW_US: f64 = 100_000.0;
/// The insight set of a trace without a navigation.
pub const NO_NAVIGATION: &str = "NO_NAVIGATION";

#[derive(Debug, Clone, Serialize)]
pub struct TraceReport {
    pub url: String,
    pub started_ms: u64,
    pub stopped_ms: u64,
    pub event_count: usize,
    pub sets: Vec<InsightSet>,
    /// The DOM when the trace stopped.
    pub dom: Option<DomSize>,
}

/// One navigation's figures, times in ms from its start.
#[derive(Debug, Clone, Serialize)]
pub struct InsightSet {
    pub id: String,
    pub url: String,
    pub fcp_ms: Option<f64>,
    pub lcp: Option<Lcp>,
    pub cls: Cls,
    pub inp: Option<Inp>,
    pub long_tasks: Vec<LongTask>,
    pub total_blocking_time_ms: f64,
    pub render_blocking: Vec<RequestSummary>,
    pub document: Option<DocumentRequest>,
    pub third_parties: Vec<ThirdParty>,
    #[serde(skip)]
    requests: Vec<RequestTiming>,
    #[serde(skip)]
    start_us: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Lcp {
    pub time_ms: f64,
    /// `image` or `text`.
    pub kind: String,
    pub size: f64,
    /// The element, as `tag#id.class` (when the page still has it).
    pub element: Option<String>,
    pub image_url: Option<String>,
    pub parts: Option<LcpParts>,
    #[serde(skip)]
    node_id: Option<i64>,
}

/// DevTools' four parts of an LCP: they add up to it.
#[derive(Debug, Clone, Serialize)]
pub struct LcpParts {
    pub time_to_first_byte_ms: f64,
    pub load_delay_ms: f64,
    pub load_duration_ms: f64,
    pub render_delay_ms: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Cls {
    /// The largest session window's sum, as the page's own CLS is counted.
    pub score: f64,
    pub shifts: Vec<Shift>,
    /// Shifts Chrome leaves out of CLS because they came just after input (a click, a
    /// key, a viewport resize): an agent told "CLS 0" should know something still moved.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after_input: Vec<Shift>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Shift {
    pub time_ms: f64,
    pub score: f64,
    /// The elements that moved (as `tag#id.class`).
    pub elements: Vec<String>,
    /// What made them move: elements put into the page just before the shift
    /// (`div#banner`, with the script line that inserted it, when the trace has it).
    pub causes: Vec<String>,
    #[serde(skip)]
    node_ids: Vec<i64>,
    #[serde(skip)]
    had_recent_input: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Inp {
    pub duration_ms: f64,
    pub interaction: String,
    pub interactions: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct LongTask {
    pub start_ms: f64,
    pub duration_ms: f64,
    /// The script it ran, when it ran one.
    pub script: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RequestSummary {
    pub url: String,
    pub start_ms: f64,
    pub duration_ms: f64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct DocumentRequest {
    pub url: String,
    pub status: u64,
    pub time_to_first_byte_ms: f64,
    /// From the request being sent to the response's headers: the server's part.
    pub server_response_ms: f64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ThirdParty {
    pub domain: String,
    pub requests: usize,
    pub bytes: u64,
    pub main_thread_ms: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct DomSize {
    pub elements: u64,
    pub depth: u64,
    pub most_children: u64,
}

/// One request, its times in µs on the trace's clock.
#[derive(Debug, Clone, Default)]
struct RequestTiming {
    url: String,
    frame: String,
    sent_us: f64,
    headers_us: Option<f64>,
    finished_us: Option<f64>,
    status: u64,
    bytes: u64,
    render_blocking: bool,
    /// When the request was really sent (after queueing), µs.
    send_start_us: Option<f64>,
}

/// A navigation of the main frame.
struct Navigation {
    id: String,
    url: String,
    start_us: f64,
}

/// Reads a trace's events into its insight sets.
pub fn analyze(events: &[Value], started_ms: u64, stopped_ms: u64, url: &str) -> TraceReport {
    let trace = Trace::read(events);
    let navigations = trace.navigations();
    let mut sets = Vec::new();
    if navigations.is_empty() {
        let start_us = events
            .iter()
            .filter_map(|e| e["ts"].as_f64())
            .filter(|ts| *ts > 0.0)
            .fold(f64::INFINITY, f64::min);
        let start_us = if start_us.is_finite() { start_us } else { 0.0 };
        let nav = Navigation {
            id: NO_NAVIGATION.into(),
            url: url.to_owned(),
            start_us,
        };
        sets.push(trace.insight_set(&nav, f64::INFINITY));
    }
    for (i, nav) in navigations.iter().enumerate() {
        let end = navigations.get(i + 1).map_or(f64::INFINITY, |n| n.start_us);
        sets.push(trace.insight_set(nav, end));
    }
    TraceReport {
        url: url.to_owned(),
        started_ms,
        stopped_ms,
        event_count: events.len(),
        sets,
        dom: None,
    }
}

/// The events a trace's insights are read from.
struct Trace<'a> {
    events: &'a [Value],
    main_frame: Option<String>,
    /// The renderer main thread of the main frame: (pid, tid).
    main_thread: Option<(i64, i64)>,
    requests: Vec<RequestTiming>,
}

impl<'a> Trace<'a> {
    fn read(events: &'a [Value]) -> Trace<'a> {
        let mut main_frame = None;
        let mut main_pid = None;
        for event in events {
            if event["name"] == "TracingStartedInBrowser" {
                for frame in event["args"]["data"]["frames"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    if frame.get("parent").is_none_or(Value::is_null) {
                        main_frame = frame["frame"].as_str().map(str::to_owned);
                        main_pid = frame["processId"].as_i64();
                    }
                }
            }
        }
        // A trace recorded through the extension link has no browser-side start event:
        // the main frame is the one whose page navigation the trace holds.
        if main_frame.is_none() {
            let first_page = events.iter().find(|e| {
                let data = &e["args"]["data"];
                e["name"] == "navigationStart"
                    && data["isOutermostMainFrame"] == true
                    && data["documentLoaderURL"]
                        .as_str()
                        .is_some_and(|u| !u.is_empty() && u != "about:blank")
            });
            main_frame = first_page.and_then(|e| e["args"]["frame"].as_str().map(str::to_owned));
        }
        // A main frame's navigation may move it to another renderer: the process of its
        // latest navigation wins.
        for event in events {
            if event["name"] == "navigationStart"
                && main_frame.as_deref() == event["args"]["frame"].as_str()
            {
                main_pid = event["pid"].as_i64().or(main_pid);
            }
        }
        let main_thread = main_pid.and_then(|pid| {
            events
                .iter()
                .find(|e| {
                    e["ph"] == "M"
                        && e["name"] == "thread_name"
                        && e["pid"].as_i64() == Some(pid)
                        && e["args"]["name"] == "CrRendererMain"
                })
                .and_then(|e| e["tid"].as_i64())
                .map(|tid| (pid, tid))
        });
        Trace {
            events,
            main_frame,
            main_thread,
            requests: requests(events),
        }
    }

    fn is_main_frame(&self, event: &Value) -> bool {
        let frame = event["args"]["frame"]
            .as_str()
            .or(event["args"]["data"]["frame"].as_str());
        match (&self.main_frame, frame) {
            (Some(main), Some(frame)) => main == frame,
            _ => {
                event["args"]["data"]["isOutermostMainFrame"] == true
                    || event["args"]["data"]["isMainFrame"] == true
            }
        }
    }

    fn on_main_thread(&self, event: &Value) -> bool {
        self.main_thread.is_some_and(|(pid, tid)| {
            event["pid"].as_i64() == Some(pid) && event["tid"].as_i64() == Some(tid)
        })
    }

    fn navigations(&self) -> Vec<Navigation> {
        let mut navigations: Vec<Navigation> = self
            .events
            .iter()
            .filter(|e| e["name"] == "navigationStart" && self.is_main_frame(e))
            .filter(|e| e["args"]["data"]["isLoadingMainFrame"] != false)
            .filter_map(|e| {
                let data = &e["args"]["data"];
                let url = data["documentLoaderURL"].as_str().unwrap_or_default();
                // The initial about:blank of a new tab is no page load.
                if url.is_empty() || url == "about:blank" {
                    return None;
                }
                Some(Navigation {
                    id: data["navigationId"].as_str().unwrap_or_default().to_owned(),
                    url: url.to_owned(),
                    start_us: e["ts"].as_f64()?,
                })
            })
            .collect();
        navigations.sort_by(|a, b| a.start_us.total_cmp(&b.start_us));
        navigations
    }

    /// The events of one navigation: from its start to the next one's.
    fn within<'s>(&'s self, nav: &'s Navigation, end: f64) -> impl Iterator<Item = &'a Value> + 's {
        self.events.iter().filter(move |e| {
            e["ts"]
                .as_f64()
                .is_some_and(|ts| ts >= nav.start_us && ts < end)
        })
    }

    fn insight_set(&self, nav: &Navigation, end: f64) -> InsightSet {
        let ms = |ts: f64| ((ts - nav.start_us) / 1000.0 * 10.0).round() / 10.0;
        let belongs = |e: &Value| {
            let id = e["args"]["data"]["navigationId"].as_str();
            id.is_none() || id == Some(nav.id.as_str()) || nav.id == NO_NAVIGATION
        };
        let fcp_us = self
            .within(nav, end)
            .filter(|e| e["name"] == "firstContentfulPaint" && self.is_main_frame(e) && belongs(e))
            .filter_map(|e| e["ts"].as_f64())
            .next();
        let requests: Vec<RequestTiming> = self
            .requests
            .iter()
            .filter(|r| r.sent_us >= nav.start_us && r.sent_us < end)
            .cloned()
            .collect();
        let document = requests
            .iter()
            .find(|r| r.url == nav.url && self.main_frame.as_deref().is_none_or(|m| m == r.frame))
            .or_else(|| requests.first());
        let document = document.and_then(|r| {
            let headers = r.headers_us?;
            Some(DocumentRequest {
                url: r.url.clone(),
                status: r.status,
                time_to_first_byte_ms: ms(headers),
                server_response_ms: ((headers - r.send_start_us.unwrap_or(r.sent_us)) / 1000.0)
                    .max(0.0)
                    .round(),
                bytes: r.bytes,
            })
        });
        let lcp = self.lcp(nav, end, &belongs, &requests, document.as_ref());
        let long_tasks = self.long_tasks(nav, end);
        let total_blocking_time_ms = long_tasks
            .iter()
            .filter(|t| fcp_us.is_none_or(|fcp| t.start_ms >= ms(fcp)))
            .map(|t| t.duration_ms - LONG_TASK_MS)
            .sum::<f64>()
            .round()
            .max(0.0);
        let render_blocking = requests
            .iter()
            .filter(|r| r.render_blocking && r.url != nav.url)
            .map(|r| RequestSummary {
                url: r.url.clone(),
                start_ms: ms(r.sent_us),
                duration_ms: r
                    .finished_us
                    .map_or(0.0, |f| ((f - r.sent_us) / 1000.0).round()),
                bytes: r.bytes,
            })
            .collect();
        InsightSet {
            id: nav.id.clone(),
            url: nav.url.clone(),
            fcp_ms: fcp_us.map(ms),
            lcp,
            cls: self.cls(nav, end, &belongs),
            inp: self.inp(nav, end),
            long_tasks,
            total_blocking_time_ms,
            render_blocking,
            document,
            third_parties: self.third_parties(nav, end, &requests),
            requests,
            start_us: nav.start_us,
        }
    }

    fn lcp(
        &self,
        nav: &Navigation,
        end: f64,
        belongs: &dyn Fn(&Value) -> bool,
        requests: &[RequestTiming],
        document: Option<&DocumentRequest>,
    ) -> Option<Lcp> {
        // The last candidate is the LCP; a later candidate replaces an earlier one.
        let candidate = self
            .within(nav, end)
            .filter(|e| {
                e["name"] == "largestContentfulPaint::Candidate"
                    && self.is_main_frame(e)
                    && belongs(e)
            })
            .max_by(|a, b| {
                let index = |e: &Value| e["args"]["data"]["candidateIndex"].as_i64().unwrap_or(0);
                index(a).cmp(&index(b))
            })?;
        let data = &candidate["args"]["data"];
        let time_us = candidate["ts"].as_f64()?;
        let node_id = data["nodeId"].as_i64().or(data["DOMNodeId"].as_i64());
        // The image behind an image LCP: named on the candidate, or on the image paint
        // of the same node.
        let image_url = data["imageUrl"]
            .as_str()
            .or_else(|| {
                self.within(nav, end)
                    .filter(|e| e["name"] == "LargestImagePaint::Candidate")
                    .filter(|e| {
                        node_id.is_some() && e["args"]["data"]["DOMNodeId"].as_i64() == node_id
                    })
                    .filter_map(|e| e["args"]["data"]["imageUrl"].as_str())
                    .last()
            })
            .filter(|u| !u.is_empty())
            .map(str::to_owned);
        let kind = data["type"].as_str().unwrap_or("unknown").to_owned();
        let mut lcp = Lcp {
            time_ms: ((time_us - nav.start_us) / 100.0).round() / 10.0,
            kind,
            size: data["size"].as_f64().unwrap_or(0.0),
            element: None,
            image_url,
            parts: None,
            node_id,
        };
        lcp.parts = lcp_parts(&lcp, nav.start_us, requests, document);
        Some(lcp)
    }

    fn cls(&self, nav: &Navigation, end: f64, belongs: &dyn Fn(&Value) -> bool) -> Cls {
        let (mut after_input, mut shifts): (Vec<Shift>, Vec<Shift>) = self
            .within(nav, end)
            .filter(|e| e["name"] == "LayoutShift" && self.is_main_frame(e) && belongs(e))
            .filter_map(|e| {
                let data = &e["args"]["data"];
                let score = data["weighted_score_delta"]
                    .as_f64()
                    .or(data["score"].as_f64())?;
                let node_ids = data["impacted_nodes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|n| n["node_id"].as_i64())
                    .collect();
                let ts = e["ts"].as_f64()?;
                Some(Shift {
                    time_ms: ((ts - nav.start_us) / 100.0).round() / 10.0,
                    score,
                    elements: Vec::new(),
                    causes: self.inserted_before(ts),
                    node_ids,
                    had_recent_input: data["had_recent_input"] == true,
                })
            })
            .partition(|shift| shift.had_recent_input);
        shifts.sort_by(|a, b| a.time_ms.total_cmp(&b.time_ms));
        after_input.sort_by(|a, b| a.time_ms.total_cmp(&b.time_ms));
        Cls {
            score: largest_session(&shifts),
            shifts,
            after_input,
        }
    }

    /// Elements of the main frame added to the layout in the frame before a shift at
    /// `ts` (DevTools' "injected content"), and where a script inserted them.
    fn inserted_before(&self, ts: f64) -> Vec<String> {
        let mut causes: Vec<String> = Vec::new();
        for event in self.events.iter().filter(|e| {
            e["name"] == "LayoutInvalidationTracking"
                && e["args"]["data"]["reason"] == "Added to layout"
                && e["ts"]
                    .as_f64()
                    .is_some_and(|t| t <= ts && ts - t <= INSERTION_WINDOW_US)
                && self.is_main_frame(e)
        }) {
            let data = &event["args"]["data"];
            let Some(name) = data["nodeName"].as_str().and_then(element_name) else {
                continue;
            };
            // The script that put it into the tree, if the trace saw it do so.
            let inserted_by = self
                .events
                .iter()
                .filter(|e| {
                    e["name"] == "StyleRecalcInvalidationTracking"
                        && e["args"]["data"]["nodeId"] == data["nodeId"]
                })
                .find_map(|e| {
                    let frame = &e["args"]["data"]["stackTrace"][0];
                    Some(format!(
                        "{}:{}",
                        frame["url"].as_str()?,
                        frame["lineNumber"].as_i64()? + 1
                    ))
                });
            let cause = match inserted_by {
                Some(at) => format!("{name} (inserted by {at})"),
                None => format!("{name} (inserted)"),
            };
            if !causes.contains(&cause) {
                causes.push(cause);
            }
        }
        causes
    }

    fn inp(&self, nav: &Navigation, end: f64) -> Option<Inp> {
        // Each interaction: its longest event, and the kinds of event it was made of.
        let mut interactions: BTreeMap<i64, (f64, Vec<String>)> = BTreeMap::new();
        for event in self.within(nav, end).filter(|e| e["name"] == "EventTiming") {
            let data = &event["args"]["data"];
            let (Some(id), Some(duration)) =
                (data["interactionId"].as_i64(), data["duration"].as_f64())
            else {
                continue;
            };
            if id <= 0 {
                continue;
            }
            let entry = interactions.entry(id).or_default();
            entry.0 = entry.0.max(duration);
            if let Some(kind) = data["type"].as_str()
                && !entry.1.iter().any(|k| k == kind)
            {
                entry.1.push(kind.to_owned());
            }
        }
        let count = interactions.len();
        // With fewer than 50 interactions, INP is the slowest one.
        let (duration_ms, kinds) = interactions
            .into_values()
            .max_by(|a, b| a.0.total_cmp(&b.0))?;
        Some(Inp {
            duration_ms: round1(duration_ms),
            interaction: kinds.join(", "),
            interactions: count,
        })
    }

    fn long_tasks(&self, nav: &Navigation, end: f64) -> Vec<LongTask> {
        let scripts: Vec<(f64, f64, &str)> = self
            .within(nav, end)
            .filter(|e| self.on_main_thread(e) && is_script(e))
            .filter_map(|e| Some((e["ts"].as_f64()?, e["dur"].as_f64()?, script_url(e)?)))
            .collect();
        self.within(nav, end)
            .filter(|e| e["name"] == "RunTask" && e["ph"] == "X" && self.on_main_thread(e))
            .filter_map(|e| {
                let (ts, dur) = (e["ts"].as_f64()?, e["dur"].as_f64()?);
                (dur / 1000.0 >= LONG_TASK_MS).then(|| LongTask {
                    start_ms: ((ts - nav.start_us) / 100.0).round() / 10.0,
                    duration_ms: (dur / 100.0).round() / 10.0,
                    script: scripts
                        .iter()
                        .find(|(s, d, _)| *s >= ts && s + d <= ts + dur)
                        .map(|(_, _, url)| (*url).to_owned()),
                })
            })
            .collect()
    }

    fn third_parties(
        &self,
        nav: &Navigation,
        end: f64,
        requests: &[RequestTiming],
    ) -> Vec<ThirdParty> {
        let first_party = domain_of(&nav.url);
        let mut by_domain: BTreeMap<String, ThirdParty> = BTreeMap::new();
        for request in requests {
            let Some(domain) = domain_of(&request.url).filter(|d| Some(d) != first_party.as_ref())
            else {
                continue;
            };
            let entry = by_domain
                .entry(domain.clone())
                .or_insert_with(|| ThirdParty {
                    domain,
                    requests: 0,
                    bytes: 0,
                    main_thread_ms: 0.0,
                });
            entry.requests += 1;
            entry.bytes += request.bytes;
        }
        // Script time on the main thread, outermost script events only (nested ones are
        // inside their caller's time).
        let mut covered_until = 0.0;
        let mut scripts: Vec<&Value> = self
            .within(nav, end)
            .filter(|e| self.on_main_thread(e) && is_script(e))
            .collect();
        scripts.sort_by(|a, b| {
            a["ts"]
                .as_f64()
                .unwrap_or(0.0)
                .total_cmp(&b["ts"].as_f64().unwrap_or(0.0))
        });
        for event in scripts {
            let (Some(ts), Some(dur)) = (event["ts"].as_f64(), event["dur"].as_f64()) else {
                continue;
            };
            if ts < covered_until {
                continue;
            }
            covered_until = ts + dur;
            let Some(domain) = script_url(event)
                .and_then(domain_of)
                .filter(|d| Some(d) != first_party.as_ref())
            else {
                continue;
            };
            let entry = by_domain
                .entry(domain.clone())
                .or_insert_with(|| ThirdParty {
                    domain,
                    requests: 0,
                    bytes: 0,
                    main_thread_ms: 0.0,
                });
            entry.main_thread_ms += dur / 1000.0;
        }
        let mut list: Vec<ThirdParty> = by_domain
            .into_values()
            .map(|mut p| {
                p.main_thread_ms = (p.main_thread_ms * 10.0).round() / 10.0;
                p
            })
            .collect();
        list.sort_by(|a, b| {
            b.main_thread_ms
                .total_cmp(&a.main_thread_ms)
                .then(b.bytes.cmp(&a.bytes))
        });
        list
    }
}

/// `DIV id='banner' class='a b'` (a trace's node name) → `div#banner.a.b`; None for
/// text, the document and the page's root elements, which never cause a shift.
fn element_name(node_name: &str) -> Option<String> {
    let (tag, rest) = node_name.split_once(' ').unwrap_or((node_name, ""));
    if tag.starts_with('#') || ["HTML", "BODY", "HEAD"].contains(&tag) {
        return None;
    }
    let mut name = tag.to_ascii_lowercase();
    let attribute = |key: &str| {
        let start = rest.find(&format!("{key}='"))? + key.len() + 2;
        let end = rest[start..].find('\'')? + start;
        Some(&rest[start..end])
    };
    if let Some(id) = attribute("id") {
        name.push('#');
        name.push_str(id);
    }
    if let Some(classes) = attribute("class") {
        for class in classes.split_whitespace().take(3) {
            name.push('.');
            name.push_str(class);
        }
    }
    Some(name)
}

fn is_script(event: &Value) -> bool {
    matches!(
        event["name"].as_str(),
        Some("FunctionCall" | "EvaluateScript" | "v8.compile" | "v8.compileModule" | "TimerFire")
    ) && event["ph"] == "X"
}

fn script_url(event: &Value) -> Option<&str> {
    let data = &event["args"]["data"];
    data["url"]
        .as_str()
        .or(data["fileName"].as_str())
        .or(data["stackTrace"][0]["url"].as_str())
        .filter(|u| !u.is_empty())
}

/// Every request of the trace, from its `Resource*` events.
fn requests(events: &[Value]) -> Vec<RequestTiming> {
    let mut by_id: HashMap<String, RequestTiming> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for event in events {
        let data = &event["args"]["data"];
        let Some(id) = data["requestId"].as_str() else {
            continue;
        };
        let ts = event["ts"].as_f64().unwrap_or(0.0);
        match event["name"].as_str() {
            Some("ResourceSendRequest") => {
                if !by_id.contains_key(id) {
                    order.push(id.to_owned());
                }
                let request = by_id.entry(id.to_owned()).or_default();
                request.url = data["url"].as_str().unwrap_or_default().to_owned();
                request.frame = data["frame"].as_str().unwrap_or_default().to_owned();
                request.sent_us = ts;
                request.render_blocking = matches!(
                    data["renderBlocking"].as_str(),
                    Some("blocking" | "in_body_parser_blocking")
                );
            }
            Some("ResourceReceiveResponse") => {
                let Some(request) = by_id.get_mut(id) else {
                    continue;
                };
                request.status = data["statusCode"].as_u64().unwrap_or(0);
                let timing = &data["timing"];
                if let Some(base) = timing["requestTime"].as_f64() {
                    let at = |key: &str| {
                        timing[key]
                            .as_f64()
                            .filter(|v| *v >= 0.0)
                            .map(|v| base * 1e6 + v * 1000.0)
                    };
                    request.headers_us = at("receiveHeadersStart").or(at("receiveHeadersEnd"));
                    request.send_start_us = at("sendStart");
                } else {
                    request.headers_us = Some(ts);
                }
                request.bytes = request
                    .bytes
                    .max(data["encodedDataLength"].as_u64().unwrap_or(0));
            }
            Some("ResourceFinish") => {
                let Some(request) = by_id.get_mut(id) else {
                    continue;
                };
                request.finished_us = data["finishTime"]
                    .as_f64()
                    .filter(|t| *t > 0.0)
                    .map(|t| t * 1e6)
                    .or(Some(ts));
                request.bytes = request
                    .bytes
                    .max(data["encodedDataLength"].as_u64().unwrap_or(0));
            }
            _ => {}
        }
    }
    order
        .into_iter()
        .filter_map(|id| by_id.remove(&id))
        .collect()
}

/// The four parts of an LCP, DevTools' way: the document's first byte; the wait from
/// then until the image's request; the image's download; and the wait from its arrival
/// until it was painted. They add up to the LCP. A text LCP has only the first and last.
fn lcp_parts(
    lcp: &Lcp,
    nav_start_us: f64,
    requests: &[RequestTiming],
    document: Option<&DocumentRequest>,
) -> Option<LcpParts> {
    let ttfb = document?.time_to_first_byte_ms;
    let since_start = |us: f64| (us - nav_start_us) / 1000.0;
    let image = lcp
        .image_url
        .as_ref()
        .and_then(|url| requests.iter().find(|r| &r.url == url));
    let Some(image) = image else {
        return Some(LcpParts {
            time_to_first_byte_ms: ttfb,
            load_delay_ms: 0.0,
            load_duration_ms: 0.0,
            render_delay_ms: round1(lcp.time_ms - ttfb),
        });
    };
    let requested = since_start(image.sent_us).max(ttfb);
    let arrived = image
        .finished_us
        .map_or(requested, since_start)
        .clamp(requested, lcp.time_ms.max(requested));
    Some(LcpParts {
        time_to_first_byte_ms: ttfb,
        load_delay_ms: round1(requested - ttfb),
        load_duration_ms: round1(arrived - requested),
        render_delay_ms: round1(lcp.time_ms - arrived),
    })
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// CLS: the largest sum of a session of shifts (each within 1 s of the last, the whole
/// within 5 s).
fn largest_session(shifts: &[Shift]) -> f64 {
    let (mut best, mut sum) = (0.0_f64, 0.0);
    let (mut first, mut last) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for shift in shifts {
        if shift.time_ms - last > SESSION_GAP_MS || shift.time_ms - first > SESSION_MAX_MS {
            sum = 0.0;
            first = shift.time_ms;
        }
        sum += shift.score;
        last = shift.time_ms;
        best = best.max(sum);
    }
    (best * 10_000.0).round() / 10_000.0
}

/// The registrable part of a URL's host, roughly: its last two labels (an IP address or
/// `localhost` whole). Good enough to tell a page's own requests from others'.
fn domain_of(url: &str) -> Option<String> {
    let host = crate::urls::host_of(url)?;
    if host.parse::<std::net::IpAddr>().is_ok() || !host.contains('.') {
        return Some(host);
    }
    let labels: Vec<&str> = host.split('.').collect();
    Some(labels[labels.len().saturating_sub(2)..].join("."))
}

/// The DOM's size now.
pub(super) async fn dom_size(page: &Page, deadline: Deadline) -> crate::error::Result<DomSize> {
    let size = page
        .run(&page.top(), "dom_size", json!({}), deadline)
        .await?;
    Ok(DomSize {
        elements: size["elements"].as_u64().unwrap_or(0),
        depth: size["depth"].as_u64().unwrap_or(0),
        most_children: size["most_children"].as_u64().unwrap_or(0),
    })
}

/// Names the elements the report points at (`img#hero.banner`), while the page still
/// has them; then finds an image LCP's request by the image's own `src`.
pub(super) async fn name_nodes(page: &Page, report: &mut TraceReport, deadline: Deadline) {
    let mut names: HashMap<i64, Option<String>> = HashMap::new();
    for set in &mut report.sets {
        if let Some(lcp) = &mut set.lcp
            && let Some(node) = lcp.node_id
        {
            let described = describe(page, node, &mut names, deadline).await;
            if let Some((name, src)) = described {
                lcp.element = Some(name);
                if lcp.image_url.is_none() && lcp.kind == "image" {
                    lcp.image_url = src;
                }
            }
            let document = set.document.clone();
            lcp.parts = lcp_parts(lcp, set.start_us, &set.requests, document.as_ref());
        }
        for shift in set.cls.shifts.iter_mut().chain(&mut set.cls.after_input) {
            for node in shift.node_ids.clone() {
                if let Some((name, _)) = describe(page, node, &mut names, deadline).await {
                    shift.elements.push(name);
                }
            }
        }
    }
}

/// `tag#id.class` of a backend node, and its `src` (resolved) when it has one.
async fn describe(
    page: &Page,
    node: i64,
    seen: &mut HashMap<i64, Option<String>>,
    deadline: Deadline,
) -> Option<(String, Option<String>)> {
    let described = page
        .cdp(
            "DOM.describeNode",
            json!({ "backendNodeId": node }),
            deadline,
        )
        .await
        .ok()?;
    let node_json = &described["node"];
    let mut name = node_json["localName"]
        .as_str()
        .or(node_json["nodeName"].as_str())
        .unwrap_or("node")
        .to_ascii_lowercase();
    if name == "#text" {
        name = "text".into();
    }
    let attributes: Vec<&str> = node_json["attributes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let attribute = |key: &str| {
        attributes
            .chunks(2)
            .find(|pair| pair.first() == Some(&key))
            .and_then(|pair| pair.get(1).copied())
    };
    if let Some(id) = attribute("id").filter(|id| !id.is_empty()) {
        let _ = write!(name, "#{id}");
    }
    if let Some(classes) = attribute("class") {
        for class in classes.split_whitespace().take(3) {
            let _ = write!(name, ".{class}");
        }
    }
    seen.insert(node, Some(name.clone()));
    let src = attribute("src").and_then(|src| crate::urls::resolve(&page.tab.url, src));
    Some((name, src))
}

/// The insights a report can be asked for, by DevTools' names.
pub const INSIGHTS: &[&str] = &[
    "LCPBreakdown",
    "CLSCulprits",
    "INPBreakdown",
    "LongTasks",
    "RenderBlocking",
    "DocumentLatency",
    "ThirdParties",
    "DOMSize",
];

impl TraceReport {
    /// An insight set by id; the first when none is named.
    pub fn set(&self, id: Option<&str>) -> Option<&InsightSet> {
        match id.filter(|id| !id.is_empty()) {
            Some(id) => self.sets.iter().find(|s| s.id == id),
            None => self.sets.first(),
        }
    }

    /// The headline figures of every insight set, in a few lines.
    pub fn summary(&self) -> String {
        let mut text = String::new();
        for set in &self.sets {
            let _ = writeln!(text, "Insight set {} ({}):", set.id, set.url);
            let _ = writeln!(text, "  {}", set.metrics_line());
        }
        if let Some(dom) = &self.dom {
            let _ = writeln!(
                text,
                "DOM: {} elements, {} deep, at most {} children",
                dom.elements, dom.depth, dom.most_children
            );
        }
        let _ = write!(
            text,
            "Insights: {} (performance_analyze_insight with insightName and insightSetId)",
            INSIGHTS.join(", ")
        );
        text
    }

    /// One insight of one set, as a short report an agent can act on; None when the
    /// name is not an insight.
    pub fn insight(&self, name: &str, set: &InsightSet) -> Option<String> {
        let mut text = String::new();
        let w = &mut text;
        match name.to_ascii_lowercase().as_str() {
            "lcpbreakdown" | "lcpphases" | "lcp" => set.lcp_report(w),
            "clsculprits" | "cls" => set.cls_report(w),
            "inpbreakdown" | "inp" => match &set.inp {
                Some(inp) => {
                    let _ = writeln!(
                        w,
                        "INP {} ms ({}): the slowest of {} interaction(s) was {}.",
                        inp.duration_ms,
                        rate(inp.duration_ms, 200.0, 500.0),
                        inp.interactions,
                        inp.interaction
                    );
                    if inp.duration_ms > 200.0 {
                        let _ = writeln!(
                            w,
                            "The page paints its answer only once the input's handlers finish: keep them short, or yield before heavy work."
                        );
                    }
                }
                None => {
                    let _ = writeln!(w, "No interaction was recorded, so there is no INP.");
                }
            },
            "longtasks" | "tbt" | "totalblockingtime" => set.long_task_report(w),
            "renderblocking" => set.render_blocking_report(w),
            "documentlatency" => set.document_report(w),
            "thirdparties" => set.third_party_report(w),
            "domsize" => match &self.dom {
                Some(dom) => {
                    let _ = writeln!(
                        w,
                        "DOM: {} elements, {} levels deep, at most {} children under one element.",
                        dom.elements, dom.depth, dom.most_children
                    );
                    if dom.elements > 1400 {
                        let _ = writeln!(
                            w,
                            "That is large (over 1,400 elements): style and layout work grows with it; render less, or later."
                        );
                    }
                }
                None => {
                    let _ = writeln!(w, "The DOM could not be read when the trace stopped.");
                }
            },
            _ => return None,
        }
        Some(text)
    }
}

/// good / needs improvement / poor, by a metric's two thresholds.
fn rate(value: f64, good: f64, poor: f64) -> &'static str {
    if value <= good {
        "good"
    } else if value <= poor {
        "needs improvement"
    } else {
        "poor"
    }
}

impl InsightSet {
    fn metrics_line(&self) -> String {
        let mut parts = Vec::new();
        if let Some(lcp) = &self.lcp {
            parts.push(format!("LCP {} ms", lcp.time_ms));
        }
        parts.push(format!("CLS {}", self.cls.score));
        if let Some(inp) = &self.inp {
            parts.push(format!("INP {} ms", inp.duration_ms));
        }
        if let Some(fcp) = self.fcp_ms {
            parts.push(format!("FCP {fcp} ms"));
        }
        if let Some(document) = &self.document {
            parts.push(format!("TTFB {} ms", document.time_to_first_byte_ms));
        }
        parts.push(format!("TBT {} ms", self.total_blocking_time_ms));
        parts.join(", ")
    }

    fn lcp_report(&self, w: &mut String) {
        let Some(lcp) = &self.lcp else {
            let _ = writeln!(
                w,
                "No LCP was recorded (the page painted no content, or the trace began after it)."
            );
            return;
        };
        let element = lcp
            .element
            .as_deref()
            .unwrap_or("an element no longer in the page");
        let _ = writeln!(
            w,
            "LCP {} ms ({}), {} {}{}.",
            lcp.time_ms,
            rate(lcp.time_ms, 2500.0, 4000.0),
            lcp.kind,
            element,
            lcp.image_url
                .as_deref()
                .map(|u| format!(" from {u}"))
                .unwrap_or_default()
        );
        let Some(parts) = &lcp.parts else {
            return;
        };
        let rows = [
            (
                "time to first byte",
                parts.time_to_first_byte_ms,
                "the server is slow to answer the document: cache it, or answer sooner",
            ),
            (
                "resource load delay",
                parts.load_delay_ms,
                "the image is requested late: put it in the HTML (not set by script), preload it, or give it fetchpriority=high",
            ),
            (
                "resource load duration",
                parts.load_duration_ms,
                "the image takes long to download: make it smaller, or serve it from closer",
            ),
            (
                "element render delay",
                parts.render_delay_ms,
                "the element waits to be painted: render-blocking CSS or scripts, or long tasks, hold it back",
            ),
        ];
        let worst = rows
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|r| r.0)
            .unwrap_or_default();
        for (name, value, _) in &rows {
            let mark = if *name == worst {
                "  <- the largest part"
            } else {
                ""
            };
            let _ = writeln!(w, "  {name:<24}{value:>8} ms{mark}");
        }
        if let Some((_, _, advice)) = rows.iter().find(|r| r.0 == worst) {
            let _ = writeln!(w, "Biggest gain: {advice}.");
        }
    }

    fn cls_report(&self, w: &mut String) {
        let _ = writeln!(
            w,
            "CLS {} ({}), from {} layout shift(s) without recent input.",
            self.cls.score,
            rate(self.cls.score, 0.1, 0.25),
            self.cls.shifts.len()
        );
        let mut shifts: Vec<&Shift> = self.cls.shifts.iter().collect();
        shifts.sort_by(|a, b| b.score.total_cmp(&a.score));
        for shift in shifts.iter().take(5) {
            let moved = if shift.elements.is_empty() {
                "elements no longer in the page".to_owned()
            } else {
                shift.elements.join(", ")
            };
            let _ = writeln!(
                w,
                "  at {} ms: {:.4}, moved {}",
                shift.time_ms, shift.score, moved
            );
            for cause in &shift.causes {
                let _ = writeln!(w, "    caused by {cause}");
            }
        }
        if let Some(moved) = self.cls.after_input.first() {
            let total: f64 = self.cls.after_input.iter().map(|s| s.score).sum();
            let _ = writeln!(
                w,
                "Not counted: {} shift(s) ({:.4} in all, the first at {} ms{}) came within 500 ms of input or a viewport resize, which Chrome leaves out of CLS.",
                self.cls.after_input.len(),
                total,
                moved.time_ms,
                moved
                    .causes
                    .first()
                    .map(|cause| format!(", caused by {cause}"))
                    .unwrap_or_default()
            );
        }
        if !shifts.is_empty() {
            let _ = writeln!(
                w,
                "Reserve space for content that arrives late (width/height on images, min-height for banners), and insert it below what the user sees."
            );
        }
    }

    fn long_task_report(&self, w: &mut String) {
        let _ = writeln!(
            w,
            "Total blocking time {} ms ({}) from {} long task(s) over {} ms on the main thread.",
            self.total_blocking_time_ms,
            rate(self.total_blocking_time_ms, 200.0, 600.0),
            self.long_tasks.len(),
            LONG_TASK_MS
        );
        let mut tasks: Vec<&LongTask> = self.long_tasks.iter().collect();
        tasks.sort_by(|a, b| b.duration_ms.total_cmp(&a.duration_ms));
        for task in tasks.iter().take(5) {
            let _ = writeln!(
                w,
                "  at {} ms: {} ms{}",
                task.start_ms,
                task.duration_ms,
                task.script
                    .as_deref()
                    .map(|s| format!(", running {s}"))
                    .unwrap_or_default()
            );
        }
        if !tasks.is_empty() {
            let _ = writeln!(
                w,
                "Split long work into pieces that yield (scheduler.yield, setTimeout), or move it off the main thread."
            );
        }
    }

    fn render_blocking_report(&self, w: &mut String) {
        if self.render_blocking.is_empty() {
            let _ = writeln!(w, "No request blocked the first render.");
            return;
        }
        let _ = writeln!(
            w,
            "{} request(s) blocked the first render:",
            self.render_blocking.len()
        );
        for request in &self.render_blocking {
            let _ = writeln!(
                w,
                "  {} ({} ms from {} ms, {} bytes)",
                request.url, request.duration_ms, request.start_ms, request.bytes
            );
        }
        let _ = writeln!(
            w,
            "Load scripts with defer or async, inline the critical CSS, and load the rest later."
        );
    }

    fn document_report(&self, w: &mut String) {
        let Some(document) = &self.document else {
            let _ = writeln!(
                w,
                "The document's request was not in the trace (start the trace with reload)."
            );
            return;
        };
        let _ = writeln!(
            w,
            "Document {} answered {}: first byte at {} ms ({}), the server took {} ms, {} bytes.",
            document.url,
            document.status,
            document.time_to_first_byte_ms,
            rate(document.time_to_first_byte_ms, 800.0, 1800.0),
            document.server_response_ms,
            document.bytes
        );
        if document.server_response_ms > 600.0 {
            let _ = writeln!(
                w,
                "The server's response is slow (over 600 ms): cache the page, or find what the server waits on."
            );
        }
    }

    fn third_party_report(&self, w: &mut String) {
        if self.third_parties.is_empty() {
            let _ = writeln!(
                w,
                "No third party: every request went to the page's own site."
            );
            return;
        }
        let _ = writeln!(w, "Third parties, by main-thread time:");
        for party in &self.third_parties {
            let _ = writeln!(
                w,
                "  {}: {} ms of main-thread time, {} bytes in {} request(s)",
                party.domain, party.main_thread_ms, party.bytes, party.requests
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_read_as_selectors() {
        assert_eq!(
            element_name("DIV id='banner'").as_deref(),
            Some("div#banner")
        );
        assert_eq!(
            element_name("IMG id='hero' class='big wide'").as_deref(),
            Some("img#hero.big.wide")
        );
        assert_eq!(element_name("P").as_deref(), Some("p"));
        assert_eq!(element_name("#text"), None);
        assert_eq!(element_name("BODY"), None);
    }

    #[test]
    fn cls_is_the_largest_session_window() {
        let shift = |time_ms: f64, score: f64| Shift {
            time_ms,
            score,
            elements: Vec::new(),
            causes: Vec::new(),
            node_ids: Vec::new(),
            had_recent_input: false,
        };
        // Two shifts 500 ms apart are one session; one 2 s later starts another.
        let shifts = [shift(100.0, 0.05), shift(600.0, 0.05), shift(2600.0, 0.08)];
        assert_eq!(largest_session(&shifts), 0.1);
        // A session is cut at 5 s even without a gap.
        let steady: Vec<Shift> = (0..12).map(|i| shift(i as f64 * 900.0, 0.01)).collect();
        assert_eq!(largest_session(&steady), 0.06);
    }

    #[test]
    fn shifts_just_after_input_are_reported_apart_from_cls() {
        let shift = |ts: f64, score: f64, after_input: bool| {
            json!({"name": "LayoutShift", "ph": "I", "pid": 1, "tid": 1, "ts": ts,
                "args": {"frame": "F", "data": {"weighted_score_delta": score,
                    "had_recent_input": after_input}}})
        };
        let events = [
            json!({"name": "navigationStart", "ph": "R", "pid": 1, "tid": 1, "ts": 1_000_000.0,
                "args": {"frame": "F", "data": {"isOutermostMainFrame": true,
                    "documentLoaderURL": "http://127.0.0.1/page", "navigationId": "N"}}}),
            shift(1_200_000.0, 0.05, false),
            shift(1_900_000.0, 0.09, true),
        ];
        let report = analyze(&events, 0, 2_000, "http://127.0.0.1/page");
        let set = report.set(None).expect("one insight set");
        assert_eq!(set.cls.score, 0.05);
        assert_eq!(set.cls.shifts.len(), 1);
        assert_eq!(set.cls.after_input.len(), 1);
        assert_eq!(set.cls.after_input[0].time_ms, 900.0);
        let text = report.insight("CLSCulprits", set).expect("a CLS report");
        assert!(text.contains("Not counted: 1 shift(s) (0.0900"), "{text}");
    }

    #[test]
    fn domains_group_hosts_by_their_last_two_labels() {
        assert_eq!(
            domain_of("https://cdn.example.com/a.js").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            domain_of("http://127.0.0.1:8080/x").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(
            domain_of("http://localhost:1/x").as_deref(),
            Some("localhost")
        );
        assert_eq!(domain_of("data:text/plain,x"), None);
    }
}
