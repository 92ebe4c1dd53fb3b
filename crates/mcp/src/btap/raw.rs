//! Raw CDP behind the policy, and transfers (download, upload).

use serde_json::{Value, json};

use engine::files::ConfinedDir;
use engine::{DownloadRequest, EngineError, Input};

use super::browser_data::json_object;
use crate::envelope::Reply;
use crate::face::{Call, ToolError};
use crate::policy;

pub async fn cdp_command(call: Call) -> Result<Reply, ToolError> {
    let method = call.args.string("method");
    policy::check(&method, call.server.profile(), "method")?;
    let params = json_object(&call, "params_json")?;
    if call.args.value("extension_id").is_some() {
        return Err(EngineError::Unsupported("extension_id: driving extension targets needs the extension link, which this server does not have".into()).into());
    }
    let handle = match (
        call.args.str("target_id"),
        call.tab().or_else(|| call.args.id("tab_id")),
    ) {
        (Some(target), _) => Some(target_handle(&call, target).await?),
        (None, handle) => handle,
    };
    let page = call.session.page(handle.as_deref()).await?;
    let result = page
        .raw_cdp(&method, params, call.args.timeout(20.0))
        .await?;
    Ok(Reply::data(json!({ "method": method, "result": result })).on(page.handle()))
}

/// A page's target id → its tab handle (other targets are not addressable here).
async fn target_handle(call: &Call, target_id: &str) -> Result<String, ToolError> {
    let targets = call.engine().browser().await?.all_targets().await?;
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

pub async fn cdp_batch(call: Call) -> Result<Reply, ToolError> {
    let batch: Value = serde_json::from_str(&call.args.string("batch_json"))
        .map_err(|e| ToolError::param("batch_json", format!("not valid JSON: {e}")))?;
    if batch["cmd"] != "batch" {
        return Err(ToolError::param(
            "batch_json",
            "must be {\"cmd\": \"batch\", \"commands\": [...]}",
        ));
    }
    let commands = batch["commands"]
        .as_array()
        .filter(|c| !c.is_empty())
        .ok_or_else(|| ToolError::param("batch_json", "commands must be a non-empty list"))?;
    // Checked whole before the first member runs.
    let mut steps = Vec::with_capacity(commands.len());
    for (i, command) in commands.iter().enumerate() {
        let param = format!("batch_json.commands[{i}]");
        let Some(cdp) = command
            .get("cdp")
            .filter(|_| command.as_object().is_some_and(|o| o.len() == 1))
        else {
            return Err(ToolError::param(
                &param,
                "each member must be {\"cdp\": {\"method\": ..., \"params\": {...}}}; nested or other kinds are not supported",
            ));
        };
        let method = cdp["method"].as_str().unwrap_or_default().to_owned();
        policy::check(&method, call.server.profile(), &param)?;
        let params = cdp.get("params").cloned().unwrap_or(json!({}));
        if !params.is_object() {
            return Err(ToolError::param(&param, "params must be an object"));
        }
        steps.push((method, params));
    }
    let page = call.session.page(call.tab().as_deref()).await?;
    let mut results = Vec::with_capacity(steps.len());
    for (i, (method, params)) in steps.into_iter().enumerate() {
        match page.raw_cdp(&method, params, engine::seconds(20.0)).await {
            Ok(result) => results.push(json!({ "method": method, "ok": true, "result": result })),
            Err(error) => {
                results.push(json!({ "method": method, "ok": false, "error": error.to_string() }));
                return Err(ToolError::Face {
                    code: "batch_member_failed",
                    message: format!(
                        "member {i} ({method}) failed: {error}; later members were not sent"
                    ),
                    details: json!({ "results": results, "retry_safe": false }),
                });
            }
        }
    }
    Ok(Reply::data(json!({ "results": results })).on(page.handle()))
}

pub async fn debugger_targets(call: Call) -> Result<Reply, ToolError> {
    let targets: Vec<Value> = call
        .engine()
        .browser()
        .await?
        .all_targets()
        .await?
        .into_iter()
        .map(|t| {
            let mut target = json!({
                "target_id": t.target_id, "type": t.kind, "url": t.url,
                "title": t.title, "attached": t.attached,
            });
            if let Some(tab) = t.tab {
                target["session_id"] = json!(tab);
            }
            target
        })
        .collect();
    Ok(Reply::data(
        json!({ "count": targets.len(), "targets": targets }),
    ))
}

pub async fn download_file(call: Call) -> Result<Reply, ToolError> {
    let wait = call.args.bool_or("wait", true);
    if call.args.value("directory").is_some() && !wait {
        return Err(ToolError::param("directory", "requires wait=true"));
    }
    let output = &call.engine().config.output_dir;
    let directory = match call.args.str("directory") {
        Some(dir) => ConfinedDir::under(output, dir, Input::Directory)?,
        None => ConfinedDir::under(output, "downloads", Input::Directory)?,
    };
    let request = DownloadRequest {
        url: call.args.string("url"),
        filename: call.args.str("filename").map(str::to_owned),
        directory,
        wait,
        timeout: call.args.timeout(60.0),
        overwrite: call.args.bool_or("overwrite", false),
    };
    Ok(Reply::data(call.session.download(request).await?))
}

pub async fn upload_files(call: Call) -> Result<Reply, ToolError> {
    let paths: Vec<String> = match call.args.value("paths") {
        Some(Value::String(one)) => vec![one.clone()],
        Some(Value::Array(many)) => many
            .iter()
            .filter_map(|p| p.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    if paths.is_empty() {
        return Err(ToolError::param("paths", "give at least one file path"));
    }
    let selector = call.args.value("selector").cloned().unwrap_or(Value::Null);
    let roots = call.engine().config.upload_roots.clone();
    let page = call.session.page(call.tab().as_deref()).await?;
    let data = page
        .upload(&selector, &paths, &roots, call.args.timeout(30.0))
        .await?;
    Ok(Reply::data(data).on(page.handle()))
}
