//! How the Chrome MCP Server answers: the payload as JSON text (pretty where the tool's
//! declaration says so: history, bookmarks, search), images as MCP image content, and a
//! failure as `isError` with a plain message that names the parameter and what to do.
//! A tool's own reported failure (its `success: false` payload, for the tools whose
//! original flags it) is `isError` with that payload.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

use engine::{EngineError, Input};

use crate::face::{Answer, Fault, Rendered, Reply, TextStyle, ToolDef, ToolError};

/// A chrome call judged: the original flags only a tool's own `success: false` payload
/// and raised errors; tabwire's code and retry verdict go beside them for lean replies.
pub fn judge(_: &ToolDef, outcome: Result<Reply, ToolError>, call: &Rendered) -> Answer {
    let mut facts = call.facts.clone();
    if !call.ignored.is_empty() {
        facts.insert("ignored_arguments".into(), json!(call.ignored));
    }
    match outcome {
        Ok(reply) => {
            facts.extend(reply.facts);
            Answer {
                fault: reply.failure.map(|failure| Fault {
                    code: failure.code,
                    message: failure.message,
                    retryable: None,
                    reported: true,
                }),
                payload: reply.data,
                facts,
                target: reply.target,
                images: reply.images,
                lean: reply.lean,
            }
        }
        Err(error) => Answer {
            fault: Some(Fault {
                code: code(&error).to_owned(),
                message: message(&error),
                retryable: error.engine_error().map(EngineError::retryable),
                reported: false,
            }),
            payload: Value::Null,
            facts,
            target: None,
            images: Vec::new(),
            lean: None,
        },
    }
}

/// The payload as JSON text (pretty where the tool says), or the failure's message.
pub fn write(tool: &ToolDef, answer: Answer, _: &Rendered) -> CallToolResult {
    let text = match &answer.fault {
        Some(fault) if !fault.reported => fault.message.clone(),
        _ => match tool.text {
            TextStyle::Pretty => serde_json::to_string_pretty(&answer.payload),
            TextStyle::Compact => serde_json::to_string(&answer.payload),
        }
        .unwrap_or_default(),
    };
    let mut content = vec![ContentBlock::text(text)];
    for (data, mime) in answer.images {
        content.push(ContentBlock::image(data, mime));
    }
    if answer.fault.is_some() {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

/// tabwire's code for a raised failure (the original's message names none).
fn code(error: &ToolError) -> &'static str {
    match error {
        ToolError::Param { .. } => engine::ErrorCode::InvalidInput.as_str(),
        ToolError::Face { code, .. } => code,
        ToolError::Engine(error) => error.code().as_str(),
    }
}

/// A failure in the original's words: one line, the parameter named, the fix said.
fn message(error: &ToolError) -> String {
    match error {
        ToolError::Param { name, message } => format!("Invalid parameter {name}: {message}"),
        ToolError::Face { message, .. } => message.clone(),
        ToolError::Engine(error) => engine_message(error),
    }
}

fn engine_message(error: &EngineError) -> String {
    let mut text = match error.input() {
        Some(input) => format!(
            "Invalid parameter {}: {}",
            param_name(input),
            error.bare_message()
        ),
        None => error.to_string(),
    };
    if let Value::Object(details) = error.details()
        && let Some(hint) = hint(&details)
    {
        text.push_str(&hint);
    }
    if error.delivery() == engine::Delivery::MayHaveRun {
        text.push_str(
            " (it was sent to the page and may have had an effect; check before retrying)",
        );
    }
    text
}

/// A few details worth an agent's reading (the options a select offers, say).
fn hint(details: &Map<String, Value>) -> Option<String> {
    if let Some(options) = details.get("options").and_then(Value::as_array) {
        let texts: Vec<&str> = options
            .iter()
            .filter_map(|o| o["text"].as_str())
            .take(20)
            .collect();
        return Some(format!("; the options are: {}", texts.join(", ")));
    }
    None
}

/// The chrome face's name for an engine input.
pub fn param_name(input: Input) -> &'static str {
    match input {
        Input::Tab => "tabId",
        Input::Window => "windowId",
        Input::Url => "url",
        Input::Locator => "selector",
        Input::Ref => "ref",
        Input::Point => "coordinates",
        Input::Keys => "keys",
        Input::Button => "button",
        Input::Value | Input::Text => "value",
        Input::Files => "filePath",
        Input::Script => "code",
        Input::Date => "startTime",
        Input::Folder => "parentId",
        Input::Bookmark => "bookmarkId",
        Input::Duration => "duration",
        Input::Filename => "name",
        Input::Pattern => "pattern",
        Input::DialogAction => "action",
        Input::Request => "url",
        other => other.as_str(),
    }
}
