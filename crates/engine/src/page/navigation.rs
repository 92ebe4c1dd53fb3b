//! Navigation and waits: going to a URL and waiting for its load, and polling a page
//! condition (a selector, text, a URL, an agent's expression) until it holds.

use crate::ids::Deadline;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::locator::Locator;
use super::{Page, check_status};
use crate::browser::{Dialog, DialogPolicy, exception_text};
use crate::error::{EngineError, ErrorCode, Input, Result};

/// How often condition waits re-check the page. The check itself is one round trip.
const POLL: Duration = Duration::from_millis(40);

/// Where a navigation landed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Navigated {
    pub url: String,
    pub title: String,
    /// Whether the load event came before the deadline (false: still loading).
    pub loaded: bool,
    /// The URL was a download, not a page: nothing was shown.
    pub download: bool,
    /// The frame and the loader of the new document, as the browser names them (none for
    /// a move within the document).
    pub frame_id: Option<String>,
    pub loader_id: Option<String>,
}

impl Navigated {
    /// BrowserTap's words for the load state (`complete`, `loading`).
    pub fn load_status(&self) -> &'static str {
        if self.loaded { "complete" } else { "loading" }
    }
}

impl Page {
    /// Navigates and waits for the load event (or the deadline).
    pub async fn navigate(&self, url: &str, deadline: Deadline) -> Result<Navigated> {
        check_url_scheme(url)?;
        self.load_with("Page.navigate", json!({ "url": url }), url, deadline)
            .await
    }

    /// Navigates with dialogs the old page opens on the way out (a leave-page prompt)
    /// answered by `policy`; the tab's own policy is back afterwards, however the call
    /// ends. Returns the navigation and the dialogs answered.
    pub async fn navigate_answering(
        &self,
        url: &str,
        policy: DialogPolicy,
        deadline: Deadline,
    ) -> Result<(Navigated, Vec<Dialog>)> {
        let scope = self.dialog_policy_for(policy);
        let navigated = self.navigate(url, deadline).await;
        let dialogs = scope.finish();
        Ok((navigated?, dialogs))
    }

    /// Reloads the page and waits for its load event (or the deadline).
    pub async fn reload(&self, deadline: Deadline) -> Result<Navigated> {
        let (url, _) = self.current_url().await?;
        self.load_with("Page.reload", json!({}), &url, deadline)
            .await
    }

    /// Goes `steps` entries back (negative) or forward in the tab's history and waits for
    /// the page to be shown (a load, a restore from the back-forward cache, or a
    /// same-document move).
    pub async fn go_history(&self, steps: i64, deadline: Deadline) -> Result<Navigated> {
        let history = self
            .cdp("Page.getNavigationHistory", json!({}), deadline)
            .await?;
        let current = history["currentIndex"].as_i64().unwrap_or_default();
        let entries = history["entries"].as_array().cloned().unwrap_or_default();
        let wanted = current + steps;
        let Some(entry) = usize::try_from(wanted).ok().and_then(|i| entries.get(i)) else {
            let way = if steps < 0 { "back" } else { "forward" };
            return Err(EngineError::page(
                ErrorCode::NoHistory,
                format!("the tab has no page to go {way} to"),
                json!({ "current_index": current, "entries": entries.len() }),
            ));
        };
        let url = entry["url"].as_str().unwrap_or_default().to_owned();
        self.load_with(
            "Page.navigateToHistoryEntry",
            json!({ "entryId": entry["id"] }),
            &url,
            deadline,
        )
        .await
    }

    /// Sends a command that loads a document and waits until it is shown.
    async fn load_with(
        &self,
        method: &str,
        params: Value,
        url: &str,
        deadline: Deadline,
    ) -> Result<Navigated> {
        let mut events = self.browser.conn.subscribe();
        let reply = self.cdp(method, params, deadline).await?;
        let deadline = deadline.at();
        let frame_id = reply["frameId"].as_str().map(str::to_owned);
        let loader_id = reply["loaderId"].as_str().map(str::to_owned);
        if reply["isDownload"] == true {
            return Ok(Navigated {
                url: url.to_owned(),
                title: String::new(),
                loaded: true,
                download: true,
                frame_id,
                loader_id,
            });
        }
        if let Some(error) = reply["errorText"].as_str().filter(|e| !e.is_empty()) {
            return Err(EngineError::page(
                ErrorCode::NavigationFailed,
                format!("navigation to {url} failed: {error}"),
                json!({
                    "url": url, "error_text": error,
                    "frame_id": frame_id, "loader_id": loader_id,
                }),
            ));
        }
        // Page.navigate names the new document's loader; a same-document move has none.
        let mut same_document = method == "Page.navigate" && reply.get("loaderId").is_none();
        let mut loaded = true;
        if !same_document {
            let main_frame = self
                .browser
                .tab_by_target(&self.tab.target_id)
                .and_then(|tab| tab.main_frame.clone())
                .unwrap_or_else(|| self.tab.target_id.clone());
            let within = std::sync::atomic::AtomicBool::new(false);
            loaded = wait_event(&mut events, deadline, |event| {
                let mine = event.session_id.as_deref() == Some(&self.session);
                let moved_within = mine && event.method == "Page.navigatedWithinDocument";
                within.store(moved_within, std::sync::atomic::Ordering::Relaxed);
                mine && (event.method == "Page.loadEventFired"
                    || moved_within
                    || (event.method == "Page.frameNavigated"
                        && event.params["type"] == "BackForwardCacheRestore"
                        && event.params["frame"]["id"] == main_frame.as_str()))
            })
            .await;
            // A history move can stay in the document too.
            same_document = within.load(std::sync::atomic::Ordering::Relaxed);
        }
        if !same_document {
            // A new document: do not wait for the event tracker to notice.
            self.browser
                .update_tab(&self.tab.target_id, |tab| tab.new_document());
            if loaded {
                self.prepare_world();
            }
        }
        // A new entry (Page.navigate to a new document) is what the browser's record
        // describes best: it answers without waiting for the page's main thread, busy
        // right after the load (a page-side read costs a navigation about 6 ms; `bench
        // floor`).
        let new_entry = method == "Page.navigate" && !same_document;
        let (url, title) = self.landed(new_entry).await?;
        Ok(Navigated {
            url,
            title,
            loaded,
            download: false,
            frame_id,
            loader_id,
        })
    }

    /// Where a navigation landed: a new entry's URL and title from the browser's record
    /// when it has the title already (it learns it from the page a moment after the page
    /// has it); otherwise, and after a reload, a history move or a same-document move
    /// (where the record may still hold an earlier visit's title), from the page; the
    /// target's own record when the page cannot answer.
    async fn landed(&self, new_entry: bool) -> Result<(String, String)> {
        if new_entry
            && let Some((url, title)) = self.history_entry().await
            && !url.is_empty()
            && !title.is_empty()
        {
            return Ok((url, title));
        }
        match self.url_and_title().await {
            Ok((url, title)) if !url.is_empty() => Ok((url, title)),
            _ => self.current_url().await,
        }
    }

    /// The URL and title of the tab's current history entry, as the browser has them.
    async fn history_entry(&self) -> Option<(String, String)> {
        let history = self
            .cdp(
                "Page.getNavigationHistory",
                json!({}),
                Deadline::after(crate::browser::HOUSEKEEPING),
            )
            .await
            .ok()?;
        let index = usize::try_from(history["currentIndex"].as_u64()?).ok()?;
        let entry = &history["entries"][index];
        Some((
            entry["url"].as_str()?.to_owned(),
            entry["title"].as_str()?.to_owned(),
        ))
    }

    /// The page's URL and title as the page has them now (the browser learns a new title
    /// a moment after the page does).
    pub async fn url_and_title(&self) -> Result<(String, String)> {
        let reply = self
            .cdp(
                "Runtime.evaluate",
                json!({ "expression": "[location.href, document.title]", "returnByValue": true }),
                Deadline::after(crate::browser::HOUSEKEEPING),
            )
            .await?;
        let value = &reply["result"]["value"];
        Ok((
            value[0].as_str().unwrap_or_default().to_owned(),
            value[1].as_str().unwrap_or_default().to_owned(),
        ))
    }

    /// Where the top document is and how far it has loaded.
    pub async fn readiness(&self) -> Result<Readiness> {
        let state = self
            .run(
                &self.top(),
                "readiness",
                json!({}),
                Deadline::after(crate::browser::HOUSEKEEPING),
            )
            .await?;
        let text = |key: &str| state[key].as_str().unwrap_or_default().to_owned();
        Ok(Readiness {
            url: text("url"),
            title: text("title"),
            ready_state: text("ready_state"),
        })
    }

    /// Waits up to `patience` for the top document to finish loading; whether it did.
    pub async fn wait_ready(&self, patience: Duration) -> bool {
        let top = self.top();
        poll(
            Deadline::after(patience),
            "waiting for the page to load",
            || async {
                let state = self
                    .run(&top, "readiness", json!({}), Deadline::after(patience))
                    .await?;
                Ok(state["ready_state"] == "complete")
            },
        )
        .await
        .is_ok()
    }

    /// How many top documents the tab has had (a navigation adds one).
    pub fn document_seq(&self) -> u64 {
        self.browser
            .tab_by_target(&self.tab.target_id)
            .map_or(0, |tab| tab.document_seq)
    }

    /// Whether a new top document came since `before` (a `document_seq`); with `wait`,
    /// waits until the deadline for one to come and finish loading.
    pub async fn navigation_since(&self, before: u64, wait: bool, deadline: Deadline) -> bool {
        if !wait {
            return self.document_seq() != before;
        }
        let top = self.top();
        poll(deadline, "waiting for the navigation", || async {
            if self.document_seq() == before {
                return Ok(false);
            }
            let state = self.run(&top, "readiness", json!({}), deadline).await?;
            Ok(state["ready_state"] == "complete")
        })
        .await
        .is_ok()
            || self.document_seq() != before
    }

    /// How far the page is scrolled (CSS px).
    pub async fn scroll_offset(&self, deadline: Deadline) -> Result<(f64, f64)> {
        let reply = self
            .cdp(
                "Runtime.evaluate",
                json!({ "expression": "[window.scrollX, window.scrollY]", "returnByValue": true }),
                deadline,
            )
            .await?;
        let value = &reply["result"]["value"];
        Ok((
            value[0].as_f64().unwrap_or_default(),
            value[1].as_f64().unwrap_or_default(),
        ))
    }

    /// Waits until a condition holds (or, with `gone`, stops holding).
    pub async fn wait_for(
        &self,
        condition: &Condition,
        gone: bool,
        deadline: Deadline,
    ) -> Result<Waited> {
        let (ctx, probe) = match condition {
            Condition::Script(expression) => return self.wait_js(expression, gone, deadline).await,
            Condition::Element(locator) => {
                let placed = self.place(locator)?;
                let ctx = self.frame_context(&placed.frame, deadline).await?;
                (ctx, json!({ "selector": placed.find }))
            }
            Condition::Text(text) => (self.top(), json!({ "text": text })),
            Condition::Url(pattern) => (self.top(), json!({ "url_pattern": pattern })),
        };
        poll(deadline, "waiting for the condition", || async {
            let result = check_status(self.run(&ctx, "probe", probe.clone(), deadline).await?)?;
            Ok(result["matched"].as_bool() == Some(!gone))
        })
        .await
    }

    /// Polls a caller's expression until it is truthy (or falsy, with `gone`).
    async fn wait_js(&self, expression: &str, gone: bool, deadline: Deadline) -> Result<Waited> {
        poll(deadline, "waiting for the expression", || async {
            let reply = self
                .cdp(
                    "Runtime.evaluate",
                    json!({"expression": expression, "returnByValue": true, "awaitPromise": true, "replMode": true}),
                    deadline,
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
        deadline: Deadline,
    ) -> Result<(Waited, Readiness)> {
        let top = self.top();
        let waited = poll(deadline, "waiting for the URL", || async {
            let matched = check_status(
                self.run(&top, "probe", json!({ "url_pattern": pattern }), deadline)
                    .await?,
            )?;
            if matched["matched"] != true {
                return Ok(false);
            }
            let state = self.run(&top, "readiness", json!({}), deadline).await?;
            Ok(!ready || state["ready_state"] == "complete")
        })
        .await?;
        // The document that matched may be replaced a moment later (a redirect, the world
        // made anew): read where the tab is from whichever document it shows now.
        let mut state = self.readiness().await;
        for _ in 0..3 {
            match &state {
                Err(error) if transient(error) => state = self.readiness().await,
                _ => break,
            }
        }
        Ok((waited, state?))
    }
}

/// What a wait waits for.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// An element a locator names is on the page.
    Element(Locator),
    /// The page's visible text holds this.
    Text(String),
    /// The URL matches this (a regex, else a substring).
    Url(String),
    /// A script's expression is truthy (awaited if it is a promise).
    Script(String),
}

/// How a wait ended: how long until its condition held, after how many checks.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Waited {
    pub elapsed_ms: u64,
    pub checks: u32,
}

/// Where a document is and how far it has loaded (`document.readyState`).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Readiness {
    pub url: String,
    pub title: String,
    pub ready_state: String,
}

/// Re-checks `check` until it says true or the deadline passes. A check that fails
/// because a navigation replaced the document is simply tried again.
async fn poll<F, Fut>(deadline: Deadline, what: &str, mut check: F) -> Result<Waited>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<bool>>,
{
    let started = Instant::now();
    let seconds = deadline.budget().as_secs_f64();
    let deadline = deadline.at();
    let mut checks = 0u32;
    loop {
        checks += 1;
        match tokio::time::timeout_at(deadline, check()).await {
            Ok(Ok(true)) => {
                return Ok(Waited {
                    elapsed_ms: started.elapsed().as_millis() as u64,
                    checks,
                });
            }
            Ok(Ok(false)) => {}
            Ok(Err(error)) if transient(&error) => {}
            // A check cut off by the deadline it shares with the wait: the wait timed out.
            Ok(Err(_)) if Instant::now() >= deadline => {}
            Ok(Err(error)) => return Err(error),
            Err(_) => {}
        }
        if Instant::now() + POLL > deadline {
            return Err(EngineError::Timeout {
                what: what.to_owned(),
                seconds,
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
    next_event(events, deadline, matches).await.is_some()
}

/// The first event matching `matches` before `deadline`.
pub(crate) async fn next_event(
    events: &mut tokio::sync::broadcast::Receiver<Arc<cdp::Event>>,
    deadline: Instant,
    matches: impl Fn(&cdp::Event) -> bool,
) -> Option<Arc<cdp::Event>> {
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Ok(event)) if matches(&event) => return Some(event),
            Ok(Ok(_)) | Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
            Ok(Err(_)) | Err(_) => return None,
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
