//! Bookmarks and extensions, through the tabwire extension's browser APIs.

use serde_json::{Value, json};

use engine::EngineError;

use crate::envelope::Reply;
use crate::face::Call;

pub async fn extension_path(call: Call) -> Result<Reply, EngineError> {
    let config = &call.engine().config;
    Ok(Reply::data(
        json!({ "path": config.extension_dir, "extension_id": config.extension_id }),
    ))
}

pub async fn list_extensions(call: Call) -> Result<Reply, EngineError> {
    let all = call
        .engine()
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

fn not_ourselves(call: &Call, id: &str) -> Result<(), EngineError> {
    if call.engine().config.extension_id.as_deref() == Some(id) {
        return Err(EngineError::invalid(
            "extension_id",
            "that is the tabwire extension itself; tabwire cannot disable or remove its own link",
        ));
    }
    Ok(())
}

pub async fn set_extension_enabled(call: Call) -> Result<Reply, EngineError> {
    let id = call.args.string("extension_id");
    not_ourselves(&call, &id)?;
    let enabled = call.args.bool_or("enabled", true);
    call.engine()
        .extension_call(
            "management.setEnabled",
            json!({ "id": id, "enabled": enabled }),
        )
        .await?;
    Ok(Reply::data(
        json!({ "extension_id": id, "enabled": enabled }),
    ))
}

pub async fn uninstall_extension(call: Call) -> Result<Reply, EngineError> {
    let id = call.args.string("extension_id");
    not_ourselves(&call, &id)?;
    let confirm = call.args.bool_or("show_confirm_dialog", true);
    call.engine()
        .extension_call(
            "management.uninstall",
            json!({ "id": id, "showConfirmDialog": confirm }),
        )
        .await?;
    Ok(Reply::data(
        json!({ "extension_id": id, "status": "uninstalled" }),
    ))
}

pub async fn call_extension(call: Call) -> Result<Reply, EngineError> {
    let message: Value = serde_json::from_str(&call.args.string("message_json"))
        .map_err(|e| EngineError::invalid("message_json", format!("not valid JSON: {e}")))?;
    let id = call.args.string("extension_id");
    let reply = call
        .engine()
        .extension_call(
            "runtime.sendMessage",
            json!({ "id": id, "message": message }),
        )
        .await?;
    Ok(Reply::data(
        json!({ "extension_id": id, "response": reply }),
    ))
}

pub async fn get_bookmarks(call: Call) -> Result<Reply, EngineError> {
    Ok(Reply::data(call.engine().bookmarks().await?))
}

pub async fn create_bookmark(call: Call) -> Result<Reply, EngineError> {
    let data = call
        .engine()
        .create_bookmark(
            &call.args.string("title"),
            call.args.str("url"),
            call.args.str("parent_id"),
        )
        .await?;
    Ok(Reply::data(data))
}

pub async fn remove_bookmark(call: Call) -> Result<Reply, EngineError> {
    let data = call
        .engine()
        .remove_bookmark(
            &call.args.string("bookmark_id"),
            call.args.bool_or("recursive", false),
        )
        .await?;
    Ok(Reply::data(data))
}
