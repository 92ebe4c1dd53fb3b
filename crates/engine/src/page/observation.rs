//! What a read of a page (`Page::scan`) finds, typed: the controls and frames an agent
//! can act on, the viewport, how ready the page is, and where a read cut short goes on.
//! The page script writes these shapes (`scan.js`); the field names are those a reply
//! shows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{EngineError, Input, Result};

/// A read of a page: its content (text or simplified markup) and what it shows.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scan {
    pub content: String,
    /// The absolute URLs of long links the content names by ref (`#r3`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub links: BTreeMap<String, String>,
    /// The content was cut at the read's size; `continuation` reads on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncated: bool,
    /// The top document's readiness (a frame's read has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render: Option<RenderProbe>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render_state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_ready: Option<bool>,
    /// Elements outside the viewport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_viewport: Option<u64>,
    /// What to do about what the read found (not ready, offscreen elements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Runs of similar items the content collapsed to a few.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cutlist: Vec<Collapsed>,
    /// A read of the collapsed items: how many there were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapsed_items: Option<u64>,
    pub observation: Observation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continuation: Option<Continuation>,
    /// What a script run before the read returned (the page's own data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_js_result: Option<Value>,
}

impl Scan {
    /// Where the next read starts, when this one was cut short.
    pub fn next(&self) -> Option<Cursor> {
        self.continuation.as_ref().map(|c| c.cursor)
    }
}

/// How far the top document has rendered, as BrowserTap's render probe says it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RenderProbe {
    /// `content`, `loading`, `hydrating`, `shell_only` or `no_body`.
    pub state: String,
    pub content_ready: bool,
    pub ready_state: Option<String>,
    pub has_body: bool,
    pub text_chars: u64,
    pub html_chars: u64,
    /// The page marks something as still loading (`aria-busy`, `data-loading`).
    pub loading: bool,
    pub fonts: Option<String>,
}

/// A run of similar items shown as a few, and how to reach the rest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Collapsed {
    pub selector: String,
    pub total: u64,
    pub shown: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shadow: Vec<String>,
}

/// The page as an agent can act on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Observation {
    /// `success`; `disabled` when no targets were asked for; `unavailable` when they
    /// cannot be trusted (`reason` says why).
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub url: String,
    pub title: String,
    pub ready_state: String,
    pub viewport: ScanViewport,
    /// The controls and frames listed; none when they are `unavailable`.
    #[serde(flatten)]
    pub listed: Option<Listed>,
    /// The frame path read (each step a locator), empty for the top document.
    #[serde(default)]
    pub frame: Vec<Value>,
}

/// The controls and frames a read lists, in document order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Listed {
    pub targets: Vec<Target>,
    /// Clickables BrowserTap would not list (no role, drawn transparent), with the first
    /// page of targets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_targets: Vec<Target>,
    pub frames: Vec<FrameTarget>,
    /// More remain than `limit`; `continuation` reads on.
    pub truncated: bool,
    pub limit: u64,
    /// `viewport_css`: rects are CSS pixels from the viewport's top left.
    pub coordinate_space: String,
}

/// One control: how to reach it again, what it is, its state, and what to do with it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Target {
    /// A locator naming it alone (`{css, shadow?, frame?}`), to pass back unchanged.
    pub locator: Value,
    #[serde(rename = "ref")]
    pub reference: String,
    pub tag: String,
    /// An input's type, else "".
    #[serde(rename = "type")]
    pub input_type: String,
    pub name: String,
    /// The role attribute as written, else "".
    pub role: String,
    /// The role Chromium computes, where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub computed_role: Option<String>,
    pub visible: bool,
    pub editable: bool,
    pub disabled: bool,
    pub readonly: bool,
    pub inert: bool,
    pub rect: Rect,
    pub hit_test: String,
    /// The tool BrowserTap recommends for it (none: leave it, or another way), and why.
    pub recommended_tool: Option<String>,
    pub reason: String,
    /// False when it is outside the viewport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_viewport: Option<bool>,
    /// tabwire's own tool for it, where that differs (`page_type` sets a date whole,
    /// `page_select` chooses an option).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tabwire_tool: Option<String>,
    /// The format `page_type` takes a date, time, colour or range value in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_format: Option<String>,
    /// The page script marks inputs Chromium draws with sub-fields; the engine reads them.
    #[serde(default, skip_serializing)]
    pub(crate) sub: bool,
    /// A date or time input's named sub-fields (spin buttons, the picker's button).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<Subfield>,
}

/// A named part of a control in the accessibility tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subfield {
    pub role: String,
    pub name: String,
}

/// An iframe: its locator, the frame path that reads it, and whether script here can
/// reach into it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FrameTarget {
    pub locator: Value,
    /// The frame path that reads it (each step a locator).
    pub frame: Vec<Value>,
    pub name: String,
    pub url: String,
    pub inspected: bool,
    pub rect: Rect,
    pub same_origin: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_viewport: Option<bool>,
}

/// A box in CSS pixels, rounded.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rect {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScanViewport {
    pub width: i64,
    pub height: i64,
    /// As the page gives it (`1`, `1.25`).
    pub device_pixel_ratio: serde_json::Number,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scroll_x: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scroll_y: Option<i64>,
    /// The document's height, when it scrolls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scroll_height: Option<i64>,
}

/// Where a read cut short goes on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Continuation {
    /// What the next read passes back (the page script writes its offsets as `next`).
    #[serde(
        rename(serialize = "cursor", deserialize = "next"),
        serialize_with = "cursor_text"
    )]
    pub cursor: Cursor,
    /// Where this read's content started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_offset: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chars_remaining: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets_remaining: Option<bool>,
    /// Everything shown was read; this many collapsed items come next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapsed_items: Option<u64>,
}

/// Where a snapshot reads on from: the content's character and the index of the next
/// target listed, in the page as the cut list shows it, or (`collapsed`) within the items
/// the cut list collapsed. Written as BrowserTap's `continuation.cursor`: `"35000:80"`,
/// `"c0:80"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
pub struct Cursor {
    pub collapsed: bool,
    pub content_offset: u64,
    pub targets_offset: u64,
}

impl std::fmt::Display for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let phase = if self.collapsed { "c" } else { "" };
        write!(f, "{phase}{}:{}", self.content_offset, self.targets_offset)
    }
}

impl std::str::FromStr for Cursor {
    type Err = EngineError;

    /// A cursor as a reply wrote it; an empty one is the start of the page.
    fn from_str(text: &str) -> Result<Cursor> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(Cursor::default());
        }
        let (collapsed, rest) = match text.strip_prefix('c') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let offsets = rest
            .split_once(':')
            .and_then(|(c, t)| Some((c.trim().parse().ok()?, t.trim().parse().ok()?)));
        let Some((content_offset, targets_offset)) = offsets else {
            return Err(EngineError::invalid(
                Input::Cursor,
                "is the continuation.cursor of an earlier scan_page reply, like \"35000:80\" or \"c0:0\"",
            ));
        };
        Ok(Cursor {
            collapsed,
            content_offset,
            targets_offset,
        })
    }
}

fn is_false(value: &bool) -> bool {
    !value
}

/// A cursor as a reply writes it (`"35000:80"`).
fn cursor_text<S: serde::Serializer>(cursor: &Cursor, out: S) -> Result<S::Ok, S::Error> {
    out.collect_str(cursor)
}
