//! GIF recordings of a tab: a frame at a fixed rate, or one after each action an agent
//! takes (auto mode, the click point marked). Each frame is a screenshot scaled to fit
//! the recording's size, quantised to its own palette (NeuQuant, as many colours as
//! asked) and encoded as it comes: memory holds one frame, the file grows on disk, and a
//! recording stops taking frames at its frame limit. Stopping saves it under the output
//! dir.
//!
//! One recording a tab, owned by the agent session that started it.

use parking_lot::Mutex;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use base64::Engine as _;
use serde::Serialize;
use serde_json::json;
use tokio::time::Instant;

use super::Owner;
use super::per_tab::PerTab;
use crate::browser::{Browser, HOUSEKEEPING, Tab, TabInfo};
use crate::config::EngineConfig;
use crate::error::{EngineError, ErrorCode, Input, Result};
use crate::files;
use crate::page::Page;

/// The most frames a recording holds (the original's bound).
pub const MAX_FRAMES: usize = 300;
/// NeuQuant's sampling: 1 looks at every pixel, 30 at one in thirty; 10 is its default
/// balance of quality and speed.
const SAMPLING: i32 = 10;
/// Where an action landed, drawn on the frame after it: a ring where it clicked; a line
/// from where a drag began (a small ring) to where it ended (a ring). In CSS px of the
/// viewport.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mark {
    Point(f64, f64),
    Drag { from: (f64, f64), to: (f64, f64) },
}

/// The click mark's radius, in the recording's pixels.
const MARK_RADIUS: i32 = 9;

/// What a frame shows besides the page: where an action landed, and a label (the
/// action, or the agent's annotation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overlay {
    pub mark: Option<Mark>,
    pub label: Option<String>,
}

/// Which overlays an auto recording draws after actions (an agent's annotation is drawn
/// whenever it gives one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rendering {
    pub clicks: bool,
    pub drags: bool,
    /// A label naming each action (`CLICK`, `DRAG`, `NAVIGATE`, …).
    pub labels: bool,
}

impl Default for Rendering {
    fn default() -> Rendering {
        Rendering {
            clicks: true,
            drags: true,
            labels: false,
        }
    }
}

impl Rendering {
    /// What of an action's overlay this recording draws.
    fn applied_to(self, overlay: Overlay) -> Overlay {
        let mark = overlay.mark.filter(|mark| match mark {
            Mark::Point(..) => self.clicks,
            Mark::Drag { .. } => self.drags,
        });
        let label = overlay.label.filter(|_| self.labels);
        Overlay { mark, label }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GifMode {
    /// A frame every 1/fps seconds until the duration or the frame limit.
    FixedFps,
    /// A frame after each action (and on request).
    AutoCapture,
}

#[derive(Debug, Clone)]
pub struct GifOptions {
    pub mode: GifMode,
    pub fps: u32,
    pub duration: Duration,
    pub max_frames: usize,
    /// The box each frame is scaled to fit (never enlarged).
    pub width: u32,
    pub height: u32,
    pub max_colors: usize,
    /// Auto mode: how long a frame shows, in hundredths of a second.
    pub frame_delay_cs: u16,
    /// Auto mode: how long after an action its frame is taken (the page repaints).
    pub capture_delay: Duration,
    pub rendering: Rendering,
}

/// Where a recording stands.
#[derive(Debug, Clone, Serialize)]
pub struct GifStatus {
    pub is_recording: bool,
    pub mode: GifMode,
    pub frame_count: usize,
    pub duration_ms: u64,
    pub actions_count: usize,
    /// A frame could not be taken or encoded: why (the recording keeps what it has).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A saved recording.
#[derive(Debug, Clone)]
pub struct GifSaved {
    pub status: GifStatus,
    pub file: files::Written,
    pub width: u16,
    pub height: u16,
    /// The last frame as the browser captured it (PNG), for the agent to see.
    pub last_frame: Option<Vec<u8>>,
}

/// The file being written and what went into it.
struct Encoding {
    encoder: Option<gif::Encoder<BufWriter<File>>>,
    staging: files::Staging,
    /// Where the GIF is written (created with its first frame).
    staged: PathBuf,
    size: Option<(u16, u16)>,
    frames: usize,
    last_png: Option<Vec<u8>>,
    error: Option<String>,
    /// The fixed-rate task has ended (duration or frame limit reached).
    done: bool,
}

struct Recording {
    /// The tab as it was when the recording began (for saving it after the tab closed).
    tab: TabInfo,
    session: String,
    browser: Weak<Browser>,
    options: GifOptions,
    started: Instant,
    actions: usize,
    encoding: Arc<Mutex<Encoding>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

impl Recording {
    fn status(&self) -> GifStatus {
        let encoding = self.encoding.lock();
        GifStatus {
            is_recording: !encoding.done,
            mode: self.options.mode,
            frame_count: encoding.frames,
            duration_ms: self.started.elapsed().as_millis() as u64,
            actions_count: self.actions,
            error: encoding.error.clone(),
        }
    }
}

/// Every GIF recording of one engine, by tab.
pub struct Gifs {
    recordings: PerTab<Recording>,
}

impl Default for Gifs {
    fn default() -> Gifs {
        Gifs {
            recordings: PerTab::new("recording a GIF of"),
        }
    }
}

impl Gifs {
    /// Starts recording the page's tab for `owner`. A fixed-rate recording takes its
    /// first frame at once; an auto one waits for actions.
    pub async fn start(
        &self,
        page: &Page,
        owner: Owner,
        options: GifOptions,
        config: &EngineConfig,
    ) -> Result<GifStatus> {
        self.recordings.vacant(&page.tab.target_id, owner)?;
        let staging = files::Staging::of(&config.output_dir);
        let staged = staging.file(&format!("{}.gif", crate::ids::unique("gif")));
        let encoding = Arc::new(Mutex::new(Encoding {
            encoder: None,
            staging,
            staged,
            size: None,
            frames: 0,
            last_png: None,
            error: None,
            done: false,
        }));
        let mut recording = Recording {
            tab: page.info(),
            session: page.session.clone(),
            browser: Arc::downgrade(&page.browser),
            options: options.clone(),
            started: Instant::now(),
            actions: 0,
            encoding: encoding.clone(),
            task: None,
        };
        if options.mode == GifMode::FixedFps {
            let browser = page.browser.clone();
            let session = page.session.clone();
            recording.task = Some(tokio::spawn(fixed_rate(
                browser, session, options, encoding,
            )));
        }
        let status = recording.status();
        self.recordings
            .insert(&page.tab.target_id, owner, recording);
        Ok(status)
    }

    /// Takes one frame now (auto mode), with the agent's annotation drawn on it.
    pub async fn capture(
        &self,
        tab: &Tab,
        owner: Owner,
        annotation: Option<String>,
    ) -> Result<GifStatus> {
        let (browser, session, options, encoding) =
            self.recordings.own(&tab.target_id, owner, |recording| {
                (
                    recording.browser.upgrade(),
                    recording.session.clone(),
                    recording.options.clone(),
                    recording.encoding.clone(),
                )
            })?;
        let browser = browser.ok_or_else(|| {
            EngineError::refused(ErrorCode::NoCapture, "the recorded tab's browser is gone")
        })?;
        take_frame(
            &browser,
            &session,
            &options,
            &encoding,
            Overlay {
                mark: None,
                label: annotation,
            },
            options.frame_delay_cs,
        )
        .await?;
        self.recordings
            .own(&tab.target_id, owner, |recording| recording.status())
    }

    /// After an agent's action on a tab: an auto recording of it takes a frame, with
    /// what of the action's overlay it draws. Nothing happens without one.
    pub async fn after_action(&self, tab: &TabInfo, overlay: Overlay) {
        let running = self.recordings.find_map(|target, _, r| {
            let browser = r.browser.upgrade()?;
            (r.options.mode == GifMode::AutoCapture && browser.client_id == tab.client_id)
                .then(|| (target.to_owned(), browser))
        });
        let Some((target, browser)) = running else {
            return;
        };
        let Some(recorded) = browser.tab_by_target(&target) else {
            return;
        };
        if recorded.tab_id != tab.tab_id {
            return;
        }
        let counted = self.recordings.with_any(&target, |recording| {
            recording.actions += 1;
            (
                recording.session.clone(),
                recording.options.clone(),
                recording.encoding.clone(),
            )
        });
        let Some((session, options, encoding)) = counted else {
            return;
        };
        // Let the page paint what the action did.
        tokio::time::sleep(options.capture_delay).await;
        let overlay = options.rendering.applied_to(overlay);
        if let Err(error) = take_frame(
            &browser,
            &session,
            &options,
            &encoding,
            overlay,
            options.frame_delay_cs,
        )
        .await
        {
            encoding.lock().error = Some(error.to_string());
        }
    }

    /// Where `owner`'s recording of the tab stands.
    pub fn status(&self, tab: &Tab, owner: Owner) -> Result<GifStatus> {
        self.recordings
            .own(&tab.target_id, owner, |recording| recording.status())
    }

    /// Ends `owner`'s recording of the tab and saves it under the output dir as
    /// `recordings/<name>.gif` (the agent's name made safe, else `recording_<stamp>`).
    pub async fn stop(
        &self,
        tab: &Tab,
        owner: Owner,
        config: &EngineConfig,
        name: Option<&str>,
    ) -> Result<GifSaved> {
        self.stop_target(&tab.target_id, owner, config, name).await
    }

    /// `owner`'s recording of a tab that has closed (or whose browser is gone), if it has
    /// one: the tab as it was, and its target, so its frames can still be saved.
    pub fn orphaned(&self, owner: Owner) -> Option<(TabInfo, String)> {
        self.recordings.find_map(|target, recorder, r| {
            let gone = r
                .browser
                .upgrade()
                .is_none_or(|browser| browser.tab_by_target(target).is_none());
            (recorder == owner && gone).then(|| (r.tab.clone(), target.to_owned()))
        })
    }

    /// Ends `owner`'s recording of a tab, by its target, and saves it.
    pub async fn stop_target(
        &self,
        target: &str,
        owner: Owner,
        config: &EngineConfig,
        name: Option<&str>,
    ) -> Result<GifSaved> {
        let stamped = format!("recording_{}", crate::ids::utc_stamp());
        let name = name.unwrap_or_default().trim().trim_end_matches(".gif");
        let file = format!("recordings/{}.gif", files::safe_name(name, &stamped));
        let path = files::confined_path(&config.output_dir, &file, Input::Filename)?;
        // An empty recording stays, to be given frames or cleared.
        let empty = self.recordings.own(target, owner, |recording| {
            recording.encoding.lock().frames == 0 && recording.options.mode == GifMode::AutoCapture
        })?;
        if empty {
            return Err(no_frame());
        }
        let mut recording = self.recordings.take_own(target, owner)?;
        if let Some(task) = recording.task.take() {
            task.abort();
            let _ = task.await;
        }
        let mut status = recording.status();
        status.is_recording = false;
        let encoding = recording.encoding.clone();
        let (encoder, staged, size, last) = {
            let mut encoding = encoding.lock();
            (
                encoding.encoder.take(),
                encoding.staged.clone(),
                encoding.size,
                encoding.last_png.take(),
            )
        };
        let (Some(encoder), Some((width, height))) = (encoder, size) else {
            return Err(no_frame());
        };
        tokio::task::spawn_blocking(move || encoder.into_inner().map(drop))
            .await
            .map_err(|e| EngineError::Io(format!("the GIF encoder stopped: {e}")))?
            .map_err(|e| EngineError::Io(format!("cannot finish the GIF: {e}")))?;
        let file = files::move_into(staged, path, false).await?;
        Ok(GifSaved {
            status,
            file,
            width,
            height,
            last_frame: last,
        })
    }

    /// Drops `owner`'s recording of the tab without saving it; whether there was one.
    pub fn clear(&self, tab: &Tab, owner: Owner) -> Result<bool> {
        match self.recordings.take_own(&tab.target_id, owner) {
            Ok(recording) => {
                let _ = std::fs::remove_file(&recording.encoding.lock().staged);
                Ok(true)
            }
            Err(error) if error.code() == ErrorCode::NoCapture => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Drops every recording of `owner` (its session ended).
    pub fn forget(&self, owner: Owner) {
        for recording in self.recordings.take_all(owner) {
            let _ = std::fs::remove_file(&recording.encoding.lock().staged);
        }
    }
}

fn no_frame() -> EngineError {
    EngineError::refused(
        ErrorCode::NoCapture,
        "the recording has no frame yet: nothing to save (an auto recording takes one after each action, or on capture)",
    )
}

/// A frame every 1/fps seconds until the duration or the frame limit.
async fn fixed_rate(
    browser: Arc<Browser>,
    session: String,
    options: GifOptions,
    encoding: Arc<Mutex<Encoding>>,
) {
    let period = Duration::from_secs_f64(1.0 / f64::from(options.fps.max(1)));
    let end = Instant::now() + options.duration;
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last: Option<Instant> = None;
    loop {
        ticks.tick().await;
        let now = Instant::now();
        if now > end || encoding.lock().frames >= options.max_frames {
            break;
        }
        // A frame shows as long as it took to take the next one, so the GIF plays in
        // real time even when frames come slower than asked.
        let shown = last.map_or(period, |last| now - last);
        last = Some(now);
        let delay_cs = (shown.as_secs_f64() * 100.0).round().clamp(1.0, 65_535.0) as u16;
        if let Err(error) = take_frame(
            &browser,
            &session,
            &options,
            &encoding,
            Overlay::default(),
            delay_cs,
        )
        .await
        {
            encoding.lock().error = Some(error.to_string());
            if browser.connection().is_closed() {
                break;
            }
        }
    }
    encoding.lock().done = true;
}

/// Captures the tab and appends the frame to the file.
async fn take_frame(
    browser: &Browser,
    session: &str,
    options: &GifOptions,
    encoding: &Arc<Mutex<Encoding>>,
    overlay: Overlay,
    delay_cs: u16,
) -> Result<()> {
    if encoding.lock().frames >= options.max_frames {
        return Ok(());
    }
    let shot = browser
        .connection()
        .call(
            Some(session),
            "Page.captureScreenshot",
            json!({ "format": "png", "optimizeForSpeed": true }),
            HOUSEKEEPING,
        )
        .await?;
    // The viewport's CSS width, to place a mark given in CSS px: asked only for a mark.
    let css_width = match overlay.mark {
        Some(_) => browser
            .connection()
            .call(
                Some(session),
                "Page.getLayoutMetrics",
                json!({}),
                HOUSEKEEPING,
            )
            .await
            .ok()
            .and_then(|m| m["cssVisualViewport"]["clientWidth"].as_f64())
            .filter(|w| *w > 0.0),
        None => None,
    };
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap_or_default())
        .map_err(|e| EngineError::Io(format!("the browser sent an undecodable screenshot: {e}")))?;
    let options = options.clone();
    let encoding = encoding.clone();
    tokio::task::spawn_blocking(move || {
        let (pixels, width, height) = decode_png(&png)?;
        let mut guard = encoding.lock();
        let (out_w, out_h) = *guard
            .size
            .get_or_insert_with(|| fit(width, height, options.width, options.height));
        let mut frame = scale(&pixels, width, height, u32::from(out_w), u32::from(out_h));
        // The action's points are in CSS px; the frame is scaled from device px.
        let per_css = css_width.map_or(1.0, |css| f64::from(width) / css);
        let factor = per_css * f64::from(out_w) / f64::from(width);
        let at = |(x, y): (f64, f64)| ((x * factor) as i32, (y * factor) as i32);
        let anchor = match overlay.mark {
            Some(Mark::Point(x, y)) => {
                draw_ring(&mut frame, out_w, out_h, at((x, y)), MARK_RADIUS);
                Some(at((x, y)))
            }
            Some(Mark::Drag { from, to }) => {
                draw_line(&mut frame, out_w, out_h, at(from), at(to));
                draw_ring(&mut frame, out_w, out_h, at(from), MARK_RADIUS / 2 + 2);
                draw_ring(&mut frame, out_w, out_h, at(to), MARK_RADIUS);
                Some(at(to))
            }
            None => None,
        };
        if let Some(label) = &overlay.label {
            super::font::draw_label(&mut frame, out_w, out_h, anchor, label);
        }
        let (palette, indices) = quantise(&frame, options.max_colors);
        let mut gif_frame = gif::Frame::from_palette_pixels(out_w, out_h, indices, palette, None);
        gif_frame.delay = delay_cs;
        if guard.encoder.is_none() {
            let file = guard.staging.create_at(&guard.staged)?;
            let mut encoder = gif::Encoder::new(BufWriter::new(file), out_w, out_h, &[])
                .map_err(|e| EngineError::Io(format!("cannot start the GIF: {e}")))?;
            encoder
                .set_repeat(gif::Repeat::Infinite)
                .map_err(|e| EngineError::Io(format!("cannot start the GIF: {e}")))?;
            guard.encoder = Some(encoder);
        }
        if let Some(encoder) = guard.encoder.as_mut() {
            encoder
                .write_frame(&gif_frame)
                .map_err(|e| EngineError::Io(format!("cannot write a GIF frame: {e}")))?;
        }
        guard.frames += 1;
        guard.last_png = Some(png);
        Ok(())
    })
    .await
    .map_err(|e| EngineError::Io(format!("the GIF encoder stopped: {e}")))?
}

/// RGBA pixels of a PNG, and its size.
fn decode_png(bytes: &[u8]) -> Result<(Vec<u8>, u32, u32)> {
    let bad = |e: png::DecodingError| {
        EngineError::Io(format!("the browser's screenshot is not a PNG: {e}"))
    };
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(bad)?;
    let mut buffer = vec![0; reader.output_buffer_size().unwrap_or(0)];
    let info = reader.next_frame(&mut buffer).map_err(bad)?;
    buffer.truncate(info.buffer_size());
    let rgba = match info.color_type {
        png::ColorType::Rgba => buffer,
        png::ColorType::Rgb => buffer
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        png::ColorType::Grayscale => buffer.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        png::ColorType::GrayscaleAlpha => buffer
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0], p[1]])
            .collect(),
        png::ColorType::Indexed => {
            return Err(EngineError::Io(
                "the browser's screenshot has an unexpanded palette".into(),
            ));
        }
    };
    Ok((rgba, info.width, info.height))
}

/// The size a `width`×`height` image takes in a `max_w`×`max_h` box, never enlarged.
fn fit(width: u32, height: u32, max_w: u32, max_h: u32) -> (u16, u16) {
    let scale = (f64::from(max_w) / f64::from(width))
        .min(f64::from(max_h) / f64::from(height))
        .min(1.0);
    let w = (f64::from(width) * scale).round().clamp(1.0, 65_535.0) as u16;
    let h = (f64::from(height) * scale).round().clamp(1.0, 65_535.0) as u16;
    (w, h)
}

/// Scales RGBA pixels to `out_w`×`out_h`, each output pixel the average of the source
/// pixels it covers (a box filter: text stays legible when shrunk).
fn scale(pixels: &[u8], width: u32, height: u32, out_w: u32, out_h: u32) -> Vec<u8> {
    let mut out = vec![0u8; (out_w * out_h * 4) as usize];
    for oy in 0..out_h {
        let y0 = oy * height / out_h;
        let y1 = ((oy + 1) * height / out_h).max(y0 + 1).min(height);
        for ox in 0..out_w {
            let x0 = ox * width / out_w;
            let x1 = ((ox + 1) * width / out_w).max(x0 + 1).min(width);
            let mut sum = [0u32; 4];
            for y in y0..y1 {
                for x in x0..x1 {
                    let at = ((y * width + x) * 4) as usize;
                    for (channel, total) in sum.iter_mut().enumerate() {
                        *total += u32::from(pixels[at + channel]);
                    }
                }
            }
            let count = (y1 - y0) * (x1 - x0);
            let at = ((oy * out_w + ox) * 4) as usize;
            for channel in 0..4 {
                out[at + channel] = (sum[channel] / count) as u8;
            }
        }
    }
    out
}

/// The marks' colour.
const MARK_RGBA: [u8; 4] = [230, 30, 30, 255];

/// A red ring of `radius` around `centre`: where the action landed.
fn draw_ring(pixels: &mut [u8], width: u16, height: u16, centre: (i32, i32), radius: i32) {
    let (w, h) = (i32::from(width), i32::from(height));
    let (cx, cy) = centre;
    let (outer, inner) = (radius * radius, (radius - 3).max(0) * (radius - 3).max(0));
    for y in (cy - radius).max(0)..(cy + radius + 1).min(h) {
        for x in (cx - radius).max(0)..(cx + radius + 1).min(w) {
            let d = (x - cx) * (x - cx) + (y - cy) * (y - cy);
            if d <= outer && d >= inner {
                let at = ((y * w + x) * 4) as usize;
                pixels[at..at + 4].copy_from_slice(&MARK_RGBA);
            }
        }
    }
}

/// A red line three pixels wide from `from` to `to`: a drag's path.
fn draw_line(pixels: &mut [u8], width: u16, height: u16, from: (i32, i32), to: (i32, i32)) {
    let (w, h) = (i32::from(width), i32::from(height));
    let steps = (to.0 - from.0).abs().max((to.1 - from.1).abs()).max(1);
    for step in 0..=steps {
        let x = from.0 + (to.0 - from.0) * step / steps;
        let y = from.1 + (to.1 - from.1) * step / steps;
        for (dx, dy) in [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)] {
            let (px, py) = (x + dx, y + dy);
            if (0..w).contains(&px) && (0..h).contains(&py) {
                let at = ((py * w + px) * 4) as usize;
                pixels[at..at + 4].copy_from_slice(&MARK_RGBA);
            }
        }
    }
}

/// A palette of at most `colors` colours for the frame (NeuQuant), and each pixel's
/// index in it.
fn quantise(rgba: &[u8], colors: usize) -> (Vec<u8>, Vec<u8>) {
    let colors = colors.clamp(2, 256);
    let quantiser = color_quant::NeuQuant::new(SAMPLING, colors, rgba);
    let indices = rgba
        .chunks_exact(4)
        .map(|pixel| quantiser.index_of(pixel) as u8)
        .collect();
    (quantiser.color_map_rgb(), indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_fit_their_box_and_are_never_enlarged() {
        assert_eq!(fit(1600, 1200, 800, 600), (800, 600));
        assert_eq!(fit(1600, 800, 800, 600), (800, 400));
        assert_eq!(fit(400, 300, 800, 600), (400, 300));
    }

    #[test]
    fn shrinking_averages_the_pixels_it_covers() {
        // A 2×2 of black and white becomes one mid-grey pixel.
        let pixels = [
            0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 255,
        ];
        assert_eq!(scale(&pixels, 2, 2, 1, 1), vec![127, 127, 127, 255]);
    }

    #[test]
    fn a_palette_holds_at_most_the_colours_asked_for() {
        let mut rgba = Vec::new();
        for i in 0..64u32 {
            rgba.extend_from_slice(&[(i * 4) as u8, 255 - (i * 4) as u8, (i * 2) as u8, 255]);
        }
        let (palette, indices) = quantise(&rgba, 8);
        assert!(palette.len() <= 8 * 3, "{}", palette.len());
        assert_eq!(indices.len(), 64);
        assert!(indices.iter().all(|&i| usize::from(i) < palette.len() / 3));
    }

    #[test]
    fn a_drag_is_drawn_from_where_it_began_to_where_it_ended() {
        let (w, h) = (40u16, 20u16);
        let mut pixels = vec![255u8; usize::from(w) * usize::from(h) * 4];
        draw_line(&mut pixels, w, h, (5, 10), (35, 10));
        let red = |x: usize, y: usize| pixels[(y * usize::from(w) + x) * 4..][..4] == MARK_RGBA;
        assert!((5..=35).all(|x| red(x, 10)), "the path is drawn end to end");
        assert!(!red(20, 2), "and nowhere else");
        // Off the frame, nothing is drawn and nothing panics.
        draw_line(&mut pixels, w, h, (-50, -50), (100, 100));
        draw_ring(&mut pixels, w, h, (-30, 5), MARK_RADIUS);
    }
}
