use serde_json::{Value, json};

use engine::{
    CloseResult, CloseScope, DialogPolicy, EngineError, ErrorCode, OpenTabRequest, Opened, TabInfo,
};

use crate::envelope::Reply;
use crate::face::{Call, Profile, ToolError};

pub async fn get_setup_status(call: Call) -> Result<Reply, ToolError> {
    let engine = call.engine();
    let browser = engine.browsers.current();
    let config = &engine.config;
    let (link_state, product) = match &browser {
        Some(b) => (
            "connected",
            Some(b.product.lock().map(|p| p.clone()).unwrap_or_default()),
        ),
        None => ("not_started", None),
    };
    let browser_path = match &config.link {
        engine::LinkConfig::Managed(options) => {
            engine::find_browser(options.browser_path.as_deref())
                .map(|p| json!(p))
                .unwrap_or_else(|e| json!({ "error": e.to_string() }))
        }
        engine::LinkConfig::Endpoint(endpoint) => json!(endpoint),
        engine::LinkConfig::Extension => json!(null),
    };
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for tool in call.server.tools {
        match groups.iter_mut().find(|(g, _)| *g == tool.group) {
            Some((_, names)) => names.push(tool.name),
            None => groups.push((tool.group, vec![tool.name])),
        }
    }
    let registry: serde_json::Map<String, Value> = groups
        .into_iter()
        .map(|(group, names)| {
            (
                group.to_owned(),
                json!({ "count": names.len(), "tools": names }),
            )
        })
        .collect();
    let mut data = json!({
        "package_version": env!("CARGO_PKG_VERSION"),
        "protocol_version": "btap.result.v1",
        "face": call.server.face,
        "link": engine.link_name(),
        "link_state": link_state,
        "browser_version": product,
        "browser_path": browser_path,
        "browser_pid": browser.as_ref().and_then(|b| b.pid()),
        "linked_browsers": engine.browsers.linked_browsers(),
        "output_dir": config.output_dir,
        "profile": call.server.profile().name(),
        "default_session_id": call.session.default_handle(),
        "default_session_settled": true,
        "capability_registry": { "tool_count": call.server.tools.len(), "groups": registry },
    });
    if let (Some(data), Value::Object(extension)) = (
        data.as_object_mut(),
        engine.browsers.extension_status().await,
    ) {
        data.extend(extension);
    }
    Ok(Reply::data(data))
}

pub async fn get_automation_profile(call: Call) -> Result<Reply, ToolError> {
    Ok(Reply::data(json!({ "mode": call.server.profile().name() })))
}

pub async fn set_automation_profile(call: Call) -> Result<Reply, ToolError> {
    let mode = if call.args.str("mode") == Some("safe") {
        Profile::Safe
    } else {
        Profile::Lab
    };
    let previous = call.server.profile();
    call.server.set_profile(mode);
    Ok(Reply::data(
        json!({ "mode": mode.name(), "previous": previous.name(), "persisted": false }),
    ))
}

pub async fn list_tabs(call: Call) -> Result<Reply, ToolError> {
    tab_list(&call, false).await
}

pub async fn list_all_tabs(call: Call) -> Result<Reply, ToolError> {
    tab_list(&call, true).await
}

async fn tab_list(call: &Call, all: bool) -> Result<Reply, ToolError> {
    let list = call.session.list_tabs(all).await?;
    let tabs: Vec<Value> = list.tabs.iter().map(tab_json).collect();
    Ok(Reply::data(json!({
        "tabs": tabs,
        "count": tabs.len(),
        "default_session_id": list.default,
        "default_session_settled": true,
    })))
}

/// A tab as BrowserTap lists it.
fn tab_json(tab: &TabInfo) -> Value {
    let mut json = json!({
        "session_id": tab.handle,
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

pub async fn switch_tab(call: Call) -> Result<Reply, ToolError> {
    let (browser, tab) = call
        .session
        .switch_tab(call.tab().as_deref(), call.args.str("url_pattern"))
        .await?;
    let handle = browser.handle(&tab);
    let mut data =
        json!({ "session_id": handle, "url": tab.url, "title": tab.title, "activated": false });
    if call.args.bool_or("activate", false) {
        let on_screen = call.session.activate_tab(Some(&handle)).await?;
        data["activated"] = json!(true);
        data["activation"] = json!({ "activated": true, "on_screen": on_screen });
    }
    Ok(Reply::data(data).on(handle))
}

pub async fn activate_tab(call: Call) -> Result<Reply, ToolError> {
    let on_screen = call.session.activate_tab(call.tab().as_deref()).await?;
    Ok(Reply::data(
        json!({ "activated": true, "on_screen": on_screen }),
    ))
}

pub async fn open_url(call: Call) -> Result<Reply, ToolError> {
    let page = call.session.page(call.tab().as_deref()).await?;
    let target = page.handle();
    let accept_leave =
        call.args.str("beforeunload") == Some("accept") && call.args.bool_or("intent_leave", true);
    let policy = if accept_leave {
        DialogPolicy::Accept
    } else {
        DialogPolicy::Dismiss
    };
    page.set_dialog_policy(policy);
    let navigated = page
        .navigate(&call.args.string("url"), call.args.timeout(15.0))
        .await;
    let dialogs = page.set_dialog_policy(DialogPolicy::Dismiss);
    let mut data = navigated?;
    if !dialogs.is_empty() {
        data["dialogs"] = json!(dialogs);
    }
    Ok(Reply::data(data).on(target))
}

pub async fn open_new_tab(call: Call) -> Result<Reply, ToolError> {
    let request = OpenTabRequest {
        url: call.args.string("url"),
        active: call.args.bool_or("active", false),
        owner_id: call.args.str("owner_id").map(str::to_owned),
        operation_id: call.args.str("operation_id").map(str::to_owned),
        timeout: call.args.timeout(15.0),
    };
    let opened = call.session.open_new_tab(request).await?;
    let target = match &opened {
        Opened::Created { tab, .. } | Opened::Recovered { tab, .. } => Some(tab.handle.clone()),
        _ => None,
    };
    let mut reply = Reply::data(opened_json(opened));
    reply.target = target;
    Ok(reply)
}

/// What BrowserTap answers for each outcome of a tab creation.
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
            "may_have_created": true, "retry_safe": false,
            "message": "the browser did not confirm the tab; recover with the same operation_id",
        }),
        Opened::Recovered {
            operation_id,
            tab,
            owner_id,
        } => json!({
            "status": "recovered", "operation_id": operation_id, "tab_id": tab.tab_id,
            "session_id": tab.handle, "generation": tab.generation, "owner_id": owner_id,
            "owned": true, "replayed": false,
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
            "message": "no record of this operation in this server; inspect list_tabs before creating another tab",
        }),
    }
}

pub async fn close_tabs(call: Call) -> Result<Reply, ToolError> {
    let handles = call.args.ids("tab_id");
    let scope = match (
        call.args.bool_or("only_if_agent_owned", true),
        call.args.str("owner_id"),
    ) {
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
        return Err(EngineError::page(
            ErrorCode::NotOwned,
            "no tab was closed: none is owned by this owner_id",
            json!({ "results": results }),
        )
        .into());
    }
    Ok(Reply::data(json!({ "results": results })))
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
