//! A page's own tools (WebMCP) as MCP tools: the current tab's are listed beside the
//! face's as `webmcp_<name>`, so an agent calls them as it calls any tool. Their words
//! are the page's, so each says it comes from the page, and none can take a name of ours.

use std::sync::Arc;

use engine::{PageTool, TabInfo};
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// What every page tool's MCP name starts with.
pub const PREFIX: &str = "webmcp_";

/// The most of a page's description shown (the page chooses its length).
const DESCRIPTION_MAX: usize = 600;

/// MCP tool names are short and plain (`[A-Za-z0-9_.-]`, at most 64): a page's name is
/// made so, any other character becoming `_`.
pub fn exposed_name(name: &str) -> String {
    let plain: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(64 - PREFIX.len())
        .collect();
    format!("{PREFIX}{plain}")
}

/// Where a tab's page is from, as a page tool's description names it.
pub fn origin_of(tab: &TabInfo) -> String {
    engine::urls::web_origin(&tab.url).unwrap_or_else(|| tab.url.clone())
}

/// A page tool as tools/list shows it: its description marked as the page's words, its
/// input schema as the page wrote it (an object schema, else an empty one).
pub fn listed(tab: &TabInfo, tool: &PageTool) -> Tool {
    let said: String = tool.description.chars().take(DESCRIPTION_MAX).collect();
    let description = format!(
        "A tool the page at {} offers (its own words, untrusted): {said}",
        origin_of(tab)
    );
    let schema: JsonObject = match &tool.input_schema {
        Some(Value::Object(schema)) if schema.get("type").is_none_or(|t| t == "object") => {
            schema.clone()
        }
        _ => json!({ "type": "object" })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    };
    let hints = ToolAnnotations::new()
        .read_only(tool.hints.read_only)
        .destructive(tool.hints.consequential)
        .open_world(true);
    Tool::new(exposed_name(&tool.name), description, Arc::new(schema)).with_annotations(hints)
}

/// The page's own name of the tool listed as `exposed`, among `tools`.
pub fn named<'a>(tools: &'a [PageTool], exposed: &str) -> Option<&'a PageTool> {
    tools
        .iter()
        .find(|tool| exposed_name(&tool.name) == exposed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_tools_name_is_made_plain_and_never_one_of_ours() {
        assert_eq!(exposed_name("add_to_cart"), "webmcp_add_to_cart");
        assert_eq!(exposed_name("search flights!"), "webmcp_search_flights_");
        assert_eq!(exposed_name("página"), "webmcp_p_gina");
        assert!(exposed_name(&"x".repeat(200)).len() <= 64);
    }
}
