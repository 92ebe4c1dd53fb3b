//! Agents: the [`Engine`] every agent session shares (the browsers, receipts, tab
//! creations, recordings, permission leases) and each agent's [`AgentSession`] (its
//! default tab, its reservations, its receipts). Every `impl AgentSession` lives in this
//! room; the services below it take a browser or a page and an owner.
//!
//! The top room: it may import every other.

mod receipts;
mod scripts;
mod services;
mod tabs;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::browser::{Browser, Browsers, Tab, lock};
use crate::config::EngineConfig;
use crate::data::permissions::Leases;
use crate::error::Result;
use crate::page::Page;
use crate::recordings::Recordings;

pub use receipts::{Completer, MAX_COMPLETED, Outcome, RETENTION, ReceiptState, Receipts};
pub use scripts::{ScriptRequest, outcome_reply};
pub use tabs::{CloseResult, CloseScope, OpenTabRequest, Opened, TabInfo, TabList};

pub struct Engine {
    pub config: Arc<EngineConfig>,
    pub browsers: Arc<Browsers>,
    pub receipts: Receipts,
    pub recordings: Recordings,
    pub leases: Arc<Leases>,
    creations: tabs::Creations,
    next_session: AtomicU64,
    /// Which agent session uses which tab as its default (tab id → session id), so a new
    /// session does not silently share another's page. The one home of default tabs.
    defaults: Mutex<HashMap<u64, u64>>,
}

impl Engine {
    pub fn new(config: EngineConfig) -> Arc<Engine> {
        let config = Arc::new(config);
        let browsers = Arc::new(Browsers::new(
            config.clone(),
            crate::page::script::install_source(),
        ));
        let leases = Leases::new(&browsers);
        // Leases a previous run left are restored as soon as a browser is there to take
        // them, whatever the first call is.
        let for_leftovers = Arc::downgrade(&leases);
        browsers.on_connect(Box::new(move |browser: Arc<Browser>| {
            let Some(leases) = for_leftovers.upgrade() else {
                return;
            };
            tokio::spawn(async move { leases.restore_leftovers(&browser).await });
        }));
        Arc::new(Engine {
            config,
            browsers,
            receipts: Receipts::default(),
            recordings: Recordings::default(),
            leases,
            creations: tabs::Creations::default(),
            next_session: AtomicU64::new(1),
            defaults: Mutex::new(HashMap::new()),
        })
    }

    pub fn link_name(&self) -> &'static str {
        self.browsers.link_name()
    }

    /// The connected browser, launching or reconnecting it on demand.
    pub async fn browser(&self) -> Result<Arc<Browser>> {
        self.browsers.browser().await
    }

    pub async fn shutdown(&self) {
        self.browsers.shutdown().await;
    }

    /// A new agent session (one per MCP session).
    pub fn new_session(self: &Arc<Self>) -> AgentSession {
        AgentSession {
            id: self.next_session.fetch_add(1, Ordering::Relaxed),
            engine: self.clone(),
        }
    }

    fn claimed_by_other(&self, tab_id: u64, session: u64) -> bool {
        lock(&self.defaults)
            .get(&tab_id)
            .is_some_and(|owner| *owner != session)
    }
}

/// One agent's view of the engine: its default tab and its receipts.
pub struct AgentSession {
    pub id: u64,
    pub engine: Arc<Engine>,
}

impl AgentSession {
    /// The tab a call addresses: the explicit handle, else this session's default (chosen
    /// on first use: a tab no other session uses, or a new one).
    pub async fn resolve_tab(&self, handle: Option<&str>) -> Result<(Arc<Browser>, Tab)> {
        let browsers = &self.engine.browsers;
        if let Some(handle) = handle {
            return browsers.find_tab(handle).await;
        }
        if let Some(id) = self.default_tab() {
            for browser in browsers.all().await? {
                if let Some(tab) = browser.tab_by_id(id) {
                    return Ok((browser, tab));
                }
            }
        }
        let browser = browsers.browser().await?;
        // In a browser we launched or attached to, an unused page tab is taken over. The
        // user's own browser is theirs: a session there works in a tab of its own.
        let reuse = !browser.is_linked();
        let free = browser.tabs().into_iter().find(|tab| {
            reuse
                && !self.engine.claimed_by_other(tab.tab_id, self.id)
                && tab.owner_id.is_none()
                && scriptable(&tab.url)
        });
        let tab = match free {
            Some(tab) => tab,
            None => browser.open_tab("about:blank", false, None).await?,
        };
        self.set_default(tab.tab_id);
        Ok((browser, tab))
    }

    pub fn set_default(&self, tab_id: u64) {
        let mut defaults = lock(&self.engine.defaults);
        defaults.retain(|_, session| *session != self.id);
        defaults.insert(tab_id, self.id);
    }

    pub fn default_tab(&self) -> Option<u64> {
        lock(&self.engine.defaults)
            .iter()
            .find(|(_, session)| **session == self.id)
            .map(|(tab, _)| *tab)
    }

    /// This session's default tab as a handle, if it has one and a browser is connected.
    /// Never launches a browser and never waits for one.
    pub fn default_handle(&self) -> Option<String> {
        let id = self.default_tab()?;
        self.engine
            .browsers
            .connected_now()
            .iter()
            .find_map(|b| b.tab_by_id(id).map(|tab| b.handle(&tab)))
    }

    /// Reserves a tab for one page operation. A tab another call holds answers
    /// `target_busy` at once; calls are never queued behind each other.
    pub async fn page(&self, handle: Option<&str>) -> Result<Page> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        Page::reserve(browser, tab, self.engine.config.clone()).await
    }
}

impl Drop for AgentSession {
    fn drop(&mut self) {
        lock(&self.engine.defaults).retain(|_, session| *session != self.id);
    }
}

/// Pages an agent can drive (not the browser's own chrome://, new-tab or extension pages).
fn scriptable(url: &str) -> bool {
    url.starts_with("http://")
        || url.starts_with("https://")
        || url.starts_with("about:blank")
        || url.is_empty()
}
