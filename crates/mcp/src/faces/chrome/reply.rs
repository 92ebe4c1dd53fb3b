//! How the Chrome MCP Server answers: the payload as JSON text (pretty for the history,
//! bookmark and search tools, compact otherwise), images as MCP image content, and a
//! failure as `isError` with a plain message that names the parameter and what to do.
//! A tool that reports its own soft failure (`success: false`) answers as the original
//! does for that tool.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use engine::{EngineError, Input};

use crate::face::{Rendered, Reply, ToolDef, ToolError};

/// Tools whose payload the original pretty-prints.
const PRETTY: &[&str] = &[
    "chrome_history",
    "chrome_bookmark_search",
    "chrome_bookmark_add",
    "chrome_bookmark_delete",
    "search_tabs_content",
];

/// Tools whose `success: false` payload is also an MCP error in the original.
const SOFT_FAILURE_IS_ERROR: &[&str] = &["chrome_network_request", "chrome_javascript"];

pub fn render(tool: &ToolDef, outcome: Result<Reply, ToolError>, _: &Rendered) -> CallToolResult {
    match outcome {
        Ok(reply) => {
            let text = if PRETTY.contains(&tool.name) {
                serde_json::to_string_pretty(&reply.data)
            } else {
                serde_json::to_string(&reply.data)
            }
            .unwrap_or_default();
            let failed =
                reply.data["success"] == false && SOFT_FAILURE_IS_ERROR.contains(&tool.name);
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
