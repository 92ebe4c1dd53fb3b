//! The network recording: requests, responses and (optionally) bodies.

use crate::ids::Deadline;
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::{BodyOptions, CaptureStarted, CaptureSummary, Owner, Recordings, Ring, next_event};
use crate::browser::{Browser, HOUSEKEEPING, Tab};
use crate::error::{EngineError, Input, Result};
use crate::page::Page;

pub struct NetworkOptions {
    pub include_bodies: bool,
    pub max_entries: usize,
    pub max_body_bytes: usize,
    pub body_timeout: Duration,
    /// The recording stops by itself this long after it started…
    pub stop_after: Option<Duration>,
    /// …or once no request has been seen for this long.
    pub stop_when_idle: Option<Duration>,
    /// Leave out images, styles, scripts, fonts and media as they come.
    pub exclude_static: bool,
}

pub struct NetworkFilter {
    pub url_pattern: Option<String>,
    pub resource_type: Option<String>,
    pub status_min: Option<u16>,
    pub status_max: Option<u16>,
    pub include_bodies: bool,
    /// Leave out images, styles, scripts, fonts and media.
    pub exclude_static: bool,
}

/// One request a network capture saw, filled in as its response and end arrive.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct NetworkRecord {
    pub request_id: String,
    pub url: String,
    pub method: String,
    /// CDP's resource type (`Document`, `XHR`, `Image`, …).
    pub resource_type: Option<String>,
    /// When it was sent, wall clock (seconds since the epoch).
    pub started: Option<f64>,
    /// When it was sent, CDP's monotonic clock (seconds).
    pub sent_at: Option<f64>,
    pub document_url: Option<String>,
    /// Headers as the page sent them.
    pub request_headers: Map<String, Value>,
    pub post_data: Option<String>,
    pub status: Option<u16>,
    pub status_text: Option<String>,
    pub mime_type: Option<String>,
    pub protocol: Option<String>,
    pub response_headers: Option<Map<String, Value>>,
    pub remote_address: Option<String>,
    pub from_cache: Option<bool>,
    pub from_service_worker: Option<bool>,
    /// From sending to the response's headers.
    pub response_ms: Option<f64>,
    /// Bytes received, once it finished.
    pub encoded_bytes: Option<u64>,
    pub finished: bool,
    pub failed: bool,
    pub error_text: Option<String>,
    pub canceled: Option<bool>,
    /// The response body, where it was read.
    pub body: Option<NetworkBody>,
    /// Why the body could not be read.
    pub body_error: Option<String>,
}

/// A response body as read (up to the capture's cap).
#[derive(Debug, Clone, serde::Serialize)]
pub struct NetworkBody {
    /// The text, or base64 where it is not UTF-8 text.
    pub text: String,
    pub base64: bool,
    /// The whole body's size.
    pub bytes: usize,
    /// Cut at the cap.
    pub truncated: bool,
}

/// A network capture, stopped: what it kept, as the filter left it.
#[derive(Debug, Clone)]
pub struct NetworkStopped {
    pub summary: CaptureSummary,
    pub records: Vec<NetworkRecord>,
    /// How many it held before the filter.
    pub total_captured: usize,
    /// Records whose body could not be read.
    pub body_errors: usize,
    /// The filter could leave something out.
    pub filtered: bool,
    /// Why it had stopped by itself (`max_capture_time`, `inactivity_timeout`).
    pub ended_by_itself: Option<&'static str>,
    pub stopped_ms: u64,
}

/// The cap for bodies read as a capture stops (those read while it ran have the
/// capture's own).
const BODY_CAP_AT_STOP: usize = 1 << 20;
/// Response bodies a capture reads at once; a body that finds them all busy is not read
/// (its record says so), so a page that loads thousands of resources cannot make a
/// capture start thousands of reads.
const MAX_BODY_READS: usize = 16;

/// Resource types of a page's static assets.
const STATIC_TYPES: &[&str] = &[
    "Image",
    "Stylesheet",
    "Script",
    "Font",
    "Media",
    "Manifest",
    "TextTrack",
];

impl Recordings {
    pub async fn start_network(
        &self,
        page: &Page,
        owner: Owner,
        options: NetworkOptions,
        deadline: Deadline,
    ) -> Result<CaptureStarted> {
        if let Some(summary) = Self::check_owner(&self.network, &page.tab.target_id, owner)? {
            return Ok(CaptureStarted {
                summary,
                already_running: true,
            });
        }
        let events = page.browser.connection().subscribe();
        page.cdp(
            "Network.enable",
            json!({ "maxResourceBufferSize": options.max_body_bytes.max(1024) * 4, "maxTotalBufferSize": 64 << 20 }),
            deadline,
        )
        .await?;
        let ring = Ring::new(options.max_entries);
        ring.lock().bodies = Some(BodyOptions {
            include: options.include_bodies,
            max_bytes: options.max_body_bytes,
        });
        let summary = ring.lock().summary();
        let task = tokio::spawn(collect_network(
            page.browser.clone(),
            page.session.clone(),
            events,
            ring.clone(),
            options,
        ));
        Self::register(&self.network, page, owner, ring, task);
        Ok(CaptureStarted {
            summary,
            already_running: false,
        })
    }

    pub async fn stop_network(
        &self,
        browser: &Browser,
        tab: &Tab,
        owner: Owner,
        filter: NetworkFilter,
        deadline: Deadline,
    ) -> Result<NetworkStopped> {
        let (session, ring) = Self::owned(&self.network, tab, owner)?;
        if filter.include_bodies {
            // Bodies still being read as the capture stops are read now, so none is
            // missing for being the last.
            let unread: Vec<String> = ring
                .lock()
                .records
                .iter()
                .filter(|r| r.encoded_bytes.is_some() && r.body.is_none() && r.body_error.is_none())
                .map(|r| r.request_id.clone())
                .collect();
            for request_id in unread {
                fetch_body_on(
                    browser,
                    &session,
                    &request_id,
                    &ring,
                    BODY_CAP_AT_STOP,
                    deadline.remaining(),
                )
                .await;
            }
        }
        let (records, dropped, lagged) = {
            let ring = ring.lock();
            (
                ring.records.iter().cloned().collect::<Vec<_>>(),
                ring.dropped,
                ring.lagged,
            )
        };
        // The pattern is compiled by the browser, as JavaScript: an invalid one is reported
        // and the capture keeps running so the caller can retry.
        let keep = match &filter.url_pattern {
            Some(pattern) => {
                let urls: Vec<Value> = records.iter().map(|r| json!(r.url)).collect();
                let urls: Vec<&Value> = urls.iter().collect();
                Some(
                    crate::page::regex_matches(browser, &session, pattern, "", &urls, deadline)
                        .await
                        .map_err(|e| {
                            EngineError::invalid(
                                Input::Pattern,
                                format!("{}; the capture is still running", e.bare_message()),
                            )
                        })?,
                )
            }
            None => None,
        };
        Self::remove(&self.network, tab, owner);
        let _ = browser
            .connection()
            .call(Some(&session), "Network.disable", json!({}), HOUSEKEEPING)
            .await;
        let total = records.len();
        let filtered: Vec<NetworkRecord> = records
            .into_iter()
            .enumerate()
            .filter(|(i, _)| {
                keep.as_ref()
                    .is_none_or(|k| k.get(*i).copied().unwrap_or(false))
            })
            .map(|(_, r)| r)
            .filter(|r| filter.keeps(r))
            .map(|mut r| {
                if !filter.include_bodies {
                    r.body = None;
                }
                r
            })
            .collect();
        let (ended, mut summary) = {
            let ring = ring.lock();
            (ring.ended, ring.summary())
        };
        summary.dropped = dropped;
        summary.events_lost = lagged;
        let body_errors = filtered.iter().filter(|r| r.body_error.is_some()).count();
        Ok(NetworkStopped {
            summary,
            records: filtered,
            total_captured: total,
            body_errors,
            filtered: filter.narrows(),
            ended_by_itself: ended,
            stopped_ms: crate::ids::now_ms(),
        })
    }
}

impl NetworkFilter {
    /// Whether the filter can leave anything out (or bodies off).
    fn narrows(&self) -> bool {
        self.url_pattern.is_some()
            || self.resource_type.is_some()
            || self.status_min.is_some()
            || self.status_max.is_some()
            || !self.include_bodies
            || self.exclude_static
    }

    /// The resource-type and status parts of the filter.
    fn keeps(&self, record: &NetworkRecord) -> bool {
        let kind = record.resource_type.as_deref();
        let type_ok = self
            .resource_type
            .as_ref()
            .is_none_or(|t| kind.is_some_and(|rt| rt.eq_ignore_ascii_case(t)));
        let status = record.status.map(u64::from);
        let min_ok = self
            .status_min
            .is_none_or(|min| status.is_some_and(|s| s >= u64::from(min)));
        let max_ok = self
            .status_max
            .is_none_or(|max| status.is_some_and(|s| s <= u64::from(max)));
        let static_ok = !self.exclude_static || !kind.is_some_and(|t| STATIC_TYPES.contains(&t));
        type_ok && min_ok && max_ok && static_ok
    }
}

async fn collect_network(
    browser: Arc<Browser>,
    session: String,
    mut events: tokio::sync::broadcast::Receiver<Arc<cdp::Event>>,
    ring: Arc<Mutex<Ring<NetworkRecord>>>,
    options: NetworkOptions,
) {
    let weak = Arc::downgrade(&browser);
    drop(browser);
    let body_reads = Arc::new(tokio::sync::Semaphore::new(MAX_BODY_READS));
    let started = tokio::time::Instant::now();
    let mut last_seen = started;
    loop {
        let next = match stop_at(&options, started, last_seen) {
            Some((at, why)) => {
                match tokio::time::timeout_at(at, next_event(&mut events, &session, &ring)).await {
                    Ok(next) => next,
                    Err(_) => {
                        ring.lock().ended = Some(why);
                        return;
                    }
                }
            }
            None => next_event(&mut events, &session, &ring).await,
        };
        let Some(event) = next else { return };
        if event.method.starts_with("Network.") {
            last_seen = tokio::time::Instant::now();
        }
        let finished = record(&event, &mut ring.lock(), &options);
        if let Some(request_id) = finished.filter(|_| options.include_bodies) {
            let Ok(permit) = body_reads.clone().try_acquire_owned() else {
                if let Some(record) = ring.lock().find(&request_id) {
                    record.body_error = Some(format!(
                        "not read: {MAX_BODY_READS} bodies were being read at once"
                    ));
                }
                continue;
            };
            let Some(browser) = weak.upgrade() else {
                continue;
            };
            let (session, ring) = (session.clone(), ring.clone());
            let (max, wait) = (options.max_body_bytes, options.body_timeout);
            tokio::spawn(async move {
                fetch_body(browser, session, request_id, ring, max, wait).await;
                drop(permit);
            });
        }
    }
}

/// When a capture stops by itself, and why: its longest time, or being idle for its
/// inactivity timeout, whichever comes first (None: it runs until stopped).
fn stop_at(
    options: &NetworkOptions,
    started: tokio::time::Instant,
    last_seen: tokio::time::Instant,
) -> Option<(tokio::time::Instant, &'static str)> {
    let longest = options
        .stop_after
        .map(|d| (started + d, "max_capture_time"));
    let quiet = options
        .stop_when_idle
        .map(|idle| (last_seen + idle, "inactivity_timeout"));
    match (longest, quiet) {
        (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// Records one network event in the ring; the request's id when it finished loading
/// (its body can be read now).
fn record(
    event: &cdp::Event,
    ring: &mut Ring<NetworkRecord>,
    options: &NetworkOptions,
) -> Option<String> {
    let p = &event.params;
    let request_id = p["requestId"].as_str().unwrap_or_default().to_owned();
    let text = |value: &Value| value.as_str().map(str::to_owned);
    match event.method.as_str() {
        "Network.requestWillBeSent"
            if options.exclude_static
                && p["type"]
                    .as_str()
                    .is_some_and(|t| STATIC_TYPES.contains(&t)) => {}
        "Network.requestWillBeSent" => {
            let request = &p["request"];
            let record = NetworkRecord {
                request_id: request_id.clone(),
                url: text(&request["url"]).unwrap_or_default(),
                method: text(&request["method"]).unwrap_or_default(),
                resource_type: text(&p["type"]),
                started: p["wallTime"].as_f64(),
                sent_at: p["timestamp"].as_f64(),
                document_url: text(&p["documentURL"]),
                request_headers: request["headers"].as_object().cloned().unwrap_or_default(),
                post_data: text(&request["postData"]),
                ..NetworkRecord::default()
            };
            let seq = ring.push(record);
            let at = (seq - ring.first_seq) as usize;
            ring.open.insert(request_id, at);
        }
        "Network.responseReceived" => {
            if let Some(record) = ring.find(&request_id) {
                let r = &p["response"];
                record.status = r["status"].as_u64().and_then(|s| u16::try_from(s).ok());
                record.status_text = text(&r["statusText"]);
                record.mime_type = text(&r["mimeType"]);
                record.remote_address = Some(format!(
                    "{}:{}",
                    r["remoteIPAddress"].as_str().unwrap_or(""),
                    r["remotePort"]
                ));
                record.from_cache = r["fromDiskCache"].as_bool();
                record.from_service_worker = r["fromServiceWorker"].as_bool();
                record.protocol = text(&r["protocol"]);
                record.response_headers = r["headers"].as_object().cloned();
                if let (Some(sent), Some(at)) = (record.sent_at, p["timestamp"].as_f64()) {
                    record.response_ms = Some(((at - sent) * 1000.0).round());
                }
            }
        }
        "Network.loadingFailed" => {
            if let Some(record) = ring.find(&request_id) {
                record.failed = true;
                record.error_text = text(&p["errorText"]);
                record.canceled = p["canceled"].as_bool();
            }
            ring.open.remove(&request_id);
        }
        "Network.loadingFinished" => {
            if let Some(record) = ring.find(&request_id) {
                record.encoded_bytes = p["encodedDataLength"].as_f64().map(|n| n as u64);
                record.finished = true;
            }
            ring.open.remove(&request_id);
            return Some(request_id);
        }
        _ => {}
    }
    None
}

async fn fetch_body(
    browser: Arc<Browser>,
    session: String,
    request_id: String,
    ring: Arc<Mutex<Ring<NetworkRecord>>>,
    max: usize,
    wait: Duration,
) {
    fetch_body_on(&browser, &session, &request_id, &ring, max, wait).await;
}

/// Reads a finished request's body into its record (capped at `max` bytes).
async fn fetch_body_on(
    browser: &Browser,
    session: &str,
    request_id: &str,
    ring: &Mutex<Ring<NetworkRecord>>,
    max: usize,
    wait: Duration,
) {
    let body = browser
        .conn
        .call(
            Some(session),
            "Network.getResponseBody",
            json!({ "requestId": request_id }),
            wait,
        )
        .await;
    let mut ring = ring.lock();
    let Some(record) = ring
        .records
        .iter_mut()
        .rev()
        .find(|r| r.request_id == request_id)
    else {
        return;
    };
    match body {
        Ok(reply) => {
            let encoded = reply["base64Encoded"] == true;
            let text = reply["body"].as_str().unwrap_or_default();
            let bytes = if encoded {
                base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .unwrap_or_default()
            } else {
                text.as_bytes().to_vec()
            };
            let kept = &bytes[..bytes.len().min(max)];
            let (text, base64) = match std::str::from_utf8(kept) {
                Ok(text) if !encoded => (text.to_owned(), false),
                _ => (base64::engine::general_purpose::STANDARD.encode(kept), true),
            };
            record.body = Some(NetworkBody {
                text,
                base64,
                bytes: bytes.len(),
                truncated: bytes.len() > max,
            });
        }
        Err(error) => record.body_error = Some(error.to_string()),
    }
}
