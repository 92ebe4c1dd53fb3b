//! Tabs: listing, switching, activating, navigating, opening exactly once and closing.

use serde_json::{Value, json};

use engine::{CloseResult, CloseScope, DialogPolicy, OpenTabRequest, Opened, TabInfo};

use crate::face::{Call, Reply, ToolError};
use crate::params::{self, TabRef};
use crate::tool_params;

tool_params! {
    pub struct SessionOnly {
        session_id: Option<TabRef> = Session, nullable, "tab handle (client:tab) from list_tabs; default: this session's tab";
    }
}

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
        session_id: Option<TabRef> = Session, nullable, "the tab to make this session's default";
        url_pattern: Option<String> = Str, nullable, "substring of the URL; must match one tab";
        browser: Option<String> = Str, nullable, "chrome, edge or opera (a linked browser's name)";
        activate: bool = Bool, default(false), "also bring it to the front";
    }
}

tool_params! {
    pub struct OpenUrl {
        url: String = Str, required, "http(s), data: or about:blank";
        session_id: Option<TabRef> = Session, nullable, "tab handle; default: this session's tab";
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds to wait for load";
        beforeunload: String = Choice(&["dismiss", "accept", "manual"]), default("dismiss"), "answer to a leave-page prompt";
        intent_leave: Option<bool> = Bool, nullable, "false keeps the page when it asks to stay";
    }
}

tool_params! {
    pub struct OpenNewTab {
        url: String = Str, required, "http(s), data: or about:blank";
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds to wait for load";
        active: bool = Bool, default(false), "bring it to the front";
        session_id: Option<TabRef> = Session, nullable, "a tab of the browser to open it in";
        owner_id: Option<String> = Str, nullable, "groups tabs under one task owner; generated if omitted";
        operation_id: Option<String> = Str, nullable, "recover an earlier create without replaying it";
        client_id: Option<String> = Str, nullable, "which linked browser";
    }
}

tool_params! {
    pub struct CloseTabs {
        tab_id: Vec<TabRef> = TabIds, required, "tab id, client:tab handle, or a list";
        session_id: Option<TabRef> = Session, nullable, "";
        owner_id: Option<String> = Str, nullable, "required while only_if_agent_owned";
        only_if_agent_owned: bool = Bool, default(true), "refuse tabs this owner did not open";
    }
}

pub async fn list_tabs(call: Call, _: params::NoParams) -> Result<Reply, ToolError> {
    tab_list(&call, false).await
}

pub async fn list_all_tabs(call: Call, _: SessionOnly) -> Result<Reply, ToolError> {
    tab_list(&call, true).await
}

async fn tab_list(call: &Call, all: bool) -> Result<Reply, ToolError> {
    let list = call.session.list_tabs(all).await?;
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

/// A tab as BrowserTap lists it.
pub fn tab_json(tab: &TabInfo) -> Value {
    let mut json = json!({
        "session_id": tab.handle,
        "client_id": tab.client_id,
        "tab_id": tab.tab_id,
        "url": tab.url,
        "title": tab.title,
        "generation": tab.generation,
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
        .await?;
    let handle = browser.handle(&tab);
    let mut data = json!({
        "active_session_id": handle, "session_id": handle,
        "url": tab.url, "title": tab.title, "activated": false,
    });
    if p.activate {
        let on_screen = call.session.activate_tab(Some(&handle)).await?;
        data["activated"] = json!(true);
        data["on_screen"] = json!(on_screen);
    }
    Ok(Reply::data(data).on(browser.info(&tab, Some(tab.tab_id))))
}

pub async fn activate_tab(call: Call, p: SessionOnly) -> Result<Reply, ToolError> {
    let handle = p.session_id.map(|t| t.0);
    let (browser, tab) = call.session.resolve_tab(handle.as_deref()).await?;
    let on_screen = call
        .session
        .activate_tab(Some(&browser.handle(&tab)))
        .await?;
    Ok(
        Reply::data(json!({ "activated": true, "on_screen": on_screen }))
            .on(browser.info(&tab, None)),
    )
}

pub async fn open_url(call: Call, p: OpenUrl) -> Result<Reply, ToolError> {
    let handle = p.session_id.map(|t| t.0);
    // A script an earlier call left running in the tab does not keep it from navigating.
    let (page, superseded) = call.session.page_to_navigate(handle.as_deref()).await?;
    let stay = p.intent_leave == Some(false);
    let policy = match p.beforeunload.as_str() {
        "accept" if !stay => DialogPolicy::Accept,
        "manual" => DialogPolicy::Manual,
        _ => DialogPolicy::Dismiss,
    };
    let (navigated, dialogs) = page
        .navigate_answering(&p.url, policy, params::seconds(p.timeout))
        .await?;
    let mut data = if navigated.download {
        json!({ "type": "download", "url": navigated.url })
    } else {
        json!({
            "url": navigated.url, "title": navigated.title,
            "load_status": navigated.load_status(),
        })
    };
    if !dialogs.is_empty() {
        data["dialogs"] = json!(dialogs);
    }
    if let Some(operation) = superseded {
        data["superseded_operation_id"] = json!(operation);
    }
    data["status"] = json!("ok");
    let mut lean = if navigated.download {
        format!("{} started a download", navigated.url)
    } else {
        format!("opened {} \"{}\"", navigated.url, navigated.title)
    };
    if !navigated.download && navigated.load_status() != "complete" {
        lean.push_str(&format!(" ({})", navigated.load_status()));
    }
    for dialog in data["dialogs"].as_array().into_iter().flatten() {
        lean.push_str(&format!("; a dialog was answered: {dialog}"));
    }
    if let Some(operation) = data["superseded_operation_id"].as_str() {
        lean.push_str(&format!("; stopped the script of operation {operation}"));
    }
    Ok(Reply::action(data).on(page.info()).lean(lean))
}

pub async fn open_new_tab(call: Call, p: OpenNewTab) -> Result<Reply, ToolError> {
    let request = OpenTabRequest {
        browser: p.client_id.or(p.session_id.map(|t| t.0)),
        url: p.url,
        active: p.active,
        owner_id: p.owner_id.filter(|o| !o.is_empty()),
        operation_id: p.operation_id.filter(|o| !o.is_empty()),
        timeout: params::seconds(p.timeout),
        window: None,
    };
    let opened = call.session.open_new_tab(request).await?;
    let target = match &opened {
        Opened::Created { tab, .. } | Opened::Recovered { tab, .. } => Some(tab.clone()),
        _ => None,
    };
    let mut reply = opened_reply(opened);
    // The session's default does not move to the new tab (as in BrowserTap): say which
    // tab an implicit call goes to now.
    reply.data["default_session_id"] = json!(call.session.default_handle());
    reply.target = target;
    Ok(reply)
}

/// What BrowserTap answers for each outcome of a tab creation; a tab not known to
/// exist is a failure the reply reports (its operation id is how to recover).
fn opened_reply(opened: Opened) -> Reply {
    let (code, message) = match &opened {
        Opened::Unconfirmed { .. } => ("unknown", UNCONFIRMED.to_owned()),
        Opened::Unknown { .. } => ("unknown", NO_RECORD.to_owned()),
        Opened::Failed { message, .. } => ("failed", message.clone()),
        _ => return Reply::data(opened_json(opened)),
    };
    Reply::data(opened_json(opened)).failed(code, message)
}

const UNCONFIRMED: &str = "the browser did not confirm the tab; recover with the same operation_id";
const NO_RECORD: &str =
    "no record of this operation in this server; inspect list_tabs before creating another tab";

/// The payload of each outcome of a tab creation.
fn opened_json(opened: Opened) -> Value {
    match opened {
        Opened::Created {
            operation_id,
            tab,
            owner_id,
            opener,
            load_status,
        } => json!({
            "status": "created", "operation_id": operation_id, "session_id": tab.handle,
            "tab_id": tab.tab_id, "client_id": tab.client_id, "generation": tab.generation,
            "ready": true, "owned": true, "owner_id": owner_id, "opener": opener,
            "url": tab.url, "load_status": load_status,
        }),
        Opened::Unconfirmed {
            operation_id,
            owner_id,
        } => json!({
            "status": "unknown", "operation_id": operation_id, "owner_id": owner_id,
            "may_have_created": true, "retry_safe": false, "resume_required": true,
            "recovery": { "operation_id": operation_id, "owner_id": owner_id,
                "instruction": "call open_new_tab again with this operation_id" },
            "message": UNCONFIRMED,
        }),
        Opened::Recovered {
            operation_id,
            tab,
            owner_id,
        } => json!({
            "status": "recovered", "operation_id": operation_id, "tab_id": tab.tab_id,
            "session_id": tab.handle, "client_id": tab.client_id,
            "generation": tab.generation, "owner_id": owner_id, "owned": true, "replayed": false,
        }),
        Opened::Pending { operation_id } => json!({
            "status": "pending", "operation_id": operation_id, "may_have_created": true,
            "retry_safe": false,
        }),
        Opened::Failed {
            operation_id,
            message,
        } => json!({
            "status": "failed", "operation_id": operation_id, "message": message,
            "may_have_created": false, "retry_safe": true,
        }),
        Opened::Unknown { operation_id } => json!({
            "status": "unknown", "operation_id": operation_id, "may_have_created": null,
            "retry_safe": false,
            "reconciliation": { "resume_required": false, "next_action": "list_tabs" },
            "message": NO_RECORD,
        }),
    }
}

pub async fn close_tabs(call: Call, p: CloseTabs) -> Result<Reply, ToolError> {
    // Bare ids are tabs of the session_id's browser, when one is named.
    let client = p
        .session_id
        .as_ref()
        .and_then(|s| s.0.rsplit_once(':').map(|(client, _)| client.to_owned()));
    let handles: Vec<String> = p
        .tab_id
        .into_iter()
        .map(|t| match &client {
            Some(client) if !t.0.contains(':') => format!("{client}:{}", t.0),
            _ => t.0,
        })
        .collect();
    let scope = match (p.only_if_agent_owned, p.owner_id.as_deref()) {
        (false, _) => CloseScope::Any,
        (true, Some(owner)) => CloseScope::OwnedBy(owner),
        (true, None) => {
            return Err(ToolError::param(
                "owner_id",
                "required while only_if_agent_owned=true (pass the owner_id open_new_tab returned, or only_if_agent_owned=false when the user asked to close a tab you did not open)",
            ));
        }
    };
    let results: Vec<Value> = call
        .session
        .close_tabs(&handles, scope)
        .await?
        .into_iter()
        .map(close_json)
        .collect();
    let refused = results.iter().filter(|r| r["status"] == "refused").count();
    if refused == results.len() && refused > 0 {
        return Err(ToolError::Face {
            code: "permission_denied",
            message: "no tab was closed: none is owned by this owner_id".into(),
            details: json!({ "reason": "not_owned", "results": results }),
            may_have_run: false,
        });
    }
    let closed = results.iter().filter(|r| r["status"] == "closed").count();
    Ok(Reply::data(json!({ "results": results, "closed": closed })))
}

fn close_json(result: CloseResult) -> Value {
    match result {
        CloseResult::Closed { tab_id, by_owner } => json!({
            "tab_id": tab_id, "status": "closed",
            "closed_by": if by_owner { "agent" } else { "none" },
        }),
        CloseResult::AlreadyGone { tab_id } => {
            json!({ "tab_id": tab_id, "status": "already_gone", "closed_by": "user" })
        }
        CloseResult::NotFound { handle } => {
            let tab_id = handle
                .rsplit(':')
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .map_or_else(|| json!(handle), |n| json!(n));
            json!({ "tab_id": tab_id, "status": "not_found" })
        }
        CloseResult::NotOwned { tab_id } => json!({
            "tab_id": tab_id, "status": "refused", "error_code": "not_owned",
            "message": "this tab was not opened by this owner_id; pass only_if_agent_owned=false only if the user asked to close it",
        }),
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
        "vector_search": stats.vector_search_off.is_none(),
        "vector_search_off": stats.vector_search_off,
    })))
}
