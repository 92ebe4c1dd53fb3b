//! Page operations on one reserved tab. Every operation is CDP commands plus the page
//! script; nothing here knows which link carries the CDP messages.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::OwnedMutexGuard;
use tokio::time::Instant;

use crate::browser::{Browser, Dialog, DialogPolicy, HOUSEKEEPING, Tab};
use crate::engine::{Engine, tab_handle};
use crate::error::{EngineError, Result};
use crate::script;

/// How often condition waits re-check the page. The check itself is one round trip.
const POLL: Duration = Duration::from_millis(40);

/// A tab reserved for one operation. Dropping it releases the reservation.
pub struct Page {
    pub browser: Arc<Browser>,
    pub tab: Tab,
    pub(crate) session: String,
    _reservation: OwnedMutexGuard<()>,
    pub engine: Arc<Engine>,
}

/// Where a script runs: a CDP session (the page's, or an out-of-process frame's) and an
/// execution context within it (None: the page's main world), plus how far that
/// document's viewport sits from the top document's.
#[derive(Debug, Clone)]
pub struct FrameContext {
    pub session: String,
    pub context_id: Option<i64>,
    pub offset: (f64, f64),
    pub framed: bool,
}

impl FrameContext {
    /// The same document, in another of its execution contexts.
    fn in_context(&self, context_id: i64) -> FrameContext {
        FrameContext {
            context_id: Some(context_id),
            ..self.clone()
        }
    }
}

impl Page {
    pub(crate) fn new(
        browser: Arc<Browser>,
        tab: Tab,
        session: String,
        reservation: OwnedMutexGuard<()>,
        engine: Arc<Engine>,
    ) -> Page {
        Page {
            browser,
            tab,
            session,
            _reservation: reservation,
            engine,
        }
    }

    pub fn handle(&self) -> String {
        tab_handle(&self.browser, &self.tab)
    }

    /// The top document's context.
    pub fn top(&self) -> FrameContext {
        FrameContext {
            session: self.session.clone(),
            context_id: None,
            offset: (0.0, 0.0),
            framed: false,
        }
    }

    pub async fn cdp(&self, method: &str, params: Value, timeout: Duration) -> Result<Value> {
        Ok(self
            .browser
            .conn
            .call(Some(&self.session), method, params, timeout)
            .await?)
    }

    pub(crate) async fn cdp_in(
        &self,
        session: &str,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value> {
        Ok(self
            .browser
            .conn
            .call(Some(session), method, params, timeout)
            .await?)
    }

    /// Runs a page-script op and returns its JSON result.
    pub async fn run(
        &self,
        ctx: &FrameContext,
        op: &str,
        args: Value,
        timeout: Duration,
    ) -> Result<Value> {
        let reply = self.evaluate_op(ctx, op, &args, true, timeout).await?;
        Ok(reply["result"]["value"].clone())
    }

    /// Runs a page-script op, its result by value or as a remote object. The top
    /// document's ops run in tabwire's isolated world of it, where the script is installed
    /// once per document; a frame's context gets the whole script for the call.
    pub(crate) async fn evaluate_op(
        &self,
        ctx: &FrameContext,
        op: &str,
        args: &Value,
        by_value: bool,
        timeout: Duration,
    ) -> Result<Value> {
        if ctx.framed {
            let standalone = script::standalone_call(op, args);
            return self.evaluate_in(ctx, &standalone, by_value, timeout).await;
        }
        for attempt in 0..2 {
            let Some(world) = self.top_world(timeout).await else {
                break;
            };
            let in_world = ctx.in_context(world);
            let call = script::installed_call(op, args);
            match self.evaluate_in(&in_world, &call, by_value, timeout).await {
                // Neither failure ran the op, so the call is made again.
                Err(e) if e.to_string().contains(script::NOT_INSTALLED) => {
                    // Install only into a world asked for just now: a context id kept from
                    // an earlier document may name some other world by now.
                    tracing::debug!(op, "page script installed with the call");
                    self.browser
                        .update_tab(&self.tab.target_id, |tab| tab.top_world = None);
                    let Some(world) = self.top_world(timeout).await else {
                        break;
                    };
                    let in_world = ctx.in_context(world);
                    let install = script::install_and_call(op, args);
                    return self
                        .evaluate_in(&in_world, &install, by_value, timeout)
                        .await;
                }
                Err(e) if attempt == 0 && e.to_string().contains("Cannot find context") => {
                    // The document was replaced since the world was made.
                    tracing::debug!(op, "stale isolated world; made anew");
                    self.browser
                        .update_tab(&self.tab.target_id, |tab| tab.top_world = None);
                }
                other => return other,
            }
        }
        // No isolated world to be had (no document yet, or the browser refused one): the
        // whole script, in the main world, for this call.
        let standalone = script::standalone_call(op, args);
        self.evaluate_in(ctx, &standalone, by_value, timeout).await
    }

    /// tabwire's isolated world of the top document, made on first use per document.
    async fn top_world(&self, timeout: Duration) -> Option<i64> {
        let tab = self.browser.tab_by_target(&self.tab.target_id)?;
        if let Some(world) = tab.top_world {
            return Some(world);
        }
        make_top_world(&self.browser, &self.tab.target_id, &self.session, timeout).await
    }

    /// Runtime.evaluate in a context; a thrown exception becomes `script_error`.
    async fn evaluate_in(
        &self,
        ctx: &FrameContext,
        expression: &str,
        by_value: bool,
        timeout: Duration,
    ) -> Result<Value> {
        let mut params = json!({
            "expression": expression,
            "returnByValue": by_value,
            "awaitPromise": true,
        });
        if let Some(id) = ctx.context_id {
            params["contextId"] = json!(id);
        }
        let reply = self
            .cdp_in(&ctx.session, "Runtime.evaluate", params, timeout)
            .await?;
        if let Some(details) = reply.get("exceptionDetails") {
            return Err(EngineError::page(
                "script_error",
                exception_text(details),
                Value::Null,
            ));
        }
        Ok(reply)
    }

    /// Runs a page-script op whose result must have `status: "ok"`; any other status
    /// becomes an error with that code and the page's explanation.
    pub async fn run_ok(
        &self,
        ctx: &FrameContext,
        op: &str,
        args: Value,
        timeout: Duration,
    ) -> Result<Value> {
        let result = self.run(ctx, op, args, timeout).await?;
        check_status(result)
    }

    /// Walks a frame path (a list of locators, each naming an iframe in the document
    /// before it) to the context of the innermost document.
    pub async fn frame_context(&self, path: &[Value], timeout: Duration) -> Result<FrameContext> {
        let mut ctx = self.top();
        for (depth, locator) in path.iter().enumerate() {
            let box_ = self
                .run_ok(&ctx, "frame_box", json!({ "locator": locator }), timeout)
                .await
                .map_err(|e| frame_error(e, depth))?;
            let frame_id = self.frame_id_of(&ctx, locator, timeout).await?;
            let child_session = self
                .browser
                .tab_by_target(&self.tab.target_id)
                .and_then(|tab| tab.child_sessions.get(&frame_id).cloned());
            let session = child_session.unwrap_or_else(|| ctx.session.clone());
            let world = self
                .cdp_in(
                    &session,
                    "Page.createIsolatedWorld",
                    json!({"frameId": frame_id, "worldName": script::WORLD, "grantUniveralAccess": false}),
                    timeout,
                )
                .await
                .map_err(|e| {
                    EngineError::page("stale_frame", format!("frame {depth} cannot be entered: {e}"), Value::Null)
                })?;
            ctx = FrameContext {
                session,
                context_id: world["executionContextId"].as_i64(),
                offset: (
                    ctx.offset.0 + box_["x"].as_f64().unwrap_or(0.0),
                    ctx.offset.1 + box_["y"].as_f64().unwrap_or(0.0),
                ),
                framed: true,
            };
        }
        Ok(ctx)
    }

    async fn frame_id_of(
        &self,
        ctx: &FrameContext,
        locator: &Value,
        timeout: Duration,
    ) -> Result<String> {
        let args = json!({ "locator": locator });
        let reply = self
            .evaluate_op(ctx, "element", &args, false, timeout)
            .await?;
        let object_id = match reply["result"]["subtype"].as_str() {
            Some("node") => reply["result"]["objectId"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            _ => {
                return Err(EngineError::page(
                    "not_found",
                    "frame locator did not name an iframe",
                    json!({ "frame": locator }),
                ));
            }
        };
        let node = self
            .cdp_in(
                &ctx.session,
                "DOM.describeNode",
                json!({ "objectId": object_id }),
                timeout,
            )
            .await?;
        let _ = self
            .cdp_in(
                &ctx.session,
                "Runtime.releaseObject",
                json!({ "objectId": object_id }),
                timeout,
            )
            .await;
        node["node"]["frameId"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| {
                EngineError::page(
                    "not_a_frame",
                    "frame locator names an element that is not an iframe",
                    json!({ "frame": locator }),
                )
            })
    }

    pub async fn current_url(&self) -> Result<(String, String)> {
        let info = self
            .browser
            .conn
            .call(
                None,
                "Target.getTargetInfo",
                json!({"targetId": self.tab.target_id}),
                HOUSEKEEPING,
            )
            .await?;
        Ok((
            info["targetInfo"]["url"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            info["targetInfo"]["title"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        ))
    }

    /// Sets how dialogs opened from now on are answered; returns those answered so far.
    pub fn set_dialog_policy(&self, policy: DialogPolicy) -> Vec<Dialog> {
        let mut answered = Vec::new();
        self.browser.update_tab(&self.tab.target_id, |tab| {
            tab.dialog_policy = policy;
            answered = std::mem::take(&mut tab.answered_dialogs);
        });
        answered
    }

    pub fn take_answered_dialogs(&self) -> Vec<Dialog> {
        let mut answered = Vec::new();
        self.browser.update_tab(&self.tab.target_id, |tab| {
            answered = std::mem::take(&mut tab.answered_dialogs);
        });
        answered
    }

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
                "navigation_failed",
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
                .update_tab(&self.tab.target_id, Tab::new_document);
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
        poll(timeout, "wait_for", || async {
            let result = check_status(self.run(ctx, "probe", probe.clone(), timeout).await?)?;
            Ok(result["matched"].as_bool() == Some(!gone))
        })
        .await
    }

    /// Polls a caller's expression until it is truthy (or falsy, with `gone`).
    pub async fn wait_js(&self, expression: &str, gone: bool, timeout: Duration) -> Result<Value> {
        poll(timeout, "wait_for js", || async {
            let reply = self
                .cdp(
                    "Runtime.evaluate",
                    json!({"expression": expression, "returnByValue": true, "awaitPromise": true, "replMode": true}),
                    timeout,
                )
                .await?;
            if let Some(details) = reply.get("exceptionDetails") {
                return Err(EngineError::page("script_error", exception_text(details), Value::Null));
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
        let mut waited = poll(timeout, "wait_for_url", || async {
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

/// Errors a navigation in progress causes; the next check sees the new document.
fn transient(error: &EngineError) -> bool {
    match error {
        EngineError::Cdp(cdp::CdpError::Protocol { .. }) => true,
        EngineError::Page { code, message, .. } => {
            code == "script_error" && (message.contains("context") || message.contains("navigat"))
        }
        _ => false,
    }
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

/// Asks for tabwire's world in a tab's top document and records its context. The browser
/// keeps one world per name and frame (where it installed the page script), so asking
/// twice is harmless.
async fn make_top_world(
    browser: &Browser,
    target: &str,
    session: &str,
    timeout: Duration,
) -> Option<i64> {
    let tab = browser.tab_by_target(target)?;
    let (frame, document) = (tab.main_frame?, tab.document_seq);
    let created = browser
        .conn
        .call(
            Some(session),
            "Page.createIsolatedWorld",
            json!({"frameId": frame, "worldName": script::WORLD, "grantUniveralAccess": false}),
            timeout,
        )
        .await
        .ok()?;
    let world = created["executionContextId"].as_i64()?;
    tracing::debug!(world, "isolated world for the top document");
    // Recorded only if no new document arrived while asking.
    browser.update_tab(target, |tab| {
        if tab.document_seq == document {
            tab.top_world = Some(world);
        }
    });
    Some(world)
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

pub(crate) fn check_status(result: Value) -> Result<Value> {
    let status = result["status"].as_str().map(str::to_owned);
    match status.as_deref() {
        Some("ok") => Ok(result),
        Some(code) => {
            let message = result["message"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| code.replace('_', " "));
            Err(EngineError::page(code, message, result))
        }
        None => Err(EngineError::page(
            "script_error",
            "the page script returned nothing (is the page still loading?)",
            result,
        )),
    }
}

fn frame_error(error: EngineError, depth: usize) -> EngineError {
    match error {
        EngineError::Page {
            code,
            message,
            details,
        } => EngineError::Page {
            code,
            message: format!("frame path step {depth}: {message}"),
            details,
        },
        other => other,
    }
}

pub(crate) fn exception_text(details: &Value) -> String {
    let description = details["exception"]["description"].as_str();
    let text = details["text"].as_str().unwrap_or("script threw");
    description
        .map(|d| d.lines().next().unwrap_or(d).to_owned())
        .unwrap_or_else(|| text.to_owned())
}

/// Schemes an agent may navigate to. `file:` and browser-internal pages are refused:
/// they read local files and browser settings.
pub fn check_url_scheme(url: &str) -> Result<()> {
    let lower = url.trim().to_ascii_lowercase();
    let allowed = ["http://", "https://", "about:blank", "data:"];
    if allowed.iter().any(|prefix| lower.starts_with(prefix)) {
        return Ok(());
    }
    Err(EngineError::Refused {
        code: "url_scheme_refused".into(),
        message: format!(
            "url: '{url}' is refused; only http, https, data: and about:blank URLs can be opened"
        ),
    })
}
