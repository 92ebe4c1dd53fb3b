//! Reading: the snapshot (`scan_page`), exact and lean.

use serde_json::{Value, json};

use engine::{Listed, Observation, Scan, ScanRequest};

use super::args::{frame_path, named};
use crate::face::{Call, Reply, ToolError};
use crate::params::TabRef;
use crate::tool_params;

tool_params! {
    pub struct ScanPage {
        session_id: Option<TabRef> = TabHandle, nullable, "tab handle; default: this session's tab";
        text_only: bool = Bool, default(false), "plain text instead of simplified HTML";
        cutlist: bool = Bool, default(true), "collapse long repeated lists";
        maxchars: i64 = Int { min: 0, max: 5_000_000 }, default(35_000), "budget of content characters";
        instruction: String = Str, default(""), "what you are looking for (echoed)";
        extra_js: String = Str, default(""), "script run before the scan; may change the page";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
        frame: Option<Value> = List, nullable, "iframe path to scan (an observation.frames entry's frame)";
        max_targets: i64 = Int { min: 0, max: 200 }, default(80), "controls and frames listed in observation (0: none)";
        cursor: String = Str, default(""), "a truncated reply's continuation.cursor, to read on (tabwire)";
    }
}

pub async fn scan_page(call: Call, p: ScanPage) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let lean = call.settings.lean();
    // A lean read is the outline; asked for text only, it is the page's text.
    if lean && !p.text_only {
        return lean_scan(&page, p, call.deadline).await;
    }
    let from: engine::Cursor = p.cursor.parse()?;
    let frame = frame_path(p.frame.as_ref())?;
    let extra_js = Some(p.extra_js).filter(|js| !js.trim().is_empty());
    let request = ScanRequest {
        text_only: p.text_only,
        cutlist: p.cutlist,
        maxchars: p.maxchars as u64,
        // A script run first may change the page: as BrowserTap, no targets are listed.
        max_targets: if extra_js.is_some() {
            0
        } else {
            p.max_targets as u64
        },
        frame,
        extra_js,
        from,
    };
    let mut scan = page.scan(&request, call.deadline).await?;
    if request.extra_js.is_some() {
        unobserved(&mut scan.observation);
    }
    if let Some(listed) = scan.observation.listed.as_mut()
        && !request.frame.is_empty()
    {
        no_upload_in_frames(listed);
    }
    let next = scan.next();
    let lean_text = lean.then(|| lean_text(&scan, next, &page.info().handle));
    let mut data = json!(scan);
    let info = page.info();
    let tabs = call.session.list_tabs(false).await?;
    data["status"] = json!("success");
    data["active_session_id"] = json!(info.handle);
    data["tabs"] = tabs.tabs.iter().map(super::tabs::tab_json).collect();
    if !p.instruction.is_empty() {
        data["instruction"] = json!(p.instruction);
    }
    let reply = match lean_text {
        Some(text) => Reply::data(data).lean(text),
        None => Reply::data(data),
    };
    Ok(reply.on(info))
}

/// A text-only read, leanly: the header, the page's text, and where to read on.
fn lean_text(scan: &Scan, next: Option<engine::Cursor>, tab: &str) -> String {
    let observation = &scan.observation;
    let mut text = crate::lean::header(&observation.title, &observation.url, tab);
    text.push_str(scan.content.trim_end());
    text.push('\n');
    if let Some(cursor) = next {
        text.push_str(&format!("[cut: read on with cursor \"{cursor}\"]\n"));
    }
    text
}

/// A scan after `extra_js` says, as BrowserTap does, that it lists no targets: the page
/// may have changed under the script. Where the page is (URL, title, viewport) stays.
fn unobserved(observation: &mut Observation) {
    observation.listed = None;
    observation.status = "unavailable".into();
    observation.reason = Some("extra_js_preserves_legacy_execution".into());
}

/// upload_files takes a top-document CSS selector: a file input inside a frame is listed
/// with no tool, as BrowserTap lists it.
fn no_upload_in_frames(listed: &mut Listed) {
    let uploads = listed.targets.iter_mut().chain(&mut listed.more_targets);
    for target in uploads.filter(|t| t.recommended_tool.as_deref() == Some("upload_files")) {
        target.recommended_tool = None;
        target.reason = "file_input_frame_unsupported".into();
    }
}

/// A lean scan: the whole page as the outline (its controls, with their state and ref,
/// are its lines), `maxchars` of it a reply, the rest behind a cursor (a line number).
async fn lean_scan(
    page: &engine::Page,
    p: ScanPage,
    deadline: engine::Deadline,
) -> Result<Reply, ToolError> {
    let start_line = match p.cursor.trim() {
        "" => 0,
        cursor => cursor.parse::<usize>().map_err(|_| {
            ToolError::param(
                "cursor",
                "is the cursor a lean scan_page reply named, like \"812\"",
            )
        })?,
    };
    let frame = frame_path(p.frame.as_ref())?;
    if !p.extra_js.is_empty() && !frame.is_empty() {
        return Err(ToolError::param(
            "extra_js",
            "cannot be combined with frame",
        ));
    }
    let extra = match p.extra_js.as_str() {
        "" => None,
        code => Some(page.script_before_read(code).await?),
    };
    // maxchars counts the header line too.
    let info = page.info();
    let (url, title) = page.url_and_title().await.unwrap_or_default();
    let header = crate::lean::header(&title, &url, &info.handle)
        .chars()
        .count();
    let request = engine::TreeRequest {
        frame,
        style: engine::OutlineStyle::Lean,
        start_line,
        max_chars: Some((p.maxchars as usize).saturating_sub(header).max(1)),
        ..engine::TreeRequest::default()
    };
    let snapshot = page.read_tree(&request, deadline).await?;
    let mut text = crate::lean::outline(&snapshot, &info.handle, None);
    if has_choices(&snapshot.text) {
        text.push_str(CHOOSE_WITH_PAGE_SELECT);
    }
    if let Some(value) = extra {
        text.push_str(&format!("extra_js: {value}\n"));
    }
    let data = json!({ "url": snapshot.url, "title": snapshot.title, "content": snapshot.text });
    Ok(Reply::data(data).on(info).lean(text))
}

/// The one line a lean read adds when the page has a select, listbox or combobox: the
/// tool that chooses in it (BrowserTap has none; typing and clicking options do not).
const CHOOSE_WITH_PAGE_SELECT: &str =
    "[choose options with page_select {\"selector\": \"eN\", \"options\": [\"label\"]}]\n";

/// Whether an outline has a line for a select (its `options=[…]`), listbox or combobox.
fn has_choices(outline: &str) -> bool {
    outline.lines().any(|line| {
        let line = line.trim_start();
        line.contains(" options=[") || line.starts_with("combobox ") || line.starts_with("listbox ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read as the page script writes it: one file input and one button.
    fn scan() -> Scan {
        let target = |tag: &str, tool: &str, reason: &str| {
            json!({
                "locator": { "css": format!("#{tag}") }, "ref": "ref_1", "tag": tag,
                "type": "", "name": "", "role": "", "visible": true, "editable": false,
                "disabled": false, "readonly": false, "inert": false,
                "rect": { "x": 0, "y": 0, "width": 10, "height": 10 },
                "hit_test": "not_checked", "recommended_tool": tool, "reason": reason,
            })
        };
        serde_json::from_value(json!({
            "content": "<button>Go</button>",
            "observation": {
                "status": "success", "url": "http://127.0.0.1/", "title": "T",
                "ready_state": "complete",
                "viewport": { "width": 1280, "height": 800, "device_pixel_ratio": 1 },
                "targets": [target("input", "upload_files", "file_input"),
                            target("button", "page_click", "dom_target")],
                "frames": [], "truncated": false, "limit": 80,
                "coordinate_space": "viewport_css",
            },
        }))
        .unwrap()
    }

    #[test]
    fn a_read_after_extra_js_lists_no_targets_but_says_where_the_page_is() {
        let mut scan = scan();
        unobserved(&mut scan.observation);
        let data = json!(scan);
        let observation = &data["observation"];
        assert_eq!(observation["status"], "unavailable");
        assert_eq!(observation["reason"], "extra_js_preserves_legacy_execution");
        assert_eq!(observation["url"], "http://127.0.0.1/");
        assert_eq!(observation["viewport"]["device_pixel_ratio"], 1);
        for gone in [
            "targets",
            "frames",
            "truncated",
            "limit",
            "coordinate_space",
        ] {
            assert!(observation.get(gone).is_none(), "{gone}");
        }
    }

    #[test]
    fn a_file_input_in_a_frame_is_listed_without_a_tool() {
        let mut scan = scan();
        no_upload_in_frames(scan.observation.listed.as_mut().unwrap());
        let data = json!(scan);
        let targets = &data["observation"]["targets"];
        assert!(targets[0]["recommended_tool"].is_null());
        assert_eq!(targets[0]["reason"], "file_input_frame_unsupported");
        assert_eq!(targets[1]["recommended_tool"], "page_click");
        // Integers stay integers on the way through.
        assert_eq!(
            serde_json::to_string(&targets[1]["rect"]).unwrap(),
            r#"{"height":10,"width":10,"x":0,"y":0}"#
        );
    }
}
