//! The lean snapshot: the page as an outline of roles, names and refs (`tree.js`), with
//! every iframe read in its own document (out-of-process ones through their own
//! session) and spliced in below it, coordinates moved into the top viewport.
//!
//! Refs are the tab's: numbers rise across documents (the tab keeps the next one), so a
//! ref from a page that has since navigated is told apart from a typo, and a ref that
//! lives in an iframe is remembered with its frame path, so any operation that takes a
//! locator acts on the same element (`Page::place`).

use crate::ids::Deadline;

use serde::Serialize;
use serde_json::{Value, json};

use super::locator::{Locator, page_frames, ref_number};
use super::{FrameContext, Page};
use crate::error::{EngineError, ErrorCode, Input, Result};

/// How deep frames inside frames are read, and how many frames at most.
const MAX_FRAME_DEPTH: usize = 4;
const MAX_FRAMES: usize = 30;

#[derive(Debug, Clone, Default)]
pub struct TreeRequest {
    /// Controls only (and iframes), unindented.
    pub interactive_only: bool,
    /// Only what is in the viewport now (the default); false: the whole page.
    pub viewport_only: bool,
    /// How many levels of the outline to show.
    pub depth: Option<u32>,
    /// Only the subtree of this ref.
    pub focus_ref: Option<String>,
    /// Only the document these iframes (outermost first) lead to.
    pub frame: Vec<Locator>,
    /// How the outline is written.
    pub style: OutlineStyle,
    /// The first line to write (a cursor from an earlier read that was cut).
    pub start_line: usize,
    /// Write whole lines until this many characters; the rest is for the next call
    /// (`Snapshot::next_line`). None: everything.
    pub max_chars: Option<usize>,
}

/// How an outline's lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutlineStyle {
    /// `- button "Save" [ref=ref_12] (310,45)`, two spaces a level (the Chrome MCP
    /// Server's shape).
    #[default]
    Exact,
    /// `button "Save" e12`, one space a level, text without quotes, no points: the same
    /// facts in the fewest characters, for a model to read.
    Lean,
}

#[derive(Debug, Clone, Serialize)]
pub struct Viewport {
    pub width: f64,
    pub height: f64,
    pub dpr: f64,
}

/// One read of the page.
#[derive(Debug, Clone, Serialize)]
pub struct Snapshot {
    pub url: String,
    pub title: String,
    /// The outline, one node a line.
    pub text: String,
    pub lines: usize,
    /// Refs in this snapshot.
    pub refs: usize,
    pub viewport: Viewport,
    /// Elements looked at.
    pub processed: u64,
    /// Controls left out because they are outside the viewport.
    pub offscreen: u64,
    /// Frames read into the snapshot.
    pub frames: usize,
    /// Lines left out past the limit.
    pub truncated: bool,
    /// The controls among the lines written, with their refs.
    pub controls: Vec<Control>,
    /// Where the next read starts when this one was cut by `max_chars`.
    pub next_line: Option<usize>,
    /// How far the top document has rendered when it is not done (`loading`,
    /// `hydrating`, `shell_only`, `no_body`); None when its content is ready.
    pub unready: Option<String>,
}

/// One control of a snapshot.
#[derive(Debug, Clone, Serialize)]
pub struct Control {
    pub reference: String,
    pub role: String,
    pub name: String,
    /// Its centre in the top viewport, when it is in view.
    pub point: Option<(f64, f64)>,
    pub disabled: bool,
}

/// One line of a document's outline as the page script gives it.
struct Line {
    depth: usize,
    /// The line as tree.js writes it (the exact style).
    text: String,
    /// A text line's text, unquoted.
    plain: Option<String>,
    /// A structural line's role and name (a heading, a landmark).
    role: Option<(String, String)>,
    point: Option<(f64, f64)>,
    tail: String,
    control: Option<Control>,
    /// The sub-fields of a date or time input, shown as lines below it (`read.rs`).
    subfields: Vec<String>,
}

impl Page {
    pub async fn read_tree(&self, request: &TreeRequest, deadline: Deadline) -> Result<Snapshot> {
        let top = self.top();
        let mut focus_frame = page_frames(&request.frame);
        let mut focus = request.focus_ref.clone();
        if let Some(reference) = &request.focus_ref {
            // A ref inside a frame: read that frame, from that element.
            let (_, frame) = self.ref_target(reference)?;
            focus_frame = frame;
            focus = Some(reference.clone());
        }
        let ctx = if focus_frame.is_empty() {
            top
        } else {
            self.frame_context(&focus_frame, deadline).await?
        };
        let first = self
            .read_document(&ctx, request, focus.as_deref(), deadline)
            .await?;
        let viewport = Viewport {
            width: first.reply["viewport"]["width"]
                .as_f64()
                .unwrap_or_default(),
            height: first.reply["viewport"]["height"]
                .as_f64()
                .unwrap_or_default(),
            dpr: first.reply["viewport"]["dpr"].as_f64().unwrap_or(1.0),
        };
        let mut snapshot = Snapshot {
            url: first.reply["url"].as_str().unwrap_or_default().to_owned(),
            title: first.reply["title"].as_str().unwrap_or_default().to_owned(),
            text: String::new(),
            lines: 0,
            refs: 0,
            viewport,
            processed: first.reply["processed"].as_u64().unwrap_or_default(),
            offscreen: first.reply["offscreen"].as_u64().unwrap_or_default(),
            frames: 0,
            truncated: first.reply["truncated"] == true,
            controls: Vec::new(),
            next_line: None,
            unready: first.reply["render_state"]
                .as_str()
                .filter(|state| *state != "content")
                .map(str::to_owned),
        };
        let mut lines = Vec::new();
        self.splice(
            first,
            focus_frame,
            request,
            deadline,
            &mut lines,
            &mut snapshot,
        )
        .await;
        snapshot.lines = lines.len();
        let (text, end) = render(&lines, request);
        snapshot.text = text;
        snapshot.next_line = (end < lines.len()).then_some(end);
        let written = lines.into_iter().take(end).skip(request.start_line);
        snapshot.controls = written.filter_map(|l| l.control).collect();
        snapshot.refs = snapshot.controls.len();
        Ok(snapshot)
    }

    /// Adds a document's lines, reading each iframe it lists into place (depth first).
    fn splice<'a>(
        &'a self,
        document: Document,
        path: Vec<Value>,
        request: &'a TreeRequest,
        deadline: Deadline,
        out: &'a mut Vec<Line>,
        snapshot: &'a mut Snapshot,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>> {
        Box::pin(async move {
            let frames = document.frames;
            let mut next_frame = frames.into_iter().peekable();
            for (index, line) in document.lines.into_iter().enumerate() {
                out.push(line);
                while let Some(frame) = next_frame.next_if(|f| f.index == index) {
                    if path.len() >= MAX_FRAME_DEPTH || snapshot.frames >= MAX_FRAMES {
                        continue;
                    }
                    let mut inner_path = path.clone();
                    inner_path.push(json!({ "ref": frame.reference }));
                    let Ok(ctx) = self.frame_context(&inner_path, deadline).await else {
                        continue;
                    };
                    let Ok(mut inner) = self.read_document(&ctx, request, None, deadline).await
                    else {
                        continue;
                    };
                    snapshot.frames += 1;
                    snapshot.processed += inner.reply["processed"].as_u64().unwrap_or_default();
                    snapshot.offscreen += inner.reply["offscreen"].as_u64().unwrap_or_default();
                    snapshot.truncated |= inner.reply["truncated"] == true;
                    for line in &mut inner.lines {
                        if !request.interactive_only {
                            line.depth += frame.depth;
                        }
                    }
                    self.remember_framed(&inner.lines, &inner_path);
                    self.splice(inner, inner_path, request, deadline, out, snapshot)
                        .await;
                }
            }
        })
    }

    /// Reads one document's outline; its lines' points are in the top viewport.
    async fn read_document(
        &self,
        ctx: &FrameContext,
        request: &TreeRequest,
        focus: Option<&str>,
        deadline: Deadline,
    ) -> Result<Document> {
        let ref_base = self.next_ref();
        let reply = self
            .run_ok(
                ctx,
                "read_tree",
                json!({
                    "filter": if request.interactive_only { "interactive" } else { "all" },
                    "viewport_only": request.viewport_only,
                    "depth": request.depth,
                    "focus_ref": focus,
                    "ref_base": ref_base,
                }),
                deadline,
            )
            .await?;
        self.note_refs_until(reply["ref_next"].as_u64().unwrap_or(ref_base));
        let lines = reply["nodes"]
            .as_array()
            .map(|nodes| {
                nodes
                    .iter()
                    .map(|node| {
                        let point = node["x"]
                            .as_f64()
                            .zip(node["y"].as_f64())
                            .map(|(x, y)| (x + ctx.offset.0, y + ctx.offset.1));
                        let control = node["r"].as_str().map(|reference| Control {
                            reference: reference.to_owned(),
                            role: node["role"].as_str().unwrap_or_default().to_owned(),
                            name: node["name"].as_str().unwrap_or_default().to_owned(),
                            point,
                            disabled: node["off"] == true,
                        });
                        let role = node["role"].as_str().filter(|_| control.is_none());
                        Line {
                            depth: node["d"].as_u64().unwrap_or_default() as usize,
                            text: node["s"].as_str().unwrap_or_default().to_owned(),
                            plain: node["v"].as_str().map(str::to_owned),
                            role: role.map(|role| {
                                let name = node["name"].as_str().unwrap_or_default();
                                (role.to_owned(), name.to_owned())
                            }),
                            point,
                            tail: node["t"].as_str().unwrap_or_default().to_owned(),

                            control,
                            subfields: Vec::new(),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut lines: Vec<Line> = lines;
        self.add_subfield_lines(ctx, &reply, &mut lines, deadline)
            .await;
        let frames = reply["frames"]
            .as_array()
            .map(|frames| {
                frames
                    .iter()
                    .filter_map(|f| {
                        Some(FrameMark {
                            reference: f["ref"].as_str()?.to_owned(),
                            index: f["index"].as_u64()? as usize,
                            depth: f["depth"].as_u64().unwrap_or_default() as usize,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Document {
            reply,
            lines,
            frames,
        })
    }

    /// Below each date or time input's line (tree.js marks them `sub`), the sub-fields
    /// Chromium's accessibility tree names inside it (`Page::subfields`).
    async fn add_subfield_lines(
        &self,
        ctx: &FrameContext,
        reply: &Value,
        lines: &mut [Line],
        deadline: Deadline,
    ) {
        let nodes = reply["nodes"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        for (line, node) in lines.iter_mut().zip(nodes) {
            let Some(reference) = node["r"].as_str().filter(|_| node["sub"] == true) else {
                continue;
            };
            let locator = json!({ "ref": reference });
            let fields = self.subfields(ctx, &locator, deadline).await;
            line.subfields = fields
                .iter()
                .map(|f| format!("{} {}", f.role, quoted(&f.name)))
                .collect();
        }
    }

    /// The next ref number this tab hands out.
    pub(crate) fn next_ref(&self) -> u64 {
        self.browser
            .tab_by_target(&self.tab.target_id)
            .map_or(1, |tab| tab.refs.next)
    }

    /// Notes that a document handed out refs up to (not including) `next`.
    pub(crate) fn note_refs_until(&self, next: u64) {
        self.browser.update_tab(&self.tab.target_id, |tab| {
            tab.refs.next = tab.refs.next.max(next);
        });
    }

    /// Records the frame path of one ref a framed document handed out.
    pub(crate) fn remember_ref_frame(&self, reference: &str, path: Vec<Value>) {
        self.browser.update_tab(&self.tab.target_id, |tab| {
            tab.refs.framed.insert(reference.to_owned(), path);
        });
    }

    /// Records the frame path of every ref a framed document handed out.
    fn remember_framed(&self, lines: &[Line], path: &[Value]) {
        self.browser.update_tab(&self.tab.target_id, |tab| {
            for control in lines.iter().filter_map(|l| l.control.as_ref()) {
                tab.refs
                    .framed
                    .insert(control.reference.clone(), path.to_vec());
            }
        });
    }

    /// The refs (handed out by earlier reads) of the top document's elements that match
    /// a CSS selector.
    pub async fn refs_matching(&self, css: &str, deadline: Deadline) -> Result<Vec<String>> {
        let reply = self
            .run_ok(
                &self.top(),
                "refs_matching",
                json!({ "css": css }),
                deadline,
            )
            .await?;
        Ok(reply["refs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(str::to_owned))
            .collect())
    }

    /// The locator and frame path a ref stands for. A ref this tab never handed out is
    /// refused here; one from a document that has gone is told by the page (`stale_ref`).
    pub(crate) fn ref_target(&self, reference: &str) -> Result<(Value, Vec<Value>)> {
        let given = reference.trim();
        let number = ref_number(given).ok_or_else(|| {
            EngineError::invalid(
                Input::Ref,
                format!(
                    "'{given}' is not a ref like ref_12 or e12 (refs come from reading the page)"
                ),
            )
        })?;
        let reference = format!("ref_{number}");
        let tab = self.browser.tab_by_target(&self.tab.target_id);
        let issued = tab.as_ref().map_or(1, |t| t.refs.next);
        if number >= issued {
            return Err(EngineError::page(
                ErrorCode::StaleRef,
                format!("{given} was never handed out in this tab; read the page for refs"),
                json!({ "ref": given }),
            ));
        }
        let frame = tab
            .and_then(|t| t.refs.framed.get(&reference).cloned())
            .unwrap_or_default();
        // The page takes either form; passed on as given, a stale ref is named in the
        // form the reply that handed it out used (`e12` from a lean read).
        Ok((json!({ "ref": given }), frame))
    }
}

struct Document {
    reply: Value,
    lines: Vec<Line>,
    frames: Vec<FrameMark>,
}

struct FrameMark {
    reference: String,
    index: usize,
    depth: usize,
}

/// Writes the lines from `request.start_line`, whole, until `max_chars`; the text and
/// the index of the first line not written. At least one line is written, so a read
/// always moves on.
fn render(lines: &[Line], request: &TreeRequest) -> (String, usize) {
    let budget = request.max_chars.unwrap_or(usize::MAX);
    let mut out = String::new();
    let mut end = request.start_line.min(lines.len());
    for line in &lines[end..] {
        let mut written = String::new();
        match request.style {
            OutlineStyle::Exact => exact_line(line, &mut written),
            OutlineStyle::Lean => lean_line(line, &mut written),
        }
        if out.len() + written.len() > budget && end > request.start_line {
            break;
        }
        out.push_str(&written);
        end += 1;
    }
    (out, end)
}

fn exact_line(line: &Line, out: &mut String) {
    out.push_str(&"  ".repeat(line.depth));
    out.push_str(&line.text);
    if let Some((x, y)) = line.point {
        out.push_str(&format!(" ({},{})", x.round() as i64, y.round() as i64));
    }
    out.push_str(&line.tail);
    out.push('\n');
    for field in &line.subfields {
        out.push_str(&"  ".repeat(line.depth + 1));
        out.push_str("- ");
        out.push_str(field);
        out.push('\n');
    }
}

/// `button "Save" checked e12`: role, name, state, ref; a text line is its text.
fn lean_line(line: &Line, out: &mut String) {
    out.push_str(&" ".repeat(line.depth));
    if let Some(control) = &line.control {
        out.push_str(if control.role.is_empty() {
            "control"
        } else {
            &control.role
        });
        if !control.name.is_empty() {
            out.push(' ');
            out.push_str(&quoted(&control.name));
        }
        out.push_str(&line.tail);
        out.push(' ');
        out.push_str(&lean_ref(&control.reference));
    } else if let Some(text) = &line.plain {
        out.push_str(text);
    } else if let Some((role, name)) = &line.role {
        out.push_str(role);
        if !name.is_empty() {
            out.push(' ');
            out.push_str(&quoted(name));
        }
    } else {
        out.push_str(line.text.trim_start_matches("- "));
    }
    out.push('\n');
    for field in &line.subfields {
        out.push_str(&" ".repeat(line.depth + 1));
        out.push_str(field);
        out.push('\n');
    }
}

/// `ref_12` as a lean reply writes it: `e12` (both are taken wherever a ref is).
pub fn lean_ref(reference: &str) -> String {
    match reference.strip_prefix("ref_") {
        Some(number) => format!("e{number}"),
        None => reference.to_owned(),
    }
}

/// A name in double quotes, as tree.js quotes names.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
}
