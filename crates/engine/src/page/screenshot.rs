//! Screenshots and PDFs.

use crate::ids::Deadline;

use base64::Engine as _;
use serde_json::{Value, json};

use super::Page;
use super::locator::{Locator, Placed};
use crate::error::{EngineError, Input, Result};
use crate::files;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    Jpeg,
    Webp,
}

impl ImageFormat {
    pub fn parse(name: &str) -> Result<ImageFormat> {
        match name.to_ascii_lowercase().as_str() {
            "png" => Ok(ImageFormat::Png),
            "jpeg" | "jpg" => Ok(ImageFormat::Jpeg),
            "webp" => Ok(ImageFormat::Webp),
            other => Err(EngineError::invalid(
                Input::Format,
                format!("'{other}' is not png, jpeg or webp"),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Jpeg => "jpeg",
            ImageFormat::Webp => "webp",
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
            ImageFormat::Webp => "image/webp",
        }
    }
}

pub struct ScreenshotRequest {
    pub format: ImageFormat,
    pub quality: Option<u8>,
    pub full_page: bool,
    /// x, y, width, height in CSS pixels, and scale.
    pub clip: Option<(f64, f64, f64, f64, f64)>,
    /// Also write the image atomically to this path under the output dir (confined;
    /// checked before the capture, so a refused path costs nothing).
    pub save_path: Option<String>,
}

pub struct Screenshot {
    pub bytes: Vec<u8>,
    pub format: ImageFormat,
    pub dimensions: Option<(u32, u32)>,
    pub device_pixel_ratio: f64,
    /// Where it was written, when the request asked.
    pub saved: Option<files::Written>,
}

pub struct PdfRequest {
    pub landscape: bool,
    pub print_background: bool,
    pub prefer_css_page_size: bool,
    pub scale: f64,
    pub page_ranges: Option<String>,
}

impl Page {
    pub async fn screenshot(
        &self,
        request: &ScreenshotRequest,
        deadline: Deadline,
    ) -> Result<Screenshot> {
        if request.quality.is_some() && request.format == ImageFormat::Png {
            return Err(EngineError::invalid(
                Input::Quality,
                "applies only to jpeg and webp",
            ));
        }
        let save_to = match &request.save_path {
            Some(path) => Some(files::confined_path(
                &self.config.output_dir,
                path,
                Input::OutputPath,
            )?),
            None => None,
        };
        // The fastest encoding Chromium has: a larger file (PNG about 1.3–2×), a quicker
        // capture (a third to a half of the encoding time on real pages). Image tokens are
        // counted by pixels, not bytes, so an agent pays nothing for the size.
        let mut params = json!({ "format": request.format.name(), "optimizeForSpeed": true });
        if let Some(quality) = request.quality {
            params["quality"] = json!(quality);
        }
        let metrics_call = || self.cdp("Page.getLayoutMetrics", json!({}), deadline);
        // The layout metrics give the device pixel ratio (and a full page's size). Only a
        // full-page capture needs them first; otherwise both calls are in flight at once.
        let (metrics, reply) = if request.full_page && request.clip.is_none() {
            let metrics = metrics_call().await?;
            let size = &metrics["cssContentSize"];
            params["clip"] = json!({
                "x": 0, "y": 0, "scale": 1,
                "width": size["width"].as_f64().unwrap_or(800.0).ceil(),
                "height": size["height"].as_f64().unwrap_or(600.0).ceil(),
            });
            params["captureBeyondViewport"] = json!(true);
            let reply = self.cdp("Page.captureScreenshot", params, deadline).await?;
            (metrics, reply)
        } else {
            if let Some((x, y, width, height, scale)) = request.clip {
                params["clip"] =
                    json!({"x": x, "y": y, "width": width, "height": height, "scale": scale});
                params["captureBeyondViewport"] = json!(true);
            }
            let (metrics, reply) = tokio::join!(
                metrics_call(),
                self.cdp("Page.captureScreenshot", params, deadline)
            );
            (metrics?, reply?)
        };
        let bytes = decode(&reply["data"], "screenshot")?;
        let css_width = metrics["cssVisualViewport"]["clientWidth"]
            .as_f64()
            .unwrap_or(0.0);
        let device_width = metrics["visualViewport"]["clientWidth"]
            .as_f64()
            .unwrap_or(css_width);
        let device_pixel_ratio = if css_width > 0.0 {
            (device_width / css_width).max(1.0)
        } else {
            1.0
        };
        let saved = match save_to {
            Some(path) => Some(files::write_atomic(path, bytes.clone()).await?),
            None => None,
        };
        Ok(Screenshot {
            dimensions: image_dimensions(&bytes),
            bytes,
            format: request.format,
            device_pixel_ratio,
            saved,
        })
    }

    /// An element's box in document coordinates (CSS px), as a screenshot clip takes it.
    pub async fn element_box(
        &self,
        locator: &Locator,
        deadline: Deadline,
    ) -> Result<(f64, f64, f64, f64)> {
        let Placed { find, frame } = self.place(locator)?;
        let ctx = self.frame_context(&frame, deadline).await?;
        let r = self
            .run_ok(&ctx, "element_box", json!({ "locator": find }), deadline)
            .await?;
        let n = |key: &str| r[key].as_f64().unwrap_or_default();
        Ok((
            n("x") + ctx.offset.0,
            n("y") + ctx.offset.1,
            n("width"),
            n("height"),
        ))
    }

    /// Prints to PDF and writes it atomically under the output dir.
    pub async fn save_pdf(
        &self,
        save_path: &str,
        request: &PdfRequest,
        deadline: Deadline,
    ) -> Result<files::Written> {
        let path = files::confined_path(&self.config.output_dir, save_path, Input::OutputPath)?;
        if !(0.1..=2.0).contains(&request.scale) {
            return Err(EngineError::invalid(
                Input::Scale,
                format!("{} is outside 0.1–2.0", request.scale),
            ));
        }
        let mut params = json!({
            "landscape": request.landscape,
            "printBackground": request.print_background,
            "preferCSSPageSize": request.prefer_css_page_size,
            "scale": request.scale,
        });
        if let Some(ranges) = &request.page_ranges {
            params["pageRanges"] = json!(ranges);
        }
        let reply = self
            .cdp("Page.printToPDF", params, deadline)
            .await
            .map_err(|e| match e {
                EngineError::Cdp(cdp::CdpError::Protocol { message, .. }) => EngineError::invalid(
                    Input::PageRanges,
                    format!("the browser refused to print: {message}"),
                ),
                other => other,
            })?;
        let bytes = decode(&reply["data"], "PDF")?;
        if !looks_like_pdf(&bytes) {
            return Err(EngineError::Io(
                "the browser returned bytes that are not a PDF".into(),
            ));
        }
        files::write_atomic(path, bytes).await
    }
}

fn decode(data: &Value, what: &str) -> Result<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(data.as_str().unwrap_or_default())
        .map_err(|e| EngineError::Io(format!("{what} data is not base64: {e}")))
}

pub fn looks_like_pdf(bytes: &[u8]) -> bool {
    let tail = &bytes[bytes.len().saturating_sub(1024)..];
    bytes.starts_with(b"%PDF-") && tail.windows(5).any(|w| w == b"%%EOF")
}

/// Width and height read from a PNG, JPEG or WebP header; None when it cannot be parsed.
pub fn image_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let be32 = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let be16 = |at: usize| {
        Some(u32::from(u16::from_be_bytes(
            bytes.get(at..at + 2)?.try_into().ok()?,
        )))
    };
    let le16 = |at: usize| {
        Some(u32::from(u16::from_le_bytes(
            bytes.get(at..at + 2)?.try_into().ok()?,
        )))
    };
    let le24 = |at: usize| {
        let b = bytes.get(at..at + 3)?;
        Some(u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16)
    };
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((be32(16)?, be32(20)?));
    }
    if bytes.starts_with(b"\xff\xd8") {
        // Walk the segments to the first start-of-frame marker.
        let mut at = 2;
        while at + 9 < bytes.len() {
            if bytes[at] != 0xff {
                return None;
            }
            let marker = bytes[at + 1];
            let length = be16(at + 2)? as usize;
            if (0xc0..=0xcf).contains(&marker) && ![0xc4, 0xc8, 0xcc].contains(&marker) {
                return Some((be16(at + 7)?, be16(at + 5)?));
            }
            at += 2 + length;
        }
        return None;
    }
    if bytes.get(0..4) == Some(b"RIFF") && bytes.get(8..12) == Some(b"WEBP") {
        return match bytes.get(12..16)? {
            b"VP8 " => Some((le16(26)? & 0x3fff, le16(28)? & 0x3fff)),
            b"VP8L" => {
                let b = bytes.get(21..25)?;
                let bits = u32::from_le_bytes(b.try_into().ok()?);
                Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
            }
            b"VP8X" => Some((le24(24)? + 1, le24(27)? + 1)),
            _ => None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_header_gives_dimensions() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(image_dimensions(&png), Some((640, 480)));
        assert_eq!(image_dimensions(b"not an image"), None);
    }

    #[test]
    fn pdf_needs_header_and_trailer() {
        assert!(looks_like_pdf(b"%PDF-1.7\n...\n%%EOF\n"));
        assert!(!looks_like_pdf(b"%PDF-1.7 truncated"));
    }
}
