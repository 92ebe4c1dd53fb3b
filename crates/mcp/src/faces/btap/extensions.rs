//! Extensions and bookmarks, through the tabwire extension's browser APIs.

use serde_json::{Value, json};

use engine::data::bookmarks;
use engine::{EngineError, ErrorCode};

use super::args::SessionOnly;
use crate::face::{Call, Reply, ToolError};
use crate::params::{self, TabRef};
use crate::tool_params;

tool_params! {
    pub struct SetEnabled {
        extension_id: String = Str, required, "";
        enabled: bool = Bool, required, "";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

tool_params! {
    pub struct Uninstall {
        extension_id: String = Str, required, "";
        show_confirm_dialog: bool = Bool, default(true), "";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

tool_params! {
    pub struct CallExtension {
        extension_id: String = Str, required, "";
        message_json: String = Str, required, "JSON message";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

tool_params! {
    pub struct CreateBookmark {
        title: String = Str, required, "";
        url: Option<String> = Str, nullable, "omit for a folder";
        parent_id: Option<String> = Str, nullable, "";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

tool_params! {
    pub struct RemoveBookmark {
        bookmark_id: String = Str, required, "";
        recursive: bool = Bool, default(false), "required for a non-empty folder";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

/// The browser a session's call goes to, by its session_id or its default tab.
async fn browser(
    call: &Call,
    session: &Option<TabRef>,
) -> Result<std::sync::Arc<engine::Browser>, ToolError> {
    let handle = session.as_ref().map(|t| t.0.as_str());
    Ok(call.session.browser_for(handle).await?)
}

pub async fn extension_path(call: Call, _: params::NoParams) -> Result<Reply, ToolError> {
    let config = &call.engine().config;
    Ok(Reply::data(json!({
        "extension_path": config.extension_dir,
        "path": config.extension_dir,
        "extension_id": config.extension_id,
    })))
}

pub async fn list_extensions(call: Call, p: SessionOnly) -> Result<Reply, ToolError> {
    let browser = browser(&call, &p.session_id).await?;
    let all = browser
        .extension_call("management.getAll", json!({}))
        .await
        .map_err(extension_failure)?;
    let extensions: Vec<Value> = all
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| json!({ "id": e["id"], "name": e["name"], "enabled": e["enabled"], "type": e["type"], "version": e["version"] }))
        .collect();
    Ok(Reply::data(json!({
        "data": extensions, "client_id": browser.client_id, "count": extensions.len(),
    })))
}

/// A browser API call the browser refused, in BrowserTap's words: what its extension
/// failed to carry out is `page_execution_failed`, not to be retried as it is.
fn extension_failure(error: EngineError) -> ToolError {
    if error.code() != ErrorCode::BrowserApiError {
        return error.into();
    }
    let mut details = json!({ "reason": "browser_api_error", "retry_safe": false });
    if let Value::Object(facts) = error.details() {
        for (key, value) in facts {
            details[key] = value;
        }
    }
    ToolError::Face {
        code: "page_execution_failed",
        message: error.to_string(),
        details,
        may_have_run: false,
    }
}

/// BrowserTap's answer to a browser-data operation that was carried out: `ok`, which
/// operation, what it was asked, and the browser's answer as `data` when it gave one.
fn operation_done(operation: &str, context: Value, answer: Value) -> Value {
    let mut data = json!({ "status": "ok", "operation": operation });
    if let Value::Object(context) = context {
        for (key, value) in context {
            data[key] = value;
        }
    }
    let empty = answer.is_null() || answer.as_object().is_some_and(|o| o.is_empty());
    if !empty {
        data["data"] = answer;
    }
    data
}

fn not_ourselves(call: &Call, id: &str) -> Result<(), ToolError> {
    if id.trim().is_empty() {
        return Err(ToolError::param("extension_id", "must not be empty"));
    }
    if call.engine().config.extension_id.as_deref() == Some(id) {
        return Err(ToolError::param(
            "extension_id",
            "that is the tabwire extension itself; tabwire cannot disable or remove its own link",
        ));
    }
    Ok(())
}

pub async fn set_extension_enabled(call: Call, p: SetEnabled) -> Result<Reply, ToolError> {
    not_ourselves(&call, &p.extension_id)?;
    let answer = browser(&call, &p.session_id)
        .await?
        .extension_call(
            "management.setEnabled",
            json!({ "id": p.extension_id, "enabled": p.enabled }),
        )
        .await
        .map_err(extension_failure)?;
    let asked = json!({ "extension_id": p.extension_id, "enabled": p.enabled });
    Ok(Reply::data(operation_done(
        "set_extension_enabled",
        asked,
        answer,
    )))
}

pub async fn uninstall_extension(call: Call, p: Uninstall) -> Result<Reply, ToolError> {
    not_ourselves(&call, &p.extension_id)?;
    let answer = browser(&call, &p.session_id)
        .await?
        .extension_call(
            "management.uninstall",
            json!({ "id": p.extension_id, "showConfirmDialog": p.show_confirm_dialog }),
        )
        .await
        .map_err(extension_failure)?;
    let asked = json!({
        "extension_id": p.extension_id, "confirmation_requested": p.show_confirm_dialog,
    });
    Ok(Reply::data(operation_done(
        "uninstall_extension",
        asked,
        answer,
    )))
}

pub async fn call_extension(call: Call, p: CallExtension) -> Result<Reply, ToolError> {
    if p.extension_id.trim().is_empty() {
        return Err(ToolError::param("extension_id", "must not be empty"));
    }
    let message: Value = serde_json::from_str(&p.message_json)
        .map_err(|e| ToolError::param("message_json", format!("not valid JSON: {e}")))?;
    let reply = browser(&call, &p.session_id)
        .await?
        .extension_call(
            "runtime.sendMessage",
            json!({ "id": p.extension_id.trim(), "message": message }),
        )
        .await
        .map_err(extension_failure)?;
    let asked = json!({ "extension_id": p.extension_id.trim() });
    Ok(Reply::data(operation_done("call_extension", asked, reply)))
}

pub async fn get_bookmarks(call: Call, p: SessionOnly) -> Result<Reply, ToolError> {
    let browser = browser(&call, &p.session_id).await?;
    let tree = bookmarks::tree(&browser).await.map_err(extension_failure)?;
    Ok(Reply::data(operation_done(
        "get_bookmarks",
        json!({}),
        json!(tree),
    )))
}

pub async fn create_bookmark(call: Call, p: CreateBookmark) -> Result<Reply, ToolError> {
    let title = p.title.trim();
    if title.is_empty() {
        return Err(ToolError::param("title", "must not be empty"));
    }
    if p.url.as_deref().is_some_and(|u| u.trim().is_empty()) {
        return Err(ToolError::param("url", "must not be empty when given"));
    }
    if p.parent_id
        .as_deref()
        .is_some_and(|id| id.trim().is_empty())
    {
        return Err(ToolError::param(
            "parent_id",
            "must not be empty when given",
        ));
    }
    let browser = browser(&call, &p.session_id).await?;
    let node = bookmarks::create(
        &browser,
        title,
        p.url.as_deref().map(str::trim),
        p.parent_id.as_deref().map(str::trim),
    )
    .await
    .map_err(extension_failure)?;
    Ok(Reply::data(operation_done(
        "create_bookmark",
        json!({}),
        json!(node),
    )))
}

pub async fn remove_bookmark(call: Call, p: RemoveBookmark) -> Result<Reply, ToolError> {
    let id = p.bookmark_id.trim();
    if id.is_empty() {
        return Err(ToolError::param("bookmark_id", "must not be empty"));
    }
    let browser = browser(&call, &p.session_id).await?;
    let asked = json!({
        "operation": "remove_bookmark", "bookmark_id": id, "recursive": p.recursive,
        "client_id": browser.client_id,
    });
    let removed =
        bookmarks::remove(&browser, &call.engine().config.backup_dir, id, p.recursive).await;
    match removed {
        Ok(removed) => {
            let mut data = operation_done("remove_bookmark", asked, Value::Null);
            for (key, value) in backup_fields(&removed) {
                data[key] = value;
            }
            data["removed"] = json!(removed.count);
            Ok(Reply::data(data))
        }
        Err(error) => remove_failure(asked, error),
    }
}

/// What a backup saved before a removal: where, its digest and size, when it was taken
/// and until when it is kept (seconds since the epoch).
fn backup_fields(removed: &bookmarks::Removed) -> Vec<(&'static str, Value)> {
    let taken = removed.backed_up_ms as f64 / 1000.0;
    let kept = bookmarks::BACKUP_AGE_MAX.as_secs_f64();
    vec![
        ("backup_path", json!(removed.backup.path)),
        ("backup_sha256", json!(removed.backup.sha256)),
        ("backup_bytes", json!(removed.backup.bytes)),
        ("backup_captured_at", json!(taken)),
        ("backup_expires_at", json!(taken + kept)),
    ]
}

/// A removal that did not happen, reported beside what was asked as BrowserTap reports
/// it: a backup that could not be taken (nothing was sent; the same call may be made
/// again), or a removal the browser refused or did not confirm after the backup (read
/// the bookmarks and the backup first). Anything else is raised.
fn remove_failure(asked: Value, error: EngineError) -> Result<Reply, ToolError> {
    let message = error.bare_message();
    let mut data = asked;
    data["status"] = json!("error");
    data["error"] = json!(message);
    match error.code() {
        ErrorCode::BackupFailed => {
            data["code"] = json!("bookmark_backup_failed");
            data["phase"] = json!("backup");
            data["dispatched"] = json!(false);
            data["retry_safe"] = json!(true);
            Ok(Reply::data(data).failed("bookmark_backup_failed", message))
        }
        ErrorCode::RemoveUnconfirmed | ErrorCode::BrowserApiError => {
            if let Value::Object(facts) = error.details() {
                for (key, value) in facts {
                    data[key] = value;
                }
            }
            data["code"] = json!("page_execution_failed");
            data["phase"] = json!("remove");
            data["retry_safe"] = json!(false);
            data["hint"] = json!(
                "Read the bookmark tree and the saved backup before trying the removal again."
            );
            Ok(Reply::data(data).failed("page_execution_failed", message))
        }
        _ => Err(error.into()),
    }
}
