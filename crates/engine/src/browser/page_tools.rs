//! Tools a page offers agents (WebMCP: `document.modelContext.registerTool`), as the
//! browser reports them through its `WebMCP` domain, kept per tab from its events.
//!
//! A page's tools are untrusted page content: their names, descriptions and schemas are
//! the page's words, and running one runs the page's code in the page, nothing here.

use serde::Serialize;
use serde_json::Value;

/// One tool a page registered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageTool {
    pub name: String,
    pub description: String,
    /// The JSON Schema of its input, as the page wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// The page's own hints about it.
    pub hints: PageToolHints,
    /// The frame that registered it (where it runs).
    #[serde(skip)]
    pub frame_id: String,
}

/// What a page says of its tool (WebMCP's annotations); all false when it says nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PageToolHints {
    /// It changes nothing.
    pub read_only: bool,
    /// Its effects matter: a purchase, a message sent, money moved.
    pub consequential: bool,
    /// What it returns may hold others' words (reviews, third-party data).
    pub untrusted_content: bool,
}

impl PageTool {
    fn from_event(tool: &Value) -> Option<PageTool> {
        let hint = |name: &str| tool["annotations"][name].as_bool().unwrap_or(false);
        Some(PageTool {
            name: tool["name"].as_str()?.to_owned(),
            description: tool["description"].as_str().unwrap_or_default().to_owned(),
            input_schema: tool.get("inputSchema").filter(|s| s.is_object()).cloned(),
            hints: PageToolHints {
                read_only: hint("readOnly"),
                consequential: hint("consequential"),
                untrusted_content: hint("untrustedContent"),
            },
            frame_id: tool["frameId"].as_str().unwrap_or_default().to_owned(),
        })
    }
}

/// Whether a tab's browser offers WebMCP, once it has been asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Offered {
    #[default]
    NotAsked,
    Yes,
    /// The browser has no `WebMCP` domain (not started with the feature, or a build
    /// without it).
    No,
}

/// Brings a tab's tools up to date with a `WebMCP.toolsAdded` or `toolsRemoved` event;
/// whether anything changed.
pub(crate) fn on_event(tools: &mut Vec<PageTool>, method: &str, params: &Value) -> bool {
    let listed = params["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let before = tools.len();
    match method {
        "WebMCP.toolsAdded" => {
            for tool in listed.iter().filter_map(PageTool::from_event) {
                // A name registered again in the same frame replaces the first.
                tools.retain(|t| !(t.name == tool.name && t.frame_id == tool.frame_id));
                tools.push(tool);
            }
            true
        }
        "WebMCP.toolsRemoved" => {
            for gone in listed {
                let (Some(name), frame) = (gone["name"].as_str(), gone["frameId"].as_str()) else {
                    continue;
                };
                tools.retain(|t| !(t.name == name && frame.is_none_or(|f| f == t.frame_id)));
            }
            tools.len() != before
        }
        _ => false,
    }
}
