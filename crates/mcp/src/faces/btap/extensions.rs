//! Extensions and bookmarks, through the tabwire extension's browser APIs.

use serde_json::{Value, json};

use engine::data::bookmarks;

use super::tabs::SessionOnly;
use crate::face::{Call, Reply, ToolError};
use crate::params::{self, TabRef};
use crate::tool_params;

tool_params! {
    pub struct SetEnabled {
        extension_id: String = Str, required, "";
        enabled: bool = Bool, required, "";
        session_id: Option<TabRef> = Session, nullable, "";
    }
}

tool_params! {
    pub struct Uninstall {
        extension_id: String = Str, required, "";
        show_confirm_dialog: bool = Bool, default(true), "";
        session_id: Option<TabRef> = Session, nullable, "";
    }
}

tool_params! {
    pub struct CallExtension {
        extension_id: String = Str, required, "";
        message_json: String = Str, required, "JSON message";
        session_id: Option<TabRef> = Session, nullable, "";
    }
}

tool_params! {
    pub struct CreateBookmark {
        title: String = Str, required, "";
        url: Option<String> = Str, nullable, "omit for a folder";
        parent_id: Option<String> = Str, nullable, "";
        session_id: Option<TabRef> = Session, nullable, "";
    }
}

tool_params! {
    pub struct RemoveBookmark {
        bookmark_id: String = Str, required, "";
        recursive: bool = Bool, default(false), "required for a non-empty folder";
        session_id: Option<TabRef> = Session, nullable, "";
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
    Ok(Reply::data(
        json!({ "path": config.extension_dir, "extension_id": config.extension_id }),
    ))
}

pub async fn list_extensions(call: Call, p: SessionOnly) -> Result<Reply, ToolError> {
    let all = browser(&call, &p.session_id)
        .await?
        .extension_call("management.getAll", json!({}))
        .await?;
    let extensions: Vec<Value> = all
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| json!({ "id": e["id"], "name": e["name"], "enabled": e["enabled"], "type": e["type"], "version": e["version"] }))
        .collect();
    Ok(Reply::data(
        json!({ "count": extensions.len(), "extensions": extensions }),
    ))
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
    browser(&call, &p.session_id)
        .await?
        .extension_call(
            "management.setEnabled",
            json!({ "id": p.extension_id, "enabled": p.enabled }),
        )
        .await?;
    Ok(Reply::data(
        json!({ "status": "ok", "extension_id": p.extension_id, "enabled": p.enabled }),
    ))
}

pub async fn uninstall_extension(call: Call, p: Uninstall) -> Result<Reply, ToolError> {
    not_ourselves(&call, &p.extension_id)?;
    browser(&call, &p.session_id)
        .await?
        .extension_call(
            "management.uninstall",
            json!({ "id": p.extension_id, "showConfirmDialog": p.show_confirm_dialog }),
        )
        .await?;
    Ok(Reply::data(
        json!({ "extension_id": p.extension_id, "status": "uninstalled" }),
    ))
}

pub async fn call_extension(call: Call, p: CallExtension) -> Result<Reply, ToolError> {
    let message: Value = serde_json::from_str(&p.message_json)
        .map_err(|e| ToolError::param("message_json", format!("not valid JSON: {e}")))?;
    let reply = browser(&call, &p.session_id)
        .await?
        .extension_call(
            "runtime.sendMessage",
            json!({ "id": p.extension_id, "message": message }),
        )
        .await?;
    Ok(Reply::data(
        json!({ "extension_id": p.extension_id, "response": reply }),
    ))
}

pub async fn get_bookmarks(call: Call, p: SessionOnly) -> Result<Reply, ToolError> {
    let browser = browser(&call, &p.session_id).await?;
    Ok(Reply::data(
        json!({ "tree": bookmarks::tree(&browser).await? }),
    ))
}

pub async fn create_bookmark(call: Call, p: CreateBookmark) -> Result<Reply, ToolError> {
    if p.title.trim().is_empty() {
        return Err(ToolError::param("title", "must not be empty"));
    }
    let browser = browser(&call, &p.session_id).await?;
    let node = bookmarks::create(
        &browser,
        &p.title,
        p.url.as_deref().filter(|u| !u.is_empty()),
        p.parent_id.as_deref(),
    )
    .await?;
    Ok(Reply::data(
        json!({ "status": "created", "bookmark": node }),
    ))
}

pub async fn remove_bookmark(call: Call, p: RemoveBookmark) -> Result<Reply, ToolError> {
    if p.bookmark_id.trim().is_empty() {
        return Err(ToolError::param("bookmark_id", "must not be empty"));
    }
    let browser = browser(&call, &p.session_id).await?;
    let removed = bookmarks::remove(
        &browser,
        &call.engine().config.backup_dir,
        &p.bookmark_id,
        p.recursive,
    )
    .await?;
    Ok(Reply::data(json!({
        "status": "removed", "removed": removed.count,
        "backup_path": removed.backup.path, "backup_sha256": removed.backup.sha256,
    })))
}
