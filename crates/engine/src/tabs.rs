//! Tab-level operations: listing, choosing a session's default, activating, opening
//! exactly once, closing only what one owns, and answering dialogs.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};

use crate::browser::{HOUSEKEEPING, Tab, lock};
use crate::engine::{AgentSession, tab_handle};
use crate::error::{EngineError, Result};
use crate::page::check_url_scheme;

/// What the engine remembers of an `open_new_tab`, keyed by its operation id, so a
/// retried call with the same id never creates a second tab.
#[derive(Debug, Clone)]
pub(crate) enum Creation {
    Pending,
    Done {
        tab_id: u64,
        handle: String,
        generation: u64,
        owner_id: String,
    },
    Failed(String),
}

#[derive(Default)]
pub(crate) struct Creations {
    by_operation: Mutex<HashMap<String, (u64, Creation)>>,
    /// Tabs an agent owned, kept after they close so cleanup can say `already_gone`.
    pub(crate) owned: Mutex<HashMap<u64, String>>,
}

pub struct OpenTabRequest {
    pub url: String,
    pub active: bool,
    pub owner_id: Option<String>,
    pub operation_id: Option<String>,
    pub timeout: Duration,
}

fn tab_json(engine_tab: &Tab, handle: String, default: Option<u64>) -> Value {
    let mut tab = json!({
        "session_id": handle,
        "tab_id": engine_tab.tab_id,
        "url": engine_tab.url,
        "title": engine_tab.title,
        "generation": engine_tab.generation,
    });
    if let Some(owner) = &engine_tab.owner_id {
        tab["owned"] = json!(true);
        tab["owner_id"] = json!(owner);
    }
    if default == Some(engine_tab.tab_id) {
        tab["default"] = json!(true);
    }
    tab
}

impl AgentSession {
    /// Tabs an agent can drive (`all` adds chrome-extension:// and other internal pages).
    pub async fn list_tabs(&self, all: bool) -> Result<Value> {
        let default = self.default_tab();
        let mut tabs = Vec::new();
        let mut default_id = None;
        // Every linked browser (the extension link can have several profiles at once).
        for browser in self.engine.all_browsers().await? {
            for tab in browser.tabs() {
                if default == Some(tab.tab_id) {
                    default_id = Some(tab_handle(&browser, &tab));
                }
                if all || !tab.url.starts_with("chrome-extension://") {
                    tabs.push(tab_json(&tab, tab_handle(&browser, &tab), default));
                }
            }
        }
        Ok(json!({
            "tabs": tabs,
            "count": tabs.len(),
            "default_session_id": default_id,
            "default_session_settled": true,
        }))
    }

    /// Makes a tab this session's default; `url_pattern` must match exactly one tab.
    pub async fn switch_tab(
        &self,
        handle: Option<&str>,
        url_pattern: Option<&str>,
    ) -> Result<(String, Tab)> {
        let (browser, tab) = match (handle, url_pattern) {
            (Some(handle), _) => self.engine.find_tab(handle).await?,
            (None, Some(pattern)) => {
                let browser = self.engine.browser().await?;
                let matches: Vec<Tab> = browser
                    .tabs()
                    .into_iter()
                    .filter(|tab| tab.url.contains(pattern))
                    .collect();
                match matches.as_slice() {
                    [one] => {
                        let one = one.clone();
                        (browser, one)
                    }
                    [] => {
                        return Err(EngineError::page(
                            "not_found",
                            format!("url_pattern: no tab URL contains '{pattern}'"),
                            Value::Null,
                        ));
                    }
                    many => {
                        let candidates: Vec<String> =
                            many.iter().map(|t| tab_handle(&browser, t)).collect();
                        return Err(EngineError::page(
                            "ambiguous",
                            format!(
                                "url_pattern: {} tabs match '{pattern}'; pass one session_id",
                                many.len()
                            ),
                            json!({ "candidates": candidates }),
                        ));
                    }
                }
            }
            (None, None) => {
                return Err(EngineError::invalid(
                    "session_id",
                    "give session_id or url_pattern",
                ));
            }
        };
        self.set_default(tab.tab_id);
        Ok((tab_handle(&browser, &tab), tab))
    }

    /// This session's default tab as a handle, if it has one and a browser is connected.
    /// Never launches a browser.
    pub async fn default_handle(&self) -> Option<String> {
        let id = self.default_tab()?;
        let browsers = match &self.engine.config.link {
            crate::engine::LinkConfig::Extension => self.engine.live_links(),
            _ => self.engine.current_browser().await.into_iter().collect(),
        };
        browsers
            .iter()
            .find_map(|b| b.tab_by_id(id).map(|tab| tab_handle(b, &tab)))
    }

    /// Brings a tab to the front and reports whether the page now says it is visible.
    pub async fn activate_tab(&self, handle: Option<&str>) -> Result<Value> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        browser
            .conn
            .call(
                None,
                "Target.activateTarget",
                json!({"targetId": tab.target_id}),
                HOUSEKEEPING,
            )
            .await?;
        let page = self.page(Some(&tab_handle(&browser, &tab))).await?;
        let visible = page
            .cdp(
                "Runtime.evaluate",
                json!({"expression": "document.visibilityState", "returnByValue": true}),
                HOUSEKEEPING,
            )
            .await
            .ok()
            .and_then(|r| r["result"]["value"].as_str().map(|s| s == "visible"));
        Ok(json!({ "activated": true, "on_screen": visible.unwrap_or(false) }))
    }

    /// Opens a tab exactly once per operation id.
    pub async fn open_new_tab(&self, request: OpenTabRequest) -> Result<Value> {
        check_url_scheme(&request.url)?;
        let engine = &self.engine;
        if let Some(id) = &request.operation_id {
            return self.recover_creation(id);
        }
        let operation_id = format!("create-{}-{:x}", self.id, unique());
        let owner_id = request
            .owner_id
            .clone()
            .unwrap_or_else(|| format!("owner-{:x}", unique()));
        lock(&engine.creations.by_operation)
            .insert(operation_id.clone(), (self.id, Creation::Pending));
        // The tab starts blank and is navigated like any other, so its load is awaited by
        // the one navigation path.
        let created = async {
            let browser = engine.browser().await?;
            let tab = engine
                .open_tab("about:blank", request.active, Some(&owner_id))
                .await?;
            Ok::<_, EngineError>((browser, tab))
        }
        .await;
        let (browser, tab) = match created {
            Ok(done) => done,
            Err(error) => {
                // A create that failed before the browser answered may or may not exist.
                let may_have_created =
                    matches!(error, EngineError::Cdp(cdp::CdpError::Timeout { .. }));
                lock(&engine.creations.by_operation).insert(
                    operation_id.clone(),
                    (self.id, Creation::Failed(error.to_string())),
                );
                if may_have_created {
                    return Ok(json!({
                        "status": "unknown", "operation_id": operation_id, "owner_id": owner_id,
                        "may_have_created": true, "retry_safe": false,
                        "message": "the browser did not confirm the tab; recover with the same operation_id",
                    }));
                }
                return Err(error);
            }
        };
        lock(&engine.creations.by_operation).insert(
            operation_id.clone(),
            (
                self.id,
                Creation::Done {
                    tab_id: tab.tab_id,
                    handle: tab_handle(&browser, &tab),
                    generation: tab.generation,
                    owner_id: owner_id.clone(),
                },
            ),
        );
        lock(&engine.creations.owned).insert(tab.tab_id, owner_id.clone());
        let navigation = match self.page(Some(&tab_handle(&browser, &tab))).await {
            Ok(page) => page.navigate(&request.url, request.timeout).await,
            Err(error) => Err(error),
        };
        let load_status = match &navigation {
            Ok(nav) => nav["load_status"].as_str().unwrap_or("complete").to_owned(),
            Err(error) => format!("failed: {error}"),
        };
        let current = browser.tab_by_id(tab.tab_id).unwrap_or(tab);
        Ok(json!({
            "status": "created",
            "operation_id": operation_id,
            "session_id": tab_handle(&browser, &current),
            "tab_id": current.tab_id,
            "client_id": browser.client_id,
            "generation": current.generation,
            "ready": true,
            "owned": true,
            "owner_id": owner_id,
            "opener": current.opener,
            "url": current.url,
            "load_status": load_status,
        }))
    }

    fn recover_creation(&self, operation_id: &str) -> Result<Value> {
        let record = lock(&self.engine.creations.by_operation)
            .get(operation_id)
            .cloned();
        let reply = match record {
            Some((session, _)) if session != self.id => {
                return Err(EngineError::Refused {
                    code: "foreign_operation".into(),
                    message: format!(
                        "operation_id: '{operation_id}' belongs to another MCP session"
                    ),
                });
            }
            Some((
                _,
                Creation::Done {
                    tab_id,
                    handle,
                    generation,
                    owner_id,
                },
            )) => json!({
                "status": "recovered", "operation_id": operation_id, "tab_id": tab_id,
                "session_id": handle,
                "generation": generation, "owner_id": owner_id, "owned": true,
                "replayed": false,
            }),
            Some((_, Creation::Pending)) => json!({
                "status": "pending", "operation_id": operation_id, "may_have_created": true, "retry_safe": false,
            }),
            Some((_, Creation::Failed(reason))) => json!({
                "status": "failed", "operation_id": operation_id, "message": reason,
                "may_have_created": false, "retry_safe": true,
            }),
            None => json!({
                "status": "unknown", "operation_id": operation_id, "may_have_created": null,
                "retry_safe": false,
                "reconciliation": { "resume_required": false, "next_action": "list_tabs" },
                "message": "no record of this operation in this server; inspect list_tabs before creating another tab",
            }),
        };
        Ok(reply)
    }

    /// Closes tabs; by default only those whose owner_id matches.
    pub async fn close_tabs(
        &self,
        handles: &[String],
        owner_id: Option<&str>,
        only_if_owned: bool,
    ) -> Result<Value> {
        if only_if_owned && owner_id.is_none() {
            return Err(EngineError::invalid(
                "owner_id",
                "required while only_if_agent_owned=true (pass the owner_id open_new_tab returned, or only_if_agent_owned=false when the user asked to close a tab you did not open)",
            ));
        }
        let browser = self.engine.browser().await?;
        let mut results = Vec::new();
        for handle in handles {
            let tab_id = crate::engine::parse_tab_handle(handle, &browser.client_id)?;
            let Some(tab) = browser.tab_by_id(tab_id) else {
                let was_owned = lock(&self.engine.creations.owned).get(&tab_id).cloned();
                let status = match was_owned {
                    Some(_) => {
                        json!({"tab_id": tab_id, "status": "already_gone", "closed_by": "user"})
                    }
                    None => json!({"tab_id": tab_id, "status": "not_found"}),
                };
                results.push(status);
                continue;
            };
            let owned = tab.owner_id.is_some() && tab.owner_id.as_deref() == owner_id;
            if only_if_owned && !owned {
                results.push(json!({
                    "tab_id": tab_id, "status": "refused", "error_code": "not_owned",
                    "message": "this tab was not opened by this owner_id; pass only_if_agent_owned=false only if the user asked to close it",
                }));
                continue;
            }
            let closed = browser
                .conn
                .call(
                    None,
                    "Target.closeTarget",
                    json!({"targetId": tab.target_id}),
                    HOUSEKEEPING,
                )
                .await;
            // Forget it now rather than when the destroyed event arrives, so an
            // immediate retry sees it gone.
            browser.forget_tab(&tab.target_id);
            match closed {
                Ok(_) => results.push(json!({
                    "tab_id": tab_id, "status": "closed",
                    "closed_by": if owned { "agent" } else { "none" },
                })),
                // Closed by someone else between our look-up and the close.
                Err(cdp::CdpError::Protocol { .. }) => results.push(json!({
                    "tab_id": tab_id, "status": "already_gone", "closed_by": "user",
                })),
                Err(other) => return Err(other.into()),
            }
        }
        let refused = results.iter().filter(|r| r["status"] == "refused").count();
        if refused == results.len() && refused > 0 {
            return Err(EngineError::page(
                "not_owned",
                "no tab was closed: none is owned by this owner_id",
                json!({ "results": results }),
            ));
        }
        Ok(json!({ "results": results }))
    }

    /// Reports or answers a dialog left open on a tab. Does not reserve the tab: the call
    /// that opened the dialog still holds it.
    pub async fn handle_dialog(
        &self,
        handle: Option<&str>,
        action: &str,
        prompt_text: Option<&str>,
        timeout: Duration,
    ) -> Result<Value> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        let Some(dialog) = wait_for_dialog(&browser, &tab, timeout).await else {
            return Ok(json!({ "status": "no_dialog" }));
        };
        let accept = match action {
            "manual" => return Ok(json!({ "status": "blocked_by_dialog", "dialog": dialog })),
            "accept" => true,
            "dismiss" => false,
            other => {
                return Err(EngineError::invalid(
                    "action",
                    format!("'{other}' is not manual, accept or dismiss"),
                ));
            }
        };
        let session = tab
            .session
            .clone()
            .ok_or_else(|| EngineError::NoSuchTab(tab_handle(&browser, &tab)))?;
        let mut params = json!({ "accept": accept });
        if let Some(text) = prompt_text {
            params["promptText"] = json!(text);
        }
        browser
            .conn
            .call(
                Some(&session),
                "Page.handleJavaScriptDialog",
                params,
                timeout,
            )
            .await?;
        browser.update_tab(&tab.target_id, |t| t.open_dialog = None);
        Ok(json!({
            "status": if accept { "accepted" } else { "dismissed" },
            "dialog": dialog,
            "prompt_text": prompt_text,
        }))
    }
}

fn unique() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or_default()
        ^ (u64::from(std::process::id()) << 40)
}

impl AgentSession {
    /// Answers a leave-page (beforeunload) prompt with protocol accepts only. There is
    /// no OS-level input here: if the prompt survives two accepts, the user must act.
    pub async fn resolve_leave_dialog(&self, handle: Option<&str>) -> Result<Value> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        let Some(dialog) = tab.open_dialog.clone() else {
            return Ok(json!({ "status": "no_dialog" }));
        };
        let session = tab
            .session
            .clone()
            .ok_or_else(|| EngineError::NoSuchTab(tab_handle(&browser, &tab)))?;
        for attempt in 1..=2 {
            let answered = browser
                .conn
                .call(
                    Some(&session),
                    "Page.handleJavaScriptDialog",
                    json!({ "accept": true }),
                    HOUSEKEEPING,
                )
                .await;
            if answered.is_ok() {
                browser.update_tab(&tab.target_id, |t| t.open_dialog = None);
                return Ok(
                    json!({ "status": "resolved", "dialog": dialog, "attempts": attempt, "physical_input": false }),
                );
            }
        }
        Ok(json!({
            "status": "requires_user_action", "dialog": dialog, "attempts": 2, "physical_input": false,
            "message": "two protocol accepts did not close the prompt; tabwire sends no OS-level keys, so the user must answer it",
        }))
    }
}

/// The dialog open on a tab, waiting up to `timeout` for one to open.
async fn wait_for_dialog(
    browser: &crate::browser::Browser,
    tab: &crate::browser::Tab,
    timeout: Duration,
) -> Option<crate::browser::Dialog> {
    // Subscribe before looking, so a dialog opening in between is not missed.
    let mut events = browser.conn.subscribe();
    let current = || {
        browser
            .tab_by_target(&tab.target_id)
            .and_then(|t| t.open_dialog)
    };
    if let Some(dialog) = current() {
        return Some(dialog);
    }
    let session = tab.session.clone()?;
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let event = match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Ok(event)) => event,
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => continue,
            _ => return current(),
        };
        if event.method == "Page.javascriptDialogOpening"
            && event.session_id.as_deref() == Some(session.as_str())
        {
            // Read it from the event itself: the tracker may record it a moment later.
            // Only a manual-policy dialog stays open; others are being answered already.
            let manual = browser
                .tab_by_target(&tab.target_id)
                .is_some_and(|t| t.dialog_policy == crate::browser::DialogPolicy::Manual);
            let p = &event.params;
            return current().or_else(|| {
                if !manual {
                    return None;
                }
                Some(crate::browser::Dialog {
                    kind: p["type"].as_str().unwrap_or("alert").to_owned(),
                    message: p["message"].as_str().unwrap_or_default().to_owned(),
                    default_prompt: p["defaultPrompt"].as_str().map(str::to_owned),
                    action: None,
                })
            });
        }
    }
}
