//! Files onto a page's `<input type=file>`, read only from the allowed upload roots.

use crate::ids::Deadline;

use serde_json::{Value, json};

use super::Page;
use super::locator::{Locator, Placed};
use crate::error::{EngineError, ErrorCode, Input, Result};

/// Files set on a file input: their canonical paths, as the page got them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Uploaded {
    pub files: Vec<String>,
    /// The file input's backend node id (None for files dropped onto a point).
    pub node_id: Option<i64>,
}

impl Page {
    /// Sets files on an `<input type=file>`. Every path must lie under an upload root of
    /// the engine's configuration (the output dir and `--upload-root`s).
    pub async fn upload(
        &self,
        locator: &Locator,
        paths: &[String],
        deadline: Deadline,
    ) -> Result<Uploaded> {
        let files = crate::files::readable_files(&self.config.upload_roots, paths).await?;
        let Placed { find, frame } = self.place(locator)?;
        let ctx = self.frame_context(&frame, deadline).await?;
        let args = json!({ "locator": find });
        let reply = self
            .evaluate_op(&ctx, "element", &args, false, deadline)
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
        let set = async {
            let node = self
                .cdp_in(
                    &ctx.session,
                    "DOM.describeNode",
                    json!({ "objectId": object_id }),
                    deadline,
                )
                .await?;
            self.cdp_in(
                &ctx.session,
                "DOM.setFileInputFiles",
                json!({ "files": files, "objectId": object_id }),
                deadline,
            )
            .await?;
            Ok::<_, EngineError>(node["node"]["backendNodeId"].as_i64())
        }
        .await;
        let _ = self
            .cdp_in(
                &ctx.session,
                "Runtime.releaseObject",
                json!({ "objectId": object_id }),
                deadline,
            )
            .await;
        let node_id = set.map_err(|e| match e {
            EngineError::Cdp(cdp::CdpError::Protocol { message, .. }) => {
                EngineError::invalid(Input::Locator, format!("not a file input: {message}"))
            }
            other => other,
        })?;
        Ok(Uploaded { files, node_id })
    }

    /// Drops files onto a point of the top viewport, as a person dragging them in from
    /// the desktop would (`Input.dispatchDragEvent`: enter, over, drop); the page's drop
    /// handlers get them as `dataTransfer.files`. Every path must lie under an upload
    /// root.
    pub async fn drop_files(
        &self,
        (x, y): (f64, f64),
        paths: &[String],
        deadline: Deadline,
    ) -> Result<Uploaded> {
        let files = crate::files::readable_files(&self.config.upload_roots, paths).await?;
        // Copy, move and link allowed: the page's handler picks its effect.
        let data = json!({ "items": [], "files": files, "dragOperationsMask": 1 | 2 | 16 });
        for kind in ["dragEnter", "dragOver", "drop"] {
            self.cdp(
                "Input.dispatchDragEvent",
                json!({ "type": kind, "x": x, "y": y, "data": data }),
                deadline,
            )
            .await?;
        }
        Ok(Uploaded {
            files,
            node_id: None,
        })
    }
}
