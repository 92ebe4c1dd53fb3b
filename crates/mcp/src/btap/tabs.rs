use serde_json::{Value, json};

use engine::{EngineError, OpenTabRequest};

use crate::envelope::Reply;
use crate::face::{Call, Profile};

pub async fn get_setup_status(call: Call) -> Result<Reply, EngineError> {
    let engine = call.engine();
    let browser = engine.current_browser().await;
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
        "linked_browsers": engine.linked_browsers(),
        "output_dir": config.output_dir,
        "profile": call.server.profile().name(),
        "default_session_id": call.session.default_handle().await,
        "default_session_settled": true,
        "capability_registry": { "tool_count": call.server.tools.len(), "groups": registry },
    });
    if let (Some(data), Value::Object(extension)) =
        (data.as_object_mut(), engine.extension_status().await)
    {
        data.extend(extension);
    }
    Ok(Reply::data(data))
}

pub async fn get_automation_profile(call: Call) -> Result<Reply, EngineError> {
    Ok(Reply::data(json!({ "mode": call.server.profile().name() })))
}

pub async fn set_automation_profile(call: Call) -> Result<Reply, EngineError> {
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

pub async fn list_tabs(call: Call) -> Result<Reply, EngineError> {
    Ok(Reply::data(call.session.list_tabs(false).await?))
}

pub async fn list_all_tabs(call: Call) -> Result<Reply, EngineError> {
    Ok(Reply::data(call.session.list_tabs(true).await?))
}

pub async fn switch_tab(call: Call) -> Result<Reply, EngineError> {
    let (handle, tab) = call
        .session
        .switch_tab(call.tab().as_deref(), call.args.str("url_pattern"))
        .await?;
    let mut data =
        json!({ "session_id": handle, "url": tab.url, "title": tab.title, "activated": false });
    if call.args.bool_or("activate", false) {
        data["activated"] = json!(true);
        data["activation"] = call.session.activate_tab(Some(&handle)).await?;
    }
    Ok(Reply::data(data).on(handle))
}

pub async fn activate_tab(call: Call) -> Result<Reply, EngineError> {
    let data = call.session.activate_tab(call.tab().as_deref()).await?;
    Ok(Reply::data(data))
}

pub async fn open_url(call: Call) -> Result<Reply, EngineError> {
    let page = call.session.page(call.tab().as_deref()).await?;
    let target = page.handle();
    let accept_leave =
        call.args.str("beforeunload") == Some("accept") && call.args.bool_or("intent_leave", true);
    let policy = if accept_leave {
        engine::DialogPolicy::Accept
    } else {
        engine::DialogPolicy::Dismiss
    };
    page.set_dialog_policy(policy);
    let navigated = page
        .navigate(&call.args.string("url"), call.args.timeout(15.0))
        .await;
    let dialogs = page.set_dialog_policy(engine::DialogPolicy::Dismiss);
    let mut data = navigated?;
    if !dialogs.is_empty() {
        data["dialogs"] = json!(dialogs);
    }
    Ok(Reply::data(data).on(target))
}

pub async fn open_new_tab(call: Call) -> Result<Reply, EngineError> {
    let request = OpenTabRequest {
        url: call.args.string("url"),
        active: call.args.bool_or("active", false),
        owner_id: call.args.str("owner_id").map(str::to_owned),
        operation_id: call.args.str("operation_id").map(str::to_owned),
        timeout: call.args.timeout(15.0),
    };
    let data = call.session.open_new_tab(request).await?;
    let target = data["session_id"].as_str().map(str::to_owned);
    let mut reply = Reply::data(data);
    reply.target = target;
    Ok(reply)
}

pub async fn close_tabs(call: Call) -> Result<Reply, EngineError> {
    let handles = call.args.ids("tab_id");
    let data = call
        .session
        .close_tabs(
            &handles,
            call.args.str("owner_id"),
            call.args.bool_or("only_if_agent_owned", true),
        )
        .await?;
    Ok(Reply::data(data))
}
