//! `chrome_gif_recorder`: the Chrome MCP Server's GIF recorder over the engine's
//! recordings. Fixed-rate (`start`) or a frame after each action (`auto_start`, the click
//! point marked); `stop` or `export` saves the GIF under the output dir and shows its last
//! frame as image content.

use serde_json::{Value, json};

use engine::{GifMode, GifOptions, GifStatus};

use super::tab_arg;
use crate::face::{Call, Reply, ToolError, base64};
use crate::params;
use crate::tool_params;

tool_params! {
    /// `annotation`, `download` and `enhancedRendering` are the original's: the click
    /// point is always marked, and the file is always saved.
    #[allow(dead_code)]
    pub struct GifRecorder {
        action: String = Choice(&["start", "stop", "status", "auto_start", "capture", "clear", "export"]), required, "start (fixed fps), auto_start (a frame after each action), capture, status, stop/export (save), clear";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        fps: i64 = Int { min: 1, max: 30 }, default(5), "start: frames a second";
        durationMs: f64 = Num { min: 100.0, max: 60_000.0 }, default(5000.0), "start: how long to record";
        maxFrames: Option<i64> = Int { min: 1, max: 300 }, optional, "frame limit (default 50, auto 100)";
        width: i64 = Int { min: 16, max: 1920 }, default(800), "frames fit this box";
        height: i64 = Int { min: 16, max: 1080 }, default(600), "";
        maxColors: i64 = Int { min: 2, max: 256 }, default(256), "palette size";
        filename: Option<String> = Str, optional, "the saved file's name";
        captureDelayMs: f64 = Num { min: 0.0, max: 5000.0 }, default(150.0), "auto: wait after an action";
        frameDelayCs: i64 = Int { min: 1, max: 1000 }, default(20), "auto: how long a frame shows (1/100 s)";
        annotation: Option<String> = Str, optional, "";
        download: bool = Bool, default(true), "";
        enhancedRendering: Option<Value> = Object, optional, "";
    }
}

pub async fn gif_recorder(call: Call, p: GifRecorder) -> Result<Reply, ToolError> {
    let tab = tab_arg(&p.tabId);
    let tab = tab.as_deref();
    let session = &call.session;
    let (info, status, extra) = match p.action.as_str() {
        "start" | "auto_start" => {
            let auto = p.action == "auto_start";
            let options = GifOptions {
                mode: if auto {
                    GifMode::AutoCapture
                } else {
                    GifMode::FixedFps
                },
                fps: p.fps as u32,
                duration: params::millis(p.durationMs),
                max_frames: p
                    .maxFrames
                    .map_or(if auto { 100 } else { 50 }, |n| n as usize),
                width: p.width as u32,
                height: p.height as u32,
                max_colors: p.maxColors as usize,
                frame_delay_cs: p.frameDelayCs as u16,
                capture_delay: params::millis(p.captureDelayMs),
            };
            let (info, status) = session.gif_start(tab, options).await?;
            (info, status, json!({}))
        }
        "capture" => {
            let (info, status) = session.gif_capture(tab).await?;
            (info, status, json!({}))
        }
        "status" => {
            let (info, status) = session.gif_status(tab).await?;
            (info, status, json!({}))
        }
        "clear" => {
            let cleared = session.gif_clear(tab).await?;
            return Ok(Reply::data(json!({
                "success": true, "action": "clear", "cleared": cleared,
                "clearedAutoCapture": cleared, "clearedFixedFps": cleared,
            })));
        }
        _ => {
            let (info, saved) = session.gif_stop(tab, p.filename.as_deref()).await?;
            let extra = json!({
                "byteLength": saved.file.bytes,
                "filename": saved.file.path.file_name().map(|n| n.to_string_lossy().into_owned()),
                "fullPath": saved.file.path,
                "width": saved.width, "height": saved.height,
            });
            let mut reply = Reply::data(payload(&p.action, &info, &saved.status, extra)).on(info);
            if let Some(png) = &saved.last_frame {
                reply.images.push((base64(png), "image/png"));
            }
            return Ok(reply);
        }
    };
    Ok(Reply::data(payload(&p.action, &info, &status, extra)).on(info))
}

/// The original's payload.
fn payload(action: &str, tab: &engine::TabInfo, status: &GifStatus, extra: Value) -> Value {
    let mut data = json!({
        "success": true, "action": action, "tabId": tab.tab_id,
        "frameCount": status.frame_count, "durationMs": status.duration_ms,
        "isRecording": status.is_recording, "mode": status.mode,
        "actionsCount": status.actions_count,
    });
    if let Some(error) = &status.error {
        data["error"] = json!(error);
    }
    if let (Some(data), Value::Object(extra)) = (data.as_object_mut(), extra) {
        data.extend(extra);
    }
    data
}
