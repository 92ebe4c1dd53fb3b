//! How the Chrome MCP Server answers: the payload as JSON text (pretty where the tool's
//! declaration says so: history, bookmarks, search), images as MCP image content, and a
//! failure as `isError` with a plain message that names the parameter and what to do.
//! A tool's own reported failure (its `success: false` payload, for the tools whose
//! original flags it) is `isError` with that payload.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use engine::{EngineError, Input};

use crate::face::{Rendered, Reply, TextStyle, ToolDef, ToolError};

pub fn render(tool: &ToolDef, outcome: Result<Reply, ToolError>, _: &Rendered) -> CallToolResult {
    match outcome {
        Ok(reply) => {
            let text = match tool.text {
                TextStyle::Pretty => serde_json::to_string_pretty(&reply.data),
                TextStyle::Compact => serde_json::to_string(&reply.data),
            }
            .unwrap_or_default();
            let failed = reply.failure.is_some();
            let mut content = vec![ContentBlock::text(text)];
            for (data, mime) in reply.images {
                content.push(ContentBlock::image(data, mime));
            }
            if failed {
                CallToolResult::error(content)
            } else {
                CallToolResult::success(content)
            }
        }
        Err(error) => CallToolResult::error(vec![ContentBlock::text(message(&error))]),
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
