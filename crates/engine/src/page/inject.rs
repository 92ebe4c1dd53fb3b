//! Scripts an agent leaves in a tab: run now and in every later document of the tab, in
//! the page's own (main) world or in a world of their own, isolated from the page and
//! from tabwire's. An injected script takes commands as DOM events: `command` dispatches
//! a `CustomEvent` named by the agent on `window` in that world, with
//! `detail: {payload, respond}`; what the script passes to `respond` is the answer.

use std::time::Duration;

use serde_json::{Value, json};

use super::{FrameContext, Page};
use crate::browser::exception_text;
use crate::error::{EngineError, ErrorCode, Input, Result};

/// The world an agent's injected scripts share (never tabwire's own).
const USER_WORLD: &str = "tabwire-user-scripts";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptWorld {
    Main,
    Isolated,
}

impl Page {
    /// Runs `source` in the world now and registers it for every new document of the tab.
    pub async fn inject(
        &self,
        world: ScriptWorld,
        source: &str,
        timeout: Duration,
    ) -> Result<Value> {
        let mut register = json!({ "source": source });
        if world == ScriptWorld::Isolated {
            register["worldName"] = json!(USER_WORLD);
        }
        let registered = self
            .cdp("Page.addScriptToEvaluateOnNewDocument", register, timeout)
            .await?;
        let ctx = self.world(world, timeout).await?;
        self.evaluate_checked(&ctx, source, timeout).await?;
        Ok(json!({ "identifier": registered["identifier"] }))
    }

    /// Sends an injected script a command and returns what it answered (null if no
    /// listener answered).
    pub async fn command(
        &self,
        world: ScriptWorld,
        event: &str,
        payload: &Value,
        timeout: Duration,
    ) -> Result<Value> {
        if event.trim().is_empty() {
            return Err(EngineError::invalid(
                Input::Script,
                "the event name is empty",
            ));
        }
        let ctx = self.world(world, timeout).await?;
        let expression = format!(
            "(async () => {{ let answer = null, answered = false; \
              const detail = {{ payload: {payload}, respond: (v) => {{ answer = v; answered = true; }} }}; \
              window.dispatchEvent(new CustomEvent({event}, {{ detail }})); \
              return {{ answered, answer: await answer }}; }})()",
            payload = payload,
            event = json!(event),
        );
        let reply = self.evaluate_checked(&ctx, &expression, timeout).await?;
        Ok(reply["result"]["value"].clone())
    }

    async fn world(&self, world: ScriptWorld, timeout: Duration) -> Result<FrameContext> {
        let mut ctx = self.top();
        if world == ScriptWorld::Isolated {
            let frame = self
                .browser
                .tab_by_target(&self.tab.target_id)
                .and_then(|tab| tab.main_frame.clone())
                .unwrap_or_else(|| self.tab.target_id.clone());
            let made = self
                .cdp(
                    "Page.createIsolatedWorld",
                    json!({ "frameId": frame, "worldName": USER_WORLD }),
                    timeout,
                )
                .await?;
            ctx.context_id = made["executionContextId"].as_i64();
        } else {
            ctx.context_id = None;
        }
        Ok(ctx)
    }

    async fn evaluate_checked(
        &self,
        ctx: &FrameContext,
        expression: &str,
        timeout: Duration,
    ) -> Result<Value> {
        let mut params =
            json!({ "expression": expression, "awaitPromise": true, "returnByValue": true });
        if let Some(id) = ctx.context_id {
            params["contextId"] = json!(id);
        }
        let reply = self.cdp("Runtime.evaluate", params, timeout).await?;
        if let Some(details) = reply.get("exceptionDetails") {
            return Err(EngineError::page(
                ErrorCode::ScriptError,
                exception_text(details),
                Value::Null,
            ));
        }
        Ok(reply)
    }
}
