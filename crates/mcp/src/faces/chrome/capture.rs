//! Screenshots: saved as PNG under the output dir (the original's default) and, with
//! `storeBase64`, sent as MCP image content with its real dimensions (never base64
//! inside the text, where it would cost an agent a hundred thousand tokens).

use serde_json::json;

use engine::{ImageFormat, Input, ScreenshotRequest};

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
    let timeout = call.deadline.remaining();
    let clip = match &p.selector {
        Some(selector) => {
            let (locator, frame) = super::element(&page, None, Some(selector), "css")?
                .or(super::element(&page, Some(selector), None, "css")
                    .ok()
                    .flatten())
                .unwrap_or((json!(selector), Vec::new()));
            let (x, y, width, height) = page.element_box(&locator, &frame, timeout).await?;
            Some((x, y, width, height, 1.0))
        }
        None => None,
    };
    let request = ScreenshotRequest {
        format: ImageFormat::Png,
        quality: None,
        full_page: p.fullPage && clip.is_none(),
        clip,
    };
    let shot = page.screenshot(&request, timeout).await?;
    let name = p.name.clone().unwrap_or_else(|| "screenshot".into());
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
    if p.savePng {
        let stamp = chrono_stamp();
        let file = format!("{}_{stamp}.png", safe_name(&name));
        let target =
            engine::files::confined_path(&call.engine().config.output_dir, &file, Input::Filename)?;
        let written = engine::files::write_atomic(target, shot.bytes.clone()).await?;
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

/// A file name from what the agent called the screenshot: no folders, nothing odd.
fn safe_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = cleaned.trim_matches('.').to_owned();
    if cleaned.is_empty() {
        "screenshot".into()
    } else {
        cleaned
    }
}

/// `2026-12-01T10-15-30-123Z`: sortable, and safe in a file name.
fn chrono_stamp() -> String {
    let ms = engine::ids::now_ms();
    let (secs, millis) = (ms / 1000, ms % 1000);
    let days = secs / 86_400;
    let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    let (year, month, day) = civil_from_days(days as i64);
    format!("{year:04}-{month:02}-{day:02}T{h:02}-{m:02}-{s:02}-{millis:03}Z")
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
