//! Performance traces: recorded with the categories DevTools' Performance panel records,
//! saved as trace-event JSON the panel opens, and read into insights (`insights`).
//!
//! One trace runs per tab, owned by the agent session that started it; the session's
//! last stopped trace stays for `performance_analyze_insight`.

use crate::ids::Deadline;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::Owner;
use super::insights::{TraceReport, analyze};
use super::per_tab::PerTab;
use crate::browser::Browser;
use crate::config::EngineConfig;
use crate::error::{EngineError, ErrorCode, Input, Result};
use crate::files;
use crate::page::Page;

/// What DevTools records for a performance trace.
const CATEGORIES: &[&str] = &[
    "-*",
    "blink.console",
    "blink.user_timing",
    "devtools.timeline",
    "disabled-by-default-devtools.screenshot",
    "disabled-by-default-devtools.timeline",
    "disabled-by-default-devtools.timeline.invalidationTracking",
    "disabled-by-default-devtools.timeline.frame",
    "disabled-by-default-devtools.timeline.stack",
    "disabled-by-default-v8.cpu_profiler",
    "latencyInfo",
    "loading",
    "disabled-by-default-lighthouse",
    "v8.execute",
    "v8",
];

/// A page reloaded for a trace gets this long to load before the call answers anyway.
const RELOAD_WAIT: Duration = Duration::from_secs(30);

/// A trace being recorded.
struct Running {
    browser: std::sync::Weak<Browser>,
    session: String,
    started_ms: u64,
    url: String,
}

/// Every trace of one engine: those recording, and each session's last report.
pub struct Traces {
    running: PerTab<Running>,
    last: Mutex<HashMap<Owner, Arc<TraceReport>>>,
}

impl Default for Traces {
    fn default() -> Traces {
        Traces {
            running: PerTab::new("tracing"),
            last: Mutex::default(),
        }
    }
}

/// What a stopped trace gives its caller.
#[derive(Debug, Clone)]
pub struct StoppedTrace {
    pub report: Arc<TraceReport>,
    /// The saved trace, when it was saved.
    pub saved: Option<files::Written>,
}

impl Traces {
    /// Starts a trace of the page's tab for `owner`; with `reload`, reloads the page
    /// (bypassing the cache) and waits for it to load, so the trace holds a whole page
    /// load.
    pub async fn start(
        &self,
        page: &Page,
        owner: Owner,
        reload: bool,
        deadline: Deadline,
    ) -> Result<()> {
        self.running.vacant(&page.tab.target_id, owner)?;
        let config = json!({
            "traceConfig": {
                "includedCategories": CATEGORIES,
                "recordMode": "recordUntilFull",
            },
            "transferMode": "ReturnAsStream",
            "streamFormat": "json",
        });
        page.cdp("Tracing.start", config, deadline)
            .await
            .map_err(|e| match e {
                EngineError::Cdp(cdp::CdpError::Protocol { message, .. }) => {
                    EngineError::Unsupported(format!("this browser link cannot trace: {message}"))
                }
                other => other,
            })?;
        self.running.insert(
            &page.tab.target_id,
            owner,
            Running {
                browser: Arc::downgrade(&page.browser),
                session: page.session.clone(),
                started_ms: crate::ids::now_ms(),
                url: page.tab.url.clone(),
            },
        );
        if reload {
            let mut events = page.browser.conn.subscribe();
            page.cdp("Page.enable", json!({}), deadline).await?;
            page.cdp("Page.reload", json!({ "ignoreCache": true }), deadline)
                .await?;
            let deadline = Instant::now() + RELOAD_WAIT.min(deadline.remaining());
            crate::page::navigation::wait_event(&mut events, deadline, |e| {
                e.session_id.as_deref() == Some(page.session.as_str())
                    && e.method == "Page.loadEventFired"
            })
            .await;
        }
        Ok(())
    }

    /// Stops `owner`'s trace of the page's tab, reads it, saves it under the output dir
    /// when `save` gives a name to start the file's with (`traces/<name>_<stamp>.json`),
    /// and analyses it.
    pub async fn stop(
        &self,
        page: &Page,
        owner: Owner,
        config: &EngineConfig,
        save: Option<&str>,
        deadline: Deadline,
    ) -> Result<StoppedTrace> {
        let target = save
            .map(|prefix| {
                let prefix = files::safe_name(prefix, "performance_trace");
                let name = format!("traces/{prefix}_{}.json", crate::ids::utc_stamp());
                files::confined_path(&config.output_dir, &name, Input::Filename)
            })
            .transpose()?;
        let running = self.running.take_own(&page.tab.target_id, owner)?;
        let mut events = page.browser.conn.subscribe();
        page.cdp("Tracing.end", json!({}), deadline).await?;
        let stream = tracing_complete(&mut events, &running.session, deadline).await?;
        let staging = crate::files::Staging::of(&config.output_dir);
        let read = page
            .read_stream_to_staging(&stream, &staging, "trace", deadline)
            .await;
        page.close_stream(&stream).await;
        let staged = read?;
        let parsed = read_trace(&staged).await;
        let parsed = match parsed {
            Ok(parsed) => parsed,
            Err(error) => {
                let _ = tokio::fs::remove_file(&staged).await;
                return Err(error);
            }
        };
        let stopped_ms = crate::ids::now_ms();
        let mut report = analyze(&parsed, running.started_ms, stopped_ms, &running.url);
        report.dom = super::insights::dom_size(page, deadline).await.ok();
        super::insights::name_nodes(page, &mut report, deadline).await;
        let saved = match target {
            Some(target) => Some(files::move_into(staged, target, false).await?),
            None => {
                let _ = tokio::fs::remove_file(&staged).await;
                None
            }
        };
        let report = Arc::new(report);
        self.last.lock().insert(owner, report.clone());
        Ok(StoppedTrace { report, saved })
    }

    /// `owner`'s last stopped trace.
    pub fn last(&self, owner: Owner) -> Option<Arc<TraceReport>> {
        self.last.lock().get(&owner).cloned()
    }

    /// Forgets what `owner` recorded (its session ended); a trace still running is
    /// ended in its browser.
    pub fn forget(&self, owner: Owner) {
        self.last.lock().remove(&owner);
        let ended = self.running.take_all(owner);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        for trace in ended {
            let Some(browser) = trace.browser.upgrade() else {
                continue;
            };
            runtime.spawn(async move {
                let _ = browser
                    .conn
                    .call(
                        Some(&trace.session),
                        "Tracing.end",
                        json!({}),
                        crate::browser::HOUSEKEEPING,
                    )
                    .await;
            });
        }
    }
}

/// Waits for the session's `Tracing.tracingComplete`: the stream holding the trace.
async fn tracing_complete(
    events: &mut tokio::sync::broadcast::Receiver<Arc<cdp::Event>>,
    session: &str,
    deadline: Deadline,
) -> Result<String> {
    let deadline = Instant::now() + deadline.remaining();
    loop {
        let event = match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Ok(event)) => event,
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => continue,
            Ok(Err(_)) => {
                return Err(EngineError::Cdp(cdp::CdpError::Lost {
                    method: "Tracing.end".into(),
                }));
            }
            Err(_) => {
                return Err(EngineError::page(
                    ErrorCode::Timeout,
                    "the browser did not hand over the trace in time",
                    Value::Null,
                ));
            }
        };
        if event.method == "Tracing.tracingComplete" && event.session_id.as_deref() == Some(session)
        {
            return event.params["stream"]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| {
                    EngineError::Unsupported(
                        "the browser ended the trace without a stream (was its buffer full?)"
                            .into(),
                    )
                });
        }
    }
}

/// The trace's events, from `{traceEvents: [...]}` or a bare array.
async fn read_trace(path: &std::path::Path) -> Result<Vec<Value>> {
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| EngineError::io(format!("cannot read {}", path.display()), e))?;
    let parsed: Value = serde_json::from_slice(&bytes)
        .map_err(|e| EngineError::Io(format!("the browser's trace is not JSON: {e}")))?;
    Ok(match parsed {
        Value::Array(events) => events,
        Value::Object(mut trace) => match trace.remove("traceEvents") {
            Some(Value::Array(events)) => events,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    })
}
