//! Filling a form field as a user would: a text field is typed into (its old content
//! replaced), a date, time, colour or range input gets its value whole, a checkbox or
//! radio is clicked until it has the wanted state, a <select> gets the option whose label
//! or value matches (as `Page::select_options` chooses it).

use crate::ids::Deadline;

use serde::Serialize;
use serde_json::{Value, json};

use super::Page;
use super::element_info::ElementInfo;
use super::input::ClickTarget;
use super::locator::{Locator, Placed};
use crate::error::{EngineError, ErrorCode, Input, Result};

/// The kind of field a fill met (the page script's `field_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FilledKind {
    /// A field that takes keystrokes.
    Text,
    /// A date, time, colour or range input, which takes its value whole.
    Value,
    Select,
    Checkbox,
    Radio,
}

impl FilledKind {
    /// The kind the page script names; None for a field no fill can change.
    fn parse(name: &str) -> Option<FilledKind> {
        Some(match name {
            "text" => FilledKind::Text,
            "value" => FilledKind::Value,
            "select" => FilledKind::Select,
            "checkbox" => FilledKind::Checkbox,
            "radio" => FilledKind::Radio,
            _ => return None,
        })
    }
}

/// What a fill did.
#[derive(Debug, Clone, Serialize)]
pub struct Filled {
    pub kind: FilledKind,
    /// The field's value afterwards (a select's chosen value; "true"/"false" for a box).
    pub value: String,
    /// A select's chosen option as a user reads it (its label); None for other fields.
    pub label: Option<String>,
    /// The field, described without its content.
    pub element: ElementInfo,
}

/// One field of a form to fill: where it is and the value it takes.
pub struct FormField {
    pub locator: Locator,
    pub value: Value,
}

/// A form filled in order: the fields filled, and the first that could not take its
/// value (its index and why), where the filling stopped.
pub struct FormFilled {
    pub filled: Vec<Filled>,
    pub stopped: Option<(usize, EngineError)>,
}

impl Page {
    /// Fills several fields in order, each as `fill` does; stops at the first that
    /// refuses, keeping what was filled before it.
    pub async fn fill_form(&self, fields: Vec<FormField>, deadline: Deadline) -> FormFilled {
        let mut filled = Vec::with_capacity(fields.len());
        for (index, field) in fields.into_iter().enumerate() {
            match self.fill(&field.locator, &field.value, deadline).await {
                Ok(done) => filled.push(done),
                Err(error) => {
                    return FormFilled {
                        filled,
                        stopped: Some((index, error)),
                    };
                }
            }
        }
        FormFilled {
            filled,
            stopped: None,
        }
    }

    /// Fills the field a locator names with `value` (a string, a number or a boolean).
    pub async fn fill(
        &self,
        locator: &Locator,
        value: &Value,
        deadline: Deadline,
    ) -> Result<Filled> {
        let Placed { find, frame } = self.place(locator)?;
        let ctx = self.frame_context(&frame, deadline).await?;
        let field = self
            .run_ok(&ctx, "field_kind", json!({ "locator": find }), deadline)
            .await?;
        let kind = field["kind"].as_str().and_then(FilledKind::parse);
        let element = ElementInfo::read(&field["element"]).unwrap_or_default();
        if field["disabled"] == true {
            return Err(EngineError::page(
                ErrorCode::ReadOnly,
                "the field is disabled",
                json!({ "element": element }),
            ));
        }
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        let Some(kind) = kind else {
            return Err(EngineError::page(
                ErrorCode::NotEditable,
                "the element is not a text field, checkbox, radio or select",
                json!({ "element": element }),
            ));
        };
        match kind {
            FilledKind::Select => {
                let chosen = self
                    .select_options(locator, std::slice::from_ref(&text), deadline)
                    .await?;
                Ok(Filled {
                    kind,
                    value: chosen.values.first().cloned().unwrap_or_default(),
                    label: chosen.selected.first().cloned(),
                    element,
                })
            }
            FilledKind::Checkbox | FilledKind::Radio => {
                let wanted = wanted_state(value)?;
                let checked = field["checked"] == true;
                if kind == FilledKind::Radio && !wanted && checked {
                    return Err(EngineError::invalid(
                        Input::Value,
                        "a radio button is unchecked by choosing another of its group",
                    ));
                }
                if checked != wanted {
                    let target = ClickTarget::Element {
                        locator: locator.clone(),
                        offset: (None, None),
                    };
                    self.click(target, "left", 1, deadline).await?;
                }
                let now = self
                    .run_ok(&ctx, "field_kind", json!({ "locator": find }), deadline)
                    .await?;
                Ok(Filled {
                    kind,
                    value: (now["checked"] == true).to_string(),
                    label: None,
                    element,
                })
            }
            FilledKind::Text | FilledKind::Value => {
                self.type_text(Some(locator), &text, true, None, deadline)
                    .await?;
                let now = self
                    .run_ok(&ctx, "field_value", json!({ "locator": find }), deadline)
                    .await?;
                Ok(Filled {
                    kind,
                    value: now["value"].as_str().unwrap_or_default().to_owned(),
                    label: None,
                    element,
                })
            }
        }
    }
}

/// The state a checkbox should get from a fill value: true/false, "true"/"false",
/// "on"/"off", "checked"/"unchecked", 1/0.
fn wanted_state(value: &Value) -> Result<bool> {
    let state = match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_f64().map(|n| n != 0.0),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "on" | "checked" | "yes" | "1" => Some(true),
            "false" | "off" | "unchecked" | "no" | "0" | "" => Some(false),
            _ => None,
        },
        _ => None,
    };
    state.ok_or_else(|| {
        EngineError::invalid(
            Input::Value,
            format!("a checkbox takes true or false, not {value}"),
        )
    })
}
