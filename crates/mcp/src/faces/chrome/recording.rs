//! `chrome_gif_recorder`: the Chrome MCP Server's GIF recorder over the engine's
//! recordings. Fixed-rate (`start`) or a frame after each action (`auto_start`, the click
//! point marked); `stop` or `export` saves the GIF under the output dir and shows its last
//! frame as image content.

use serde_json::{Value, json};

use engine::{GifMode, GifOptions, GifStatus, Rendering};

use super::tab_arg;
use crate::face::{Call, Reply, ToolError, base64};
use crate::params;
use crate::tool_params;

tool_params! {
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
        annotation: Option<String> = Str, optional, "capture: a label drawn on the frame";
        download: bool = Bool, default(true), "export/stop: false also drops the saved GIF onto the page (coordinates, ref or selector), as a person dragging the file in";
        coordinates: Option<Value> = Object, optional, "download false: {x, y} to drop the GIF at";
        r#ref: Option<String> = Str, optional, "download false: the element to drop the GIF on";
        selector: Option<String> = Str, optional, "download false: a CSS selector of the element to drop the GIF on";
        enhancedRendering: Option<Value> = Any, optional, "auto: true, or {clickIndicators, dragPaths, labels} each true/false (clicks and drags are drawn by default, action labels not)";
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
                rendering: rendering(p.enhancedRendering.as_ref())?,
            };
            let (info, status) = session.gif_start(tab, options).await?;
            (info, status, json!({}))
        }
        "capture" => {
            let (info, status) = session.gif_capture(tab, p.annotation.clone()).await?;
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
            // Where to drop the GIF is found before the recording is saved: a target
            // that is not there fails the call with the recording still running.
            let drop_at = if p.download {
                None
            } else {
                let page = session.page(tab).await?;
                let target = super::input::aim(
                    p.r#ref.as_deref(),
                    p.selector.as_deref(),
                    "css",
                    &p.coordinates,
                    "coordinates",
                )?
                .ok_or_else(|| {
                    ToolError::param(
                        "download",
                        "false drops the GIF onto the page: give coordinates, ref or selector for where",
                    )
                })?;
                let at = page.point_of(&target, call.deadline).await?;
                Some((page, at))
            };
            let (info, saved) = session.gif_stop(tab, p.filename.as_deref()).await?;
            let extra = json!({
                "byteLength": saved.file.bytes,
                "filename": saved.file.path.file_name().map(|n| n.to_string_lossy().into_owned()),
                "fullPath": saved.file.path,
                "width": saved.width, "height": saved.height,
            });
            let mut data = payload(&p.action, &info, &saved.status, extra);
            if let Some((page, (x, y))) = drop_at {
                let path = saved.file.path.to_string_lossy().into_owned();
                page.drop_files((x, y), &[path], call.deadline).await?;
                data["uploaded"] = json!(true);
                data["droppedAt"] = json!({ "x": x, "y": y });
            }
            let mut reply = Reply::data(data).on(info);
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

/// The original's `enhancedRendering`: `true` turns every overlay on; an object turns
/// each of `clickIndicators`, `dragPaths` and `labels` on unless it is `false` or
/// `{enabled: false}` (or the whole is `{enabled: false}`). Left out: clicks and drags
/// drawn, action labels not.
fn rendering(given: Option<&Value>) -> Result<Rendering, ToolError> {
    let all = |on: bool| Rendering {
        clicks: on,
        drags: on,
        labels: on,
    };
    let part = |value: &Value| match value {
        Value::Bool(on) => *on,
        Value::Object(config) => config.get("enabled") != Some(&Value::Bool(false)),
        _ => true,
    };
    match given {
        None | Some(Value::Null) => Ok(Rendering::default()),
        Some(Value::Bool(on)) => Ok(all(*on)),
        Some(Value::Object(config)) if config.get("enabled") == Some(&Value::Bool(false)) => {
            Ok(all(false))
        }
        Some(Value::Object(config)) => Ok(Rendering {
            clicks: config.get("clickIndicators").is_none_or(part),
            drags: config.get("dragPaths").is_none_or(part),
            labels: config.get("labels").is_none_or(part),
        }),
        Some(_) => Err(ToolError::param(
            "enhancedRendering",
            "must be true, false or {clickIndicators, dragPaths, labels}",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enhanced_rendering_reads_as_the_original_s() {
        let read = |v: Value| rendering(Some(&v)).unwrap();
        assert_eq!(rendering(None).unwrap(), Rendering::default());
        assert_eq!(
            read(json!(true)),
            Rendering {
                clicks: true,
                drags: true,
                labels: true
            }
        );
        assert_eq!(
            read(json!(false)),
            Rendering {
                clicks: false,
                drags: false,
                labels: false
            }
        );
        assert_eq!(
            read(json!({ "labels": false, "dragPaths": { "color": "#f00" } })),
            Rendering {
                clicks: true,
                drags: true,
                labels: false
            }
        );
        assert_eq!(
            read(json!({ "clickIndicators": { "enabled": false } })),
            Rendering {
                clicks: false,
                drags: true,
                labels: true
            }
        );
        assert!(rendering(Some(&json!("yes"))).is_err());
    }
}
