//! A session's emulations: set on a tab, listed for status reports, and cleared when
//! the session that set them ends, so a tab another agent takes over is a plain tab.

use crate::ids::Deadline;
use std::sync::Arc;

use super::{AgentSession, Engine};
use crate::browser::emulation::Emulation;
use crate::browser::{Browser, HOUSEKEEPING, Tab, TabInfo};
use crate::error::Result;
use crate::page::Page;

/// One tab's emulation, for a status report.
#[derive(Debug, Clone)]
pub struct TabEmulation {
    pub tab: TabInfo,
    /// The agent session that set it.
    pub session: u64,
    pub settings: Emulation,
}

impl AgentSession {
    /// Sets a tab's emulation to `wanted`, the whole state: what it leaves out is
    /// cleared. Answers the tab it was set on.
    pub async fn emulate(
        &self,
        handle: Option<&str>,
        wanted: &Emulation,
        deadline: Deadline,
    ) -> Result<TabInfo> {
        let page = self.page(handle).await?;
        page.emulate(wanted, self.id, deadline).await?;
        Ok(page.info())
    }
}

impl Engine {
    /// Every tab of a connected browser that has an emulation on.
    pub fn emulations(&self) -> Vec<TabEmulation> {
        let mut found = Vec::new();
        for browser in self.browsers.connected_now() {
            for tab in browser.tabs() {
                if let Some(emulated) = &tab.emulation {
                    found.push(TabEmulation {
                        tab: browser.info(&tab, None),
                        session: emulated.session,
                        settings: emulated.settings.clone(),
                    });
                }
            }
        }
        found
    }

    /// The tabs whose emulation agent session `session` set.
    pub(super) fn emulated_by(&self, session: u64) -> Vec<(Arc<Browser>, Tab)> {
        let mut found = Vec::new();
        for browser in self.browsers.connected_now() {
            for tab in browser.tabs() {
                if tab.emulation.as_ref().is_some_and(|e| e.session == session) {
                    found.push((browser.clone(), tab));
                }
            }
        }
        found
    }

    /// Clears the emulation of each tab (its session has ended). A tab another call
    /// holds is waited for, a bounded time; one that cannot be reached keeps its
    /// overrides until tabwire's session of it ends, and the log says so.
    pub(super) async fn clear_emulations(self: Arc<Self>, tabs: Vec<(Arc<Browser>, Tab)>) {
        for (browser, tab) in tabs {
            let handle = browser.handle(&tab);
            let cleared = async {
                // Wait out a call that holds the tab, then take it as any call would.
                let _ = tokio::time::timeout(HOUSEKEEPING, tab.busy.clone().lock_owned()).await;
                let page = Page::reserve(browser.clone(), tab.clone(), self.config.clone()).await?;
                page.emulate(&Emulation::default(), 0, Deadline::after(HOUSEKEEPING))
                    .await
            };
            if let Err(error) = cleared.await {
                tracing::warn!(%error, tab = %handle, "could not clear an ended session's emulation");
            }
        }
    }
}
