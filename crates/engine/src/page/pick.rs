//! Asking a person to point at elements: a panel on the page says what to click, the
//! browser's own inspect mode (`Overlay.setInspectMode`) takes each click wherever it
//! lands, frames included, and each picked element gets a ref the other tools act on.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{FrameContext, Page};
use crate::error::{EngineError, ErrorCode, Result};

/// Run on the picked element, in its document's main world.
const DESCRIBE_PICKED: &str = include_str!("../../page_script/picked.js");

/// One element to ask for.
#[derive(Debug, Clone)]
pub struct PickRequest {
    pub id: String,
    pub name: String,
    pub description: Option<String>,
}

/// What was picked for one request (None: the time ran out first).
#[derive(Debug, Clone, Serialize)]
pub struct Picked {
    pub id: String,
    pub name: String,
    pub element: Option<PickedElement>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PickedElement {
    /// A ref (`ref_N`) the other tools act on, in whatever frame the element lives.
    pub reference: String,
    /// A CSS selector for it in its own document.
    pub selector: String,
    /// The iframes to its document, as CSS selectors from the top (empty: the top
    /// document).
    pub frame_path: Vec<String>,
    /// The frame the element's document is (CDP's frame id; None: the top document).
    pub frame_id: Option<String>,
    /// Its box in the top viewport, CSS px: x, y, width, height.
    pub rect: (f64, f64, f64, f64),
    pub text: String,
    pub tag_name: String,
}

/// The picking as it ended.
#[derive(Debug, Clone, Serialize)]
pub struct Picking {
    pub results: Vec<Picked>,
    pub timed_out: bool,
}

impl Page {
    /// Asks for each request's element in turn, until all are picked or `timeout` ends.
    pub async fn pick_elements(
        &self,
        requests: &[PickRequest],
        timeout: Duration,
    ) -> Result<Picking> {
        let deadline = Instant::now() + timeout;
        let step = timeout.min(crate::browser::HOUSEKEEPING);
        let mut events = self.browser.conn.subscribe();
        self.cdp("DOM.enable", json!({}), step).await?;
        self.cdp("Overlay.enable", json!({}), step).await?;
        self.cdp("DOM.getDocument", json!({ "depth": 0 }), step)
            .await?;
        let items: Vec<Value> = requests
            .iter()
            .map(|r| json!({ "name": r.name, "description": r.description }))
            .collect();
        let mut results: Vec<Picked> = requests
            .iter()
            .map(|r| Picked {
                id: r.id.clone(),
                name: r.name.clone(),
                element: None,
            })
            .collect();
        let mut timed_out = false;
        let outcome = async {
            for (index, request) in requests.iter().enumerate() {
                self.run_ok(
                    &self.top(),
                    "pick_panel",
                    json!({ "items": items, "current": index }),
                    step,
                )
                .await?;
                let highlight = json!({
                    "showInfo": true,
                    "contentColor": { "r": 111, "g": 168, "b": 220, "a": 0.5 },
                    "borderColor": { "r": 224, "g": 168, "b": 0, "a": 1 },
                });
                self.cdp(
                    "Overlay.setInspectMode",
                    json!({ "mode": "searchForNode", "highlightConfig": highlight }),
                    step,
                )
                .await?;
                let Some(node) = self.next_pick(&mut events, deadline).await else {
                    timed_out = true;
                    break;
                };
                results[index].element = Some(self.picked(node, step).await.map_err(|e| {
                    EngineError::page(
                        e.code(),
                        format!(
                            "the element picked for '{}' could not be read: {e}",
                            request.name
                        ),
                        Value::Null,
                    )
                })?);
            }
            Ok::<(), EngineError>(())
        }
        .await;
        // Whatever happened, the page is left as it was.
        let _ = self
            .cdp(
                "Overlay.setInspectMode",
                json!({ "mode": "none", "highlightConfig": {} }),
                step,
            )
            .await;
        let _ = self
            .run(&self.top(), "pick_panel_remove", json!({}), step)
            .await;
        outcome?;
        Ok(Picking { results, timed_out })
    }

    /// The node of the next click in inspect mode, or None at the deadline.
    async fn next_pick(
        &self,
        events: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<cdp::Event>>,
        deadline: Instant,
    ) -> Option<i64> {
        loop {
            match tokio::time::timeout_at(deadline, events.recv()).await {
                Ok(Ok(event))
                    if event.method == "Overlay.inspectNodeRequested"
                        && event.session_id.as_deref() == Some(self.session.as_str()) =>
                {
                    if let Some(node) = event.params["backendNodeId"].as_i64() {
                        return Some(node);
                    }
                }
                Ok(Ok(_)) | Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
                Ok(Err(_)) | Err(_) => return None,
            }
        }
    }

    /// Where a picked node is, and its ref.
    async fn picked(&self, node: i64, timeout: Duration) -> Result<PickedElement> {
        let resolved = self
            .cdp("DOM.resolveNode", json!({ "backendNodeId": node }), timeout)
            .await?;
        let object = resolved["object"]["objectId"].as_str().unwrap_or_default();
        let described = self
            .cdp(
                "Runtime.callFunctionOn",
                json!({
                    "objectId": object,
                    "functionDeclaration": format!("function () {{ {DESCRIBE_PICKED}\nreturn describePicked.call(this); }}"),
                    "returnByValue": true,
                }),
                timeout,
            )
            .await?;
        let _ = self
            .cdp(
                "Runtime.releaseObject",
                json!({ "objectId": object }),
                timeout,
            )
            .await;
        let info = &described["result"]["value"];
        if info.is_null() {
            return Err(EngineError::page(
                ErrorCode::NotFound,
                "the picked element is gone",
                Value::Null,
            ));
        }
        let selector = info["selector"].as_str().unwrap_or_default().to_owned();
        let frame_path: Vec<String> = info["frames"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_owned))
            .collect();
        if info["framesReachable"] == false {
            return Err(EngineError::Unsupported(
                "the element is in a cross-origin frame, which tabwire cannot name from the top document".into(),
            ));
        }
        let path: Vec<Value> = frame_path.iter().map(|f| json!(f)).collect();
        let (ctx, frame_id): (FrameContext, Option<String>) = match path.split_last() {
            None => (self.top(), None),
            Some((last, parents)) => {
                let parent = self.frame_context(parents, timeout).await?;
                let frame_id = self.frame_id_of(&parent, last, timeout).await?;
                (self.frame_context(&path, timeout).await?, Some(frame_id))
            }
        };
        let minted = self
            .run_ok(
                &ctx,
                "ref_of",
                json!({ "locator": selector, "base": self.next_ref() }),
                timeout,
            )
            .await?;
        let reference = minted["ref"].as_str().unwrap_or_default().to_owned();
        if let Some(next) = minted["next"].as_u64() {
            self.note_refs_until(next);
        }
        if !path.is_empty() {
            self.remember_ref_frame(&reference, path);
        }
        let rect = &info["rect"];
        let number = |v: &Value| v.as_f64().unwrap_or(0.0);
        Ok(PickedElement {
            reference,
            selector,
            frame_path,
            frame_id,
            rect: (
                number(&rect["x"]),
                number(&rect["y"]),
                number(&rect["width"]),
                number(&rect["height"]),
            ),
            text: info["text"].as_str().unwrap_or_default().to_owned(),
            tag_name: info["tagName"].as_str().unwrap_or_default().to_owned(),
        })
    }
}
