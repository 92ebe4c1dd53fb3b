//! Navigation and waits: going to a URL and waiting for its load, and polling a page
//! condition (a selector, text, a URL, an agent's expression) until it holds.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::{FrameContext, Page, check_status};
use crate::browser::exception_text;
use crate::error::{EngineError, ErrorCode, Input, Result};

/// How often condition waits re-check the page. The check itself is one round trip.
const POLL: Duration = Duration::from_millis(40);

impl Page {
    /// Navigates and waits for the load event (or the deadline).
    pub async fn navigate(&self, url: &str, timeout: Duration) -> Result<Value> {
        check_url_scheme(url)?;
        let deadline = Instant::now() + timeout;
        let mut events = self.browser.conn.subscribe();
        let reply = self
            .cdp("Page.navigate", json!({ "url": url }), timeout)
            .await?;
        if reply["isDownload"] == true {
            return Ok(json!({"type": "download", "status": "triggered", "url": url}));
        }
        if let Some(error) = reply["errorText"].as_str().filter(|e| !e.is_empty()) {
            return Err(EngineError::page(
                ErrorCode::NavigationFailed,
                format!("navigation to {url} failed: {error}"),
                json!({ "url": url, "error_text": error }),
            ));
        }
        let same_document = reply.get("loaderId").is_none();
        let mut load_status = "complete";
        if !same_document {
            let loaded = wait_event(&mut events, deadline, |event| {
                event.session_id.as_deref() == Some(&self.session)
                    && event.method == "Page.loadEventFired"
            })
            .await;
            if !loaded {
                load_status = "loading";
            }
        }
        let (landed, title) = self.current_url().await?;
        if !same_document {
            // A new document: do not wait for the event tracker to notice.
            self.browser
                .update_tab(&self.tab.target_id, |tab| tab.new_document());
        }
        Ok(json!({ "url": landed, "title": title, "load_status": load_status }))
    }

    /// Polls a page-script probe until it matches (or stops matching, with `gone`).
    pub async fn wait_until(
        &self,
        ctx: &FrameContext,
        probe: Value,
        gone: bool,
        timeout: Duration,
    ) -> Result<Value> {
        poll(timeout, "waiting for the condition", || async {
            let result = check_status(self.run(ctx, "probe", probe.clone(), timeout).await?)?;
            Ok(result["matched"].as_bool() == Some(!gone))
        })
        .await
    }

    /// Polls a caller's expression until it is truthy (or falsy, with `gone`).
    pub async fn wait_js(&self, expression: &str, gone: bool, timeout: Duration) -> Result<Value> {
        poll(timeout, "waiting for the expression", || async {
            let reply = self
                .cdp(
                    "Runtime.evaluate",
                    json!({"expression": expression, "returnByValue": true, "awaitPromise": true, "replMode": true}),
                    timeout,
                )
                .await?;
            if let Some(details) = reply.get("exceptionDetails") {
                return Err(EngineError::page(ErrorCode::ScriptError, exception_text(details), Value::Null));
            }
            Ok(truthy(&reply["result"]) != gone)
        })
        .await
    }

    /// Waits until the URL matches (regex or substring) and, with `ready`, the document
    /// has finished loading.
    pub async fn wait_for_url(
        &self,
        pattern: &str,
        ready: bool,
        timeout: Duration,
    ) -> Result<Value> {
        let top = self.top();
        let mut waited = poll(timeout, "waiting for the URL", || async {
            let matched = check_status(
                self.run(&top, "probe", json!({ "url_pattern": pattern }), timeout)
                    .await?,
            )?;
            if matched["matched"] != true {
                return Ok(false);
            }
            let state = self.run(&top, "readiness", json!({}), timeout).await?;
            Ok(!ready || state["ready_state"] == "complete")
        })
        .await?;
        let state = self.run(&top, "readiness", json!({}), timeout).await?;
        waited["url"] = state["url"].clone();
        waited["title"] = state["title"].clone();
        waited["ready_state"] = state["ready_state"].clone();
        Ok(waited)
    }
}

/// Re-checks `check` until it says true or the deadline passes. A check that fails
/// because a navigation replaced the document is simply tried again.
async fn poll<F, Fut>(timeout: Duration, what: &str, mut check: F) -> Result<Value>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool>>,
{
    let started = Instant::now();
    let deadline = started + timeout;
    let mut checks = 0u32;
    loop {
        checks += 1;
        match tokio::time::timeout_at(deadline, check()).await {
            Ok(Ok(true)) => {
                return Ok(json!({
                    "matched": true,
                    "elapsed_ms": started.elapsed().as_millis() as u64,
                    "checks": checks,
                }));
            }
            Ok(Ok(false)) => {}
            Ok(Err(error)) if transient(&error) => {}
            Ok(Err(error)) => return Err(error),
            Err(_) => {}
        }
        if Instant::now() + POLL > deadline {
            return Err(EngineError::Timeout {
                what: what.to_owned(),
                seconds: timeout.as_secs_f64(),
            });
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Errors a navigation in progress causes (the document the check ran in went away);
/// the next check sees the new document. What the page's own script throws is never one
/// of them, whatever its message says.
fn transient(error: &EngineError) -> bool {
    matches!(error, EngineError::Cdp(error) if error.is_context_gone())
}

fn truthy(result: &Value) -> bool {
    match &result["value"] {
        Value::Null => {
            result["type"] == "object" && result["subtype"] != "null"
                || result["type"] == "function"
        }
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// Waits for the first event that `matches`, until `deadline`. False on timeout.
pub(crate) async fn wait_event(
    events: &mut tokio::sync::broadcast::Receiver<Arc<cdp::Event>>,
    deadline: Instant,
    matches: impl Fn(&cdp::Event) -> bool,
) -> bool {
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Ok(event)) if matches(&event) => return true,
            Ok(Ok(_)) | Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
            Ok(Err(_)) | Err(_) => return false,
        }
    }
}

/// Schemes an agent may navigate to. `file:` and browser-internal pages are refused:
/// they read local files and browser settings.
pub fn check_url_scheme(url: &str) -> Result<()> {
    let lower = url.trim().to_ascii_lowercase();
    let allowed = ["http://", "https://", "about:blank", "data:"];
    if allowed.iter().any(|prefix| lower.starts_with(prefix)) {
        return Ok(());
    }
    Err(EngineError::refused_input(
        ErrorCode::UrlSchemeRefused,
        Input::Url,
        format!("'{url}' is refused; only http, https, data: and about:blank URLs can be opened"),
    ))
}
