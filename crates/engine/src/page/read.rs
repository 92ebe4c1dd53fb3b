//! Reading a page: the snapshot (the page script's `scan`) and scrolling.

use crate::ids::Deadline;

use serde_json::{Value, json};

use super::element_info::ElementInfo;
use super::locator::Locator;
pub use super::observation::Cursor;
use super::observation::{Observation, Scan, Subfield, Target};
use super::{FrameContext, Page};
use crate::error::{EngineError, ErrorCode, Input, Result};

/// Roles of the sub-fields listed: the spin buttons and the picker's button.
const SUBFIELD_ROLES: &[&str] = &["spinbutton", "button"];

pub struct ScanRequest {
    pub text_only: bool,
    pub cutlist: bool,
    pub maxchars: u64,
    pub max_targets: u64,
    /// The iframes leading to the document read (none: the top document).
    pub frame: Vec<Locator>,
    pub extra_js: Option<String>,
    /// Where the read starts (the start of the page unless it goes on from an earlier one).
    pub from: Cursor,
}

/// Where a scroll left the page's main scroller (the document's, or the element that
/// scrolls the page's content), in CSS px.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Scrolled {
    pub scroll_x: i64,
    pub scroll_y: i64,
    pub scroll_height: i64,
    pub viewport_height: i64,
    pub at_top: bool,
    pub at_bottom: bool,
    /// Where it was before.
    pub scrolled_from: i64,
    pub moved: bool,
    /// The scroller when it is not the document (a unique selector).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scroller: Option<String>,
    /// The element scrolled to, as the page script describes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub element: Option<ElementInfo>,
}

/// Where a scroll goes.
#[derive(Debug, Clone, PartialEq)]
pub enum ScrollTo {
    Top,
    Bottom,
    /// CSS pixels from the top.
    Offset(f64),
    /// An element, brought to the middle of the viewport.
    Element(Locator),
}

impl Page {
    pub async fn scan(&self, request: &ScanRequest, deadline: Deadline) -> Result<Scan> {
        if request.extra_js.is_some() && !request.frame.is_empty() {
            return Err(EngineError::invalid(
                Input::ExtraScript,
                "cannot be combined with frame",
            ));
        }
        // The path as replies write it (each step an object), and as the page reads it.
        let path: Vec<Value> = request.frame.iter().map(Locator::step_json).collect();
        let ctx = self.frame_context(&path, deadline).await?;
        let mut extra = Value::Null;
        if let Some(code) = &request.extra_js {
            extra = self.script_before_read(code).await?;
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
                    "content_offset": request.from.content_offset,
                    "targets_offset": request.from.targets_offset,
                    "collapsed": request.from.collapsed,
                    "ref_base": self.next_ref(),
                    // Readiness is the top document's (a frame's scan has none).
                    "render": path.is_empty(),
                }),
                deadline,
            )
            .await?;
        if let Some(next) = result.get("ref_next").and_then(Value::as_u64) {
            self.note_refs_until(next);
        }
        if result.get("content").is_none() {
            let message = result["message"]
                .as_str()
                .unwrap_or("the page could not be read")
                .to_owned();
            return Err(EngineError::page(ErrorCode::ScanFailed, message, result));
        }
        if let Some(map) = result.as_object_mut() {
            map.remove("ref_next");
        }
        let mut scan: Scan = serde_json::from_value(result).map_err(|error| {
            EngineError::Io(format!("the page script's scan did not parse: {error}"))
        })?;
        if let Some(listed) = &mut scan.observation.listed {
            self.add_subfields(&ctx, &mut listed.targets, deadline)
                .await;
        }
        if request.extra_js.is_some() {
            scan.extra_js_result = Some(extra);
        }
        self.place_in_frame(&mut scan.observation, &path);
        Ok(scan)
    }

    /// Makes a framed scan's locators act from the top document: each target's locator
    /// and each inner frame's path start with the frame path scanned (`observation.frame`),
    /// and each target's ref is remembered with it, so any of them, passed back unchanged,
    /// reaches the very element.
    fn place_in_frame(&self, observation: &mut Observation, path: &[Value]) {
        observation.frame = path.to_vec();
        let Some(listed) = observation.listed.as_mut().filter(|_| !path.is_empty()) else {
            return;
        };
        for target in listed.targets.iter_mut().chain(&mut listed.more_targets) {
            target.locator["frame"] = json!(path);
            self.remember_ref_frame(&target.reference, path.to_vec());
        }
        for frame in &mut listed.frames {
            frame.frame = [path, frame.frame.as_slice()].concat();
        }
    }

    /// A script a read runs first (`extra_js`), evaluated as execute_js evaluates (its
    /// values converted the same way: a DOM node, a Map or a cycle is described, not
    /// refused); one that throws is reported as `{error}`, and the read still happens.
    pub async fn script_before_read(&self, code: &str) -> Result<Value> {
        match super::agent_js::evaluate_agent_js(self, code).await {
            Ok(value) => Ok(value),
            Err(EngineError::Page {
                code: ErrorCode::ScriptError,
                message,
                ..
            }) => Ok(json!({ "error": message })),
            Err(error) => Err(error),
        }
    }

    /// Gives each date or time input among `targets` the sub-fields Chromium's
    /// accessibility tree names inside it (`fields: [{role, name}]`), so a snapshot
    /// lists every named control of that tree. The value itself is typed whole
    /// (`set_value` in act.js). Best effort: an input whose tree cannot be read is left as
    /// it is.
    async fn add_subfields(&self, ctx: &FrameContext, targets: &mut [Target], deadline: Deadline) {
        // scan.js marks the inputs Chromium draws with sub-fields (`SUBFIELD_TYPES`).
        for target in targets.iter_mut().filter(|t| t.sub) {
            target.fields = self.subfields(ctx, &target.locator, deadline).await;
        }
    }

    /// The named spin buttons and picker button Chromium's accessibility tree holds inside
    /// the input a locator names, as `{role, name}`. Best effort: none when the tree
    /// cannot be read (the snapshot still lists the input).
    pub(super) async fn subfields(
        &self,
        ctx: &FrameContext,
        locator: &Value,
        deadline: Deadline,
    ) -> Vec<Subfield> {
        self.read_subfields(ctx, locator, deadline)
            .await
            .unwrap_or_else(|error| {
                tracing::debug!(%error, "could not read a date input's sub-fields");
                Vec::new()
            })
    }

    async fn read_subfields(
        &self,
        ctx: &FrameContext,
        locator: &Value,
        deadline: Deadline,
    ) -> Result<Vec<Subfield>> {
        let args = json!({ "locator": locator });
        let reply = self
            .evaluate_op(ctx, "element", &args, false, deadline)
            .await?;
        // A locator that names nothing yields the page script's report, not a node.
        let node = reply["result"]["subtype"] == "node";
        let Some(object_id) = reply["result"]["objectId"].as_str().filter(|_| node) else {
            return Ok(Vec::new());
        };
        let tree = self
            .cdp_in(
                &ctx.session,
                "Accessibility.queryAXTree",
                json!({ "objectId": object_id }),
                deadline,
            )
            .await;
        self.release(&ctx.session, object_id);
        let nodes = tree?["nodes"].as_array().cloned().unwrap_or_default();
        Ok(nodes
            .iter()
            .filter(|node| node["ignored"] != true)
            .filter_map(|node| {
                let role = node["role"]["value"].as_str()?;
                let name = node["name"]["value"].as_str()?.trim();
                (SUBFIELD_ROLES.contains(&role) && !name.is_empty()).then(|| Subfield {
                    role: role.to_owned(),
                    name: name.to_owned(),
                })
            })
            .collect())
    }

    /// Scrolls the main scroller (of the top document, or of the frame an element is in)
    /// to the top, the bottom, a pixel offset, or an element brought to the middle; where
    /// it is then.
    pub async fn scroll(&self, to: ScrollTo, deadline: Deadline) -> Result<Scrolled> {
        let (ctx, to) = match to {
            ScrollTo::Top => (self.top(), json!("top")),
            ScrollTo::Bottom => (self.top(), json!("bottom")),
            ScrollTo::Offset(pixels) => (self.top(), json!(pixels)),
            ScrollTo::Element(locator) => {
                let placed = self.place(&locator)?;
                (
                    self.frame_context(&placed.frame, deadline).await?,
                    placed.find,
                )
            }
        };
        self.run_as(&ctx, "scroll", json!({ "to": to }), deadline)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::Cursor;
    use crate::page::observation::Continuation;
    use serde_json::json;

    #[test]
    fn a_cursor_reads_back_as_it_was_written() {
        let cursor = Cursor {
            collapsed: false,
            content_offset: 35_000,
            targets_offset: 80,
        };
        assert_eq!(cursor.to_string(), "35000:80");
        assert_eq!("35000:80".parse::<Cursor>().unwrap(), cursor);
        let collapsed: Cursor = " c0:12 ".parse().unwrap();
        assert!(collapsed.collapsed && collapsed.targets_offset == 12);
        assert_eq!(collapsed.to_string(), "c0:12");
        assert_eq!("".parse::<Cursor>().unwrap(), Cursor::default());
        for bad in ["soon", "12", "c", "1:x", "-1:2"] {
            assert!(bad.parse::<Cursor>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_page_scripts_next_is_written_as_the_continuations_cursor() {
        let continuation: Continuation = serde_json::from_value(json!({
            "next": { "collapsed": true, "content_offset": 0, "targets_offset": 9 },
            "collapsed_items": 3,
        }))
        .unwrap();
        assert_eq!(continuation.cursor.to_string(), "c0:9");
        assert_eq!(
            json!(continuation),
            json!({ "cursor": "c0:9", "collapsed_items": 3 })
        );
    }
}
