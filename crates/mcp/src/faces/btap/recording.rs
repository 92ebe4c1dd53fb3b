//! tabwire's own `gif_recorder` in BrowserTap's envelope: the same recordings as the
//! chrome face's `chrome_gif_recorder`, with BrowserTap's naming.

use serde_json::{Value, json};

use engine::{GifMode, GifOptions, GifStatus};

use super::args::named;
use crate::face::{Call, Reply, ToolError, base64};
use crate::params::{self, TabRef};
use crate::tool_params;

tool_params! {
    pub struct GifRecorder {
        action: String = Choice(&["start", "auto_start", "capture", "status", "stop", "clear"]), required, "start (fixed fps), auto_start (a frame after each action), capture, status, stop (save), clear";
        fps: i64 = Int { min: 1, max: 30 }, default(5), "start: frames a second";
        duration_ms: f64 = Num { min: 100.0, max: 60_000.0 }, default(5000.0), "start: how long to record";
        max_frames: i64 = Int { min: 1, max: 300 }, default(100), "frame limit";
        width: i64 = Int { min: 16, max: 1920 }, default(800), "frames fit this box";
        height: i64 = Int { min: 16, max: 1080 }, default(600), "";
        max_colors: i64 = Int { min: 2, max: 256 }, default(256), "palette size";
        filename: String = Str, default(""), "stop: the saved file's name";
        capture_delay_ms: f64 = Num { min: 0.0, max: 5000.0 }, default(150.0), "auto: wait after an action";
        frame_delay_cs: i64 = Int { min: 1, max: 1000 }, default(20), "auto: how long a frame shows (1/100 s)";
        labels: bool = Bool, default(false), "auto: name each action on its frame (CLICK, DRAG, a navigation's host, the tool)";
        annotation: Option<String> = Str, optional, "capture: a label drawn on the frame";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

pub async fn gif_recorder(call: Call, p: GifRecorder) -> Result<Reply, ToolError> {
    let handle = named(&p.session_id, &None);
    let tab = handle.as_deref();
    let session = &call.session;
    let (info, status) = match p.action.as_str() {
        "start" | "auto_start" => {
            let auto = p.action == "auto_start";
            let options = GifOptions {
                mode: if auto {
                    GifMode::AutoCapture
                } else {
                    GifMode::FixedFps
                },
                fps: p.fps as u32,
                duration: params::millis(p.duration_ms),
                max_frames: p.max_frames as usize,
                width: p.width as u32,
                height: p.height as u32,
                max_colors: p.max_colors as usize,
                frame_delay_cs: p.frame_delay_cs as u16,
                capture_delay: params::millis(p.capture_delay_ms),
                rendering: engine::Rendering {
                    labels: p.labels,
                    ..engine::Rendering::default()
                },
            };
            session.gif_start(tab, options).await?
        }
        "capture" => session.gif_capture(tab, p.annotation.clone()).await?,
        "status" => session.gif_status(tab).await?,
        "clear" => {
            let cleared = session.gif_clear(tab).await?;
            return Ok(Reply::data(
                json!({ "status": "cleared", "cleared": cleared }),
            ));
        }
        _ => {
            let name = Some(p.filename.as_str()).filter(|n| !n.trim().is_empty());
            let (info, saved) = session.gif_stop(tab, name).await?;
            let mut data = status_json(&saved.status);
            data["status"] = json!("saved");
            data["saved_path"] = json!(saved.file.path);
            data["bytes"] = json!(saved.file.bytes);
            data["sha256"] = json!(saved.file.sha256);
            data["width"] = json!(saved.width);
            data["height"] = json!(saved.height);
            let mut reply = Reply::data(data).on(info);
            if let Some(png) = &saved.last_frame {
                reply.images.push((base64(png), "image/png"));
            }
            return Ok(reply);
        }
    };
    let mut data = status_json(&status);
    data["status"] = json!(if status.is_recording {
        "recording"
    } else {
        "finished"
    });
    Ok(Reply::data(data).on(info))
}

fn status_json(status: &GifStatus) -> Value {
    json!({
        "is_recording": status.is_recording, "mode": status.mode,
        "frame_count": status.frame_count, "duration_ms": status.duration_ms,
        "actions_count": status.actions_count, "frame_error": status.error,
    })
}
