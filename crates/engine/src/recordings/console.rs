//! The console recording: console API calls and uncaught exceptions, with whether each
//! came from the page's main world.

use crate::ids::Deadline;
use parking_lot::Mutex;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{CaptureStarted, CaptureSummary, Owner, Recordings, Ring, next_event};
use crate::browser::{Browser, HOUSEKEEPING, Tab};
use crate::error::Result;
use crate::page::Page;

/// One thing the page's console saw.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConsoleRecord {
    pub kind: ConsoleKind,
    /// The console call (`log`, `warning`, `error`, …); `error` for an exception.
    pub level: String,
    /// What it printed: its arguments as the DevTools console shows them.
    pub text: String,
    /// From the page's own (main) world, not tabwire's isolated one.
    pub main_world: bool,
    /// Where it came from: the script's URL, line and (for an exception) column.
    pub url: Option<String>,
    pub line: Option<i64>,
    pub column: Option<i64>,
    /// CDP's timestamp (ms since the epoch).
    pub timestamp: Option<f64>,
    /// A console call's arguments as values (the page's own data).
    pub args: Vec<Value>,
    pub execution_context_id: Option<i64>,
    /// The stack as CDP gives it.
    pub stack_trace: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConsoleKind {
    /// A console API call (`console.log`, …).
    Call,
    /// An uncaught exception.
    Exception,
}

/// A page of a console capture's buffer.
#[derive(Debug, Clone)]
pub struct ConsoleRead {
    pub summary: CaptureSummary,
    pub messages: Vec<ConsoleRecord>,
    /// How many the buffer holds that the filter keeps.
    pub total: usize,
    pub offset: usize,
    /// Where the next page starts (None: this was the last).
    pub next_offset: Option<usize>,
    /// Only the page's own output was read.
    pub filtered: bool,
    /// How many the buffer held before it was emptied (None: it was not).
    pub cleared: Option<usize>,
}

/// A console capture, stopped: everything it held.
#[derive(Debug, Clone)]
pub struct ConsoleStopped {
    pub summary: CaptureSummary,
    pub messages: Vec<ConsoleRecord>,
    pub stopped_ms: u64,
}

impl Recordings {
    pub async fn start_console(
        &self,
        page: &Page,
        owner: Owner,
        max_entries: usize,
        deadline: Deadline,
    ) -> Result<CaptureStarted> {
        if let Some(summary) = Self::check_owner(&self.console, &page.tab.target_id, owner)? {
            return Ok(CaptureStarted {
                summary,
                already_running: true,
            });
        }
        let events = page.browser.connection().subscribe();
        let ring = Ring::new(max_entries);
        let summary = ring.lock().summary();
        let task = tokio::spawn(collect_console(page.session.clone(), events, ring.clone()));
        // Enabling replays the existing contexts, which the collector is already listening for.
        page.cdp("Runtime.enable", json!({}), deadline).await?;
        Self::register(&self.console, page, owner, ring, task);
        Ok(CaptureStarted {
            summary,
            already_running: false,
        })
    }

    /// A page of the console buffer; `clear` empties it afterwards.
    pub fn console_messages(
        &self,
        tab: &Tab,
        owner: Owner,
        page: ConsolePage,
    ) -> Result<ConsoleRead> {
        let (_, ring) = Self::owned(&self.console, tab, owner)?;
        let mut ring = ring.lock();
        let matching: Vec<&ConsoleRecord> = ring
            .records
            .iter()
            .filter(|r| !page.user_only || r.main_world)
            .collect();
        let total = matching.len();
        let messages: Vec<ConsoleRecord> = matching
            .into_iter()
            .skip(page.offset)
            .take(page.max_items)
            .cloned()
            .collect();
        let next = page.offset + messages.len();
        let summary = ring.summary();
        let cleared = page.clear.then(|| {
            let held = ring.records.len();
            ring.records.clear();
            ring.first_seq = 0;
            held
        });
        Ok(ConsoleRead {
            summary,
            messages,
            total,
            offset: page.offset,
            next_offset: (next < total).then_some(next),
            filtered: page.user_only,
            cleared,
        })
    }

    /// The remaining messages; the recording stops.
    pub async fn stop_console(
        &self,
        browser: &Browser,
        tab: &Tab,
        owner: Owner,
    ) -> Result<ConsoleStopped> {
        let all = ConsolePage {
            offset: 0,
            max_items: usize::MAX,
            clear: false,
            user_only: false,
        };
        let read = self.console_messages(tab, owner, all)?;
        if let Some(session) = Self::remove(&self.console, tab, owner) {
            let _ = browser
                .connection()
                .call(Some(&session), "Runtime.disable", json!({}), HOUSEKEEPING)
                .await;
        }
        Ok(ConsoleStopped {
            summary: read.summary,
            messages: read.messages,
            stopped_ms: crate::ids::now_ms(),
        })
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
    ring: Arc<Mutex<Ring<ConsoleRecord>>>,
) {
    while let Some(event) = next_event(&mut events, &session, &ring).await {
        record_console_event(&mut ring.lock(), &event);
    }
}

/// Adds a console message or an exception to the ring (execution contexts are noted, to
/// tell the page's own output from tabwire's isolated world).
fn record_console_event(ring: &mut Ring<ConsoleRecord>, event: &cdp::Event) {
    let p = &event.params;
    let text_of = |value: &Value| value.as_str().map(str::to_owned);
    let stack = |value: &Value| Some(value.clone()).filter(|v| !v.is_null());
    match event.method.as_str() {
        "Runtime.executionContextCreated" => {
            if p["context"]["auxData"]["isDefault"] == true
                && let Some(id) = p["context"]["id"].as_i64()
            {
                ring.main_contexts.insert(id);
            }
        }
        "Runtime.consoleAPICalled" => {
            let args = p["args"].as_array().map(Vec::as_slice).unwrap_or_default();
            let text: Vec<String> = args.iter().map(remote_text).collect();
            let context = p["executionContextId"].as_i64();
            let main_world = context.is_none_or(|id| ring.main_contexts.contains(&id));
            let frame = &p["stackTrace"]["callFrames"][0];
            ring.push(ConsoleRecord {
                kind: ConsoleKind::Call,
                level: p["type"].as_str().unwrap_or("log").to_owned(),
                text: text.join(" "),
                main_world,
                url: text_of(&frame["url"]),
                line: frame["lineNumber"].as_i64(),
                column: None,
                timestamp: p["timestamp"].as_f64(),
                args: args.iter().map(remote_value).collect(),
                execution_context_id: context,
                stack_trace: stack(&p["stackTrace"]),
            });
        }
        "Runtime.exceptionThrown" => {
            let details = &p["exceptionDetails"];
            let text = details["exception"]["description"]
                .as_str()
                .or(details["text"].as_str())
                .unwrap_or("exception");
            ring.push(ConsoleRecord {
                kind: ConsoleKind::Exception,
                level: "error".to_owned(),
                text: text.to_owned(),
                main_world: true,
                url: text_of(&details["url"]),
                line: details["lineNumber"].as_i64(),
                column: details["columnNumber"].as_i64(),
                timestamp: p["timestamp"].as_f64(),
                args: Vec::new(),
                execution_context_id: details["executionContextId"].as_i64(),
                stack_trace: stack(&details["stackTrace"]),
            });
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
    ) -> Result<Vec<ConsoleRecord>> {
        // Whoever runs it: the page's output is the same.
        let running = self
            .console
            .with_any(&page.tab.target_id, |capture| capture.ring.clone());
        if let Some(ring) = running {
            // A recording runs already: its buffer is the page's output since it started.
            let ring = ring.lock();
            return Ok(newest(ring.records.iter().filter(|r| r.main_world), max));
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
        Ok(newest(ring.records.iter().filter(|r| r.main_world), max))
    }
}

fn newest<'a>(
    records: impl DoubleEndedIterator<Item = &'a ConsoleRecord>,
    max: usize,
) -> Vec<ConsoleRecord> {
    let mut kept: Vec<ConsoleRecord> = records.rev().take(max).cloned().collect();
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
