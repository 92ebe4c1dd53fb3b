//! Network and console captures: bounded rings filled from CDP events in the background,
//! each owned by the agent session that started it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::browser::{Browser, HOUSEKEEPING, lock};
use crate::engine::{AgentSession, tab_handle};
use crate::error::{EngineError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Network,
    Console,
}

struct Capture {
    owner: u64,
    session: String,
    browser: std::sync::Weak<Browser>,
    ring: Arc<Mutex<Ring>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Default)]
struct Ring {
    records: VecDeque<Value>,
    /// Network records still being filled in, by request id.
    open: HashMap<String, usize>,
    max: usize,
    dropped: u64,
    lagged: u64,
    /// Console: which execution contexts are pages' main worlds.
    main_contexts: std::collections::HashSet<i64>,
    first_seq: u64,
}

impl Ring {
    fn push(&mut self, record: Value) -> u64 {
        if self.records.len() == self.max {
            self.records.pop_front();
            self.first_seq += 1;
            self.dropped += 1;
            // Positions shift; forget in-flight requests that fell out.
            self.open.retain(|_, at| {
                let keep = *at > 0;
                *at = at.saturating_sub(1);
                keep
            });
        }
        self.records.push_back(record);
        self.first_seq + self.records.len() as u64 - 1
    }

    fn find(&mut self, request_id: &str) -> Option<&mut Value> {
        let at = *self.open.get(request_id)?;
        self.records.get_mut(at)
    }
}

#[derive(Default)]
pub(crate) struct Captures {
    running: Mutex<HashMap<(String, Kind), Capture>>,
}

pub struct NetworkOptions {
    pub include_bodies: bool,
    pub max_entries: usize,
    pub max_body_bytes: usize,
    pub body_timeout: Duration,
}

pub struct NetworkFilter {
    pub url_pattern: Option<String>,
    pub resource_type: Option<String>,
    pub status_min: Option<u16>,
    pub status_max: Option<u16>,
    pub include_bodies: bool,
}

impl AgentSession {
    fn captures(&self) -> &Captures {
        &self.engine.captures
    }

    /// Refuses when another session owns a capture of this kind on the tab.
    fn check_owner(&self, key: &(String, Kind)) -> Result<bool> {
        match lock(&self.captures().running).get(key) {
            Some(capture) if capture.owner != self.id && capture.browser.strong_count() > 0 => Err(EngineError::Refused {
                code: "capture_busy".into(),
                message: "another MCP session is capturing on this tab; it must stop its capture first".into(),
            }),
            Some(capture) => Ok(capture.browser.strong_count() > 0),
            None => Ok(false),
        }
    }

    /// Records a running capture as this session's.
    fn register(
        &self,
        page: &crate::page::Page,
        key: (String, Kind),
        ring: Arc<Mutex<Ring>>,
        task: tokio::task::JoinHandle<()>,
    ) -> Value {
        let capture = Capture {
            owner: self.id,
            session: page.session.clone(),
            browser: Arc::downgrade(&page.browser),
            ring,
            task,
        };
        lock(&self.captures().running).insert(key, capture);
        json!({ "status": "capturing", "target": page.handle() })
    }

    pub async fn network_capture_start(
        &self,
        handle: Option<&str>,
        options: NetworkOptions,
        timeout: Duration,
    ) -> Result<Value> {
        let page = self.page(handle).await?;
        let key = (page.tab.target_id.clone(), Kind::Network);
        if self.check_owner(&key)? {
            return Ok(json!({ "status": "already_running", "target": page.handle() }));
        }
        let events = page.browser.conn.subscribe();
        page.cdp(
            "Network.enable",
            json!({ "maxResourceBufferSize": options.max_body_bytes.max(1024) * 4, "maxTotalBufferSize": 64 << 20 }),
            timeout,
        )
        .await?;
        let ring = Arc::new(Mutex::new(Ring {
            max: options.max_entries,
            ..Ring::default()
        }));
        let task = tokio::spawn(collect_network(
            page.browser.clone(),
            page.session.clone(),
            events,
            ring.clone(),
            options,
        ));
        Ok(self.register(&page, key, ring, task))
    }

    pub async fn network_capture_stop(
        &self,
        handle: Option<&str>,
        filter: NetworkFilter,
        timeout: Duration,
    ) -> Result<Value> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        let key = (tab.target_id.clone(), Kind::Network);
        if !self.check_owner(&key)? {
            return Err(no_capture("network", "network_capture_start"));
        }
        let (session, records, dropped, lagged) = {
            let running = lock(&self.captures().running);
            let capture = running
                .get(&key)
                .ok_or_else(|| no_capture("network", "network_capture_start"))?;
            let ring = lock(&capture.ring);
            (
                capture.session.clone(),
                ring.records.iter().cloned().collect::<Vec<_>>(),
                ring.dropped,
                ring.lagged,
            )
        };
        // The pattern is compiled by the browser, as JavaScript: an invalid one is reported
        // and the capture keeps running so the caller can retry.
        let keep = match &filter.url_pattern {
            Some(pattern) => {
                let urls: Vec<&Value> = records.iter().map(|r| &r["url"]).collect();
                Some(regex_matches(&browser, &session, pattern, &urls, timeout).await?)
            }
            None => None,
        };
        lock(&self.captures().running).remove(&key);
        let _ = browser
            .conn
            .call(Some(&session), "Network.disable", json!({}), HOUSEKEEPING)
            .await;
        let total = records.len();
        let filtered: Vec<Value> = records
            .into_iter()
            .enumerate()
            .filter(|(i, _)| {
                keep.as_ref()
                    .is_none_or(|k| k.get(*i).copied().unwrap_or(false))
            })
            .map(|(_, r)| r)
            .filter(|r| {
                filter.resource_type.as_ref().is_none_or(|t| {
                    r["resource_type"]
                        .as_str()
                        .is_some_and(|rt| rt.eq_ignore_ascii_case(t))
                })
            })
            .filter(|r| {
                let status = r["status"].as_u64();
                filter
                    .status_min
                    .is_none_or(|min| status.is_some_and(|s| s >= u64::from(min)))
                    && filter
                        .status_max
                        .is_none_or(|max| status.is_some_and(|s| s <= u64::from(max)))
            })
            .map(|mut r| {
                if !filter.include_bodies
                    && let Some(o) = r.as_object_mut()
                {
                    o.remove("body");
                }
                r
            })
            .collect();
        Ok(json!({
            "status": "stopped", "target": tab_handle(&browser, &tab),
            "total_captured": total, "returned": filtered.len(), "dropped": dropped,
            "events_lost": lagged, "records": filtered,
        }))
    }

    pub async fn console_capture_start(
        &self,
        handle: Option<&str>,
        max_entries: usize,
        timeout: Duration,
    ) -> Result<Value> {
        let page = self.page(handle).await?;
        let key = (page.tab.target_id.clone(), Kind::Console);
        if self.check_owner(&key)? {
            return Ok(json!({ "status": "already_running", "target": page.handle() }));
        }
        let events = page.browser.conn.subscribe();
        let ring = Arc::new(Mutex::new(Ring {
            max: max_entries,
            ..Ring::default()
        }));
        let task = tokio::spawn(collect_console(page.session.clone(), events, ring.clone()));
        // Enabling replays the existing contexts, which the collector is already listening for.
        page.cdp("Runtime.enable", json!({}), timeout).await?;
        Ok(self.register(&page, key, ring, task))
    }

    /// A page of the console buffer; `clear` empties it afterwards.
    pub async fn console_messages(
        &self,
        handle: Option<&str>,
        offset: usize,
        max_items: usize,
        clear: bool,
        user_only: bool,
    ) -> Result<Value> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        let key = (tab.target_id.clone(), Kind::Console);
        if !self.check_owner(&key)? {
            return Err(no_capture("console", "console_capture_start"));
        }
        let running = lock(&self.captures().running);
        let capture = running
            .get(&key)
            .ok_or_else(|| no_capture("console", "console_capture_start"))?;
        let mut ring = lock(&capture.ring);
        let matching: Vec<&Value> = ring
            .records
            .iter()
            .filter(|r| !user_only || r["context"] != "isolated")
            .collect();
        let total = matching.len();
        let page: Vec<Value> = matching
            .into_iter()
            .skip(offset)
            .take(max_items)
            .cloned()
            .collect();
        let next = offset + page.len();
        let reply = json!({
            "target": tab_handle(&browser, &tab), "messages": page, "total": total, "offset": offset,
            "next_offset": if next < total { json!(next) } else { Value::Null },
            "dropped": ring.dropped, "cleared": clear,
        });
        if clear {
            ring.records.clear();
            ring.first_seq = 0;
        }
        Ok(reply)
    }

    pub async fn console_capture_stop(&self, handle: Option<&str>) -> Result<Value> {
        let mut reply = self
            .console_messages(handle, 0, usize::MAX, false, false)
            .await?;
        let (browser, tab) = self.resolve_tab(handle).await?;
        let removed =
            lock(&self.captures().running).remove(&(tab.target_id.clone(), Kind::Console));
        if let Some(capture) = removed {
            let _ = browser
                .conn
                .call(
                    Some(&capture.session),
                    "Runtime.disable",
                    json!({}),
                    HOUSEKEEPING,
                )
                .await;
        }
        reply["status"] = json!("stopped");
        Ok(reply)
    }
}

fn no_capture(kind: &str, start: &str) -> EngineError {
    EngineError::Refused {
        code: "no_capture".into(),
        message: format!("no {kind} capture is running on this tab; call {start}"),
    }
}

async fn regex_matches(
    browser: &Browser,
    session: &str,
    pattern: &str,
    urls: &[&Value],
    timeout: Duration,
) -> Result<Vec<bool>> {
    let expression = format!(
        "(function (p, urls) {{ let r; try {{ r = new RegExp(p); }} catch (e) {{ return {{ error: String(e.message) }}; }} return urls.map(u => r.test(String(u))); }})({}, {})",
        json!(pattern),
        json!(urls)
    );
    let reply = browser
        .conn
        .call(
            Some(session),
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true }),
            timeout,
        )
        .await?;
    let value = &reply["result"]["value"];
    if let Some(error) = value["error"].as_str() {
        return Err(EngineError::invalid(
            "url_pattern",
            format!("invalid JavaScript RegExp: {error}; the capture is still running"),
        ));
    }
    Ok(value
        .as_array()
        .map(|a| a.iter().map(|v| v == true).collect())
        .unwrap_or_default())
}

async fn collect_network(
    browser: Arc<Browser>,
    session: String,
    mut events: tokio::sync::broadcast::Receiver<Arc<cdp::Event>>,
    ring: Arc<Mutex<Ring>>,
    options: NetworkOptions,
) {
    let weak = Arc::downgrade(&browser);
    drop(browser);
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            Err(RecvError::Lagged(n)) => {
                lock(&ring).lagged += n;
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        if event.session_id.as_deref() != Some(&session) {
            continue;
        }
        let p = &event.params;
        let request_id = p["requestId"].as_str().unwrap_or_default().to_owned();
        let mut ring_guard = lock(&ring);
        match event.method.as_str() {
            "Network.requestWillBeSent" => {
                let record = json!({
                    "request_id": request_id, "url": p["request"]["url"], "method": p["request"]["method"],
                    "resource_type": p["type"], "started": p["wallTime"],
                });
                let seq = ring_guard.push(record);
                let at = (seq - ring_guard.first_seq) as usize;
                ring_guard.open.insert(request_id, at);
            }
            "Network.responseReceived" => {
                if let Some(record) = ring_guard.find(&request_id) {
                    let r = &p["response"];
                    record["status"] = r["status"].clone();
                    record["status_text"] = r["statusText"].clone();
                    record["mime_type"] = r["mimeType"].clone();
                    record["remote_address"] = json!(format!(
                        "{}:{}",
                        r["remoteIPAddress"].as_str().unwrap_or(""),
                        r["remotePort"]
                    ));
                    record["from_cache"] = r["fromDiskCache"].clone();
                }
            }
            "Network.loadingFailed" => {
                if let Some(record) = ring_guard.find(&request_id) {
                    record["failed"] = json!(true);
                    record["error_text"] = p["errorText"].clone();
                    record["canceled"] = p["canceled"].clone();
                }
                ring_guard.open.remove(&request_id);
            }
            "Network.loadingFinished" => {
                if let Some(record) = ring_guard.find(&request_id) {
                    record["encoded_bytes"] = p["encodedDataLength"].clone();
                }
                ring_guard.open.remove(&request_id);
                if options.include_bodies {
                    drop(ring_guard);
                    let (Some(browser), ring) = (weak.upgrade(), ring.clone()) else {
                        continue;
                    };
                    let (session, max, wait) = (
                        session.clone(),
                        options.max_body_bytes,
                        options.body_timeout,
                    );
                    tokio::spawn(fetch_body(browser, session, request_id, ring, max, wait));
                }
            }
            _ => {}
        }
    }
}

async fn fetch_body(
    browser: Arc<Browser>,
    session: String,
    request_id: String,
    ring: Arc<Mutex<Ring>>,
    max: usize,
    wait: Duration,
) {
    let body = browser
        .conn
        .call(
            Some(&session),
            "Network.getResponseBody",
            json!({ "requestId": request_id }),
            wait,
        )
        .await;
    let mut ring = lock(&ring);
    let Some(record) = ring
        .records
        .iter_mut()
        .rev()
        .find(|r| r["request_id"] == request_id.as_str())
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
            let truncated = bytes.len() > max;
            let kept = &bytes[..bytes.len().min(max)];
            record["body"] = match std::str::from_utf8(kept) {
                Ok(text) if !encoded => json!(text),
                _ => json!(base64::engine::general_purpose::STANDARD.encode(kept)),
            };
            record["body_encoding"] = json!(if !encoded && std::str::from_utf8(kept).is_ok() {
                "utf8"
            } else {
                "base64"
            });
            record["body_bytes"] = json!(bytes.len());
            record["body_truncated"] = json!(truncated);
        }
        Err(error) => record["body_error"] = json!(error.to_string()),
    }
}

async fn collect_console(
    session: String,
    mut events: tokio::sync::broadcast::Receiver<Arc<cdp::Event>>,
    ring: Arc<Mutex<Ring>>,
) {
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            Err(RecvError::Lagged(n)) => {
                lock(&ring).lagged += n;
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        if event.session_id.as_deref() != Some(&session) {
            continue;
        }
        let p = &event.params;
        let mut ring = lock(&ring);
        match event.method.as_str() {
            "Runtime.executionContextCreated" => {
                if p["context"]["auxData"]["isDefault"] == true
                    && let Some(id) = p["context"]["id"].as_i64()
                {
                    ring.main_contexts.insert(id);
                }
            }
            "Runtime.consoleAPICalled" => {
                let text: Vec<String> = p["args"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(remote_text)
                    .collect();
                let context = p["executionContextId"]
                    .as_i64()
                    .map(|id| ring.main_contexts.contains(&id));
                let frame = &p["stackTrace"]["callFrames"][0];
                ring.push(json!({
                    "kind": "console", "level": p["type"], "text": text.join(" "),
                    "context": if context == Some(false) { "isolated" } else { "main" },
                    "url": frame["url"], "line": frame["lineNumber"], "timestamp": p["timestamp"],
                }));
            }
            "Runtime.exceptionThrown" => {
                let details = &p["exceptionDetails"];
                let text = details["exception"]["description"]
                    .as_str()
                    .or(details["text"].as_str())
                    .unwrap_or("exception");
                ring.push(json!({
                    "kind": "exception", "level": "error", "text": text, "context": "main",
                    "url": details["url"], "line": details["lineNumber"], "timestamp": p["timestamp"],
                }));
            }
            _ => {}
        }
    }
}

/// A console argument as the DevTools console would print it, briefly.
fn remote_text(arg: &Value) -> String {
    match &arg["value"] {
        Value::String(s) => s.clone(),
        Value::Null if arg.get("value").is_none() => arg["description"]
            .as_str()
            .or(arg["unserializableValue"].as_str())
            .unwrap_or(arg["type"].as_str().unwrap_or("?"))
            .to_owned(),
        other => other.to_string(),
    }
}
