//! Reading a page: the snapshot (the page script's `scan`) and scrolling.

use std::time::Duration;

use serde_json::{Value, json};

use super::Page;
use crate::error::{EngineError, ErrorCode, Input, Result};

pub struct ScanRequest {
    pub text_only: bool,
    pub cutlist: bool,
    pub maxchars: u64,
    pub max_targets: u64,
    pub frame: Vec<Value>,
    pub extra_js: Option<String>,
    /// Where a continuation starts: the content's character and the target's index.
    pub content_offset: u64,
    pub targets_offset: u64,
}

impl Page {
    pub async fn scan(&self, request: &ScanRequest, timeout: Duration) -> Result<Value> {
        if request.extra_js.is_some() && !request.frame.is_empty() {
            return Err(EngineError::invalid(
                Input::ExtraScript,
                "cannot be combined with frame",
            ));
        }
        let ctx = self.frame_context(&request.frame, timeout).await?;
        let mut extra = Value::Null;
        if let Some(code) = &request.extra_js {
            // Evaluated as execute_js evaluates (its values converted the same way: a
            // DOM node, a Map or a cycle is described, not refused); a script that throws
            // is reported beside the scan, which still happens.
            extra = match super::user_script::evaluate_user_script(self, code).await {
                Ok(value) => value,
                Err(EngineError::Page {
                    code: ErrorCode::ScriptError,
                    message,
                    ..
                }) => json!({ "error": message }),
                Err(error) => return Err(error),
            };
        }
        let mut result = self
            .run(
                &ctx,
                "scan",
                json!({
                    "text_only": request.text_only,
                    "cutlist": request.cutlist,
                    "maxchars": request.maxchars,
                    "max_targets": request.max_targets,
                    "content_offset": request.content_offset,
                    "targets_offset": request.targets_offset,
                    "ref_base": self.next_ref(),
                }),
                timeout,
            )
            .await?;
        if let Some(next) = result.get("ref_next").and_then(Value::as_u64) {
            self.note_refs_until(next);
        }
        if let Some(map) = result.as_object_mut() {
            map.remove("ref_next");
        }
        if result.get("content").is_none() {
            let message = result["message"]
                .as_str()
                .unwrap_or("the page could not be read")
                .to_owned();
            return Err(EngineError::page(ErrorCode::ScanFailed, message, result));
        }
        if request.extra_js.is_some() {
            result["extra_js_result"] = extra;
        }
        if !request.frame.is_empty() {
            result["frame"] = json!(request.frame);
        }
        Ok(result)
    }

    pub async fn scroll(&self, to: Value, timeout: Duration) -> Result<Value> {
        self.run_ok(&self.top(), "scroll", json!({ "to": to }), timeout)
            .await
    }
}
