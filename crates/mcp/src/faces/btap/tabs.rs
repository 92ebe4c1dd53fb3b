//! Tabs: listing, switching, activating, navigating, opening exactly once and closing.

use serde_json::{Value, json};

use engine::{
    CloseResult, CloseScope, Dialog, DialogPolicy, EngineError, ErrorCode, Navigated,
    OpenTabRequest, Opened, TabInfo,
};

use super::args::SessionOnly;
use crate::face::{Call, Profile, Reply, ToolError};
use crate::params::{self, TabRef};
use crate::tool_params;

tool_params! {
    pub struct SearchTabs {
        query: String = Str, required, "what to look for: a description in any language, or an exact identifier";
        max_results: i64 = Int { min: 1, max: 50 }, default(10), "most tabs answered";
        tab_ids: Option<Vec<u64>> = IntList, optional, "search only these tabs (their tab_id)";
        mode: String = Str, default("hybrid"), "hybrid (words and meaning), words (exact terms only) or meaning (embeddings only)";
    }
}

tool_params! {
    pub struct SwitchTab {
        session_id: Option<TabRef> = TabHandle, nullable, "the tab to make this session's default";
        url_pattern: Option<String> = Str, nullable, "substring of the URL; must match one tab";
        browser: Option<String> = Str, nullable, "chrome, edge or opera (a linked browser's name)";
        activate: bool = Bool, default(false), "also bring it to the front";
    }
}

tool_params! {
    pub struct OpenUrl {
        url: String = Str, required, "http(s), data: or about:blank";
        session_id: Option<TabRef> = TabHandle, nullable, "tab handle; default: this session's tab";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds to wait for load";
        beforeunload: String = Choice(&["dismiss", "accept", "manual"]), default("dismiss"), "answer to a leave-page prompt";
        intent_leave: Option<bool> = Bool, nullable, "false keeps the page when it asks to stay";
    }
}

tool_params! {
    pub struct OpenNewTab {
        url: String = Str, required, "http(s), data: or about:blank";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds to wait for load";
        active: bool = Bool, default(false), "bring it to the front";
        session_id: Option<TabRef> = TabHandle, nullable, "a tab of the browser to open it in";
        owner_id: Option<String> = Str, nullable, "groups tabs under one task owner; generated if omitted";
        operation_id: Option<String> = Str, nullable, "recover an earlier create without replaying it";
        client_id: Option<String> = Str, nullable, "which linked browser";
    }
}

tool_params! {
    pub struct CloseTabs {
        tab_id: Vec<TabRef> = TabIds, required, "tab id, client:tab handle, or a list";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        owner_id: Option<String> = Str, nullable, "required while only_if_agent_owned";
        only_if_agent_owned: bool = Bool, default(true), "refuse tabs this owner did not open";
    }
}

pub async fn list_tabs(call: Call, _: params::NoParams) -> Result<Reply, ToolError> {
    let list = call.session.list_tabs(false).await?;
    let tabs: Vec<Value> = list.tabs.iter().map(tab_json).collect();
    let mut data = json!({
        "tabs": tabs,
        "count": tabs.len(),
        "default_session_id": list.default,
        "default_session_settled": true,
    });
    if let Some(lost) = list.lost {
        // The browser those tabs lived in went away; these are a new one's.
        data["browser_lost"] = json!(lost);
    }
    Ok(Reply::data(data))
}

/// Every tab, internal pages included, as the browser's own tab list has them (`data`:
/// Chrome's tab id, window and whether it is the window's selected tab), for the browser
/// `session_id` names (default: every browser, the first one's id as `client_id`); our
/// rows with their handles beside.
pub async fn list_all_tabs(call: Call, p: SessionOnly) -> Result<Reply, ToolError> {
    let client = p
        .session_id
        .as_ref()
        .and_then(|s| s.0.rsplit_once(':').map(|(client, _)| client.to_owned()));
    let mut native = Vec::new();
    let mut rows = Vec::new();
    let mut first_client = None;
    for window in call.session.windows_listing(true).await? {
        if client.as_ref().is_some_and(|c| *c != window.client_id) {
            continue;
        }
        for entry in &window.tabs {
            native.push(json!({
                "id": entry.tab.tab_id, "url": entry.tab.url, "title": entry.tab.title,
                "active": entry.active, "windowId": window.window_id,
                "session_id": entry.tab.handle,
            }));
            rows.push(tab_json(&entry.tab));
            first_client.get_or_insert_with(|| entry.tab.client_id.clone());
        }
    }
    let client_id = client.or(first_client);
    Ok(Reply::data(json!({
        "data": native,
        "client_id": client_id,
        "tabs": rows,
        "count": native.len(),
    })))
}

/// A tab as BrowserTap lists it (`id` is its session handle, `generation` a string), with
/// tabwire's own facts beside (`session_id`, whose it is, whether it is the default).
pub fn tab_json(tab: &TabInfo) -> Value {
    let mut json = json!({
        "id": tab.handle,
        "session_id": tab.handle,
        "url": tab.url,
        "title": tab.title,
        "client_id": tab.client_id,
        "browser": tab.browser,
        "tab_id": tab.tab_id,
        "tab_identity": tab.identity,
        "generation": tab.generation.to_string(),
    });
    if let Some(owner) = &tab.owner_id {
        json["owned"] = json!(true);
        json["owner_id"] = json!(owner);
    }
    if tab.default {
        json["default"] = json!(true);
    }
    json
}

pub async fn switch_tab(call: Call, p: SwitchTab) -> Result<Reply, ToolError> {
    let handle = p.session_id.map(|t| t.0);
    let (browser, tab) = call
        .session
        .switch_tab(
            handle.as_deref(),
            p.url_pattern.as_deref(),
            p.browser.as_deref(),
        )
        .await
        .map_err(pattern_failure)?;
    let handle = browser.handle(&tab);
    let mut data = json!({
        "active_session_id": handle, "session_id": handle,
        "url": tab.url, "title": tab.title,
    });
    if p.activate {
        let activated = call.session.activate_tab(Some(&handle)).await?;
        data["activated"] = activated_json(&handle, tab.tab_id, &activated);
        data["on_screen"] = json!(activated.on_screen);
    }
    // The tabs there are now, as list_tabs says them (the default among them).
    let list = call.session.list_tabs(false).await?;
    data["tabs"] = json!(list.tabs.iter().map(tab_json).collect::<Vec<_>>());
    Ok(Reply::data(data).on(browser.info(&tab, Some(tab.tab_id))))
}

/// A URL pattern (or browser name) that names no tab, or several, is the caller's to fix:
/// BrowserTap raises it (several: a bad request naming the candidates; none: nothing to
/// switch to), never reports it as a page's own failure.
fn pattern_failure(error: EngineError) -> ToolError {
    let EngineError::Page {
        code: code @ (ErrorCode::NotFound | ErrorCode::Ambiguous),
        message,
        details,
        ..
    } = &error
    else {
        return error.into();
    };
    let mut facts = match details {
        Value::Object(details) => details.clone(),
        _ => serde_json::Map::new(),
    };
    facts.insert("reason".into(), json!(code.as_str()));
    facts.insert("delivery_state".into(), json!("undelivered"));
    ToolError::Face {
        code: if *code == ErrorCode::Ambiguous {
            "invalid_request"
        } else {
            "not_found"
        },
        message: format!("{message}; pass the full session_id from list_tabs"),
        details: Value::Object(facts),
        may_have_run: false,
    }
}

/// What an activation did, in BrowserTap's words.
fn activated_json(handle: &str, tab_id: u64, activated: &engine::Activated) -> Value {
    json!({
        "activated_session_id": handle,
        "tab_id": tab_id,
        "on_screen": activated.on_screen,
        "window_state": activated.window_state,
    })
}

pub async fn activate_tab(call: Call, p: SessionOnly) -> Result<Reply, ToolError> {
    let handle = p.session_id.map(|t| t.0);
    let (browser, tab) = match call.session.resolve_tab(handle.as_deref()).await {
        Ok(found) => found,
        Err(error) => {
            return Err(unlinked_browser(&call, handle.as_deref()).unwrap_or(error.into()));
        }
    };
    let handle = browser.handle(&tab);
    let activated = call.session.activate_tab(Some(&handle)).await?;
    let mut data = json!({ "status": "ok", "activated": true });
    if let (Value::Object(data), Value::Object(facts)) =
        (&mut data, activated_json(&handle, tab.tab_id, &activated))
    {
        data.extend(facts);
    }
    Ok(Reply::data(data).on(browser.info(&tab, None)))
}

/// Hosts whose pages ask before every navigation (shells and IDEs served to a browser):
/// on such a host (one whose name contains a marker), open_url in the lab profile accepts
/// the leave-page prompt by itself (`auto_beforeunload_hosts`).
const AUTO_LEAVE_HOSTS: &[&str] = &["shell.", "ttyd", "code-server", "jupyter", "vscode-web"];

/// The host markers of `AUTO_LEAVE_HOSTS` (the rule applies in the lab profile only).
pub fn auto_leave_hosts() -> &'static [&'static str] {
    AUTO_LEAVE_HOSTS
}

/// Whether a page's host is one whose leave-page prompt lab accepts by itself.
fn leaves_by_itself(url: &str) -> bool {
    let Some(host) = engine::urls::host_of(url) else {
        return false;
    };
    AUTO_LEAVE_HOSTS.iter().any(|marker| host.contains(marker))
}

/// A handle naming a browser that is not linked now (BrowserTap asks that browser's
/// extension by its client id, and answers that no extension is connected): nothing was
/// sent, and the same call works once that browser links again.
fn unlinked_browser(call: &Call, handle: Option<&str>) -> Option<ToolError> {
    let (client, _) = handle?.rsplit_once(':')?;
    let linked = call.engine().browsers.connected_of(call.session.id);
    if linked.iter().any(|browser| browser.client_id == client) {
        return None;
    }
    Some(ToolError::Face {
        code: "extension_not_connected",
        message: format!(
            "no browser '{client}' is connected; list_tabs names the browsers that are (their handles' client ids)"
        ),
        details: json!({
            "delivery_state": "undelivered", "retry_safe": true, "reason": "browser_not_linked",
            "linked_browsers": linked.iter().map(|b| b.client_id.clone()).collect::<Vec<_>>(),
        }),
        may_have_run: false,
    })
}

pub async fn open_url(call: Call, p: OpenUrl) -> Result<Reply, ToolError> {
    let handle = p.session_id.map(|t| t.0);
    // A script an earlier call left running in the tab does not keep it from navigating.
    let (page, superseded) = call.session.page_to_navigate(handle.as_deref()).await?;
    let stay = p.intent_leave == Some(false);
    // In lab, a shell or IDE page (which asks on every navigation) is left without asking
    // back, unless the caller said to stay or chose a policy.
    let auto_leave = call.settings.profile() == Profile::Lab
        && p.beforeunload == "dismiss"
        && p.intent_leave != Some(false)
        && leaves_by_itself(&page.info().url);
    let policy = match p.beforeunload.as_str() {
        "accept" if !stay => DialogPolicy::Accept,
        _ if auto_leave => DialogPolicy::Accept,
        "manual" => DialogPolicy::Manual,
        _ => DialogPolicy::Dismiss,
    };
    let navigated = page.navigate_answering(&p.url, policy, call.deadline).await;
    let (mut data, lean) = match navigated {
        Ok((navigated, dialogs)) => navigation_facts(&p.url, navigated, &dialogs),
        // BrowserTap answers a load the browser could not make (no server, a refused
        // port) as a navigation that happened, with the browser's error beside it: the
        // tab shows the browser's error page for the URL now.
        Err(error) if error.code() == ErrorCode::NavigationFailed => {
            failed_navigation(&page, &p.url, &error).await
        }
        Err(error) => return Err(error.into()),
    };
    data["active_session_id"] = json!(page.info().handle);
    data["pending_execution"] = json!(false);
    let mut lean = lean;
    if let Some(operation) = superseded {
        data["superseded_operation_id"] = json!(operation);
        lean.push_str(&format!("; stopped the script of operation {operation}"));
    }
    if auto_leave {
        data["beforeunload_auto"] = json!(true);
        data["beforeunload_policy"] = json!("accept");
    }
    Ok(Reply::navigation(data).on(page.info()).lean(lean))
}

/// What a navigation says in BrowserTap's words (`navigation`, `requested_url`, whether a
/// leave prompt was seen and answered, `redirected` when it landed elsewhere), with its
/// lean line.
fn navigation_facts(requested: &str, navigated: Navigated, dialogs: &[Dialog]) -> (Value, String) {
    let dialog = dialogs
        .last()
        .map(super::script::btap_dialog)
        .unwrap_or(Value::Null);
    let mut data = json!({
        "status": "ok",
        "dialog": dialog,
        "dialog_observed": !dialogs.is_empty(),
        "handled": !dialogs.is_empty(),
        "navigation": {
            "frameId": navigated.frame_id, "loaderId": navigated.loader_id,
            "isDownload": navigated.download,
        },
        "navigation_error": null,
        "url": navigated.url,
        "title": navigated.title,
        "requested_url": requested,
        "load_status": navigated.load_status(),
    });
    if !dialogs.is_empty() {
        data["dialogs"] = json!(
            dialogs
                .iter()
                .map(super::script::btap_dialog)
                .collect::<Vec<_>>()
        );
    }
    if navigated.download {
        data["type"] = json!("download");
        data["status"] = json!("triggered");
        return (data, format!("{requested} started a download"));
    }
    if !same_place(requested, &navigated.url) {
        data["status"] = json!("redirected");
        data["note"] = json!(
            "the tab landed on another URL than the one asked for: check the redirect or sign-in page is the one expected"
        );
    }
    let mut lean = format!("opened {} \"{}\"", navigated.url, navigated.title);
    if navigated.load_status() != "complete" {
        lean.push_str(&format!(" ({})", navigated.load_status()));
    }
    for dialog in dialogs {
        lean.push_str(&format!("; a dialog was answered: {}", json!(dialog)));
    }
    (data, lean)
}

/// A navigation the browser could not make: where the tab is now (the browser's error
/// page for the URL), and the browser's reason.
async fn failed_navigation(
    page: &engine::Page,
    requested: &str,
    error: &EngineError,
) -> (Value, String) {
    let details = error.details();
    let reason = details["error_text"]
        .as_str()
        .unwrap_or("failed")
        .to_owned();
    let (url, title) = page.url_and_title().await.unwrap_or_default();
    let data = json!({
        "status": "ok",
        "dialog": null,
        "dialog_observed": false,
        "handled": false,
        "navigation": {
            "frameId": details["frame_id"], "loaderId": details["loader_id"],
            "isDownload": false, "errorText": reason,
        },
        "navigation_error": null,
        "url": if url.is_empty() { requested.to_owned() } else { url },
        "title": title,
        "requested_url": requested,
        "load_status": "failed",
        "error_text": reason,
    });
    (
        data,
        format!("could not load {requested}: {reason} (the tab shows the browser's error page)"),
    )
}

/// Whether two URLs name the same place (a bare origin with or without its slash).
fn same_place(requested: &str, landed: &str) -> bool {
    requested.trim_end_matches('/') == landed.trim_end_matches('/')
}

pub async fn open_new_tab(call: Call, p: OpenNewTab) -> Result<Reply, ToolError> {
    let request = OpenTabRequest {
        browser: p.client_id.or(p.session_id.map(|t| t.0)),
        url: p.url,
        active: p.active,
        owner_id: p.owner_id.filter(|o| !o.is_empty()),
        operation_id: p.operation_id.filter(|o| !o.is_empty()),
        deadline: call.deadline,
        window: None,
    };
    let opened = call.session.open_new_tab(request).await?;
    let target = match &opened {
        Opened::Created { tab, .. } | Opened::Recovered { tab, .. } => Some(tab.clone()),
        _ => None,
    };
    let window = match &target {
        Some(tab) => window_of(&call, &tab.handle).await,
        None => None,
    };
    let mut reply = opened_reply(opened, window);
    // The session's default does not move to the new tab (as in BrowserTap): say which
    // tab an implicit call goes to now.
    reply.data["default_session_id"] = json!(call.session.default_handle());
    reply.target = target;
    Ok(reply)
}

/// The window a tab is shown in, where the browser says.
async fn window_of(call: &Call, handle: &str) -> Option<u64> {
    let (browser, tab) = call.session.resolve_tab(Some(handle)).await.ok()?;
    browser.window_of(&tab).await.ok().map(|(window, _)| window)
}

/// What BrowserTap answers for each outcome of a tab creation; a tab not known to
/// exist is a failure the reply reports (its operation id is how to recover).
fn opened_reply(opened: Opened, window: Option<u64>) -> Reply {
    let (code, message) = match &opened {
        Opened::Unconfirmed { .. } => ("unknown", UNCONFIRMED.to_owned()),
        Opened::Unknown { .. } => ("unknown", NO_RECORD.to_owned()),
        Opened::Failed { message, .. } => ("error", message.clone()),
        _ => return Reply::data(opened_json(opened, window)),
    };
    Reply::data(opened_json(opened, window)).failed(code, message)
}

const UNCONFIRMED: &str = "the browser did not confirm the tab; recover with the same operation_id";
const NO_RECORD: &str =
    "no record of this operation in this server; inspect list_tabs before creating another tab";

/// The payload of each outcome of a tab creation.
fn opened_json(opened: Opened, window: Option<u64>) -> Value {
    match opened {
        Opened::Created {
            operation_id,
            tab,
            owner_id,
            opener,
            load_status,
        } => {
            let mut data = ready_json(&operation_id, &tab, &owner_id, &load_status, window);
            // The target that opened it, where one did (BrowserTap's `opener` says who).
            data["opener_target_id"] = json!(opener);
            data
        }
        Opened::Recovered {
            operation_id,
            tab,
            owner_id,
        } => {
            // A recovery reads the record; the tab is as it is now.
            let mut data = ready_json(&operation_id, &tab, &owner_id, "complete", window);
            data["recovered"] = json!(true);
            data["replayed"] = json!(false);
            data
        }
        Opened::Unconfirmed {
            operation_id,
            owner_id,
        } => {
            let mut data = unknown_json(&operation_id, UNCONFIRMED, true);
            data["owner_id"] = json!(owner_id);
            data["resume_required"] = json!(true);
            data["recovery"] = json!({ "operation_id": operation_id, "owner_id": owner_id,
                "instruction": "call open_new_tab again with this operation_id; the recovery only reads the record" });
            data
        }
        Opened::Pending { operation_id } => json!({
            "status": "pending", "operation_id": operation_id, "may_have_created": true,
            "retry_safe": false,
        }),
        Opened::Failed {
            operation_id,
            message,
        } => json!({
            "status": "error", "operation_id": operation_id, "error": message, "message": message,
            "client_id": null, "tab_id": null, "generation": null, "session_id": null,
            "ready": false, "owned": false, "owner_id": null,
            "may_have_created": false, "retry_safe": true,
        }),
        Opened::Unknown { operation_id } => {
            let mut data = unknown_json(&operation_id, NO_RECORD, false);
            data["may_have_created"] = Value::Null;
            data["reconciliation"] =
                json!({ "resume_required": false, "next_action": "list_tabs" });
            data
        }
    }
}

/// A tab the creation made (or a recovery found), as BrowserTap answers it: `status` ok,
/// who opened it, and as `result` the creation record as it stood when the browser
/// confirmed the tab, its page still to load (`load_status` says how the load went).
fn ready_json(
    operation_id: &str,
    tab: &TabInfo,
    owner_id: &str,
    load_status: &str,
    window: Option<u64>,
) -> Value {
    let generation = tab.generation.to_string();
    let record = json!({
        "operation_id": operation_id, "operation_status": "completed",
        "status": "loading", "tab_status": "loading", "load_ready": false,
        "id": tab.tab_id, "generation": generation, "url": tab.url, "title": "",
        "windowId": window, "client_id": tab.client_id,
        "may_have_created": false, "retry_safe": false,
    });
    json!({
        "status": "ok", "operation_id": operation_id, "client_id": tab.client_id,
        "tab_id": tab.tab_id, "session_id": tab.handle, "generation": generation,
        "ready": true, "url": tab.url, "title": tab.title, "load_status": load_status,
        "owned": true, "opener": "agent", "owner_id": owner_id,
        "result": { "data": record, "client_id": tab.client_id },
    })
}

/// A creation whose outcome is not known: no tab to name, and what to do next.
fn unknown_json(operation_id: &str, message: &str, may_have_created: bool) -> Value {
    json!({
        "status": "unknown", "operation_id": operation_id, "message": message,
        "client_id": null, "tab_id": null, "generation": null, "session_id": null,
        "ready": false, "owned": false,
        "may_have_created": may_have_created, "retry_safe": false,
    })
}

pub async fn close_tabs(call: Call, p: CloseTabs) -> Result<Reply, ToolError> {
    // Bare ids are tabs of the session_id's browser, when one is named.
    let client = p
        .session_id
        .as_ref()
        .and_then(|s| s.0.rsplit_once(':').map(|(client, _)| client.to_owned()));
    let single = p.tab_id.len() == 1;
    let handles: Vec<String> = p
        .tab_id
        .into_iter()
        .map(|t| match &client {
            Some(client) if !t.0.contains(':') => format!("{client}:{}", t.0),
            _ => t.0,
        })
        .collect();
    let owner = p
        .owner_id
        .as_deref()
        .map(str::trim)
        .filter(|o| !o.is_empty());
    let scope = match (p.only_if_agent_owned, owner) {
        (false, _) => CloseScope::Any,
        (true, Some(owner)) => CloseScope::OwnedBy(owner),
        // The owner_id open_new_tab handed out is the capability to close; without it
        // nothing is closed (as in BrowserTap, a refusal, not a bad argument).
        (true, None) => {
            return Err(ToolError::Face {
                code: "permission_denied",
                message: "close_tabs refused: owner_id is required while only_if_agent_owned=true; pass the owner_id open_new_tab returned, or only_if_agent_owned=false when the user asked to close a tab you did not open".into(),
                details: json!({ "param": "owner_id", "reason": "owner_required" }),
                may_have_run: false,
            });
        }
    };
    let results = call.session.close_tabs(&handles, scope).await?;
    // The browser the tabs were in: the one their handles name, else the session's.
    let browser = handles
        .iter()
        .chain(call.session.default_handle().as_ref())
        .find_map(|h| h.rsplit_once(':').map(|(client, _)| client.to_owned()));
    let mut data = closed_json(&results, single, &scope, owner);
    data["result"]["client_id"] = json!(browser);
    Ok(Reply::data(data))
}

/// A close as BrowserTap reports it: the ids asked for, closed and already gone (one id
/// when one tab was named, else lists), who closed them; each tab's fate as `results`.
fn closed_json(
    results: &[CloseResult],
    single: bool,
    scope: &CloseScope<'_>,
    owner: Option<&str>,
) -> Value {
    let owned = matches!(scope, CloseScope::OwnedBy(_));
    let ids = |pick: fn(&CloseResult) -> Option<u64>| -> Vec<u64> {
        results.iter().filter_map(pick).collect()
    };
    let requested = ids(|r| match r {
        CloseResult::Closed { tab_id, .. } | CloseResult::AlreadyGone { tab_id } => Some(*tab_id),
        CloseResult::NotFound { handle } => handle_number(handle),
    });
    let closed = ids(|r| match r {
        CloseResult::Closed { tab_id, .. } => Some(*tab_id),
        _ => None,
    });
    let gone = ids(|r| match r {
        CloseResult::AlreadyGone { tab_id } => Some(*tab_id),
        _ => None,
    });
    // One tab named: its id (or an empty list when it was not closed); several: lists.
    let one_or_list = |ids: &[u64]| match (single, ids.first()) {
        (true, Some(id)) => json!(id),
        (true, None) => json!([]),
        (false, _) => json!(ids),
    };
    let status = if owned && closed.is_empty() && !gone.is_empty() {
        "already_gone"
    } else {
        "ok"
    };
    let closed_by = match (status, owned && !closed.is_empty()) {
        ("already_gone", _) => "user",
        (_, true) => "agent",
        _ => "none",
    };
    let mut data = json!({
        "status": status,
        "requested": one_or_list(&requested),
        "closed": one_or_list(&closed),
        "already_gone": one_or_list(&gone),
        "closed_by": closed_by,
        "owner_id": if owned { json!(owner) } else { Value::Null },
        "only_if_agent_owned": owned,
        "result": { "data": { "closed": closed, "alreadyGone": gone } },
        "closed_count": closed.len(),
        "results": results.iter().map(close_json).collect::<Vec<_>>(),
    });
    if !gone.is_empty() {
        // A tab that went before this close was not closed by this agent; what replaced
        // it (if anything) is not this owner's to close.
        data["recheck_required"] = json!(true);
        data["recheck_action"] = json!("list_all_tabs");
    }
    data
}

/// The tab number of a handle (`client:7` → 7), if it has one.
fn handle_number(handle: &str) -> Option<u64> {
    handle.rsplit(':').next()?.trim().parse().ok()
}

fn close_json(result: &CloseResult) -> Value {
    match result {
        CloseResult::Closed { tab_id, by_owner } => json!({
            "tab_id": tab_id, "status": "closed",
            "closed_by": if *by_owner { "agent" } else { "none" },
        }),
        CloseResult::AlreadyGone { tab_id } => {
            json!({ "tab_id": tab_id, "status": "already_gone", "closed_by": "user" })
        }
        CloseResult::NotFound { handle } => {
            let tab_id = handle_number(handle).map_or_else(|| json!(handle), |n| json!(n));
            json!({ "tab_id": tab_id, "status": "not_found" })
        }
    }
}

/// tabwire's own: every open tab searched by meaning and by word (the engine operation
/// behind the chrome face's `search_tabs_content`).
pub async fn search_tabs(call: Call, p: SearchTabs) -> Result<Reply, ToolError> {
    let ranking = match p.mode.as_str() {
        "hybrid" => engine::search::Ranking::Hybrid,
        "words" => engine::search::Ranking::Lexical,
        "meaning" => engine::search::Ranking::Dense,
        other => {
            return Err(ToolError::param(
                "mode",
                format!("is '{other}'; it is hybrid, words or meaning"),
            ));
        }
    };
    let request = engine::search::SearchRequest {
        query: p.query,
        max_results: p.max_results as usize,
        tab_ids: p.tab_ids,
        window_ids: None,
        ranking: Some(ranking),
    };
    let report = call.session.search_tabs(&request).await?;
    let results: Vec<Value> = report
        .hits
        .iter()
        .map(|hit| {
            json!({
                "session_id": hit.tab.key,
                "tab_id": hit.tab.tab_id,
                "url": hit.tab.url,
                "title": hit.tab.title,
                "similarity": (f64::from(hit.similarity) * 1000.0).round() / 1000.0,
                "snippet": hit.snippet,
                "source": hit.source.as_str(),
            })
        })
        .collect();
    let stats = &report.stats;
    Ok(Reply::data(json!({
        "results": results,
        "count": results.len(),
        "tabs_searched": report.tabs_searched,
        "waited_for_tabs": report.waited_for,
        "not_embedded_yet": report.not_embedded,
        "vector_search": stats.vector_search_off.is_none(),
        "vector_search_off": stats.vector_search_off,
    })))
}
