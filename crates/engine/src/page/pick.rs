//! Asking a person to point at elements: a panel on the page says what to click, the
//! browser's own inspect mode (`Overlay.setInspectMode`) takes each click wherever it
//! lands, frames included, and each picked element gets a ref the other tools act on.
//!
//! Inspect mode is per renderer: it is turned on in the page's session and in every
//! out-of-process frame's, and a click answers in the session of the frame it landed
//! in. The way from the picked element up to the top document is then walked over CDP
//! (each document's frame, that frame's owner iframe in its parent), not in the page:
//! a cross-origin frame hides its `frameElement` from script, not from the protocol.

use crate::ids::Deadline;

use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::Page;
use super::navigation::wait_event;
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
    /// A CSS selector for it in its own document (or shadow root).
    pub selector: String,
    /// The open shadow hosts around it, outermost first, as CSS selectors (empty: it is
    /// in the light DOM).
    pub shadow: Vec<String>,
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
    /// The person pressed the panel's Cancel.
    pub cancelled: bool,
}

impl Page {
    /// Asks for each request's element in turn, until all are picked or the deadline passes.
    pub async fn pick_elements(
        &self,
        requests: &[PickRequest],
        deadline: Deadline,
    ) -> Result<Picking> {
        let step = deadline.remaining().min(crate::browser::HOUSEKEEPING);
        let deadline = Instant::now() + deadline.remaining();
        let mut events = self.browser.conn.subscribe();
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
        let mut cancelled = false;
        let outcome = async {
            for (index, request) in requests.iter().enumerate() {
                let picked = loop {
                    // Clicks are taken before the panel asks for one.
                    self.inspect_everywhere(Deadline::after(step)).await?;
                    self.run_ok(
                        &self.top(),
                        "pick_panel",
                        json!({ "items": items, "current": index }),
                        Deadline::after(step),
                    )
                    .await?;
                    match self.next_pick(&mut events, deadline).await {
                        Awaited::Picked(session, node) => break Some((session, node)),
                        Awaited::TimedOut => break None,
                        // A new document has no panel (nor, maybe, inspect mode): once
                        // it is parsed, ask again.
                        Awaited::Navigated => {
                            wait_event(&mut events, deadline, |event| {
                                event.method == "Page.domContentEventFired"
                                    && event.session_id.as_deref() == Some(self.session.as_str())
                            })
                            .await;
                        }
                    }
                };
                let Some((session, node)) = picked else {
                    timed_out = true;
                    break;
                };
                if self.is_cancel(&session, node, Deadline::after(step)).await {
                    cancelled = true;
                    break;
                }
                let element = self.picked(&session, node, Deadline::after(step)).await;
                results[index].element = Some(element.map_err(|e| {
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
        for session in self.sessions() {
            let _ = self
                .cdp_in(
                    &session,
                    "Overlay.setInspectMode",
                    json!({ "mode": "none", "highlightConfig": {} }),
                    Deadline::after(step),
                )
                .await;
        }
        let _ = self
            .run(
                &self.top(),
                "pick_panel_remove",
                json!({}),
                Deadline::after(step),
            )
            .await;
        outcome?;
        Ok(Picking {
            results,
            timed_out,
            cancelled,
        })
    }

    /// The page's session and its out-of-process frames' sessions, the page's first.
    fn sessions(&self) -> Vec<String> {
        let mut sessions = vec![self.session.clone()];
        if let Some(tab) = self.browser.tab_by_target(&self.tab.target_id) {
            sessions.extend(tab.child_sessions.values().cloned());
        }
        sessions
    }

    /// Inspect mode on in every document of the tab (a frame that came since included).
    async fn inspect_everywhere(&self, deadline: Deadline) -> Result<()> {
        let highlight = json!({
            "showInfo": true,
            "contentColor": { "r": 111, "g": 168, "b": 220, "a": 0.5 },
            "borderColor": { "r": 224, "g": 168, "b": 0, "a": 1 },
        });
        for (i, session) in self.sessions().iter().enumerate() {
            let turned_on = async {
                self.cdp_in(session, "DOM.enable", json!({}), deadline)
                    .await?;
                self.cdp_in(session, "Overlay.enable", json!({}), deadline)
                    .await?;
                self.cdp_in(session, "DOM.getDocument", json!({ "depth": 0 }), deadline)
                    .await?;
                self.cdp_in(
                    session,
                    "Overlay.setInspectMode",
                    json!({ "mode": "searchForNode", "highlightConfig": highlight }),
                    deadline,
                )
                .await
            }
            .await;
            match turned_on {
                Ok(_) => {}
                // The page's own session must take it; a frame that went away meanwhile
                // is simply not clickable any more.
                Err(e) if i == 0 => return Err(e),
                Err(_) => {}
            }
        }
        Ok(())
    }

    /// The session and node of the next click in inspect mode, or the page's navigating
    /// to a new document, or the deadline.
    async fn next_pick(
        &self,
        events: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<cdp::Event>>,
        deadline: Instant,
    ) -> Awaited {
        loop {
            match tokio::time::timeout_at(deadline, events.recv()).await {
                Ok(Ok(event))
                    if event.method == "Page.frameNavigated"
                        && event.session_id.as_deref() == Some(self.session.as_str())
                        && event.params["frame"]["parentId"].is_null() =>
                {
                    return Awaited::Navigated;
                }
                Ok(Ok(event)) if event.method == "Overlay.inspectNodeRequested" => {
                    let ours = event
                        .session_id
                        .as_ref()
                        .filter(|session| self.sessions().contains(session));
                    if let (Some(session), Some(node)) =
                        (ours, event.params["backendNodeId"].as_i64())
                    {
                        return Awaited::Picked(session.clone(), node);
                    }
                }
                Ok(Ok(_)) | Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
                Ok(Err(_)) | Err(_) => return Awaited::TimedOut,
            }
        }
    }

    /// Where a picked node is, and its ref.
    async fn picked(&self, session: &str, node: i64, deadline: Deadline) -> Result<PickedElement> {
        let info = self.describe_node(session, node, deadline).await?;
        let selector = info["selector"].as_str().unwrap_or_default().to_owned();
        let shadow: Vec<String> = info["shadow"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_owned))
            .collect();
        let mut rect = Rect::of(&info["rect"]);
        // Up through each frame to the top document.
        let mut frame_path = Vec::new();
        let mut frame_id = None;
        let (mut at_session, mut at_node) = (session.to_owned(), node);
        while let Some(frame) = self.frame_of(&at_session, at_node, deadline).await? {
            let owner = self
                .describe_node(&frame.owner_session, frame.owner_node, deadline)
                .await?;
            // The frame's document starts inside the iframe's border.
            let owner_box = Rect::of(&owner["rect"]);
            rect.x += owner_box.x + owner["clientLeft"].as_f64().unwrap_or(0.0);
            rect.y += owner_box.y + owner["clientTop"].as_f64().unwrap_or(0.0);
            frame_path.insert(0, owner["selector"].as_str().unwrap_or_default().to_owned());
            frame_id.get_or_insert(frame.id);
            (at_session, at_node) = (frame.owner_session, frame.owner_node);
            if frame_path.len() > MAX_FRAME_NESTING {
                return Err(EngineError::page(
                    ErrorCode::NotFound,
                    "the picked element is nested in too many frames",
                    Value::Null,
                ));
            }
        }
        let path: Vec<Value> = frame_path.iter().map(|f| json!(f)).collect();
        let ctx = self.frame_context(&path, deadline).await?;
        let locator = if shadow.is_empty() {
            json!(selector)
        } else {
            json!({ "css": selector, "shadow": shadow })
        };
        let minted = self
            .run_ok(
                &ctx,
                "ref_of",
                json!({ "locator": locator, "base": self.next_ref() }),
                deadline,
            )
            .await?;
        let reference = minted["ref"].as_str().unwrap_or_default().to_owned();
        if let Some(next) = minted["next"].as_u64() {
            self.note_refs_until(next);
        }
        if !path.is_empty() {
            self.remember_ref_frame(&reference, path);
        }
        Ok(PickedElement {
            reference,
            selector,
            shadow,
            frame_path,
            frame_id,
            rect: (rect.x, rect.y, rect.width, rect.height),
            text: info["text"].as_str().unwrap_or_default().to_owned(),
            tag_name: info["tagName"].as_str().unwrap_or_default().to_owned(),
        })
    }
}

/// What the wait for a person's click ended in.
enum Awaited {
    /// A click, in this session, on this node.
    Picked(String, i64),
    /// The page went to a new document.
    Navigated,
    TimedOut,
}

/// How deep a picked element's frames may nest before the walk up gives up.
const MAX_FRAME_NESTING: usize = 16;

/// A box in some document's viewport, CSS px.
struct Rect {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
}

impl Rect {
    fn of(value: &Value) -> Rect {
        let number = |key: &str| value[key].as_f64().unwrap_or(0.0);
        Rect {
            x: number("x"),
            y: number("y"),
            width: number("width"),
            height: number("height"),
        }
    }
}

/// The frame a node's document is, and the iframe that holds it in its parent.
struct FrameOwner {
    id: String,
    owner_session: String,
    owner_node: i64,
}

impl Page {
    /// Whether a click landed on the panel's Cancel button (in the top document).
    async fn is_cancel(&self, session: &str, node: i64, deadline: Deadline) -> bool {
        session == self.session
            && self
                .describe_node(session, node, deadline)
                .await
                .is_ok_and(|info| info["cancelled"] == true)
    }

    /// What `picked.js` says of a node (an element, or a text node's element): its
    /// selector, its box in its own viewport, its text.
    async fn describe_node(&self, session: &str, node: i64, deadline: Deadline) -> Result<Value> {
        let function =
            format!("function () {{ {DESCRIBE_PICKED}\nreturn describePicked.call(this); }}");
        let described = self
            .call_on_node(session, node, &function, true, deadline)
            .await?;
        let info = described["result"]["value"].clone();
        if info.is_null() {
            return Err(picked_gone());
        }
        Ok(info)
    }

    /// Runs `function` with the node as `this` in its document; its CDP answer (the
    /// node's handle released either way).
    async fn call_on_node(
        &self,
        session: &str,
        node: i64,
        function: &str,
        by_value: bool,
        deadline: Deadline,
    ) -> Result<Value> {
        let resolved = self
            .cdp_in(
                session,
                "DOM.resolveNode",
                json!({ "backendNodeId": node }),
                deadline,
            )
            .await?;
        let object = resolved["object"]["objectId"]
            .as_str()
            .ok_or_else(picked_gone)?;
        let called = self
            .cdp_in(
                session,
                "Runtime.callFunctionOn",
                json!({ "objectId": object, "functionDeclaration": function, "returnByValue": by_value }),
                deadline,
            )
            .await;
        self.release(session, object);
        called
    }

    /// The frame `node`'s document is, with its owner iframe (None: the top document).
    async fn frame_of(
        &self,
        session: &str,
        node: i64,
        deadline: Deadline,
    ) -> Result<Option<FrameOwner>> {
        let document = self.owner_document(session, node, deadline).await?;
        let root = self
            .cdp_in(session, "DOM.getDocument", json!({ "depth": 0 }), deadline)
            .await?;
        if root["root"]["backendNodeId"].as_i64() == Some(document) {
            // The session's own document: the page's (the top), or an out-of-process
            // frame's, whose owner iframe is in some other session of the tab.
            if session == self.session {
                return Ok(None);
            }
            let frame = self
                .browser
                .tab_by_target(&self.tab.target_id)
                .and_then(|tab| {
                    tab.child_sessions
                        .iter()
                        .find(|(_, s)| s.as_str() == session)
                        .map(|(frame, _)| frame.clone())
                })
                .ok_or_else(|| {
                    EngineError::page(
                        ErrorCode::StaleFrame,
                        "the picked element's frame went away",
                        Value::Null,
                    )
                })?;
            for parent in self.sessions().into_iter().filter(|s| s != session) {
                if let Ok(owner) = self
                    .cdp_in(
                        &parent,
                        "DOM.getFrameOwner",
                        json!({ "frameId": frame }),
                        deadline,
                    )
                    .await
                    && let Some(owner_node) = owner["backendNodeId"].as_i64()
                {
                    return Ok(Some(FrameOwner {
                        id: frame,
                        owner_session: parent,
                        owner_node,
                    }));
                }
            }
            return Err(EngineError::page(
                ErrorCode::StaleFrame,
                "the iframe holding the picked element was not found",
                Value::Null,
            ));
        }
        // A frame in the session's own process: the one whose iframe holds this document.
        let tree = self
            .cdp_in(session, "Page.getFrameTree", json!({}), deadline)
            .await?;
        for frame in child_frames(&tree["frameTree"]) {
            let Ok(owner) = self
                .cdp_in(
                    session,
                    "DOM.getFrameOwner",
                    json!({ "frameId": frame }),
                    deadline,
                )
                .await
            else {
                continue;
            };
            let Some(owner_node) = owner["backendNodeId"].as_i64() else {
                continue;
            };
            let iframe = self
                .cdp_in(
                    session,
                    "DOM.describeNode",
                    json!({ "backendNodeId": owner_node }),
                    deadline,
                )
                .await?;
            if iframe["node"]["contentDocument"]["backendNodeId"].as_i64() == Some(document) {
                return Ok(Some(FrameOwner {
                    id: frame,
                    owner_session: session.to_owned(),
                    owner_node,
                }));
            }
        }
        Err(EngineError::page(
            ErrorCode::StaleFrame,
            "the frame of the picked element was not found",
            Value::Null,
        ))
    }

    /// The backend node id of the document `node` is in.
    async fn owner_document(&self, session: &str, node: i64, deadline: Deadline) -> Result<i64> {
        let document = self
            .call_on_node(
                session,
                node,
                "function () { return this.ownerDocument || this; }",
                false,
                deadline,
            )
            .await?;
        let document_object = document["result"]["objectId"]
            .as_str()
            .ok_or_else(picked_gone)?;
        let described = self
            .cdp_in(
                session,
                "DOM.describeNode",
                json!({ "objectId": document_object }),
                deadline,
            )
            .await;
        self.release(session, document_object);
        described?["node"]["backendNodeId"]
            .as_i64()
            .ok_or_else(picked_gone)
    }
}

fn picked_gone() -> EngineError {
    EngineError::page(
        ErrorCode::NotFound,
        "the picked element is gone",
        Value::Null,
    )
}

/// The ids of every frame below the root of a `Page.getFrameTree` answer.
fn child_frames(tree: &Value) -> Vec<String> {
    let mut frames = Vec::new();
    for child in tree["childFrames"].as_array().into_iter().flatten() {
        if let Some(id) = child["frame"]["id"].as_str() {
            frames.push(id.to_owned());
        }
        frames.extend(child_frames(child));
    }
    frames
}
