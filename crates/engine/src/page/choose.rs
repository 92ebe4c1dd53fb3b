//! Choosing options as a user would: a native `<select>` (single or multiple) gets
//! exactly the options given, with the input and change a user's choice fires; an ARIA
//! listbox or combobox is clicked (the combobox opened first, then each option) with
//! trusted clicks, so the app's own handlers run. Options are named by label, then value.

use crate::ids::Deadline;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use super::element_info::ElementInfo;
use super::input::Aim;
use super::locator::{Locator, Placed};
use super::{FrameContext, Page};
use crate::error::{EngineError, ErrorCode, Input, Result};

/// How long a combobox's listbox may take to appear after the click that opens it.
const LISTBOX_WAIT: Duration = Duration::from_secs(5);

/// The kind of control options were chosen in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChoiceKind {
    /// A native `<select>`.
    Select,
    /// An element with role=listbox, its options role=option.
    Listbox,
    /// An element with role=combobox, which opens a listbox when clicked.
    Combobox,
}

/// What a control has selected after a choice.
#[derive(Debug, Clone, Serialize)]
pub struct Selected {
    pub kind: ChoiceKind,
    /// The selected options' labels (their visible text), in document order.
    pub selected: Vec<String>,
    /// Their values, in the same order.
    pub values: Vec<String>,
    /// Whether the control takes several options.
    pub multiple: bool,
    /// Trusted clicks sent (0 for a native select, which is set directly).
    pub clicks: usize,
    /// The control, described without its content.
    pub element: ElementInfo,
}

/// One option clicked in an ARIA control: what the final read maps a combobox's shown
/// text back to a value with.
#[derive(Serialize)]
struct Picked {
    label: String,
    value: String,
}

impl Page {
    /// Chooses `options` (each an option's label, else its value) in the `<select>`,
    /// listbox or combobox a locator (or a ref) names, and answers what is selected now.
    /// A missing option fails `not_found` naming the options there are; a disabled control
    /// or option `not_interactable`; several options for a single-choice control is bad
    /// input (`Input::Options`).
    pub async fn select_options(
        &self,
        locator: &Locator,
        options: &[String],
        deadline: Deadline,
    ) -> Result<Selected> {
        if options.is_empty() {
            return Err(EngineError::invalid(
                Input::Options,
                "give at least one option (a label or a value)",
            ));
        }
        let until = Instant::now() + deadline.remaining();
        let Placed {
            find: locator,
            frame,
        } = self.place(locator)?;
        let ctx = self.frame_context(&frame, deadline).await?;
        let args = json!({ "locator": locator, "options": options });
        let started = self.choosing(&ctx, "choose_options", args, until).await?;
        let kind = match started["kind"].as_str() {
            Some("select") => return Ok(selected(ChoiceKind::Select, started, 0)),
            Some("listbox") => ChoiceKind::Listbox,
            _ => ChoiceKind::Combobox,
        };
        let mut picked = Vec::new();
        let mut clicks = 0;
        for option in options {
            let (one, sent) = self
                .click_option(&ctx, &locator, &frame, option, until)
                .await?;
            picked.push(one);
            clicks += sent;
        }
        let args = json!({ "locator": locator, "picked": picked });
        let now = self.choosing(&ctx, "chosen_options", args, until).await?;
        Ok(selected(kind, now, clicks))
    }

    /// Clicks one option of an ARIA control, opening a closed combobox first; the option
    /// and how many clicks it took.
    async fn click_option(
        &self,
        ctx: &FrameContext,
        locator: &Value,
        frame: &[Value],
        option: &str,
        deadline: Instant,
    ) -> Result<(Picked, usize)> {
        let args = json!({ "locator": locator, "option": option, "wait_ms": 0 });
        let mut step = self
            .choosing(ctx, "option_to_click", args, deadline)
            .await?;
        let mut clicks = 0;
        if step["open"] == true {
            self.click_in_control(locator, frame, deadline).await?;
            clicks += 1;
            let wait = LISTBOX_WAIT.min(remaining(deadline));
            let args = json!({
                "locator": locator, "option": option, "wait_ms": wait.as_millis() as u64,
            });
            step = self
                .choosing(ctx, "option_to_click", args, deadline)
                .await?;
            if step["open"] == true {
                return Err(EngineError::page(
                    ErrorCode::NotInteractable,
                    "the combobox showed no listbox of options when clicked",
                    json!({ "option": option }),
                ));
            }
        }
        if let Some(reference) = step["click"].as_str() {
            self.click_in_control(&json!({ "ref": reference }), frame, deadline)
                .await?;
            clicks += 1;
        }
        let text = |key: &str| step[key].as_str().unwrap_or_default().to_owned();
        Ok((
            Picked {
                label: text("label"),
                value: text("value"),
            },
            clicks,
        ))
    }

    /// A trusted, hit-tested click at an element of the control.
    async fn click_in_control(
        &self,
        locator: &Value,
        frame: &[Value],
        deadline: Instant,
    ) -> Result<()> {
        let aim = Aim {
            frame,
            locator,
            offset: (None, None),
        };
        let deadline = Deadline::after(remaining(deadline));
        self.click_element(&aim, "left", 1, 0, deadline).await?;
        Ok(())
    }

    /// Runs one step of a choice in the page; a single-choice control asked for several
    /// options is the caller's mistake, not the page's.
    async fn choosing(
        &self,
        ctx: &FrameContext,
        op: &str,
        args: Value,
        deadline: Instant,
    ) -> Result<Value> {
        let result = self
            .run(ctx, op, args, Deadline::after(remaining(deadline)))
            .await?;
        if result["status"] == "invalid_input" {
            let message = result["message"].as_str().unwrap_or("one option only");
            return Err(EngineError::invalid(Input::Options, message));
        }
        super::check_status(result)
    }
}

fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// The page's account of what is selected, typed.
fn selected(kind: ChoiceKind, now: Value, clicks: usize) -> Selected {
    let strings = |key: &str| -> Vec<String> {
        now[key]
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    Selected {
        kind,
        selected: strings("selected"),
        values: strings("values"),
        multiple: now["multiple"] == true,
        clicks,
        element: ElementInfo::read(&now["element"]).unwrap_or_default(),
    }
}
