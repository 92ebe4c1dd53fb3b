//! Windows and the tabs in them, as a session sees them.

use crate::ids::Deadline;
use serde::Serialize;
use serde_json::json;

use super::AgentSession;
use crate::browser::{HOUSEKEEPING, TabInfo};
use crate::error::Result;

/// One browser window and its tabs, in the browser's order.
#[derive(Debug, Clone, Serialize)]
pub struct Window {
    pub window_id: u64,
    pub client_id: String,
    pub tabs: Vec<WindowTab>,
}

/// Where a tab is moved to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowTarget {
    Existing(u64),
    New,
}

#[derive(Debug, Clone, Serialize)]
pub struct WindowTab {
    pub tab: TabInfo,
    /// The window's selected tab.
    pub active: bool,
}

impl AgentSession {
    /// Every window of every connected browser with the tabs an agent can drive.
    pub async fn windows(&self) -> Result<Vec<Window>> {
        self.windows_listing(false).await
    }

    /// Every window with its tabs; `all` adds chrome-extension:// and other internal
    /// pages.
    pub async fn windows_listing(&self, all: bool) -> Result<Vec<Window>> {
        let mut windows: Vec<Window> = Vec::new();
        let mut unknown = Vec::new();
        for browser in self.engine.browsers.all_of(self.id).await? {
            // Titles change as pages load; read them fresh.
            let _ = browser.resync().await;
            let default = self.default_in(&browser);
            for tab in browser.tabs() {
                let internal = tab.url.starts_with("chrome-extension://");
                if (internal && !all) || !self.sees(&browser, &tab) {
                    continue;
                }
                let Ok((window_id, active)) = browser.window_of(&tab).await else {
                    continue;
                };
                let entry = WindowTab {
                    tab: browser.info(&tab, default),
                    active: active.unwrap_or(false),
                };
                let index = match windows
                    .iter()
                    .position(|w| w.window_id == window_id && w.client_id == browser.client_id)
                {
                    Some(index) => index,
                    None => {
                        windows.push(Window {
                            window_id,
                            client_id: browser.client_id.clone(),
                            tabs: Vec::new(),
                        });
                        windows.len() - 1
                    }
                };
                if active.is_none() {
                    unknown.push((index, windows[index].tabs.len()));
                }
                windows[index].tabs.push(entry);
            }
        }
        // CDP does not say which tab a window shows: one alone is shown; among several,
        // the one whose page is visible.
        for (window, at) in unknown {
            let alone = windows[window].tabs.len() == 1;
            let handle = windows[window].tabs[at].tab.handle.clone();
            windows[window].tabs[at].active = alone || self.visible(&handle).await;
        }
        Ok(windows)
    }

    /// Moves a tab to window `to` at `index` (-1: the end), or into a new window, without
    /// reloading it (through the extension's `chrome.tabs`; a browser reached only over
    /// CDP has no way to). Answers the tab and where it landed: (window id, index).
    pub async fn move_tab(
        &self,
        handle: Option<&str>,
        to: WindowTarget,
        index: i64,
        focused: bool,
    ) -> Result<(TabInfo, u64, i64)> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        let mut args = json!({ "targetId": tab.target_id, "index": index, "focused": focused });
        match to {
            WindowTarget::Existing(window) => args["windowId"] = json!(window),
            WindowTarget::New => args["newWindow"] = json!(true),
        }
        let moved = browser.extension_call("tabs.moveTarget", args).await?;
        let info = browser.info(&tab, self.default_in(&browser));
        Ok((
            info,
            moved["windowId"].as_u64().unwrap_or_default(),
            moved["index"].as_i64().unwrap_or(-1),
        ))
    }

    async fn visible(&self, handle: &str) -> bool {
        let Ok(page) = self.page(Some(handle)).await else {
            return false;
        };
        page.cdp(
            "Runtime.evaluate",
            json!({ "expression": "document.visibilityState", "returnByValue": true }),
            Deadline::after(HOUSEKEEPING),
        )
        .await
        .is_ok_and(|reply| reply["result"]["value"] == "visible")
    }
}
