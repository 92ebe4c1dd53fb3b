//! Capture: screenshots (MCP image content) and PDFs.

use serde_json::{Value, json};

use engine::{ImageFormat, PdfRequest, ScreenshotRequest};

use super::args::{named, page_by_tab_id};
use crate::face::base64;
use crate::face::{Call, Reply, ToolError};
use crate::params::TabRef;
use crate::tool_params;

tool_params! {
    pub struct Screenshot {
        session_id: Option<TabRef> = TabHandle, nullable, "";
        tab_id: Option<TabRef> = NativeTabId, nullable, "the browser's tab id (or a handle)";
        format: String = Choice(&["png", "jpeg", "jpg", "webp"]), default("png"), "";
        full_page: bool = Bool, default(false), "";
        clip: Option<Value> = NumberMap, nullable, "{x, y, width, height, scale?} in CSS px";
        quality: Option<i64> = Int { min: 0, max: 100 }, nullable, "jpeg/webp only";
        save_path: String = Str, default(""), "also write it here, relative to the output dir";
        return_base64: bool = Bool, default(false), "also put base64 in the payload";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(20.0), "seconds";
    }
}

tool_params! {
    pub struct SavePdf {
        save_path: String = Str, required, "relative to the output dir";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        landscape: bool = Bool, default(false), "";
        print_background: bool = Bool, default(true), "";
        prefer_css_page_size: bool = Bool, default(true), "";
        scale: f64 = Num { min: 0.1, max: 2.0 }, default(1.0), "";
        page_ranges: String = Str, default(""), "e.g. 1-3,5";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(30.0), "seconds";
    }
}

/// What a model reading the reply should know about the picture (BrowserTap says the same
/// in its own words).
const MODEL_NOTE: &str = "The screenshot is attached as image content. A model that cannot take images has not seen it and must not guess the page's state from this reply: read the page with scan_page or execute_js instead. image_width and image_height are device pixels (CSS pixels times devicePixelRatio), not the CSS pixels page_click and page_drag take: divide a point read off the image by devicePixelRatio (device_pixel_ratio here) first, or click a selector from scan_page, which needs no conversion. A client may also shrink an image before a model sees it: scale a point back to image_width x image_height before anything else.";

/// x, y, width, height and scale, in CSS pixels.
type Clip = (f64, f64, f64, f64, f64);

/// `{x, y, width, height, scale?}` → the engine's clip.
fn clip_of(clip: Option<&Value>) -> Result<Option<Clip>, ToolError> {
    let Some(clip) = clip else {
        return Ok(None);
    };
    let field = |name: &str| clip.get(name).and_then(Value::as_f64);
    let known = ["x", "y", "width", "height", "scale"];
    let unknown = clip
        .as_object()
        .and_then(|o| o.keys().find(|k| !known.contains(&k.as_str())).cloned());
    match (
        field("x"),
        field("y"),
        field("width"),
        field("height"),
        unknown,
    ) {
        (Some(x), Some(y), Some(w), Some(h), None) if w > 0.0 && h > 0.0 => {
            Ok(Some((x, y, w, h, field("scale").unwrap_or(1.0))))
        }
        _ => Err(ToolError::param(
            "clip",
            "needs numbers x, y, width > 0, height > 0 (and optional scale), nothing else",
        )),
    }
}

pub async fn screenshot(call: Call, p: Screenshot) -> Result<Reply, ToolError> {
    let clip = clip_of(p.clip.as_ref())?;
    if clip.is_some() && p.full_page {
        return Err(ToolError::param(
            "clip",
            "cannot be combined with full_page",
        ));
    }
    let request = ScreenshotRequest {
        format: ImageFormat::parse(&p.format)?,
        quality: p.quality.map(|q| q as u8),
        full_page: p.full_page,
        clip,
        save_path: Some(p.save_path).filter(|path| !path.is_empty()),
    };
    let page = page_by_tab_id(&call, &p.session_id, &p.tab_id).await?;
    let shot = page.screenshot(&request, call.deadline).await?;
    let encoded = base64(&shot.bytes);
    let mut data = json!({
        "status": "success",
        "format": shot.format.name(),
        "full_page": request.full_page,
        "size": shot.bytes.len(),
        "image_width": shot.dimensions.map(|d| d.0),
        "image_height": shot.dimensions.map(|d| d.1),
        "pixel_space": "device",
        "device_pixel_ratio": shot.device_pixel_ratio,
        "image_attached": true,
        "model_note": MODEL_NOTE,
        "mode": if request.clip.is_some() { "clip" } else if request.full_page { "full_page" } else { "viewport" },
    });
    if shot.dimensions.is_none() {
        data["dimensions_note"] =
            json!("the image header could not be parsed; size is the byte count");
    }
    if let Some(written) = &shot.saved {
        data["saved_to"] = json!(written.path);
        data["saved_path"] = json!(written.path);
        data["sha256"] = json!(written.sha256);
    }
    if p.return_base64 {
        data["base64"] = json!(encoded);
    }
    let mut reply = Reply::data(data).on(page.info());
    reply.images.push((encoded, shot.format.mime()));
    Ok(reply)
}

pub async fn save_pdf(call: Call, p: SavePdf) -> Result<Reply, ToolError> {
    let request = PdfRequest {
        landscape: p.landscape,
        print_background: p.print_background,
        prefer_css_page_size: p.prefer_css_page_size,
        scale: p.scale,
        page_ranges: Some(p.page_ranges).filter(|r| !r.is_empty()),
    };
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let written = page.save_pdf(&p.save_path, &request, call.deadline).await?;
    let info = page.info();
    let data = json!({
        "status": "success", "saved_to": written.path, "size": written.bytes,
        "session_id": info.handle, "tab_id": info.tab_id, "format": "pdf",
        "path": written.path, "bytes": written.bytes, "sha256": written.sha256,
    });
    Ok(Reply::data(data).on(info))
}
