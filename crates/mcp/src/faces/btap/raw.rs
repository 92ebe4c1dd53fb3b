//! Raw CDP behind the policy: one command, BrowserTap's batch, the target list.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use engine::{EngineError, ErrorCode, Page};

use super::args::SessionOnly;
use super::args::page_by_tab_id;
use super::browser_data::{chrome_cookies, json_object};
use super::tabs::tab_json;
use crate::face::{Call, Reply, ToolError};
use crate::params::TabRef;
use crate::tool_params;

tool_params! {
    pub struct CdpCommand {
        method: String = Str, required, "e.g. Page.navigate";
        params_json: String = Str, default("{}"), "JSON object as text";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        tab_id: Option<TabRef> = TabId, nullable, "the browser's tab id, or a client:tab handle";
        extension_id: Option<String> = Str, nullable, "an extension's worker (not reachable here)";
        target_id: Option<String> = Str, nullable, "a page target id from debugger_targets";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(20.0), "seconds";
    }
}

tool_params! {
    pub struct CdpBatch {
        batch_json: String = Str, required, "{\"cmd\":\"batch\",\"commands\":[{\"cmd\":\"cdp\",\"method\":\"DOM.getDocument\",\"params\":{}},{\"cmd\":\"cdp\",\"method\":\"DOM.querySelector\",\"params\":{\"nodeId\":\"$0.root.nodeId\",\"selector\":\"h1\"}}]}";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

/// Raw commands wait at most this long (BrowserTap's bound).
const MAX_TIMEOUT_MS: u64 = 120_000;
const DEFAULT_TIMEOUT_MS: u64 = 20_000;

/// A raw command's failure in BrowserTap's words: a policy refusal is final (retrying
/// the same call cannot change it), and an error the browser answered a command with is
/// the page's failure to execute it, not something to retry blindly.
fn raw_failure(error: EngineError) -> ToolError {
    match error.code() {
        ErrorCode::RawCdpBlocked => ToolError::Face {
            code: "raw_cdp_blocked",
            message: format!("method: {}", error.bare_message()),
            details: json!({ "param": "method", "delivery_state": "undelivered", "retry_safe": false }),
            may_have_run: false,
        },
        ErrorCode::CdpError => ToolError::Face {
            code: "page_execution_failed",
            message: error.to_string(),
            details: json!({ "reason": "cdp_error", "retry_safe": false }),
            may_have_run: false,
        },
        _ => error.into(),
    }
}

pub async fn cdp_command(call: Call, p: CdpCommand) -> Result<Reply, ToolError> {
    let params = json_object("params_json", &p.params_json)?;
    let command = call
        .session
        .check_raw(&call.settings.raw_policy(), &p.method, params)
        .await
        .map_err(raw_failure)?;
    if p.extension_id.is_some() {
        return Err(EngineError::Unsupported(
            "extension_id: tabwire does not drive other extensions' workers over raw CDP".into(),
        )
        .into());
    }
    let page = match &p.target_id {
        Some(target) => {
            let handle = target_handle(&call, target).await?;
            call.session.page(Some(&handle)).await?
        }
        None => page_by_tab_id(&call, &p.session_id, &p.tab_id).await?,
    };
    let result = page
        .raw_cdp(command, call.deadline)
        .await
        .map_err(raw_failure)?;
    let info = page.info();
    // The lean line is the browser's answer itself (an envelope's `data` is furniture
    // elsewhere, here it is the result).
    let lean = format!(
        "{}: {}",
        p.method,
        serde_json::to_string(&result).unwrap_or_default()
    );
    Ok(Reply::data(json!({
        "status": "ok", "method": p.method, "data": result,
        "session_id": info.handle, "tab_id": info.tab_id,
    }))
    .on(info)
    .lean(lean))
}

/// A page's target id → its tab handle (other targets are not addressable here).
async fn target_handle(call: &Call, target_id: &str) -> Result<String, ToolError> {
    let targets = call.session.debug_targets(None).await?;
    targets
        .into_iter()
        .find(|t| t.target_id == target_id)
        .and_then(|t| t.tab)
        .ok_or_else(|| {
            ToolError::param(
                "target_id",
                format!(
                    "'{target_id}' is not a page target of this browser (see debugger_targets)"
                ),
            )
        })
}

/// One member of a batch, checked.
enum Member {
    Cdp {
        method: String,
        params: Value,
        tab: Option<String>,
        timeout_ms: u64,
    },
    Tabs,
    Cookies {
        tab: Option<String>,
        url: Option<String>,
    },
}

/// Parses BrowserTap's batch and checks it whole against the policy before anything runs.
async fn parse_batch(call: &Call, text: &str) -> Result<Vec<Member>, ToolError> {
    let bad = |message: String| ToolError::param("batch_json", message);
    let batch: Value =
        serde_json::from_str(text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
    if !batch.is_object() {
        return Err(bad("must be a JSON object".into()));
    }
    if batch["cmd"] != "batch" {
        return Err(bad(
            "must be {\"cmd\": \"batch\", \"commands\": [...]}".into()
        ));
    }
    let commands = batch["commands"]
        .as_array()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| bad("commands must be a non-empty list".into()))?;
    let top_tab = tab_field(&batch["tabId"]);
    let top_timeout = batch["timeoutMs"].as_u64();
    let mut members = Vec::with_capacity(commands.len());
    for (i, command) in commands.iter().enumerate() {
        let param = format!("batch_json.commands[{i}]");
        let member = match command["cmd"].as_str() {
            Some("cdp") => {
                let method = command["method"].as_str().unwrap_or_default().to_owned();
                let params = command.get("params").cloned().unwrap_or(json!({}));
                if !params.is_object() {
                    return Err(ToolError::param(&param, "params must be an object"));
                }
                call.session
                    .check_raw(&call.settings.raw_policy(), &method, params.clone())
                    .await
                    .map_err(raw_failure)?;
                let timeout = command["timeoutMs"].as_u64().or(top_timeout);
                Member::Cdp {
                    method,
                    params,
                    tab: tab_field(&command["tabId"]).or_else(|| top_tab.clone()),
                    timeout_ms: timeout
                        .unwrap_or(DEFAULT_TIMEOUT_MS)
                        .clamp(1, MAX_TIMEOUT_MS),
                }
            }
            Some("tabs") => Member::Tabs,
            Some("cookies") => Member::Cookies {
                tab: tab_field(&command["tabId"]).or_else(|| top_tab.clone()),
                url: command["url"].as_str().map(str::to_owned),
            },
            _ => {
                return Err(ToolError::param(
                    &param,
                    "batch commands support only cdp, tabs, and cookies",
                ));
            }
        };
        members.push(member);
    }
    Ok(members)
}

/// A `tabId` of a batch (a number or a handle).
fn tab_field(value: &Value) -> Option<String> {
    match value {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

pub async fn cdp_batch(call: Call, p: CdpBatch) -> Result<Reply, ToolError> {
    let members = parse_batch(&call, &p.batch_json).await?;
    let default_tab = p.session_id.map(|t| t.0);
    // One reservation per tab, held for the whole batch.
    let mut pages: HashMap<String, Page> = HashMap::new();
    let mut results: Vec<Value> = Vec::with_capacity(members.len());
    let mut last_target = None;
    for (i, member) in members.into_iter().enumerate() {
        let outcome = run_member(&call, &mut pages, &default_tab, &results, member).await;
        match outcome {
            Ok((result, target)) => {
                results.push(result);
                last_target = target.or(last_target);
            }
            Err(error) => {
                return Err(ToolError::Face {
                    code: "page_execution_failed",
                    message: format!(
                        "batch member {i} failed: {error}; later members were not sent"
                    ),
                    details: json!({
                        "reason": "batch_member_failed", "failed_member": i, "results": results,
                    }),
                    may_have_run: i > 0 || matches!(error, ToolError::Engine(_)),
                });
            }
        }
    }
    let client_id = last_target
        .as_ref()
        .map(|t: &engine::TabInfo| t.client_id.clone());
    let mut reply = Reply::data(json!({ "data": results, "client_id": client_id }));
    reply.target = last_target;
    Ok(reply)
}

async fn run_member(
    call: &Call,
    pages: &mut HashMap<String, Page>,
    default_tab: &Option<String>,
    earlier: &[Value],
    member: Member,
) -> Result<(Value, Option<engine::TabInfo>), ToolError> {
    match member {
        Member::Cdp {
            method,
            params,
            tab,
            timeout_ms,
        } => {
            // Checked again with the placeholders filled in: a result may hold a URL.
            let params = substitute(params, earlier)?;
            let command = call
                .session
                .check_raw(&call.settings.raw_policy(), &method, params)
                .await
                .map_err(raw_failure)?;
            let page = page_for(call, pages, tab.or_else(|| default_tab.clone())).await?;
            let result = page
                .raw_cdp(
                    command,
                    call.deadline
                        .within(std::time::Duration::from_millis(timeout_ms)),
                )
                .await?;
            Ok((result, Some(page.info())))
        }
        Member::Tabs => {
            let list = call.session.list_tabs(false).await?;
            let tabs: Vec<Value> = list
                .tabs
                .iter()
                .filter(|t| t.url.starts_with("http://") || t.url.starts_with("https://"))
                .map(tab_json)
                .collect();
            Ok((json!({ "ok": true, "data": tabs }), None))
        }
        Member::Cookies { tab, url } => {
            let page = page_for(call, pages, tab.or_else(|| default_tab.clone())).await?;
            let read = match url {
                Some(url) => page.cookies_of(&url, call.deadline).await?,
                None => page.cookies(call.deadline).await?,
            };
            let cookies = chrome_cookies(&read.cookies);
            Ok((json!({ "ok": true, "data": cookies }), Some(page.info())))
        }
    }
}

/// The reserved page of a member's tab; each tab is reserved once for the whole batch.
async fn page_for<'a>(
    call: &Call,
    pages: &'a mut HashMap<String, Page>,
    handle: Option<String>,
) -> Result<&'a Page, ToolError> {
    let (browser, tab) = call.session.resolve_tab(handle.as_deref()).await?;
    let key = browser.handle(&tab);
    if !pages.contains_key(&key) {
        let config = call.session.config().clone();
        pages.insert(key.clone(), Page::reserve(browser, tab, config).await?);
    }
    Ok(&pages[&key])
}

/// Replaces each string that is exactly `"$N.a.b"` with the value at `a.b` of member
/// N's result (numeric steps index lists). A placeholder that names nothing fails the
/// batch.
fn substitute(params: Value, earlier: &[Value]) -> Result<Value, ToolError> {
    match params {
        Value::String(text) => match placeholder(&text) {
            Some((index, path)) => {
                let base = earlier.get(index).ok_or_else(|| {
                    ToolError::param(
                        "batch_json",
                        format!("'{text}' names member {index}, which has not run before this one"),
                    )
                })?;
                let mut value = base;
                for step in path.split('.').filter(|s| !s.is_empty()) {
                    value = match step.parse::<usize>() {
                        Ok(at) if value.is_array() => &value[at],
                        _ => &value[step],
                    };
                }
                if value.is_null() {
                    return Err(ToolError::param(
                        "batch_json",
                        format!("'{text}': member {index}'s result has nothing at {path}"),
                    ));
                }
                Ok(value.clone())
            }
            None => Ok(Value::String(text)),
        },
        Value::Array(items) => items
            .into_iter()
            .map(|item| substitute(item, earlier))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(map) => map
            .into_iter()
            .map(|(k, v)| substitute(v, earlier).map(|v| (k, v)))
            .collect::<Result<Map<_, _>, _>>()
            .map(Value::Object),
        other => Ok(other),
    }
}

/// `"$3.root.nodeId"` → (3, "root.nodeId").
fn placeholder(text: &str) -> Option<(usize, &str)> {
    let rest = text.strip_prefix('$')?;
    let (index, path) = rest.split_once('.')?;
    Some((index.parse().ok()?, path))
}

pub async fn debugger_targets(call: Call, p: SessionOnly) -> Result<Reply, ToolError> {
    let handle = p.session_id.map(|t| t.0);
    let browser = call.session.browser_for(handle.as_deref()).await?;
    let mut targets = call.session.debug_targets(handle.as_deref()).await?;
    // chrome.debugger lists workers first and pages last, as BrowserTap answers.
    targets.sort_by_key(|t| debugger_rank(debugger_type(&t.kind)));
    let listed: Vec<Value> = targets
        .into_iter()
        .map(|t| {
            let mut target = json!({
                "type": debugger_type(&t.kind), "title": t.title, "url": t.url,
                "attached": t.attached, "id": t.target_id, "cdp_type": t.kind,
            });
            if let Some(tab_id) = t.tab_id {
                target["tabId"] = json!(tab_id);
            }
            if let Some(tab) = t.tab {
                target["session_id"] = json!(tab);
            }
            target
        })
        .collect();
    Ok(Reply::data(json!({
        "data": listed, "client_id": browser.client_id, "count": listed.len(),
    })))
}

/// A CDP target type as chrome.debugger names it: page, background_page, worker or
/// other.
fn debugger_type(kind: &str) -> &'static str {
    match kind {
        "page" => "page",
        "background_page" => "background_page",
        "service_worker" | "shared_worker" | "worker" => "worker",
        _ => "other",
    }
}

fn debugger_rank(kind: &str) -> u8 {
    match kind {
        "worker" => 0,
        "background_page" => 1,
        "other" => 2,
        _ => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_resolved_from_earlier_results() {
        let earlier = [
            json!({"root": {"nodeId": 7}}),
            json!({"nodes": [{"id": 3}]}),
        ];
        let params =
            json!({"nodeId": "$0.root.nodeId", "other": ["$1.nodes.0.id", "$plain"], "n": 1});
        assert_eq!(
            substitute(params, &earlier).unwrap(),
            json!({"nodeId": 7, "other": [3, "$plain"], "n": 1})
        );
        assert!(substitute(json!("$2.x"), &earlier).is_err());
        assert!(substitute(json!("$0.root.missing"), &earlier).is_err());
    }
}
