//! Files onto a page's `<input type=file>`, read only from the allowed upload roots.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::error::{EngineError, ErrorCode, Input, Result};
use crate::page::Page;

impl Page {
    /// Sets files on an `<input type=file>`. Every path must lie under an allowed root.
    pub async fn upload(
        &self,
        locator: &Value,
        paths: &[String],
        roots: &[PathBuf],
        timeout: Duration,
    ) -> Result<Value> {
        let (paths, roots) = (paths.to_vec(), roots.to_vec());
        let files = tokio::task::spawn_blocking(move || {
            paths
                .iter()
                .map(|path| allowed_file(path, &roots))
                .collect::<Result<Vec<String>>>()
        })
        .await
        .map_err(|e| EngineError::Io(format!("path check failed: {e}")))??;
        let args = json!({ "locator": locator });
        let reply = self
            .evaluate_op(&self.top(), "element", &args, false, timeout)
            .await?;
        let object = &reply["result"];
        if object["subtype"] != "node" {
            let status = object["preview"]["properties"]
                .as_array()
                .and_then(|p| p.iter().find(|p| p["name"] == "status"))
                .and_then(|p| p["value"].as_str())
                .unwrap_or("not_found")
                .to_owned();
            return Err(EngineError::page(
                ErrorCode::parse(&status).unwrap_or(ErrorCode::NotFound),
                format!("the locator names no single file input ({status})"),
                Value::Null,
            ));
        }
        let object_id = object["objectId"].as_str().unwrap_or_default().to_owned();
        let set = self
            .cdp(
                "DOM.setFileInputFiles",
                json!({ "files": files, "objectId": object_id }),
                timeout,
            )
            .await;
        let _ = self
            .cdp(
                "Runtime.releaseObject",
                json!({ "objectId": object_id }),
                timeout,
            )
            .await;
        set.map_err(|e| match e {
            EngineError::Cdp(cdp::CdpError::Protocol { message, .. }) => {
                EngineError::invalid(Input::Locator, format!("not a file input: {message}"))
            }
            other => other,
        })?;
        Ok(json!({ "status": "set", "files": files }))
    }
}

/// The canonical path, if it is a regular file under one of the roots.
fn allowed_file(path: &str, roots: &[PathBuf]) -> Result<String> {
    let refused = |why: String| EngineError::refused(ErrorCode::PathNotAllowed, why);
    if roots.is_empty() {
        return Err(refused(
            "uploads are off: no upload root is configured".into(),
        ));
    }
    let canonical = std::fs::canonicalize(path)
        .map_err(|e| EngineError::invalid(Input::Files, format!("'{path}': {e}")))?;
    if !canonical.is_file() {
        return Err(EngineError::invalid(
            Input::Files,
            format!("'{path}' is not a regular file"),
        ));
    }
    let inside = roots
        .iter()
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .any(|root| canonical.starts_with(root));
    if !inside {
        return Err(refused(format!(
            "'{path}' is outside the allowed upload roots"
        )));
    }
    Ok(canonical.display().to_string())
}
