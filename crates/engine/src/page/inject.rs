//! Scripts an agent leaves in a tab: run now and in every later document of the tab, in
//! the page's own (main) world or in a world of their own, isolated from the page and
//! from tabwire's. An injected script takes commands as DOM events: `command` dispatches
//! a `CustomEvent` named by the agent on `window` in that world, with
//! `detail: {payload, respond}`; what the script passes to `respond` is the answer.

use crate::ids::Deadline;

use serde_json::{Value, json};

use super::{FrameContext, Page};
use crate::browser::exception_text;
use crate::browser::userscripts::{self, USERSCRIPT_WORLD, UserScript, UserScriptWorld};
use crate::error::{EngineError, ErrorCode, Input, Result};

/// The world an agent's injected scripts share (never tabwire's own).
const USER_WORLD: &str = "tabwire-user-scripts";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptWorld {
    Main,
    Isolated,
}

impl Page {
    /// Runs `source` in the world now and registers it for every new document of the
    /// tab; the browser's identifier for the registration.
    pub async fn inject(
        &self,
        world: ScriptWorld,
        source: &str,
        deadline: Deadline,
    ) -> Result<String> {
        let mut register = json!({ "source": source });
        if world == ScriptWorld::Isolated {
            register["worldName"] = json!(USER_WORLD);
        }
        let registered = self
            .cdp("Page.addScriptToEvaluateOnNewDocument", register, deadline)
            .await?;
        let ctx = self.world(world, deadline).await?;
        self.evaluate_checked(&ctx, source, deadline).await?;
        Ok(registered["identifier"]
            .as_str()
            .unwrap_or_default()
            .to_owned())
    }

    /// Runs a userscript in this page now, in its world, as it runs on a load (its URL
    /// guard and timing included); whether the page is one it runs on. The Chrome MCP
    /// Server applies a new script to the current tab at once, and agents expect to see
    /// it take effect.
    pub async fn run_userscript_now(
        &self,
        script: &UserScript,
        deadline: Deadline,
    ) -> Result<bool> {
        let ctx = self.userscript_world(script.world, deadline).await?;
        // The wrapped script checks its guard itself; the expression after it says what
        // the guard said, in the same round trip.
        let run = format!(
            "{}\n{}",
            userscripts::wrapped(script),
            userscripts::runs_here(script)
        );
        let ran = self.evaluate_checked(&ctx, &run, deadline).await?;
        Ok(ran["result"]["value"] == true)
    }

    /// Where userscripts of `world` run in the top document.
    async fn userscript_world(
        &self,
        world: UserScriptWorld,
        deadline: Deadline,
    ) -> Result<FrameContext> {
        match world {
            UserScriptWorld::Isolated => self.world_named(USERSCRIPT_WORLD, deadline).await,
            UserScriptWorld::Main => Ok(self.top()),
        }
    }

    /// Calls the command handler a userscript defines, as the Chrome MCP Server's
    /// userscripts do: `__userscript_onCommand__(action, payload, id)` in the
    /// userscripts' isolated world, `window.__userscript_onCommand(action, payload)` in
    /// the page's. Its answer, awaited; None when the script defines no handler here
    /// (it does not run on this page, or is not loaded yet).
    pub async fn userscript_command(
        &self,
        world: UserScriptWorld,
        id: &str,
        payload: &Value,
        deadline: Deadline,
    ) -> Result<Option<Value>> {
        let ctx = self.userscript_world(world, deadline).await?;
        let handler = match world {
            UserScriptWorld::Isolated => "globalThis.__userscript_onCommand__",
            UserScriptWorld::Main => "window.__userscript_onCommand",
        };
        let expression = format!(
            "(async () => {{ const handler = {handler}; \
              if (typeof handler !== 'function') return {{ handled: false }}; \
              return {{ handled: true, data: await handler('userscript:command', {payload}, {id}) }}; }})()",
            id = json!(id),
        );
        let reply = self.evaluate_checked(&ctx, &expression, deadline).await?;
        let answer = &reply["result"]["value"];
        Ok((answer["handled"] == true).then(|| answer["data"].clone()))
    }

    /// Sends an injected script a command and returns what it answered (the page's own
    /// data; null if no listener answered).
    pub async fn command(
        &self,
        world: ScriptWorld,
        event: &str,
        payload: &Value,
        deadline: Deadline,
    ) -> Result<Value> {
        if event.trim().is_empty() {
            return Err(EngineError::invalid(
                Input::Script,
                "the event name is empty",
            ));
        }
        let ctx = self.world(world, deadline).await?;
        let expression = format!(
            "(async () => {{ let answer = null, answered = false; \
              const detail = {{ payload: {payload}, respond: (v) => {{ answer = v; answered = true; }} }}; \
              window.dispatchEvent(new CustomEvent({event}, {{ detail }})); \
              return {{ answered, answer: await answer }}; }})()",
            payload = payload,
            event = json!(event),
        );
        let reply = self.evaluate_checked(&ctx, &expression, deadline).await?;
        Ok(reply["result"]["value"]["answer"].clone())
    }

    async fn world(&self, world: ScriptWorld, deadline: Deadline) -> Result<FrameContext> {
        match world {
            ScriptWorld::Isolated => self.world_named(USER_WORLD, deadline).await,
            ScriptWorld::Main => Ok(self.top()),
        }
    }

    /// The top document's isolated world of that name (the one scripts registered with
    /// that `worldName` run in).
    async fn world_named(&self, name: &str, deadline: Deadline) -> Result<FrameContext> {
        let frame = self
            .browser
            .tab_by_target(&self.tab.target_id)
            .and_then(|tab| tab.main_frame.clone())
            .unwrap_or_else(|| self.tab.target_id.clone());
        let made = self
            .cdp(
                "Page.createIsolatedWorld",
                json!({ "frameId": frame, "worldName": name }),
                deadline,
            )
            .await?;
        let mut ctx = self.top();
        ctx.context_id = made["executionContextId"].as_i64();
        Ok(ctx)
    }

    async fn evaluate_checked(
        &self,
        ctx: &FrameContext,
        expression: &str,
        deadline: Deadline,
    ) -> Result<Value> {
        let mut params =
            json!({ "expression": expression, "awaitPromise": true, "returnByValue": true });
        if let Some(id) = ctx.context_id {
            params["contextId"] = json!(id);
        }
        let reply = self.cdp("Runtime.evaluate", params, deadline).await?;
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
