//! Cookies, storage, network and console captures.

use serde_json::{Value, json};

use engine::{ConsolePage, LeaseRequest, NetworkFilter, NetworkOptions, StoragePage};

use crate::envelope::Reply;
use crate::face::{Call, ToolError};

pub async fn get_cookies(call: Call) -> Result<Reply, ToolError> {
    let handle = call.tab().or_else(|| call.args.id("tab_id"));
    let page = call.session.page(handle.as_deref()).await?;
    Ok(Reply::data(page.cookies(call.args.timeout(20.0)).await?).on(page.handle()))
}

pub async fn set_cookies(call: Call) -> Result<Reply, ToolError> {
    let cookies = match call.args.value("cookies") {
        Some(Value::String(text)) => serde_json::from_str::<Value>(text)
            .map_err(|e| ToolError::param("cookies", format!("not valid JSON: {e}")))?,
        Some(other) => other.clone(),
        None => Value::Null,
    };
    let cookies = match cookies {
        Value::Array(list) if !list.is_empty() => list,
        Value::Object(_) => vec![cookies],
        _ => {
            return Err(ToolError::param(
                "cookies",
                "expected a cookie object or a non-empty list of them",
            ));
        }
    };
    let handle = call.tab().or_else(|| call.args.id("tab_id"));
    let page = call.session.page(handle.as_deref()).await?;
    Ok(Reply::data(page.set_cookies(cookies, call.args.timeout(20.0)).await?).on(page.handle()))
}

pub async fn delete_cookies(call: Call) -> Result<Reply, ToolError> {
    let handle = call.tab().or_else(|| call.args.id("tab_id"));
    let page = call.session.page(handle.as_deref()).await?;
    let data = page
        .delete_cookies(
            &call.args.string("name"),
            call.args.str("domain"),
            call.args.str("path"),
            call.args.str("url"),
            call.args.timeout(20.0),
        )
        .await?;
    Ok(Reply::data(data).on(page.handle()))
}

pub async fn storage_get(call: Call) -> Result<Reply, ToolError> {
    let page = call.session.page(call.tab().as_deref()).await?;
    let paging = StoragePage {
        offset: call.args.i64_or("offset", 0) as u64,
        max_items: call.args.i64_or("max_items", 100) as u64,
        max_bytes: call.args.i64_or("max_bytes", 65_536) as u64,
    };
    let data = page
        .storage_get(
            call.args.str("area").unwrap_or("local"),
            call.args.str("key"),
            paging,
            call.args.timeout(30.0),
        )
        .await?;
    Ok(Reply::data(data).on(page.handle()))
}

pub async fn storage_set(call: Call) -> Result<Reply, ToolError> {
    let value = match call.args.value("value") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(), // non-strings are JSON-encoded
        None => String::new(),
    };
    let page = call.session.page(call.tab().as_deref()).await?;
    let data = page
        .storage_set(
            call.args.str("area").unwrap_or("local"),
            &call.args.string("key"),
            &value,
            call.args.timeout(30.0),
        )
        .await?;
    Ok(Reply::data(data).on(page.handle()))
}

pub async fn network_capture_start(call: Call) -> Result<Reply, ToolError> {
    let options = NetworkOptions {
        include_bodies: call.args.bool_or("include_bodies", true),
        max_entries: call.args.i64_or("max_entries", 500) as usize,
        max_body_bytes: call.args.i64_or("max_body_bytes", 262_144) as usize,
        body_timeout: engine::seconds(call.args.f64_or("body_timeout", 5.0)),
    };
    let data = call
        .session
        .network_capture_start(call.tab().as_deref(), options, call.args.timeout(10.0))
        .await?;
    Ok(Reply::data(data))
}

pub async fn network_capture_stop(call: Call) -> Result<Reply, ToolError> {
    let status = |name: &str| {
        call.args
            .value(name)
            .and_then(Value::as_u64)
            .map(|s| s as u16)
    };
    let filter = NetworkFilter {
        url_pattern: call.args.str("url_pattern").map(str::to_owned),
        resource_type: call.args.str("resource_type").map(str::to_owned),
        status_min: status("status_min"),
        status_max: status("status_max"),
        include_bodies: call.args.bool_or("include_response_bodies", true),
    };
    let data = call
        .session
        .network_capture_stop(call.tab().as_deref(), filter, call.args.timeout(10.0))
        .await?;
    Ok(Reply::data(data))
}

pub async fn console_capture_start(call: Call) -> Result<Reply, ToolError> {
    let max = call.args.i64_or("max_entries", 500) as usize;
    let data = call
        .session
        .console_capture_start(call.tab().as_deref(), max, call.args.timeout(10.0))
        .await?;
    Ok(Reply::data(data))
}

pub async fn get_console_messages(call: Call) -> Result<Reply, ToolError> {
    let page = ConsolePage {
        offset: call.args.i64_or("offset", 0) as usize,
        max_items: call.args.i64_or("max_items", 200) as usize,
        clear: call.args.bool_or("clear", false),
        user_only: call.args.str("filter") == Some("user"),
    };
    let data = call
        .session
        .console_messages(call.tab().as_deref(), page)
        .await?;
    Ok(Reply::data(data))
}

pub async fn console_capture_stop(call: Call) -> Result<Reply, ToolError> {
    Ok(Reply::data(
        call.session
            .console_capture_stop(call.tab().as_deref())
            .await?,
    ))
}

pub fn json_object(call: &Call, name: &str) -> Result<Value, ToolError> {
    match call.args.str(name) {
        None => Ok(json!({})),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(value @ Value::Object(_)) => Ok(value),
            Ok(_) => Err(ToolError::param(name, "must be a JSON object")),
            Err(e) => Err(ToolError::param(name, format!("not valid JSON: {e}"))),
        },
    }
}

pub async fn set_site_permission(call: Call) -> Result<Reply, ToolError> {
    let setting = call.args.string("setting");
    if call.server.profile() == crate::face::Profile::Safe && setting == "allow" {
        // Safe needs the user's approval for every allow, and this server cannot ask.
        return Ok(Reply::data(json!({
            "status": "requires_user_action", "changed": false,
            "message": "the safe profile needs the user's approval to allow a permission; nothing was changed",
        })));
    }
    let permission = call.args.string("permission");
    let request = LeaseRequest {
        permission: &permission,
        setting: &setting,
        origin: call.args.str("origin"),
        duration: std::time::Duration::from_secs(call.args.i64_or("duration_seconds", 300) as u64),
    };
    let data = call
        .session
        .set_site_permission(call.tab().as_deref(), request)
        .await?;
    Ok(Reply::data(data))
}

pub async fn reset_site_permissions(call: Call) -> Result<Reply, ToolError> {
    let data = call
        .session
        .reset_site_permissions(call.args.str("origin"), call.args.str("permission"))
        .await?;
    Ok(Reply::data(data))
}

pub async fn resolve_leave_dialog(call: Call) -> Result<Reply, ToolError> {
    let data = match call
        .session
        .accept_leave_prompt(call.tab().as_deref())
        .await?
    {
        None => json!({ "status": "no_dialog" }),
        Some((dialog, attempts, true)) => json!({
            "status": "resolved", "dialog": dialog, "attempts": attempts, "physical_input": false,
        }),
        Some((dialog, attempts, false)) => json!({
            "status": "requires_user_action", "dialog": dialog, "attempts": attempts, "physical_input": false,
            "message": "two protocol accepts did not close the prompt; tabwire sends no OS-level keys, so the user must answer it",
        }),
    };
    Ok(Reply::data(data))
}
