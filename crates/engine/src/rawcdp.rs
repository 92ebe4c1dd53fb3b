//! Raw CDP on a tab, and the list of every attachable target. The policy deciding what
//! may be sent lives with the faces (crates/mcp); this only carries it.

use std::time::Duration;

use serde_json::{Value, json};

use crate::browser::HOUSEKEEPING;
use crate::engine::Engine;
use crate::error::Result;
use crate::page::Page;

impl Page {
    /// Sends one command on this tab's session.
    pub async fn raw_cdp(&self, method: &str, params: Value, timeout: Duration) -> Result<Value> {
        self.cdp(method, params, timeout).await
    }
}

impl Engine {
    /// Every CDP target: pages, service workers, extension pages, iframes.
    pub async fn debugger_targets(&self) -> Result<Value> {
        let browser = self.browser().await?;
        let reply = browser
            .conn
            .call(None, "Target.getTargets", json!({}), HOUSEKEEPING)
            .await?;
        let targets: Vec<Value> = reply["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                let mut target = json!({
                    "target_id": t["targetId"], "type": t["type"], "url": t["url"],
                    "title": t["title"], "attached": t["attached"],
                });
                if let Some(tab) = t["targetId"]
                    .as_str()
                    .and_then(|id| browser.tab_by_target(id))
                {
                    target["session_id"] = json!(crate::engine::tab_handle(&browser, &tab));
                }
                target
            })
            .collect();
        Ok(json!({ "count": targets.len(), "targets": targets }))
    }
}
