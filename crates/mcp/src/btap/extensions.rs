//! Bookmarks and extensions, through the tabwire extension's browser APIs.

use serde_json::{Value, json};

use engine::data::bookmarks;

use crate::envelope::Reply;
use crate::face::{Call, ToolError};

pub async fn extension_path(call: Call) -> Result<Reply, ToolError> {
    let config = &call.engine().config;
    Ok(Reply::data(
        json!({ "path": config.extension_dir, "extension_id": config.extension_id }),
    ))
}

pub async fn list_extensions(call: Call) -> Result<Reply, ToolError> {
    let all = call
        .engine()
        .browsers
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
    if call.engine().config.extension_id.as_deref() == Some(id) {
        return Err(ToolError::param(
            "extension_id",
            "that is the tabwire extension itself; tabwire cannot disable or remove its own link",
        ));
    }
    Ok(())
}

pub async fn set_extension_enabled(call: Call) -> Result<Reply, ToolError> {
    let id = call.args.string("extension_id");
    not_ourselves(&call, &id)?;
    let enabled = call.args.bool_or("enabled", true);
    call.engine()
        .browsers
        .extension_call(
            "management.setEnabled",
            json!({ "id": id, "enabled": enabled }),
        )
        .await?;
    Ok(Reply::data(
        json!({ "extension_id": id, "enabled": enabled }),
    ))
}

pub async fn uninstall_extension(call: Call) -> Result<Reply, ToolError> {
    let id = call.args.string("extension_id");
    not_ourselves(&call, &id)?;
    let confirm = call.args.bool_or("show_confirm_dialog", true);
    call.engine()
        .browsers
        .extension_call(
            "management.uninstall",
            json!({ "id": id, "showConfirmDialog": confirm }),
        )
        .await?;
    Ok(Reply::data(
        json!({ "extension_id": id, "status": "uninstalled" }),
    ))
}

pub async fn call_extension(call: Call) -> Result<Reply, ToolError> {
    let message: Value = serde_json::from_str(&call.args.string("message_json"))
        .map_err(|e| ToolError::param("message_json", format!("not valid JSON: {e}")))?;
    let id = call.args.string("extension_id");
    let reply = call
        .engine()
        .browsers
        .extension_call(
            "runtime.sendMessage",
            json!({ "id": id, "message": message }),
        )
        .await?;
    Ok(Reply::data(
        json!({ "extension_id": id, "response": reply }),
    ))
}

pub async fn get_bookmarks(call: Call) -> Result<Reply, ToolError> {
    let browser = call.engine().browser().await?;
    Ok(Reply::data(
        json!({ "tree": bookmarks::tree(&browser).await? }),
    ))
}

pub async fn create_bookmark(call: Call) -> Result<Reply, ToolError> {
    let browser = call.engine().browser().await?;
    let node = bookmarks::create(
        &browser,
        &call.args.string("title"),
        call.args.str("url"),
        call.args.str("parent_id"),
    )
    .await?;
    Ok(Reply::data(
        json!({ "status": "created", "bookmark": node }),
    ))
}

pub async fn remove_bookmark(call: Call) -> Result<Reply, ToolError> {
    let browser = call.engine().browser().await?;
    let removed = bookmarks::remove(
        &browser,
        &call.engine().config.backup_dir,
        &call.args.string("bookmark_id"),
        call.args.bool_or("recursive", false),
    )
    .await?;
    Ok(Reply::data(json!({
        "status": "removed", "removed": removed.count,
        "backup_path": removed.backup.path, "backup_sha256": removed.backup.sha256,
    })))
}
