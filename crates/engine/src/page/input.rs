//! Trusted CDP input to one tab: clicks, typing, key chords and drags. Never the OS
//! cursor or keyboard.

use crate::ids::Deadline;
use std::time::Duration;

use serde_json::{Value, json};

use super::element_info::ElementInfo;
use super::keys::{self, Chord};
use super::locator::{Locator, Placed, page_frames};
use super::{FrameContext, Page};
use crate::browser::HOUSEKEEPING;
use crate::error::{EngineError, ErrorCode, Input, Result};

/// What a click aims at.
pub enum ClickTarget {
    /// An element (a ref is placed in its frame first), hit-tested; `offset` is from its
    /// top-left corner, else its centre.
    Element {
        locator: Locator,
        offset: (Option<f64>, Option<f64>),
    },
    /// A point in the viewport of the top document or of the frame the path leads to,
    /// not hit-tested.
    Point { x: f64, y: f64, frame: Vec<Locator> },
}

/// How many times a click is aimed and sent before it is reported undelivered.
const CLICK_ATTEMPTS: usize = 3;
/// How long past its own wait the page's account of what an input set off is waited for
/// (it never takes the call past its deadline: the wait ends `TIME_TO_ANSWER` early).
const ANSWER_LATE: Duration = Duration::from_millis(250);

/// The page watch of an input that may submit (`watch_page`).
const PAGE_WATCH: &str = include_str!("../../page_script/input_watch.js");

/// What a click aims at, placed: the page script's locator and the frame path to it.
pub(crate) struct Aim<'a> {
    pub frame: &'a [Value],
    pub locator: &'a Value,
    pub offset: (Option<f64>, Option<f64>),
}

impl Page {
    pub async fn click(
        &self,
        target: ClickTarget,
        button: &str,
        clicks: u32,
        deadline: Deadline,
    ) -> Result<Clicked> {
        self.click_with(target, button, clicks, 0, deadline).await
    }

    /// A click with modifier keys held (CDP's bit mask: Alt 1, Ctrl 2, Meta 4, Shift 8).
    pub async fn click_with(
        &self,
        target: ClickTarget,
        button: &str,
        clicks: u32,
        modifiers: u32,
        deadline: Deadline,
    ) -> Result<Clicked> {
        let button = match button {
            "left" | "right" | "middle" => button,
            other => {
                return Err(EngineError::invalid(
                    Input::Button,
                    format!("'{other}' is not left, right or middle"),
                ));
            }
        };
        let clicked = match target {
            ClickTarget::Point { x, y, frame } => {
                let ctx = self.frame_context(&page_frames(&frame), deadline).await?;
                let (x, y) = (x + ctx.offset.0, y + ctx.offset.1);
                *self.last_aim.lock() = Some(Clicked::at(x, y));
                self.mouse_click(x, y, button, clicks, modifiers, deadline)
                    .await?;
                Clicked::at(x, y)
            }
            ClickTarget::Element { locator, offset } => {
                let Placed { find, frame } = self.place(&locator)?;
                let aim = Aim {
                    frame: &frame,
                    locator: &find,
                    offset,
                };
                self.click_element(&aim, button, clicks, modifiers, deadline)
                    .await?
            }
        };
        Ok(clicked)
    }

    /// Aims at an element and clicks it under a guard (act.js `click_guard`). A press the
    /// guard stopped, or one that reached nothing because the page moved under the point,
    /// never reached the page's handlers, so it is aimed and sent again, a bounded number
    /// of times.
    pub(crate) async fn click_element(
        &self,
        aim: &Aim<'_>,
        button: &str,
        clicks: u32,
        modifiers: u32,
        deadline: Deadline,
    ) -> Result<Clicked> {
        let ctx = self.frame_context(aim.frame, deadline).await?;
        let mut missed = Value::Null;
        // An attempt aimed again after an earlier one scrolled finds the element in view.
        let mut scrolled = false;
        for attempt in 0..CLICK_ATTEMPTS {
            let aimed = self
                .run_ok(
                    &ctx,
                    "click_point",
                    json!({
                        "locator": aim.locator,
                        "offset_x": aim.offset.0,
                        "offset_y": aim.offset.1,
                        // Framed clicks do not scroll: the frame's offset was measured already.
                        "scroll": !ctx.framed,
                    }),
                    deadline,
                )
                .await?;
            scrolled |= aimed["scrolled_into_view"] == true;
            if ctx.framed {
                self.check_frames_unobscured(aim.frame, &aimed, deadline)
                    .await?;
            }
            // A disabled control ignores the press; sending it would only look like success.
            if aimed["disabled"] == true {
                return Err(EngineError::page(
                    ErrorCode::NotInteractable,
                    "the element is disabled: it takes no clicks until the page enables it",
                    json!({ "disabled": true, "element": aimed["element"] }),
                ));
            }
            let x = aimed["x"].as_f64().unwrap_or_default() + ctx.offset.0;
            let y = aimed["y"].as_f64().unwrap_or_default() + ctx.offset.1;
            // The guard outlives the press by at most the call's own deadline.
            let guard_at = json!({
                "locator": aim.locator, "x": aimed["x"], "y": aimed["y"], "viewport": aimed["viewport"],
                "disarm_after_ms": deadline.remaining().as_millis().clamp(1_000, 60_000) as u64,
            });
            // The element went away since aiming: aim again (which says why if it is gone).
            let Some(guard) = self.arm_click_guard(&ctx, &guard_at, deadline).await? else {
                continue;
            };
            let clicked = Clicked {
                x,
                y,
                hit_verified: aimed["hit_verified"] == true,
                scrolled_into_view: aimed["scrolled_into_view"]
                    .as_bool()
                    .map(|now| now || scrolled),
                attempts: (attempt > 0).then_some(attempt as u32 + 1),
                element: ElementInfo::read(&aimed["element"]),
                challenge: None,
                checked: None,
                page_errors: Vec::new(),
                requests_pending: 0,
            };
            *self.last_aim.lock() = Some(clicked.clone());
            let watch = if ctx.framed {
                None
            } else {
                self.watch_page().await
            };
            let pressed = self
                .mouse_click(x, y, button, clicks, modifiers, deadline)
                .await;
            // Read (and remove) the guard whatever became of the press.
            let seen = self.click_guard_seen(&ctx, guard, deadline).await;
            let page = match watch {
                Some(watch) => self.page_seen(watch, deadline).await,
                None => PageSeen::default(),
            };
            pressed?;
            let clicked = Clicked {
                page_errors: page.errors,
                requests_pending: page.requests_pending,
                ..clicked
            };
            let Some(seen) = seen else {
                // The document went away with the click (it navigated): it was delivered.
                return Ok(clicked);
            };
            if seen["reached"] == true {
                return Ok(Clicked {
                    challenge: seen["challenge"].as_str().map(str::to_owned),
                    checked: seen["checked"].as_bool(),
                    ..clicked
                });
            }
            // Sending it again is safe only if the page saw none of it: the guard stopped
            // it, or nothing at all is at the point (it fell outside the window). Anything
            // else (a frame that slid over the point) may have taken the click.
            if seen["stopped"] != true && seen["point_empty"] != true {
                return Err(EngineError::page(
                    ErrorCode::ClickNotConfirmed,
                    "the press did not reach the element and something else is at the point now (a frame?); it may have been clicked instead",
                    json!({ "x": x, "y": y }),
                )
                .may_have_run());
            }
            missed = seen;
        }
        let stopped_at = missed["stopped_at"].clone();
        Err(EngineError::page(
            ErrorCode::ClickNotDelivered,
            format!(
                "the page moved under the click point {CLICK_ATTEMPTS} times; the press was {} and the page saw none of it",
                if stopped_at.is_null() {
                    "outside the window"
                } else {
                    "stopped before another element got it"
                }
            ),
            json!({ "intercepted_by": stopped_at }),
        ))
    }

    /// Installs a click guard for the element at the aimed point (in the context's own
    /// coordinates); its remote object, if the element is there.
    async fn arm_click_guard(
        &self,
        ctx: &FrameContext,
        args: &Value,
        deadline: Deadline,
    ) -> Result<Option<String>> {
        let reply = self
            .evaluate_op(ctx, "click_guard", args, false, deadline)
            .await?;
        Ok(reply["result"]["objectId"].as_str().map(str::to_owned))
    }

    /// Starts watching the top document, in its own world, for what an input makes it
    /// do: errors its handlers throw, and requests they send (`fetch`, `XMLHttpRequest`),
    /// so the input's reply can wait for a submit sent by script as for one that
    /// navigates. None when the watch could not be set.
    async fn watch_page(&self) -> Option<String> {
        let reply = self
            .cdp(
                "Runtime.evaluate",
                json!({ "expression": PAGE_WATCH, "returnByValue": false }),
                Deadline::after(crate::browser::HOUSEKEEPING),
            )
            .await
            .ok()?;
        reply["result"]["objectId"].as_str().map(str::to_owned)
    }

    /// What the page did since `watch_page`, the watch removed: the errors it threw,
    /// once the requests it sent have been answered (within `wait`).
    async fn page_seen(&self, watch: String, deadline: Deadline) -> PageSeen {
        // The page answers within `wait`; its answer may be held up (a navigation on its
        // way, through the extension relay), so the command ends before the deadline too.
        let wait = deadline.for_waiting();
        let wait_ms = wait.as_millis().min(u128::from(u32::MAX)) as u64;
        let reply = self
            .cdp(
                "Runtime.callFunctionOn",
                json!({
                    "objectId": watch,
                    "functionDeclaration": "function (ms) { return this.stop(ms); }",
                    "arguments": [{ "value": wait_ms }],
                    "awaitPromise": true,
                    "returnByValue": true,
                }),
                Deadline::after(wait + ANSWER_LATE),
            )
            .await;
        // Releasing needs no answer; the input's caller should not wait for it.
        let (conn, session) = (self.browser.conn.clone(), self.session.clone());
        tokio::spawn(async move {
            let release = json!({ "objectId": watch });
            let _ = conn
                .call(
                    Some(&session),
                    "Runtime.releaseObject",
                    release,
                    HOUSEKEEPING,
                )
                .await;
        });
        // A document gone with the input (it navigated) says nothing more.
        let seen = reply
            .map(|mut r| r["result"]["value"].take())
            .unwrap_or_default();
        PageSeen {
            errors: seen["errors"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e.as_str().map(str::to_owned))
                .collect(),
            requests_pending: seen["pending"].as_u64().unwrap_or_default() as u32,
        }
    }

    /// Runs an input that may submit (a key press) under a page watch: it answers once
    /// the requests its handlers sent are answered, within what the input left of the
    /// deadline.
    async fn watched<T>(
        &self,
        deadline: Deadline,
        input: impl std::future::Future<Output = Result<T>>,
    ) -> Result<(T, PageSeen)> {
        let watch = self.watch_page().await;
        let done = input.await;
        let seen = match watch {
            Some(watch) => self.page_seen(watch, deadline).await,
            None => PageSeen::default(),
        };
        done.map(|value| (value, seen))
    }

    /// What the guard saw (and removes it); None when the document is gone.
    async fn click_guard_seen(
        &self,
        ctx: &FrameContext,
        guard: String,
        deadline: Deadline,
    ) -> Option<Value> {
        let seen = self
            .cdp_in(
                &ctx.session,
                "Runtime.callFunctionOn",
                json!({
                    "objectId": guard,
                    "functionDeclaration": "function () { return this.finish(); }",
                    "returnByValue": true,
                }),
                deadline,
            )
            .await
            .ok()
            .map(|reply| reply["result"]["value"].clone());
        // Releasing needs no answer; the click's caller should not wait for it.
        let conn = self.browser.conn.clone();
        let session = ctx.session.clone();
        tokio::spawn(async move {
            let release = json!({ "objectId": guard });
            let _ = conn
                .call(
                    Some(&session),
                    "Runtime.releaseObject",
                    release,
                    deadline.remaining(),
                )
                .await;
        });
        seen
    }

    /// Each parent document must show the iframe at the click point, else the click would
    /// land on whatever covers it.
    async fn check_frames_unobscured(
        &self,
        frame: &[Value],
        aimed: &Value,
        deadline: Deadline,
    ) -> Result<()> {
        let (mut x, mut y) = (
            aimed["x"].as_f64().unwrap_or_default(),
            aimed["y"].as_f64().unwrap_or_default(),
        );
        // Convert the point to each ancestor's coordinates, innermost first.
        let mut contexts: Vec<FrameContext> = Vec::new();
        for depth in 0..frame.len() {
            contexts.push(self.frame_context(&frame[..depth], deadline).await?);
        }
        let inner = self.frame_context(frame, deadline).await?;
        let mut offset = inner.offset;
        for depth in (0..frame.len()).rev() {
            let parent = &contexts[depth];
            x += offset.0 - parent.offset.0;
            y += offset.1 - parent.offset.1;
            offset = parent.offset;
            let hit = self
                .run(
                    parent,
                    "hit_test",
                    json!({"x": x, "y": y, "locator": frame[depth]}),
                    deadline,
                )
                .await?;
            if hit["status"] != "ok" {
                let code = hit["status"]
                    .as_str()
                    .and_then(ErrorCode::parse)
                    .unwrap_or(ErrorCode::Obscured);
                return Err(EngineError::page(
                    code,
                    format!("frame {depth} is covered at the click point"),
                    hit,
                ));
            }
        }
        Ok(())
    }

    /// Where a target is in the top viewport now: an element is aimed at as a click
    /// would be (scrolled into view, hit-tested), a point is taken as given.
    pub async fn point_of(&self, target: &ClickTarget, deadline: Deadline) -> Result<(f64, f64)> {
        match target {
            ClickTarget::Point { x, y, frame } => {
                let ctx = self.frame_context(&page_frames(frame), deadline).await?;
                Ok((x + ctx.offset.0, y + ctx.offset.1))
            }
            ClickTarget::Element { locator, offset } => {
                let Placed { find, frame } = self.place(locator)?;
                let ctx = self.frame_context(&frame, deadline).await?;
                let aimed = self
                    .run_ok(
                        &ctx,
                        "click_point",
                        json!({
                            "locator": find, "offset_x": offset.0, "offset_y": offset.1,
                            "scroll": !ctx.framed,
                        }),
                        deadline,
                    )
                    .await?;
                Ok((
                    aimed["x"].as_f64().unwrap_or_default() + ctx.offset.0,
                    aimed["y"].as_f64().unwrap_or_default() + ctx.offset.1,
                ))
            }
        }
    }

    /// Moves the pointer onto a target (the page sees it hover there).
    pub async fn hover(&self, target: &ClickTarget, deadline: Deadline) -> Result<(f64, f64)> {
        let (x, y) = self.point_of(target, deadline).await?;
        self.mouse("mouseMoved", (x, y), "none", (0, 0), deadline)
            .await?;
        Ok((x, y))
    }

    /// Turns the mouse wheel at a point: `dx`, `dy` in CSS pixels (positive: right, down).
    /// The page scrolls after the event, on its own frames: this returns once it has (or
    /// after a second, when whatever is under the point does not scroll).
    pub async fn wheel(&self, x: f64, y: f64, dx: f64, dy: f64, deadline: Deadline) -> Result<()> {
        self.mouse("mouseMoved", (x, y), "none", (0, 0), deadline)
            .await?;
        let before = self.scroll_offset(deadline).await?;
        self.cdp(
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseWheel", "x": x, "y": y, "deltaX": dx, "deltaY": dy }),
            deadline,
        )
        .await?;
        let settled = self
            .cdp(
                "Runtime.evaluate",
                json!({
                    "expression": format!(
                        "new Promise(done => {{ const start = performance.now();                          const check = () => (window.scrollX !== {} || window.scrollY !== {} || performance.now() - start > 1000)                            ? done(true) : requestAnimationFrame(check); requestAnimationFrame(check);                            setTimeout(() => done(false), 1000); }})",
                        before.0, before.1
                    ),
                    "awaitPromise": true, "returnByValue": true,
                }),
                deadline,
            )
            .await;
        if let Err(error) = settled {
            tracing::debug!(%error, "could not watch the scroll settle");
        }
        Ok(())
    }

    pub async fn mouse_click(
        &self,
        x: f64,
        y: f64,
        button: &str,
        clicks: u32,
        modifiers: u32,
        deadline: Deadline,
    ) -> Result<()> {
        self.mouse("mouseMoved", (x, y), "none", (0, 0), deadline)
            .await?;
        for count in 1..=clicks.max(1) {
            self.mouse("mousePressed", (x, y), button, (count, modifiers), deadline)
                .await?;
            self.mouse(
                "mouseReleased",
                (x, y),
                button,
                (count, modifiers),
                deadline,
            )
            .await?;
        }
        Ok(())
    }

    /// One mouse event at `(x, y)`; `(click_count, modifiers)` as CDP counts them
    /// (modifiers: Alt 1, Ctrl 2, Meta 4, Shift 8).
    async fn mouse(
        &self,
        kind: &str,
        (x, y): (f64, f64),
        button: &str,
        (click_count, modifiers): (u32, u32),
        deadline: Deadline,
    ) -> Result<()> {
        let buttons = match (kind, button) {
            ("mouseReleased", _) | (_, "none") => 0,
            (_, "left") => 1,
            (_, "right") => 2,
            _ => 4,
        };
        let id = format!("button {button}");
        if kind == "mousePressed" {
            let release = json!({
                "type": "mouseReleased", "x": x, "y": y, "button": button,
                "buttons": 0, "clickCount": click_count,
            });
            self.hold(&id, "Input.dispatchMouseEvent", release);
        }
        self.cdp(
            "Input.dispatchMouseEvent",
            json!({
                "type": kind, "x": x, "y": y, "button": button,
                "buttons": buttons, "clickCount": click_count, "modifiers": modifiers,
            }),
            deadline,
        )
        .await?;
        if kind == "mouseReleased" {
            self.let_go(&id);
        }
        Ok(())
    }

    /// Gives the element a locator names keyboard focus (keys sent next go to it);
    /// whether it took it.
    pub async fn focus(&self, locator: &Locator, deadline: Deadline) -> Result<bool> {
        let Placed { find, frame } = self.place(locator)?;
        let ctx = self.frame_context(&frame, deadline).await?;
        let focused = self
            .run_ok(&ctx, "focus_element", json!({ "locator": find }), deadline)
            .await?;
        Ok(focused["focused"] == true)
    }

    /// Focuses a field (or keeps the current focus), optionally selects its content so the
    /// text replaces it, inserts the text, then presses `submit_key`.
    pub async fn type_text(
        &self,
        locator: Option<&Locator>,
        text: &str,
        clear: bool,
        submit_key: Option<&str>,
        deadline: Deadline,
    ) -> Result<Typed> {
        let submit = submit_key.map(keys::parse_chord).transpose()?;
        let (find, frame) = match locator {
            Some(locator) => {
                let Placed { find, frame } = self.place(locator)?;
                (find, frame)
            }
            None => (Value::Null, Vec::new()),
        };
        let ctx = self.frame_context(&frame, deadline).await?;
        let report = self
            .run_ok(
                &ctx,
                "focus_for_typing",
                json!({ "locator": find, "clear": clear }),
                deadline,
            )
            .await?;
        // A date, time, colour or range input named by a locator takes the text as its
        // whole value (act.js); focusing one (no text) leaves its value alone, and text
        // typed into whatever has focus stays keystrokes.
        let value_field = !report["value_format"].is_null();
        let mut typed = Typed {
            focus_confirmed: report["focus_confirmed"] == true,
            active_element: ElementInfo::read(&report["active_element"]),
            previous_active_element: ElementInfo::read(&report["previous_active_element"]),
            editable: report["editable"] == true,
            selected_existing: report["selected_existing"] == true,
            value: None,
            clamped: false,
            typed_chars: text.chars().count(),
            submitted: submit_key.map(str::to_owned),
            requests_pending: 0,
        };
        if report["slider"].is_object() && locator.is_some() && !text.is_empty() {
            let target: f64 = text.trim().parse().map_err(|_| {
                EngineError::invalid(
                    Input::Text,
                    format!("a slider takes a number, not {text:?}"),
                )
            })?;
            let reached = self
                .slide(&ctx, &report["slider"], target, deadline)
                .await?;
            // As an input's own value reads: "12", "2.5".
            typed.value = Some(json!(format!("{reached}")));
            typed.clamped = (reached - target).abs() > 1e-9;
        } else if value_field && locator.is_some() && (!text.is_empty() || clear) {
            let set = self
                .run_ok(
                    &ctx,
                    "set_value",
                    json!({ "locator": find, "value": text }),
                    deadline,
                )
                .await?;
            if set["accepted"] != true {
                return Err(EngineError::invalid(
                    Input::Text,
                    format!(
                        "a {} input takes {}, not {text:?}",
                        set["type"].as_str().unwrap_or("value"),
                        set["format"].as_str().unwrap_or("its own format"),
                    ),
                ));
            }
            typed.value = Some(set["value"].clone());
            typed.clamped = set["clamped"] == true;
        } else if clear && text.is_empty() {
            self.press_chord(&keys::parse_chord("Delete")?, deadline)
                .await?;
        } else if !text.is_empty() {
            self.cdp("Input.insertText", json!({ "text": text }), deadline)
                .await?;
        }
        if let Some(chord) = &submit {
            let ((), seen) = self
                .watched(deadline, self.press_chord(chord, deadline))
                .await?;
            typed.requests_pending = seen.requests_pending;
        }
        Ok(typed)
    }

    /// Moves the focused slider to `target` with arrow keys, as a person with a keyboard
    /// would (an app that listens only to keys hears every step): the presses a step
    /// needs, the value read back, again while it gets closer. A slider whose step is not
    /// declared (an ARIA one) is probed with one press first. Its value at the end.
    async fn slide(
        &self,
        ctx: &FrameContext,
        start: &Value,
        target: f64,
        deadline: Deadline,
    ) -> Result<f64> {
        const MOST_PRESSES: usize = 500;
        let mut state = start.clone();
        let mut step = state["step"].as_f64().filter(|s| *s > 0.0);
        for _ in 0..4 {
            let Some(value) = state["value"].as_f64() else {
                break;
            };
            let (min, max) = (
                state["min"].as_f64().unwrap_or(f64::MIN),
                state["max"].as_f64().unwrap_or(f64::MAX),
            );
            let goal = target.clamp(min.min(max), max.max(min));
            if (value - goal).abs() < step.unwrap_or(1e-9) / 2.0 {
                break;
            }
            let presses = match step {
                Some(step) => {
                    (((goal - value).abs() / step).round() as usize).clamp(1, MOST_PRESSES)
                }
                None => 1,
            };
            let key = keys::parse_chord(if goal > value {
                "ArrowRight"
            } else {
                "ArrowLeft"
            })?;
            for _ in 0..presses {
                self.press_chord(&key, deadline).await?;
            }
            let next = self
                .run_ok(ctx, "slider_state", json!({}), deadline)
                .await?;
            let moved = next["value"].as_f64().map(|v| (v - value).abs());
            if step.is_none() {
                step = moved.filter(|m| *m > 0.0);
            }
            state = next;
            if moved == Some(0.0) {
                break; // at an end, or the slider ignores keys
            }
        }
        Ok(state["value"].as_f64().unwrap_or(f64::NAN))
    }

    /// Presses a sequence of chords in order, `pause` apart; a step that names no key
    /// and may be text is typed instead. Every step is checked before the first is sent
    /// (a bad key sends nothing), sending stops at the first failure, and the failure
    /// says which steps were delivered.
    pub async fn press_sequence(
        &self,
        steps: &[KeyStep],
        pause: Duration,
        deadline: Deadline,
    ) -> Result<Vec<SentStep>> {
        let mut plan = Vec::with_capacity(steps.len());
        for step in steps {
            plan.push(match keys::parse_chord(&step.chord) {
                Ok(chord) => Ok(chord),
                Err(_) if step.may_type => Err(step.text.clone()),
                Err(error) => return Err(error),
            });
        }
        // A key in the sequence may submit: the sequence answers once the requests
        // the page sent are answered.
        let (sent, _) = self
            .watched(deadline, self.send_steps(steps, plan, pause, deadline))
            .await?;
        Ok(sent)
    }

    async fn send_steps(
        &self,
        steps: &[KeyStep],
        plan: Vec<std::result::Result<Chord, String>>,
        pause: Duration,
        deadline: Deadline,
    ) -> Result<Vec<SentStep>> {
        let mut sent = Vec::with_capacity(plan.len());
        for (i, (step, planned)) in steps.iter().zip(plan).enumerate() {
            if i > 0 && !pause.is_zero() {
                // The caller's pacing between keystrokes, not a wait for the page.
                tokio::time::sleep(pause).await;
            }
            let delivered = match &planned {
                Ok(chord) => self.press_chord(chord, deadline).await,
                Err(text) => self
                    .cdp("Input.insertText", json!({ "text": text }), deadline)
                    .await
                    .map(drop),
            };
            if let Err(error) = delivered {
                return Err(stopped_sequence(error, &sent, &step.text));
            }
            sent.push(SentStep {
                step: step.text.clone(),
                typed: planned.is_err(),
            });
        }
        Ok(sent)
    }

    /// Presses one chord (`enter`, `ctrl,shift,k`); says it as pressed (`Control+Shift+k`).
    pub async fn press(&self, keys: &str, deadline: Deadline) -> Result<Pressed> {
        let chord = keys::parse_chord(keys)?;
        let ((), seen) = self
            .watched(deadline, self.press_chord(&chord, deadline))
            .await?;
        Ok(Pressed {
            keys: chord.describe(),
            requests_pending: seen.requests_pending,
        })
    }

    async fn press_chord(&self, chord: &Chord, deadline: Deadline) -> Result<()> {
        for event in chord.events() {
            let key = format!("key {}", event["code"].as_str().unwrap_or_default());
            let down = event["type"] != "keyUp";
            if down {
                // Held from the moment it may reach the page.
                let mut release = event.clone();
                release["type"] = json!("keyUp");
                release["modifiers"] = json!(0);
                if let Some(fields) = release.as_object_mut() {
                    fields.remove("text");
                    fields.remove("unmodifiedText");
                }
                self.hold(&key, "Input.dispatchKeyEvent", release);
            }
            self.cdp("Input.dispatchKeyEvent", event, deadline).await?;
            if !down {
                self.let_go(&key);
            }
        }
        Ok(())
    }

    /// Records a key or button as held down, with the event that releases it.
    fn hold(&self, id: &str, method: &'static str, release: Value) {
        let mut held = self.held.lock();
        held.retain(|h| h.id != id);
        held.push(Held {
            id: id.to_owned(),
            method,
            release,
        });
    }

    /// A key or button released.
    fn let_go(&self, id: &str) {
        self.held.lock().retain(|h| h.id != id);
    }

    /// One uninterrupted press-move-release sequence, spread over `duration`; how many
    /// moves it made between the press and the release.
    pub async fn drag(
        &self,
        from: (f64, f64),
        to: (f64, f64),
        duration: Duration,
        button: &str,
        deadline: Deadline,
    ) -> Result<u32> {
        // ~60 moves a second, at least a few so pages see a real path.
        let steps = ((duration.as_secs_f64() * 60.0) as u32).clamp(4, 600);
        let pause = duration / steps;
        self.mouse("mouseMoved", from, "none", (0, 0), deadline)
            .await?;
        self.mouse("mousePressed", from, button, (1, 0), deadline)
            .await?;
        for step in 1..=steps {
            let t = f64::from(step) / f64::from(steps);
            let (x, y) = (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t);
            self.cdp(
                "Input.dispatchMouseEvent",
                json!({"type": "mouseMoved", "x": x, "y": y, "button": button, "buttons": 1}),
                deadline,
            )
            .await?;
            // Pacing for the page's benefit (drag libraries sample over time), not a wait.
            tokio::time::sleep(pause).await;
        }
        self.mouse("mouseReleased", to, button, (1, 0), deadline)
            .await?;
        Ok(steps)
    }
}

/// A key or mouse button an operation holds down, and the event that lets it go.
pub(crate) struct Held {
    id: String,
    pub(crate) method: &'static str,
    pub(crate) release: Value,
}

/// One step of a key sequence: a chord in the engine's notation (`ctrl,shift,k`), and
/// the step as the agent wrote it, typed as text if `may_type` and the chord names no
/// key.
#[derive(Debug, Clone)]
pub struct KeyStep {
    pub chord: String,
    pub text: String,
    pub may_type: bool,
}

/// A step of a key sequence that reached the page: pressed as a chord, or typed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SentStep {
    pub step: String,
    pub typed: bool,
}

/// A key sequence that stopped at a step: the failure, with what was delivered before
/// it (so a retry does not send those keys again).
fn stopped_sequence(error: EngineError, sent: &[SentStep], failed: &str) -> EngineError {
    if sent.is_empty() {
        return error;
    }
    let mut details = match error.details() {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    details.insert("delivered".into(), json!(sent));
    details.insert("failed_step".into(), json!(failed));
    EngineError::Page {
        code: error.code(),
        message: format!(
            "{error}; {} step(s) before '{failed}' were delivered",
            sent.len()
        ),
        details: Value::Object(details),
        delivery: crate::error::Delivery::MayHaveRun,
    }
}

/// Where a click landed, and on what.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Clicked {
    /// The press point, in CSS pixels of the top document's viewport.
    pub x: f64,
    pub y: f64,
    /// Whether the element under the point was checked to be the one aimed at (a click
    /// at given coordinates aims at nothing).
    pub hit_verified: bool,
    /// Whether the element was scrolled into view first (for an element).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scrolled_into_view: Option<bool>,
    /// How many times it was aimed and sent, when the page moved under the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    /// The element clicked, as the page describes it (tag, id, role, name, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<ElementInfo>,
    /// The page after the click is a bot check (its kind: `interstitial`, `turnstile`,
    /// `hcaptcha`, `recaptcha`); None when it is not, or when the click left the page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub challenge: Option<String>,
    /// A checkbox, radio or switch's state after the click (None for other elements).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
    /// Errors the page's handlers threw while taking the click.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub page_errors: Vec<String>,
    /// Requests the page's handlers sent and still wait on when the call's time ran
    /// out (0: none, or all answered before the reply).
    pub requests_pending: u32,
}

impl Page {
    /// Where the last click of this reservation was aimed (None: it made none).
    pub fn last_aim(&self) -> Option<Clicked> {
        self.last_aim.lock().clone()
    }
}

impl Clicked {
    /// A click at given coordinates.
    fn at(x: f64, y: f64) -> Clicked {
        Clicked {
            x,
            y,
            hit_verified: false,
            scrolled_into_view: None,
            attempts: None,
            element: None,
            challenge: None,
            checked: None,
            page_errors: Vec::new(),
            requests_pending: 0,
        }
    }
}

/// What typing did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Typed {
    /// Whether the element named is the one that has focus now.
    pub focus_confirmed: bool,
    /// What has focus now, described without its content (None: nothing does).
    pub active_element: Option<ElementInfo>,
    /// What had focus before the call focused the field.
    pub previous_active_element: Option<ElementInfo>,
    /// Whether the focused element takes typed text.
    pub editable: bool,
    /// Whether the field's text was selected first, so the typing replaced it.
    pub selected_existing: bool,
    /// The value a date, time, colour or range input holds now, when it was set whole.
    pub value: Option<Value>,
    /// That value was brought within the input's range.
    pub clamped: bool,
    pub typed_chars: usize,
    /// The key pressed afterwards, if one was.
    pub submitted: Option<String>,
    /// Requests the submit sent and still waits on when the call's time ran out.
    pub requests_pending: u32,
}

/// A chord pressed, as the engine names its keys (`Control+Shift+k`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pressed {
    pub keys: String,
    /// Requests the page sent on the press and still waits on when the call's time ran
    /// out (0: none, or all answered).
    #[serde(skip_serializing_if = "is_zero")]
    pub requests_pending: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What a watched page did on an input.
#[derive(Debug, Default)]
struct PageSeen {
    errors: Vec<String>,
    requests_pending: u32,
}
