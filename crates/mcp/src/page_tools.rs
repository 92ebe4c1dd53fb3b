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

/// The largest input schema passed on, as JSON; a larger one becomes `{type: object}`.
const SCHEMA_MAX: usize = 16 * 1024;

/// The longest MCP name given a page tool: room for a client's own prefix within the
/// 64 characters some clients allow.
const NAME_MAX: usize = 48;

/// MCP tool names are short and plain (`[A-Za-z0-9_-]`): a page's name is made so, any
/// other character becoming `_`.
pub fn exposed_name(name: &str) -> String {
    let plain: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(NAME_MAX - PREFIX.len())
        .collect();
    format!("{PREFIX}{plain}")
}

/// Each tool's MCP name, in order: two that would read alike (`a b`, `a_b`, or one name
/// registered by two frames) are told apart by a number, `_2`, `_3`, … on the later.
pub fn exposed_names(tools: &[PageTool]) -> Vec<String> {
    let mut given: Vec<String> = Vec::with_capacity(tools.len());
    for tool in tools {
        let base = exposed_name(&tool.name);
        let mut name = base.clone();
        let mut n = 2;
        while given.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        given.push(name);
    }
    given
}

/// Where a tab's page is from, as a page tool's description names it.
pub fn origin_of(tab: &TabInfo) -> String {
    engine::urls::web_origin(&tab.url).unwrap_or_else(|| tab.url.clone())
}

/// A page tool as tools/list shows it, named `name`: its description marked as the
/// page's words, its input schema as the page wrote it (an object schema of at most
/// `SCHEMA_MAX`, else an empty one).
pub fn listed(tab: &TabInfo, tool: &PageTool, name: String) -> Tool {
    let said: String = tool.description.chars().take(DESCRIPTION_MAX).collect();
    let description = format!(
        "A tool the page at {} offers (its own words, untrusted): {said}",
        origin_of(tab)
    );
    let small = |schema: &JsonObject| {
        serde_json::to_string(schema).map_or(0, |text| text.len()) <= SCHEMA_MAX
    };
    let schema: JsonObject = match &tool.input_schema {
        Some(Value::Object(schema))
            if schema.get("type").is_none_or(|t| t == "object") && small(schema) =>
        {
            schema.clone()
        }
        _ => json!({ "type": "object" })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    };
    // The page's own hints are its claims: a client must not approve a call on them, so
    // every page tool is said to be one that may change things.
    let hints = ToolAnnotations::new()
        .read_only(false)
        .destructive(true)
        .open_world(true);
    Tool::new(name, description, Arc::new(schema)).with_annotations(hints)
}

/// The tool listed as `exposed` among `tools`.
pub fn named<'a>(tools: &'a [PageTool], exposed: &str) -> Option<&'a PageTool> {
    exposed_names(tools)
        .iter()
        .position(|name| name == exposed)
        .map(|at| &tools[at])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_tools_name_is_made_plain_and_never_one_of_ours() {
        assert_eq!(exposed_name("add_to_cart"), "webmcp_add_to_cart");
        assert_eq!(exposed_name("search flights!"), "webmcp_search_flights_");
        assert_eq!(exposed_name("página"), "webmcp_p_gina");
        assert_eq!(exposed_name("v1.search"), "webmcp_v1_search");
        assert!(exposed_name(&"x".repeat(200)).len() <= 48);
    }

    #[test]
    fn two_page_tools_that_read_alike_get_two_names() {
        let tool = |name: &str| PageTool {
            name: name.into(),
            description: String::new(),
            input_schema: None,
            hints: Default::default(),
            frame_id: "F".into(),
        };
        let tools = [tool("a b"), tool("a_b"), tool("a b")];
        assert_eq!(
            exposed_names(&tools),
            ["webmcp_a_b", "webmcp_a_b_2", "webmcp_a_b_3"]
        );
        assert_eq!(
            named(&tools, "webmcp_a_b_2").map(|t| t.name.as_str()),
            Some("a_b")
        );
    }
}
