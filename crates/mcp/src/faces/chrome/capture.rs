//! Screenshots: saved as PNG under the output dir (the original's default) and, with
//! `storeBase64`, sent as MCP image content with its real dimensions (never base64
//! inside the text, where it would cost an agent a hundred thousand tokens).

use serde_json::json;

use engine::{ImageFormat, ScreenshotRequest};

use super::tabs::with_tab;
use crate::face::base64;
use crate::face::{Call, Reply, ToolError};
use crate::tool_params;

tool_params! {
    /// `background` and the size are the original's; tabwire never brings a tab forward
    /// to capture it, and the image keeps the page's real size.
    #[allow(dead_code)]
    pub struct Screenshot {
        name: Option<String> = Str, optional, "file name (a timestamp is added)";
        selector: Option<String> = Str, optional, "capture only this element (CSS selector or a ref)";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        windowId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        background: bool = Bool, default(false), "";
        width: f64 = Num { min: 1.0, max: 20000.0 }, default(800.0), "ignored: the real size is kept";
        height: f64 = Num { min: 1.0, max: 20000.0 }, default(600.0), "ignored: the real size is kept";
        storeBase64: bool = Bool, default(false), "";
        fullPage: bool = Bool, default(true), "";
        savePng: bool = Bool, default(true), "";
    }
}

pub async fn screenshot(call: Call, p: Screenshot) -> Result<Reply, ToolError> {
    let tab = super::target_tab(&call, &p.tabId, p.windowId).await?;
    let page = call.session.page(tab.as_deref()).await?;
    let deadline = call.deadline;
    let clip = match &p.selector {
        Some(selector) => {
            let locator = engine::Locator::css_or_ref(selector)?;
            let (x, y, width, height) = page.element_box(&locator, deadline).await?;
            Some((x, y, width, height, 1.0))
        }
        None => None,
    };
    let name = p.name.clone().unwrap_or_else(|| "screenshot".into());
    // The original's file name: the agent's name for it, then when it was taken.
    let file = format!(
        "{}_{}.png",
        engine::files::safe_name(&name, "screenshot"),
        chrono_stamp()
    );
    let request = ScreenshotRequest {
        format: ImageFormat::Png,
        quality: None,
        full_page: p.fullPage && clip.is_none(),
        clip,
        save_path: p.savePng.then(|| file.clone()),
    };
    let shot = page.screenshot(&request, deadline).await?;
    let mut data = json!({
        "success": true,
        "message": format!("Screenshot [{name}] captured successfully"),
        "url": page.info().url,
        "name": name,
        "mimeType": "image/png",
        "dimensions": { "width": shot.dimensions.map(|d| d.0), "height": shot.dimensions.map(|d| d.1) },
        "devicePixelRatio": shot.device_pixel_ratio,
        "mode": if request.clip.is_some() { "element" } else if request.full_page { "full_page" } else { "viewport" },
    });
    if let Some(written) = &shot.saved {
        data["filename"] = json!(file);
        data["fileSaved"] = json!(true);
        data["fullPath"] = json!(written.path);
        data["sha256"] = json!(written.sha256);
    }
    let info = page.info();
    drop(page);
    let mut reply = Reply::data(with_tab(data, &call, &info).await).on(info);
    if p.storeBase64 {
        reply.data["image_attached"] = json!(true);
        reply.images.push((base64(&shot.bytes), "image/png"));
    }
    Ok(reply)
}

/// `2026-12-01T10-15-30-123Z` (UTC, as the original stamps its files): sortable, and
/// safe in a file name.
fn chrono_stamp() -> String {
    engine::ids::utc_stamp()
}
