//! Running the tools a page registered (WebMCP) through the browser's `WebMCP` domain:
//! the page's code runs in the page, under the call's deadline; what it returns is the
//! page's own data.

use serde_json::{Value, json};

use super::Page;
use super::navigation::next_event;
use crate::browser::page_tools::{Offered, PageTool};
use crate::error::{EngineError, ErrorCode, Input, Result};
use crate::ids::Deadline;

/// Why a page has no tools to offer when it cannot have any.
const NOT_OFFERED: &str = "this page cannot offer tools (WebMCP): the browser has no document.modelContext here. tabwire starts its own browser with it on; a browser reached another way needs --enable-features=WebMCP (a stable Chrome has none yet), and a page needs a secure origin (https, or localhost)";

impl Page {
    /// The tools the page in this tab registered, in the order it registered them; an
    /// `unsupported` error when the page cannot register any.
    pub async fn page_tools(&self, deadline: Deadline) -> Result<Vec<PageTool>> {
        let tab = self
            .browser
            .tab_by_target(&self.tab.target_id)
            .ok_or_else(|| EngineError::NoSuchTab(self.tab.target_id.clone()))?;
        let offered = match tab.webmcp {
            Offered::No => false,
            // The domain may be there while the page has no API (the feature off, an
            // insecure origin): none registered, the page itself is asked.
            _ if tab.page_tools.is_empty() => self.page_has_model_context(deadline).await?,
            _ => true,
        };
        if !offered {
            return Err(EngineError::refused(ErrorCode::Unsupported, NOT_OFFERED));
        }
        Ok(tab.page_tools.clone())
    }

    async fn page_has_model_context(&self, deadline: Deadline) -> Result<bool> {
        let reply = self
            .cdp(
                "Runtime.evaluate",
                json!({ "expression": "typeof document.modelContext === 'object'", "returnByValue": true }),
                deadline,
            )
            .await?;
        Ok(reply["result"]["value"] == true)
    }

    /// Runs the page's tool `name` with `input` and returns what it gave back (the page's
    /// own data). A tool that throws or is cancelled is an error naming the page's reason;
    /// one still running at the deadline is cancelled.
    pub async fn call_page_tool(
        &self,
        name: &str,
        input: Value,
        deadline: Deadline,
    ) -> Result<Value> {
        if !input.is_object() {
            return Err(EngineError::invalid(
                Input::Arguments,
                "a page tool's arguments are an object",
            ));
        }
        let tools = self.page_tools(deadline).await?;
        let Some(tool) = tools.iter().find(|t| t.name == name) else {
            let offered: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            return Err(EngineError::page(
                ErrorCode::NotFound,
                format!("the page offers no tool '{name}'"),
                json!({ "page_tools": offered }),
            ));
        };
        // Subscribed first: the answer may come as soon as the invocation is sent.
        let mut events = self.browser.conn.subscribe();
        let invoked = self
            .cdp(
                "WebMCP.invokeTool",
                json!({ "frameId": tool.frame_id, "toolName": name, "input": input }),
                deadline,
            )
            .await?;
        let invocation = invoked["invocationId"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let answered = next_event(&mut events, deadline.at(), |e| {
            e.method == "WebMCP.toolResponded"
                && e.session_id.as_deref() == Some(self.session.as_str())
                && e.params["invocationId"] == invocation.as_str()
        })
        .await;
        let Some(answered) = answered else {
            let _ = self
                .cdp(
                    "WebMCP.cancelInvocation",
                    json!({ "invocationId": invocation }),
                    Deadline::after(crate::browser::HOUSEKEEPING),
                )
                .await;
            return Err(EngineError::page(
                ErrorCode::Timeout,
                format!(
                    "the page's tool '{name}' had not answered within {:.1} s and was cancelled",
                    deadline.budget().as_secs_f64()
                ),
                json!({ "page_tool": name }),
            )
            .may_have_run());
        };
        let params = &answered.params;
        match params["status"].as_str() {
            Some("Completed") => Ok(params.get("output").cloned().unwrap_or(Value::Null)),
            status => {
                let reason = params["exception"]["description"]
                    .as_str()
                    .or(params["errorText"].as_str())
                    .filter(|r| !r.is_empty())
                    .unwrap_or(if status == Some("Canceled") {
                        "it was cancelled"
                    } else {
                        "it failed without saying why"
                    });
                Err(EngineError::page(
                    ErrorCode::PageToolFailed,
                    format!("the page's tool '{name}' failed: {reason}"),
                    json!({ "page_tool": name, "status": status }),
                )
                .may_have_run())
            }
        }
    }
}
