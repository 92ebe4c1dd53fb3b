//! The console recording: console API calls and uncaught exceptions, with whether each
//! came from the page's main world.

use crate::ids::Deadline;
use parking_lot::Mutex;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{Kind, Owner, Recordings, Ring, next_event};
use crate::browser::{Browser, HOUSEKEEPING, Tab};
use crate::error::Result;
use crate::page::Page;

impl Recordings {
    pub async fn start_console(
        &self,
        page: &Page,
        owner: Owner,
        max_entries: usize,
        deadline: Deadline,
    ) -> Result<Value> {
        if let Some(summary) = self.check_owner(&page.tab.target_id, Kind::Console, owner)? {
            return Ok(Self::already_running(summary, page.handle()));
        }
        let events = page.browser.connection().subscribe();
        let ring = Ring::new(max_entries);
        let mut reply = ring.lock().summary();
        let task = tokio::spawn(collect_console(page.session.clone(), events, ring.clone()));
        // Enabling replays the existing contexts, which the collector is already listening for.
        page.cdp("Runtime.enable", json!({}), deadline).await?;
        self.register(page, Kind::Console, owner, ring, task);
        reply["status"] = json!("capturing");
        reply["target"] = json!(page.handle());
        Ok(reply)
    }

    /// A page of the console buffer; `clear` empties it afterwards.
    pub fn console_messages(
        &self,
        browser: &Browser,
        tab: &Tab,
        owner: Owner,
        page: ConsolePage,
    ) -> Result<Value> {
        let (_, ring) = self.owned(tab, Kind::Console, owner)?;
        let mut ring = ring.lock();
        let matching: Vec<&Value> = ring
            .records
            .iter()
            .filter(|r| !page.user_only || r["context"] != "isolated")
            .collect();
        let total = matching.len();
        let messages: Vec<Value> = matching
            .into_iter()
            .skip(page.offset)
            .take(page.max_items)
            .cloned()
            .collect();
        let next = page.offset + messages.len();
        let mut reply = ring.summary();
        for (key, value) in [
            ("target", json!(browser.handle(tab))),
            ("messages", json!(messages)),
            ("total", json!(total)),
            ("offset", json!(page.offset)),
            (
                "next_offset",
                if next < total {
                    json!(next)
                } else {
                    Value::Null
                },
            ),
            ("truncated", json!(next < total)),
            ("filtered", json!(page.user_only)),
        ] {
            reply[key] = value;
        }
        if page.clear {
            // How many the buffer held, all of them emptied.
            reply["cleared"] = json!(ring.records.len());
            ring.records.clear();
            ring.first_seq = 0;
        }
        Ok(reply)
    }

    /// The remaining messages; the recording stops.
    pub async fn stop_console(&self, browser: &Browser, tab: &Tab, owner: Owner) -> Result<Value> {
        let all = ConsolePage {
            offset: 0,
            max_items: usize::MAX,
            clear: false,
            user_only: false,
        };
        let mut reply = self.console_messages(browser, tab, owner, all)?;
        if let Some(session) = self.remove(tab, Kind::Console, owner) {
            let _ = browser
                .connection()
                .call(Some(&session), "Runtime.disable", json!({}), HOUSEKEEPING)
                .await;
        }
        reply["status"] = json!("stopped");
        reply["stopped_ms"] = json!(crate::ids::now_ms());
        Ok(reply)
    }
}

/// Which console messages to read.
pub struct ConsolePage {
    pub offset: usize,
    pub max_items: usize,
    /// Empty the buffer after reading.
    pub clear: bool,
    /// Only the page's own (main-world) output.
    pub user_only: bool,
}

async fn collect_console(
    session: String,
    mut events: tokio::sync::broadcast::Receiver<Arc<cdp::Event>>,
    ring: Arc<Mutex<Ring>>,
) {
    while let Some(event) = next_event(&mut events, &session, &ring).await {
        record_console_event(&mut ring.lock(), &event);
    }
}

/// Adds a console message or an exception to the ring (execution contexts are noted, to
/// tell the page's own output from tabwire's isolated world).
fn record_console_event(ring: &mut Ring, event: &cdp::Event) {
    let p = &event.params;
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
            let args: Vec<Value> = p["args"]
                .as_array()
                .into_iter()
                .flatten()
                .map(remote_value)
                .collect();
            ring.push(json!({
                "kind": "console", "level": p["type"], "text": text.join(" "),
                "context": if context == Some(false) { "isolated" } else { "main" },
                "url": frame["url"], "line": frame["lineNumber"], "timestamp": p["timestamp"],
                "args": args, "execution_context_id": p["executionContextId"],
                "stack_trace": p["stackTrace"],
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
                "url": details["url"], "line": details["lineNumber"], "column": details["columnNumber"],
                "timestamp": p["timestamp"], "execution_context_id": details["executionContextId"],
                "stack_trace": details["stackTrace"],
            }));
        }
        _ => {}
    }
}

impl Recordings {
    /// The console output the page has logged so far (the browser keeps it and replays
    /// it when the console is enabled), at once: no waiting for more. Up to `max`
    /// entries, the latest kept; the page's own output only.
    pub async fn console_snapshot(
        &self,
        page: &Page,
        max: usize,
        deadline: Deadline,
    ) -> Result<Vec<Value>> {
        // Whoever runs it: the page's output is the same.
        let running = self
            .console
            .with_any(&page.tab.target_id, |capture| capture.ring.clone());
        if let Some(ring) = running {
            // A recording runs already: its buffer is the page's output since it started.
            let ring = ring.lock();
            return Ok(newest(
                ring.records.iter().filter(|r| r["context"] != "isolated"),
                max,
            ));
        }
        let mut events = page.browser.connection().subscribe();
        page.cdp("Runtime.enable", json!({}), deadline).await?;
        let _ = page
            .browser
            .connection()
            .settle_events(&page.session, deadline.remaining())
            .await;
        let ring = Ring::new(max.max(1));
        {
            let mut ring = ring.lock();
            while let Ok(event) = events.try_recv() {
                if event.session_id.as_deref() == Some(page.session.as_str()) {
                    record_console_event(&mut ring, &event);
                }
            }
        }
        let _ = page
            .cdp("Runtime.disable", json!({}), Deadline::after(HOUSEKEEPING))
            .await;
        let ring = ring.lock();
        Ok(newest(
            ring.records.iter().filter(|r| r["context"] != "isolated"),
            max,
        ))
    }
}

fn newest<'a>(records: impl DoubleEndedIterator<Item = &'a Value>, max: usize) -> Vec<Value> {
    let mut kept: Vec<Value> = records.rev().take(max).cloned().collect();
    kept.reverse();
    kept
}

/// A console argument as a value: itself when it serialises (a string, a number, a plain
/// object passed by value), its unserialisable text (`NaN`, `-0`), else how the console
/// describes it (at most 4096 characters).
fn remote_value(arg: &Value) -> Value {
    if let Some(value) = arg.get("value") {
        return value.clone();
    }
    if let Some(text) = arg["unserializableValue"].as_str() {
        return json!(text);
    }
    let described = arg["description"]
        .as_str()
        .or(arg["className"].as_str())
        .or(arg["type"].as_str())
        .unwrap_or_default();
    json!(described.chars().take(4096).collect::<String>())
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
