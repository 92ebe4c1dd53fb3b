//! The `btap.result.v1` envelope every btap tool answers in.

use serde_json::{Map, Value, json};

use engine::{EngineError, Input};

use crate::face::ToolError;

/// A tool's successful answer before it is wrapped.
#[derive(Default)]
pub struct Reply {
    pub data: Value,
    pub target: Option<String>,
    /// Images sent as MCP image content next to the envelope: (base64, mime type).
    pub images: Vec<(String, &'static str)>,
}

impl Reply {
    pub fn data(data: Value) -> Reply {
        Reply {
            data,
            ..Reply::default()
        }
    }

    pub fn on(mut self, target: impl Into<String>) -> Reply {
        self.target = Some(target.into());
        self
    }
}

/// Data keys small and scalar enough to repeat at the top level, for clients that read
/// the envelope without opening `data`.
const PROJECTED: &[&str] = &["status", "operation_id"];

pub fn success(reply: &Reply, elapsed_ms: u64) -> Value {
    let mut envelope = json!({
        "schema": "btap.result.v1",
        "ok": true,
        "error": null,
        "error_code": null,
        "retryable": false,
        "retry_safe": true,
        "target": reply.target,
    });
    if let Value::Object(data) = &reply.data {
        project(&mut envelope, data);
        if let Some(retry_safe) = data.get("retry_safe").and_then(Value::as_bool) {
            envelope["retry_safe"] = json!(retry_safe);
        }
    }
    envelope["data"] = reply.data.clone();
    envelope["diagnostics"] = json!({ "elapsed_ms": elapsed_ms });
    envelope
}

pub fn failure(error: &ToolError, target: Option<String>, elapsed_ms: u64) -> Value {
    let (code, message, retryable, details) = match error {
        ToolError::Param { name, message } => (
            "invalid_argument".to_owned(),
            format!("{name}: {message}"),
            false,
            json!({ "param": name }),
        ),
        ToolError::Engine(error) => {
            let (code, message, details) = match error.input() {
                Some(input) => {
                    let name = param_name(input);
                    let code = match error {
                        EngineError::Invalid { .. } => "invalid_argument",
                        other => other.code().as_str(),
                    };
                    (
                        code.to_owned(),
                        format!("{name}: {}", error.bare_message()),
                        json!({ "param": name }),
                    )
                }
                None => (
                    error.code().as_str().to_owned(),
                    error.to_string(),
                    error.details(),
                ),
            };
            (code, message, error.retryable(), details)
        }
        ToolError::Face {
            code,
            message,
            details,
        } => ((*code).to_owned(), message.clone(), false, details.clone()),
    };
    // A failure that happened before anything reached the browser can be retried as is;
    // page-level refusals (not_found, obscured, …) dispatched no input either.
    let retry_safe = match &details {
        Value::Object(d) => d.get("retry_safe").and_then(Value::as_bool).unwrap_or(true),
        _ => true,
    };
    let timed_out = matches!(error, ToolError::Engine(EngineError::Timeout { .. }));
    let mut envelope = json!({
        "schema": "btap.result.v1",
        "ok": false,
        "error": message,
        "error_code": code,
        "retryable": retryable,
        "retry_safe": retry_safe && !timed_out,
        "target": target,
        "data": null,
    });
    if !details.is_null() {
        envelope["legacy"] = details;
    }
    envelope["diagnostics"] = json!({ "elapsed_ms": elapsed_ms });
    envelope
}

/// The btap parameter an engine input stands for.
fn param_name(input: Input) -> &'static str {
    match input {
        Input::Tab => "session_id",
        Input::Locator | Input::Condition => "selector",
        Input::Point => "x",
        Input::Keys => "keys_csv",
        Input::Owner => "owner_id",
        Input::Operation => "operation_id",
        Input::Duration => "duration_seconds",
        Input::OutputPath => "save_path",
        Input::Files => "paths",
        Input::Pattern => "url_pattern",
        Input::ExtraScript => "extra_js",
        Input::DialogAction => "action",
        Input::Bookmark => "bookmark_id",
        Input::Extension => "extension_id",
        Input::Params => "params_json",
        other => other.as_str(),
    }
}

fn project(envelope: &mut Value, data: &Map<String, Value>) {
    for key in PROJECTED {
        if let Some(value) = data
            .get(*key)
            .filter(|v| v.is_string() || v.is_number() || v.is_boolean())
        {
            envelope[*key] = value.clone();
        }
    }
}
