use serde_json::json;

use engine::{ImageFormat, Input, PdfRequest, ScreenshotRequest};

use crate::envelope::Reply;
use crate::face::{Call, ToolError};
use crate::server::base64;

pub async fn screenshot(call: Call) -> Result<Reply, ToolError> {
    let args = &call.args;
    let clip = match args.value("clip") {
        None => None,
        Some(clip) => {
            let field = |name: &str| clip.get(name).and_then(|v| v.as_f64());
            match (field("x"), field("y"), field("width"), field("height")) {
                (Some(x), Some(y), Some(w), Some(h)) if w > 0.0 && h > 0.0 => {
                    Some((x, y, w, h, field("scale").unwrap_or(1.0)))
                }
                _ => {
                    return Err(ToolError::param(
                        "clip",
                        "needs numbers x, y, width > 0, height > 0 (and optional scale)",
                    ));
                }
            }
        }
    };
    let request = ScreenshotRequest {
        format: ImageFormat::parse(args.str("format").unwrap_or("png"))?,
        quality: args
            .value("quality")
            .and_then(|q| q.as_u64())
            .map(|q| q as u8),
        full_page: args.bool_or("full_page", false),
        clip,
    };
    let save_path = match args.str("save_path") {
        Some(relative) => Some(engine::files::confined_path(
            &call.engine().config.output_dir,
            relative,
            Input::OutputPath,
        )?),
        None => None,
    };
    let handle = call.tab().or_else(|| args.id("tab_id"));
    let page = call.session.page(handle.as_deref()).await?;
    let shot = page.screenshot(&request, args.timeout(20.0)).await?;
    let encoded = base64(&shot.bytes);
    let mut data = json!({
        "format": shot.format.name(),
        "size": shot.bytes.len(),
        "image_width": shot.dimensions.map(|d| d.0),
        "image_height": shot.dimensions.map(|d| d.1),
        "pixel_space": "device",
        "device_pixel_ratio": shot.device_pixel_ratio,
        "mode": if request.clip.is_some() { "clip" } else if request.full_page { "full_page" } else { "viewport" },
    });
    if shot.dimensions.is_none() {
        data["dimensions_note"] =
            json!("the image header could not be parsed; size is the byte count");
    }
    if let Some(path) = save_path {
        let written = engine::files::write_atomic(path, shot.bytes.clone()).await?;
        data["saved_path"] = json!(written.path);
        data["sha256"] = json!(written.sha256);
    }
    if args.bool_or("return_base64", false) {
        data["base64"] = json!(encoded);
    }
    let mut reply = Reply::data(data).on(page.handle());
    reply.images.push((encoded, shot.format.mime()));
    Ok(reply)
}

pub async fn save_pdf(call: Call) -> Result<Reply, ToolError> {
    let args = &call.args;
    let request = PdfRequest {
        landscape: args.bool_or("landscape", false),
        print_background: args.bool_or("print_background", true),
        prefer_css_page_size: args.bool_or("prefer_css_page_size", true),
        scale: args.f64_or("scale", 1.0),
        page_ranges: args.str("page_ranges").map(str::to_owned),
    };
    let page = call.session.page(call.tab().as_deref()).await?;
    let mut data = page
        .save_pdf(&args.string("save_path"), &request, args.timeout(30.0))
        .await?;
    data["status"] = json!("saved");
    Ok(Reply::data(data).on(page.handle()))
}
