//! Reading and waiting: the snapshot, scrolling, condition waits.

use serde_json::{Value, json};

use engine::ScanRequest;

use super::args::{LOCATOR_DOC, frame_path, named, split_locator};
use crate::face::{Call, Reply, ToolError};
use crate::params::{self, TabRef};
use crate::tool_params;

tool_params! {
    pub struct ScanPage {
        session_id: Option<TabRef> = Session, nullable, "tab handle; default: this session's tab";
        text_only: bool = Bool, default(false), "plain text instead of simplified HTML";
        cutlist: bool = Bool, default(true), "collapse long repeated lists";
        maxchars: i64 = Int { min: 100, max: 5_000_000 }, default(35_000), "budget of content characters";
        instruction: String = Str, default(""), "what you are looking for (echoed)";
        extra_js: String = Str, default(""), "script run before the scan; may change the page";
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
        frame: Option<Value> = List, nullable, "iframe locator path to scan inside (tabwire)";
        max_targets: i64 = Int { min: 0, max: 200 }, default(80), "controls listed in observation.targets (tabwire)";
        cursor: String = Str, default(""), "read on from a truncated reply: its continuation.cursor (tabwire)";
    }
}

tool_params! {
    pub struct ScrollPage {
        to: String = Str, default("bottom"), "bottom, end, top, start, a pixel offset, or a CSS selector";
        session_id: Option<TabRef> = Session, nullable, "";
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
    }
}

tool_params! {
    pub struct WaitFor {
        selector: Option<Value> = Locator, nullable, LOCATOR_DOC;
        text: Option<String> = Str, nullable, "substring of the body text";
        url_pattern: Option<String> = Str, nullable, "regex or substring of the URL";
        js: Option<String> = Str, nullable, "expression to become truthy (may have side effects)";
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
        gone: bool = Bool, default(false), "wait for the condition to stop holding";
        session_id: Option<TabRef> = Session, nullable, "";
    }
}

tool_params! {
    pub struct WaitForUrl {
        url_pattern: String = Str, required, "regex or substring";
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
        session_id: Option<TabRef> = Session, nullable, "";
        wait_ready: bool = Bool, default(true), "also require readyState complete";
    }
}

pub async fn scan_page(call: Call, p: ScanPage) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    if call.settings.lean() {
        return lean_scan(&page, p).await;
    }
    // `c…` reads on into what the cut list collapsed.
    let (collapsed_phase, cursor) = match p.cursor.trim().strip_prefix('c') {
        Some(rest) => (true, rest),
        None => (false, p.cursor.trim()),
    };
    let (content_offset, targets_offset) = match cursor {
        "" => (0, 0),
        cursor => parse_cursor(cursor)?,
    };
    let request = ScanRequest {
        text_only: p.text_only,
        cutlist: p.cutlist,
        maxchars: p.maxchars as u64,
        max_targets: p.max_targets as u64,
        frame: frame_path(p.frame.as_ref())?,
        extra_js: Some(p.extra_js).filter(|js| !js.is_empty()),
        content_offset,
        targets_offset,
        collapsed_phase,
    };
    let mut data = page.scan(&request, params::seconds(p.timeout)).await?;
    if !p.instruction.is_empty() {
        data["instruction"] = json!(p.instruction);
    }
    Ok(Reply::data(data).on(page.info()))
}

/// A lean scan: the whole page as the outline (its controls, with their state and ref,
/// are its lines), `maxchars` of it a reply, the rest behind a cursor (a line number).
async fn lean_scan(page: &engine::Page, p: ScanPage) -> Result<Reply, ToolError> {
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
    let request = engine::TreeRequest {
        frame,
        style: engine::OutlineStyle::Lean,
        start_line,
        max_chars: Some(p.maxchars as usize),
        ..engine::TreeRequest::default()
    };
    let snapshot = page.read_tree(&request, params::seconds(p.timeout)).await?;
    let info = page.info();
    let mut text = crate::lean::outline(&snapshot, &info.handle, None);
    if let Some(value) = extra {
        text.push_str(&format!("extra_js: {value}\n"));
    }
    let data = json!({ "url": snapshot.url, "title": snapshot.title, "content": snapshot.text });
    Ok(Reply::data(data).on(info).lean(text))
}

/// `"35000:80"` → the content character and the target index a continuation starts at.
fn parse_cursor(cursor: &str) -> Result<(u64, u64), ToolError> {
    let parsed = cursor
        .split_once(':')
        .and_then(|(c, t)| Some((c.trim().parse().ok()?, t.trim().parse().ok()?)));
    parsed.ok_or_else(|| {
        ToolError::param(
            "cursor",
            "is the continuation.cursor of an earlier scan_page reply, like \"35000:80\" or \"c0:0\"",
        )
    })
}

pub async fn scroll_page(call: Call, p: ScrollPage) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    // "1200" is a pixel offset, not a CSS selector; "end" and "start" are BrowserTap's
    // names for bottom and top.
    let to = match p.to.trim() {
        "end" => json!("bottom"),
        "start" => json!("top"),
        other => match other.parse::<f64>() {
            Ok(pixels) => json!(pixels),
            Err(_) => json!(other),
        },
    };
    let data = page.scroll(to, params::seconds(p.timeout)).await?;
    Ok(Reply::data(data).on(page.info()))
}

pub async fn wait_for(call: Call, p: WaitFor) -> Result<Reply, ToolError> {
    let given: Vec<&str> = [
        ("selector", p.selector.is_some()),
        ("text", p.text.is_some()),
        ("url_pattern", p.url_pattern.is_some()),
        ("js", p.js.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect();
    if given.len() != 1 {
        return Err(ToolError::param(
            "selector",
            format!(
                "give exactly one of selector, text, url_pattern, js (got {})",
                if given.is_empty() {
                    "none".into()
                } else {
                    given.join(", ")
                }
            ),
        ));
    }
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let timeout = params::seconds(p.timeout);
    let mut data = if let Some(js) = &p.js {
        page.wait_js(js, p.gone, timeout).await?
    } else {
        let (ctx, probe) = match (&p.selector, &p.text, &p.url_pattern) {
            (Some(selector), _, _) => {
                let (locator, frame) = split_locator(Some(selector))?;
                let (locator, frame) = page.placed(locator, frame)?;
                (
                    page.frame_context(&frame, timeout).await?,
                    json!({ "selector": locator }),
                )
            }
            (_, Some(text), _) => (page.top(), json!({ "text": text })),
            (_, _, url) => (page.top(), json!({ "url_pattern": url })),
        };
        page.wait_until(&ctx, probe, p.gone, timeout).await?
    };
    data["condition"] = json!(given[0]);
    data["status"] = json!("ok");
    Ok(Reply::data(data).on(page.info()))
}

pub async fn wait_for_url(call: Call, p: WaitForUrl) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let mut data = page
        .wait_for_url(&p.url_pattern, p.wait_ready, params::seconds(p.timeout))
        .await?;
    data["status"] = json!("ok");
    Ok(Reply::data(data).on(page.info()))
}
