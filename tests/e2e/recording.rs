//! GIF recordings: fixed-rate and after each action, saved as GIFs a decoder reads, with
//! the last frame shown to the agent.
//!
//! `TABWIRE_GIF_SECONDS=30` makes the fixed-rate recording 30 s long and prints its size
//! and how long stopping took.

use serde_json::{Value, json};

use crate::support::{Site, Tabwire, poll_until};

/// A GIF's screen size and frame count, read block by block as a decoder reads it;
/// panics on anything that is not a well-formed GIF with its trailer.
fn gif_frames(bytes: &[u8]) -> (u16, u16, usize) {
    assert!(
        bytes.starts_with(b"GIF89a") || bytes.starts_with(b"GIF87a"),
        "not a GIF"
    );
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
    let (width, height) = (u16_at(6), u16_at(8));
    let table = |flags: u8| {
        if flags & 0x80 != 0 {
            3 << ((flags & 0x07) + 1)
        } else {
            0
        }
    };
    let mut at = 13 + table(bytes[10]);
    // Data sub-blocks: a length byte, that many bytes, until a zero length.
    let skip_blocks = |mut at: usize| {
        while bytes[at] != 0 {
            at += 1 + bytes[at] as usize;
        }
        at + 1
    };
    let mut frames = 0;
    loop {
        match bytes[at] {
            0x21 => at = skip_blocks(at + 2),
            0x2C => {
                let flags = bytes[at + 9];
                at += 10 + table(flags);
                at = skip_blocks(at + 1); // the LZW minimum code size, then the data
                frames += 1;
            }
            0x3B => return (width, height, frames),
            other => panic!("unexpected GIF block 0x{other:02x} at {at}"),
        }
    }
}

#[tokio::test]
async fn a_fixed_rate_recording_is_a_gif_of_its_frames() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("gif-fixed", &["--face", "chrome"]).await;
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("form.html") }))
        .await;
    // The recording ends at its frame limit (4), however slowly the machine takes
    // frames; with TABWIRE_GIF_SECONDS, at that duration instead.
    let seconds: Option<f64> = std::env::var("TABWIRE_GIF_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok());
    // A measured recording keeps the tool's default size (800×600).
    let start = match seconds {
        Some(seconds) => {
            json!({ "action": "start", "fps": 5, "durationMs": seconds * 1000.0, "maxFrames": 300 })
        }
        None => json!({ "action": "start", "fps": 5, "durationMs": 60_000.0, "maxFrames": 4,
                        "width": 320, "height": 240 }),
    };
    let duration = start["durationMs"].clone();
    let started = tw.chrome_ok("chrome_gif_recorder", start).await;
    assert_eq!(started["isRecording"], true, "{started}");
    assert_eq!(started["mode"], "fixed_fps");
    let twice = tw
        .chrome("chrome_gif_recorder", json!({ "action": "start" }))
        .await;
    assert!(twice.is_error, "one recording a tab: {}", twice.text);
    poll_until("the recording to reach its duration", || async {
        tw.chrome_ok("chrome_gif_recorder", json!({ "action": "status" }))
            .await["isRecording"]
            == false
    })
    .await;
    let stopping = std::time::Instant::now();
    let stopped = tw
        .chrome(
            "chrome_gif_recorder",
            json!({ "action": "stop", "filename": "form tour" }),
        )
        .await;
    let took = stopping.elapsed();
    assert!(!stopped.is_error, "{}", stopped.text);
    let payload = &stopped.payload;
    let path = payload["fullPath"].as_str().expect("fullPath");
    assert!(path.ends_with("recordings/form_tour.gif"), "{path}");
    let bytes = std::fs::read(path).expect("the GIF");
    assert_eq!(payload["byteLength"].as_u64(), Some(bytes.len() as u64));
    let (width, height, frames) = gif_frames(&bytes);
    let most = if seconds.is_some() {
        (800, 600)
    } else {
        (320, 240)
    };
    assert!(
        width <= most.0 && height <= most.1 && width > 0,
        "{width}x{height}"
    );
    assert_eq!(
        frames as u64,
        payload["frameCount"].as_u64().unwrap(),
        "{payload}"
    );
    if seconds.is_none() {
        assert_eq!(frames, 4, "the frame limit ends the recording");
    }
    // The last frame, for the agent to see.
    assert_eq!(stopped.images.len(), 1);
    assert_eq!(stopped.images[0].1, "image/png");
    eprintln!(
        "GIF: {duration} ms at 5 fps, {frames} frames of {width}x{height}, {} bytes, stop took {took:?}",
        bytes.len()
    );
    let again = tw
        .chrome("chrome_gif_recorder", json!({ "action": "stop" }))
        .await;
    assert!(again.is_error, "nothing left to stop: {}", again.text);
}

#[tokio::test]
async fn an_auto_recording_takes_a_frame_after_each_action() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("gif-auto").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let started = tw
        .ok(
            "gif_recorder",
            json!({ "action": "auto_start", "width": 400, "height": 300 }),
        )
        .await;
    assert_eq!(started["mode"], "auto_capture");
    assert_eq!(started["frame_count"], 0);
    tw.ok("page_click", json!({ "selector": "#email" })).await;
    tw.ok(
        "page_type",
        json!({ "selector": "#email", "text": "a@b.c" }),
    )
    .await;
    // Reading is not an action: no frame.
    tw.ok("scan_page", json!({})).await;
    let status = tw.ok("gif_recorder", json!({ "action": "status" })).await;
    assert_eq!(status["frame_count"], 2, "{status}");
    assert_eq!(status["actions_count"], 2, "{status}");
    let captured = tw.ok("gif_recorder", json!({ "action": "capture" })).await;
    assert_eq!(captured["frame_count"], 3, "{captured}");

    let stopped = tw.call("gif_recorder", json!({ "action": "stop" })).await;
    assert_eq!(stopped.images.len(), 1, "the last frame is shown");
    let saved = stopped.ok();
    let bytes = std::fs::read(saved["saved_path"].as_str().unwrap()).expect("the GIF");
    let (width, height, frames) = gif_frames(&bytes);
    assert_eq!(frames, 3);
    assert!(width <= 400 && height <= 300, "{width}x{height}");

    // Nothing recorded, nothing to save.
    tw.ok("gif_recorder", json!({ "action": "auto_start" }))
        .await;
    let empty = tw.call("gif_recorder", json!({ "action": "stop" })).await;
    assert_eq!(empty.reason(), "no_capture", "{}", empty.envelope);
    let cleared = tw.ok("gif_recorder", json!({ "action": "clear" })).await;
    assert_eq!(cleared["cleared"], true);
    let none = tw.call("gif_recorder", json!({ "action": "status" })).await;
    assert!(none.envelope["ok"] == false, "{}", none.envelope);
}

/// The last frame of a GIF file as RGBA, and its size.
fn last_frame(path: &str) -> (Vec<u8>, u32, u32) {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options
        .read_info(std::fs::File::open(path).expect("the GIF"))
        .expect("a GIF");
    let mut last = None;
    while let Some(frame) = decoder.read_next_frame().expect("a frame") {
        last = Some((
            frame.buffer.to_vec(),
            u32::from(frame.width),
            u32::from(frame.height),
        ));
    }
    last.expect("at least one frame")
}

#[tokio::test]
async fn a_drag_is_drawn_on_its_frame_as_a_path() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("gif-drag").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let css_width = tw.ok("execute_js", json!({ "script": "innerWidth" })).await["js_return"]
        .as_f64()
        .expect("innerWidth");
    tw.ok(
        "gif_recorder",
        json!({ "action": "auto_start", "width": 400, "height": 300 }),
    )
    .await;
    // A drag across an empty stretch of the page, left to right.
    let (from, to, y) = (60.0, 360.0, 420.0);
    tw.ok(
        "page_drag",
        json!({ "x1": from, "y1": y, "x2": to, "y2": y, "duration": 0.1 }),
    )
    .await;
    let saved = tw.ok("gif_recorder", json!({ "action": "stop" })).await;
    let (pixels, width, height) = last_frame(saved["saved_path"].as_str().expect("a path"));
    let factor = f64::from(width) / css_width;
    let red = |x: f64, y: f64| {
        let (x, y) = ((x * factor) as u32, (y * factor) as u32);
        assert!(
            x < width && y < height,
            "({x}, {y}) is outside {width}x{height}"
        );
        // Quantised, so near the mark's colour rather than exactly it.
        let at = ((y * width + x) * 4) as usize;
        let [r, g, b] = [pixels[at], pixels[at + 1], pixels[at + 2]];
        r > 180 && g < 90 && b < 90
    };
    // The path between the two ends is drawn, not only a ring where it ended.
    for x in [120.0, 210.0, 300.0] {
        assert!(red(x, y), "no path drawn at ({x}, {y})");
    }
    assert!(!red(210.0, y - 40.0), "the mark spilled off its path");
}

/// Every frame of a GIF file as RGBA (frames here cover the whole image).
fn all_frames(path: &str) -> Vec<Vec<u8>> {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    let mut decoder = options
        .read_info(std::fs::File::open(path).expect("the GIF"))
        .expect("a GIF");
    let mut frames = Vec::new();
    while let Some(frame) = decoder.read_next_frame().expect("a frame") {
        frames.push(frame.buffer.to_vec());
    }
    frames
}

/// Of the pixels in `x0..x1, y0..y1` of an RGBA frame `width` wide: the share that is
/// dark (a label's pill) and how many are white (its letters).
fn dark_share_and_white(
    pixels: &[u8],
    width: u32,
    (x0, x1): (u32, u32),
    (y0, y1): (u32, u32),
) -> (f64, usize) {
    let (mut dark, mut white, mut all) = (0, 0, 0);
    for y in y0..y1 {
        for x in x0..x1 {
            let at = ((y * width + x) * 4) as usize;
            let [r, g, b] = [pixels[at], pixels[at + 1], pixels[at + 2]];
            all += 1;
            if r < 100 && g < 100 && b < 100 {
                dark += 1;
            }
            if r > 230 && g > 230 && b > 230 {
                white += 1;
            }
        }
    }
    (f64::from(dark) / f64::from(all), white)
}

/// The original's `annotation` (on capture) and `enhancedRendering.labels` (after
/// actions) draw labels on the frames; without them, no action label is drawn.
#[tokio::test]
async fn annotations_and_action_labels_are_drawn_on_their_frames() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("gif-labels", &["--face", "chrome"]).await;
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("form.html") }))
        .await;
    let css_width = tw
        .chrome_ok("chrome_javascript", json!({ "code": "return innerWidth" }))
        .await["result"]
        .as_str()
        .and_then(|w| w.parse::<f64>().ok())
        .expect("innerWidth");
    // An empty stretch of the page to click on.
    let (click_x, click_y) = (100.0, 420.0);
    let mut regions = Vec::new();
    for labels in [true, false] {
        let mut start = json!({ "action": "auto_start", "width": 400, "height": 300 });
        if labels {
            start["enhancedRendering"] = json!({ "labels": true });
        }
        tw.chrome_ok("chrome_gif_recorder", start).await;
        tw.chrome_ok(
            "chrome_computer",
            json!({ "action": "left_click", "coordinates": { "x": click_x, "y": click_y } }),
        )
        .await;
        tw.chrome_ok(
            "chrome_gif_recorder",
            json!({ "action": "capture", "annotation": "Step 2: the form" }),
        )
        .await;
        let saved = tw
            .chrome_ok("chrome_gif_recorder", json!({ "action": "stop" }))
            .await;
        let path = saved["fullPath"].as_str().expect("fullPath");
        let frames = all_frames(path);
        assert_eq!(frames.len(), 2, "a frame after the click, one captured");
        let width = saved["width"].as_u64().unwrap() as u32;
        let factor = f64::from(width) / css_width;
        // The action's label sits right of where it clicked; the annotation top left.
        let (ax, ay) = ((click_x * factor) as u32, (click_y * factor) as u32);
        let beside_click =
            dark_share_and_white(&frames[0], width, (ax + 18, ax + 60), (ay - 6, ay + 6));
        let top_left = dark_share_and_white(&frames[1], width, (8, 120), (6, 24));
        regions.push((beside_click, top_left));
    }
    let [(labelled_click, labelled_note), (plain_click, plain_note)] = regions[..] else {
        unreachable!()
    };
    assert!(
        labelled_click.0 > 0.5 && labelled_click.1 > 10,
        "no CLICK label beside the click: {labelled_click:?}"
    );
    assert!(
        plain_click.0 < 0.2,
        "a label was drawn though labels were not asked for: {plain_click:?}"
    );
    // An annotation is drawn whenever it is given.
    for note in [labelled_note, plain_note] {
        assert!(note.0 > 0.5 && note.1 > 20, "no annotation drawn: {note:?}");
    }
}

/// The original's `export` with `download: false`: the saved GIF is dropped onto the
/// page, as a person dragging the file in would, and the page's drop handler gets it.
#[tokio::test]
async fn an_export_without_download_drops_the_gif_on_the_page() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("gif-drop", &["--face", "chrome"]).await;
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("drop.html") }))
        .await;
    tw.chrome_ok("chrome_gif_recorder", json!({ "action": "auto_start" }))
        .await;
    tw.chrome_ok("chrome_gif_recorder", json!({ "action": "capture" }))
        .await;
    let refused = tw
        .chrome(
            "chrome_gif_recorder",
            json!({ "action": "export", "download": false }),
        )
        .await;
    assert!(
        refused.is_error && refused.text.contains("coordinates, ref or selector"),
        "{}",
        refused.text
    );
    // A drop target that is not there fails the call before anything is saved.
    let missing = tw
        .chrome(
            "chrome_gif_recorder",
            json!({ "action": "export", "download": false, "selector": "#nowhere" }),
        )
        .await;
    assert!(missing.is_error, "{}", missing.text);
    let status = tw
        .chrome_ok("chrome_gif_recorder", json!({ "action": "status" }))
        .await;
    assert_eq!(status["isRecording"], true, "{status}");
    let exported = tw
        .chrome_ok(
            "chrome_gif_recorder",
            json!({ "action": "export", "download": false, "selector": "#zone" }),
        )
        .await;
    assert_eq!(exported["uploaded"], true, "{exported}");
    let bytes = exported["byteLength"].as_u64().expect("byteLength");
    let name = exported["filename"].as_str().expect("filename").to_owned();
    // The page reads the file's first bytes a moment after the drop.
    poll_until("the page to read the dropped file", || async {
        tw.chrome_ok(
            "chrome_javascript",
            json!({ "code": "return String(window.dropped !== null)" }),
        )
        .await["result"]
            == "true"
    })
    .await;
    let seen = tw
        .chrome_ok(
            "chrome_javascript",
            json!({ "code": "return JSON.stringify(window.dropped)" }),
        )
        .await;
    let dropped: Value =
        serde_json::from_str(seen["result"].as_str().expect("a string")).expect("JSON");
    assert_eq!(
        dropped,
        json!([{ "name": name, "size": bytes, "head": "GIF89a" }]),
        "{exported}"
    );
}

/// The recorded tab closes before the recording is stopped: what it recorded until then
/// is still saved, the moment after, by naming the tab that is gone.
#[tokio::test]
async fn a_recording_of_a_tab_that_closed_is_still_saved() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("gif-closed", &["--face", "chrome"]).await;
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("form.html") }))
        .await;
    let opened = tw
        .chrome_ok(
            "chrome_navigate",
            json!({ "url": site.url("fold.html"), "newWindow": true }),
        )
        .await;
    let tab = opened["tabId"]
        .as_u64()
        .or(opened["tabs"][0]["tabId"].as_u64())
        .expect("the new tab's id");
    tw.chrome_ok(
        "chrome_gif_recorder",
        json!({ "action": "auto_start", "tabId": tab, "width": 200, "height": 150 }),
    )
    .await;
    tw.chrome_ok(
        "chrome_gif_recorder",
        json!({ "action": "capture", "tabId": tab }),
    )
    .await;
    tw.chrome_ok("chrome_close_tabs", json!({ "tabIds": [tab] }))
        .await;
    let saved = tw
        .chrome_ok(
            "chrome_gif_recorder",
            json!({ "action": "stop", "tabId": tab }),
        )
        .await;
    assert_eq!(saved["frameCount"], 1, "{saved}");
    let path = saved["fullPath"].as_str().expect("fullPath");
    assert_eq!(all_frames(path).len(), 1);
    // Saved once: nothing is left to stop.
    let again = tw
        .chrome(
            "chrome_gif_recorder",
            json!({ "action": "stop", "tabId": tab }),
        )
        .await;
    assert!(again.is_error, "{}", again.text);
}
