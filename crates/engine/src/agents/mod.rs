//! Agents: the [`Engine`] every agent session shares (the browsers, receipts, tab
//! creations, recordings, permission leases) and each agent's [`AgentSession`] (its
//! default tab, its reservations, its receipts). Every `impl AgentSession` lives in this
//! room; the services below it take a browser or a page and an owner.
//!
//! The top room: it may import every other.

pub mod desktop;
mod emulation;
mod isolation;
mod receipts;
mod scripts;
mod services;
mod tabs;
mod windows;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::browser::{Browser, Browsers, Tab, TabInfo, tab_handle};
use crate::config::{EngineConfig, SessionBrowsers};
use crate::data::permissions::Leases;
use crate::error::{EngineError, ErrorCode, Result};
use crate::page::Page;
use crate::recordings::Recordings;

pub use emulation::TabEmulation;
pub use receipts::{Completer, MAX_COMPLETED, Outcome, RETENTION, ReceiptState, Receipts};
pub use scripts::{ScriptAnswer, ScriptRequest, Unfinished};
pub use tabs::{Activated, CloseResult, CloseScope, OpenTabRequest, Opened, Reused, TabList};
pub use windows::{Window, WindowTab, WindowTarget};

pub struct Engine {
    pub config: Arc<EngineConfig>,
    pub browsers: Arc<Browsers>,
    pub receipts: Receipts,
    pub recordings: Recordings,
    pub leases: Arc<Leases>,
    /// Each session's network routes, and the tabs whose requests they hold.
    pub routes: crate::data::routes::Routes,
    /// The search index of every open tab, kept current in the background.
    pub search: Arc<crate::search::TabSearch>,
    /// Tickets of the native file dialogs the desktop pair inspected.
    pub dialogs: desktop::NativeDialogs,
    creations: tabs::Creations,
    next_session: AtomicU64,
    live_sessions: std::sync::atomic::AtomicUsize,
    /// Agent calls running now (the health report says how many).
    in_flight: std::sync::atomic::AtomicUsize,
    /// Which agent session uses which tab as its default ((client, tab id) → session id),
    /// so a new session does not silently share another's page. The one home of default
    /// tabs.
    defaults: Mutex<HashMap<(String, u64), u64>>,
}

impl Engine {
    pub fn new(config: EngineConfig) -> Arc<Engine> {
        let config = Arc::new(config);
        let browsers = Arc::new(Browsers::new(config.clone()));
        let leases = Leases::new(&browsers);
        // Leases a previous run left are restored as soon as a browser is there to take
        // them, whatever the first call is.
        let for_leftovers = Arc::downgrade(&leases);
        // A browser tabwire launched saves what pages download where a wait finds it.
        let catches_downloads =
            matches!(config.link, crate::config::LinkConfig::Managed(_)).then(|| config.clone());
        browsers.on_connect(Box::new(move |browser: Arc<Browser>| {
            if let Some(config) = catches_downloads.clone() {
                let browser = browser.clone();
                tokio::spawn(async move {
                    if let Err(error) =
                        crate::data::downloads::catch_downloads(&browser, &config).await
                    {
                        tracing::warn!(%error, "downloads will not be caught");
                    }
                });
            }
            let Some(leases) = for_leftovers.upgrade() else {
                return;
            };
            tokio::spawn(async move { leases.restore_leftovers(&browser).await });
        }));
        let search = crate::search::TabSearch::start(browsers.clone(), config.clone());
        Arc::new(Engine {
            config,
            browsers,
            search,
            receipts: Receipts::default(),
            recordings: Recordings::default(),
            leases,
            routes: Default::default(),
            dialogs: desktop::NativeDialogs::default(),
            creations: tabs::Creations::default(),
            next_session: AtomicU64::new(1),
            live_sessions: std::sync::atomic::AtomicUsize::new(0),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
            defaults: Mutex::new(HashMap::new()),
        })
    }

    /// Which processes are the browser, for the desktop pair: the one tabwire launched,
    /// and installed browsers.
    pub fn browser_processes(&self) -> desktop::BrowserProcesses {
        desktop::BrowserProcesses {
            own_pid: self.browsers.current().and_then(|b| b.pid()),
        }
    }

    pub fn link_name(&self) -> &'static str {
        self.browsers.link_name()
    }

    /// What each agent session gets of the browser, by name.
    pub fn session_browsers(&self) -> &'static str {
        match self.config.sessions {
            SessionBrowsers::Shared => "shared",
            SessionBrowsers::IsolatedContexts => "isolated_contexts",
            SessionBrowsers::PerSession => "per_session",
        }
    }

    pub async fn shutdown(&self) {
        self.browsers.shutdown().await;
    }

    /// How many agent calls are running now.
    pub fn calls_in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// How many agent sessions are alive now.
    pub fn live_sessions(&self) -> usize {
        self.live_sessions.load(Ordering::Relaxed)
    }

    /// A new agent session (one per MCP session). A session with a browser or a
    /// context of its own also writes its files in a folder of its own.
    pub fn new_session(self: &Arc<Self>) -> AgentSession {
        self.live_sessions.fetch_add(1, Ordering::Relaxed);
        let id = self.next_session.fetch_add(1, Ordering::Relaxed);
        let config = match self.config.sessions {
            SessionBrowsers::Shared => self.config.clone(),
            _ => Arc::new(isolation::own_config(&self.config)),
        };
        AgentSession {
            id,
            engine: self.clone(),
            config,
            context: Mutex::new(None),
            switched: Mutex::new(None),
            seen_loss: AtomicU64::new(self.browsers.last_loss().map_or(0, |l| l.seq)),
            replied_loss: AtomicU64::new(self.browsers.last_loss().map_or(0, |l| l.seq)),
            injections: Mutex::new(HashMap::new()),
        }
    }

    fn claimed_by_other(&self, client: &str, tab_id: u64, session: u64) -> bool {
        self.defaults
            .lock()
            .get(&(client.to_owned(), tab_id))
            .is_some_and(|owner| *owner != session)
    }
}

/// One agent's view of the engine: its default tab and its receipts.
pub struct AgentSession {
    pub id: u64,
    pub engine: Arc<Engine>,
    /// The engine's configuration as this session sees it: its own output folder when
    /// it has a browser or a context of its own.
    config: Arc<EngineConfig>,
    /// Its browser context, when sessions are isolated by contexts: the browser it was
    /// made in, and its id.
    context: Mutex<Option<(std::sync::Weak<Browser>, String)>>,
    switched: Mutex<Option<Switch>>,
    /// The last browser loss this session was told of by `list_tabs`…
    seen_loss: AtomicU64,
    /// …and in the facts of a reply.
    replied_loss: AtomicU64,
    /// Tabs this session left a script in, and in which world (`MAIN`, `ISOLATED`).
    injections: Mutex<HashMap<u64, String>>,
}

/// How long past its deadline a call may still run: time for an operation that waited
/// until the deadline to write its answer. A call still busy then is stopped.
pub const CALL_MARGIN: std::time::Duration = std::time::Duration::from_secs(2);

/// The failure of a call stopped at its deadline (and margin).
fn over_time(deadline: crate::ids::Deadline, ledger: &cdp::Ledger) -> EngineError {
    let seconds = deadline.budget().as_secs_f64();
    let error = EngineError::page(
        ErrorCode::Timeout,
        format!(
            "the call did not finish within its time limit ({seconds} s) and was stopped; \
             check the page before repeating it, or give it a longer limit"
        ),
        serde_json::json!({ "time_limit_s": seconds }),
    );
    if ledger.nothing_reached_a_browser() {
        error
    } else {
        error.may_have_run()
    }
}

impl AgentSession {
    /// Runs one agent call (`attempt` makes it; `engine_error` finds the engine's error
    /// in its failure) within its deadline.
    ///
    /// First every browser this session uses is made sure of (`Browsers::confirm`), so
    /// a browser that died since the last call is replaced, or waited for, before
    /// anything is sent. A browser can still go in the moment between that check and the
    /// call's first command (an extension worker stopping). A call that failed so, with
    /// none of its commands having reached a browser, is run once more, on the browser
    /// that comes back: it cannot do anything twice.
    ///
    /// No call runs past its deadline by more than `CALL_MARGIN`: its operations wait
    /// within the deadline themselves and answer with what they know; one that is still
    /// busy then is stopped (what it held is let go) and the call fails `Timeout`.
    pub async fn run_call<T, E, Fut>(
        &self,
        deadline: crate::ids::Deadline,
        mut attempt: impl FnMut() -> Fut,
        engine_error: impl Fn(&E) -> Option<&EngineError>,
    ) -> std::result::Result<T, E>
    where
        Fut: std::future::Future<Output = std::result::Result<T, E>>,
        E: From<EngineError>,
    {
        let _running = InFlight::enter(&self.engine);
        let mut tries = 0;
        loop {
            tries += 1;
            self.engine.browsers.confirm(self.id).await;
            let ledger = Arc::new(cdp::Ledger::default());
            let bounded = tokio::time::timeout_at(
                deadline.at() + CALL_MARGIN,
                deadline.scope(ledger.clone().scope(attempt())),
            );
            let outcome = match bounded.await {
                Ok(outcome) => outcome,
                Err(_) => return Err(E::from(over_time(deadline, &ledger))),
            };
            let undelivered = match &outcome {
                Err(failure) => engine_error(failure).is_some_and(|error| {
                    error.code() == ErrorCode::BrowserDisconnected
                        && error.delivery() == crate::error::Delivery::Undelivered
                }),
                Ok(_) => false,
            };
            if tries < 2 && undelivered && ledger.nothing_reached_a_browser() {
                tracing::info!("the browser went before the call reached it; running it again");
                continue;
            }
            return outcome;
        }
    }

    /// The engine's configuration as this session sees it (its own output folder when
    /// it has a browser or a context of its own).
    pub fn config(&self) -> &Arc<EngineConfig> {
        &self.config
    }

    /// Records that this session left a script in a tab, in a world.
    pub fn remember_injection(&self, tab_id: u64, world: &str) {
        self.injections.lock().insert(tab_id, world.to_owned());
    }

    /// The world this session left a script in, in a tab, if it did.
    pub fn injection(&self, tab_id: u64) -> Option<String> {
        self.injections.lock().get(&tab_id).cloned()
    }

    /// The tab a call addresses: the explicit handle, else this session's default.
    ///
    /// The default is chosen on first use: the tab this session last brought to the front
    /// (opened active, or activated), else an unused page tab of a browser tabwire
    /// launched or attached to, else a new tab. A session never takes another session's
    /// default, and in the user's own browser it only ever works in tabs of its own.
    /// If the default tab has closed, another of the same browser is chosen the same way
    /// and the switch is recorded (see `take_switch`).
    pub async fn resolve_tab(&self, handle: Option<&str>) -> Result<(Arc<Browser>, Tab)> {
        let browsers = &self.engine.browsers;
        if let Some(handle) = handle {
            return self.find_tab(handle).await;
        }
        let mut lost = None;
        if let Some((client, id)) = self.default_tab() {
            let browser = browsers
                .all_of(self.id)
                .await?
                .into_iter()
                .find(|b| b.client_id == client);
            match browser
                .as_ref()
                .and_then(|b| b.tab_by_id(id).map(|t| (b.clone(), t)))
            {
                Some(found) => return Ok(found),
                None => lost = Some((browser, tab_handle(&client, id))),
            }
        }
        let browser = match &lost {
            Some((Some(same_client), _)) => same_client.clone(),
            _ => browsers.browser_of(self.id).await?,
        };
        let tab = match self.choose_default(&browser) {
            Some(tab) => tab,
            None => {
                self.open_tab(&browser, "about:blank", false, None, None)
                    .await?
            }
        };
        self.set_default(&browser.client_id, tab.tab_id);
        if let Some((_, from)) = lost {
            *self.switched.lock() = Some(Switch {
                from,
                to: browser.handle(&tab),
            });
        }
        Ok((browser, tab))
    }

    /// The browser a call addresses without needing a tab: the one a handle names, else
    /// the one this session's default tab is in, else the configured browser.
    pub async fn browser_for(&self, handle: Option<&str>) -> Result<Arc<Browser>> {
        if let Some(handle) = handle {
            return Ok(self.find_tab(handle).await?.0);
        }
        if let Some((client, _)) = self.default_tab()
            && let Some(browser) = self
                .engine
                .browsers
                .connected_of(self.id)
                .into_iter()
                .find(|b| b.client_id == client)
        {
            return Ok(browser);
        }
        self.engine.browsers.browser_of(self.id).await
    }

    /// The browser a client id or a tab handle names (None: this session's).
    pub(crate) async fn browser_named(&self, name: Option<&str>) -> Result<Arc<Browser>> {
        let Some(name) = name else {
            return self.browser_for(None).await;
        };
        if let Some(browser) = self
            .engine
            .browsers
            .connected_of(self.id)
            .into_iter()
            .find(|b| b.client_id == name)
        {
            return Ok(browser);
        }
        self.browser_for(Some(name)).await
    }

    /// A tab by handle; a bare id (`3`) names a tab of the browser this session's default
    /// is in, when it is there.
    async fn find_tab(&self, handle: &str) -> Result<(Arc<Browser>, Tab)> {
        let browsers = &self.engine.browsers;
        if !handle.contains(':')
            && let Some((client, _)) = self.default_tab()
            && let Ok(id) = handle.trim().parse::<u64>()
            && let Some(browser) = browsers
                .connected_of(self.id)
                .into_iter()
                .find(|b| b.client_id == client)
            && let Some(tab) = browser.tab_by_id(id)
            && self.sees(&browser, &tab)
        {
            return Ok((browser, tab));
        }
        let (browser, tab) = browsers.find_tab_of(self.id, handle).await?;
        // Another session's tab, under isolation, is not there for this one.
        if !self.sees(&browser, &tab) {
            return Err(EngineError::NoSuchTab(handle.trim().to_owned()));
        }
        Ok((browser, tab))
    }

    /// The tab a session with no default takes in `browser`, if one will do.
    fn choose_default(&self, browser: &Browser) -> Option<Tab> {
        let own = |tab: &Tab| {
            self.engine
                .creations
                .made_by(self.id, &browser.client_id, tab.tab_id)
        };
        let candidates: Vec<Tab> = browser
            .tabs()
            .into_iter()
            .filter(|tab| scriptable(&tab.url))
            .filter(|tab| self.sees(browser, tab))
            .filter(|tab| {
                !self
                    .engine
                    .claimed_by_other(&browser.client_id, tab.tab_id, self.id)
            })
            // The user's own tabs are theirs; elsewhere a tab no task owns is free.
            .filter(|tab| own(tab) || (!browser.is_linked() && tab.owner_id.is_none()))
            .collect();
        let front = browser.front_tab();
        candidates
            .iter()
            .find(|tab| Some(&tab.target_id) == front.as_ref() && own(tab))
            .or_else(|| {
                candidates
                    .iter()
                    .find(|tab| Some(&tab.target_id) == front.as_ref())
            })
            .or_else(|| candidates.first())
            .cloned()
    }

    pub fn set_default(&self, client: &str, tab_id: u64) {
        let mut defaults = self.engine.defaults.lock();
        defaults.retain(|_, session| *session != self.id);
        defaults.insert((client.to_owned(), tab_id), self.id);
        drop(defaults);
        // What follows the current tab (its page tools, for one) may have changed.
        self.engine.browsers.registry().note_change();
    }

    /// This session's default tab: its browser's client id and the tab id.
    pub fn default_tab(&self) -> Option<(String, u64)> {
        self.engine
            .defaults
            .lock()
            .iter()
            .find(|(_, session)| **session == self.id)
            .map(|(tab, _)| tab.clone())
    }

    /// The default tab's id, if it is in `browser`.
    pub(crate) fn default_in(&self, browser: &Browser) -> Option<u64> {
        self.default_tab()
            .filter(|(client, _)| *client == browser.client_id)
            .map(|(_, id)| id)
    }

    /// This session's default tab as a handle, if it has one and a browser is connected.
    /// Never launches a browser and never waits for one.
    pub fn default_handle(&self) -> Option<String> {
        let (browser, tab) = self.default_tab_now()?;
        Some(browser.handle(&tab))
    }

    /// This session's default tab in a browser connected now, without waiting.
    fn default_tab_now(&self) -> Option<(Arc<Browser>, Tab)> {
        let (client, id) = self.default_tab()?;
        self.engine
            .browsers
            .connected_of(self.id)
            .into_iter()
            .filter(|b| b.client_id == client)
            .find_map(|b| b.tab_by_id(id).map(|tab| (b, tab)))
    }

    /// The tools the page in this session's current tab registered (WebMCP), with the
    /// tab: none when it has no tab, or its page offers none. Never launches a browser,
    /// never waits and reserves nothing (a tool list is asked for between calls).
    pub fn current_page_tools(&self) -> Option<(TabInfo, Vec<crate::browser::PageTool>)> {
        let (browser, tab) = self.default_tab_now()?;
        let tools = tab.page_tools.clone();
        (!tools.is_empty()).then(|| (browser.info(&tab, Some(tab.tab_id)), tools))
    }

    /// A browser loss this session has not been told of yet (then it has).
    pub fn unreported_loss(&self) -> Option<crate::browser::Loss> {
        let loss = self.engine.browsers.last_loss_of(self.id)?;
        let seen = self.seen_loss.swap(loss.seq, Ordering::Relaxed);
        (loss.seq > seen).then_some(loss)
    }

    /// A browser loss no reply of this session has said yet (then one has): said in the
    /// next reply's facts, whatever the call.
    pub fn loss_to_reply(&self) -> Option<crate::browser::Loss> {
        let loss = self.engine.browsers.last_loss_of(self.id)?;
        let seen = self.replied_loss.swap(loss.seq, Ordering::Relaxed);
        (loss.seq > seen).then_some(loss)
    }

    /// The switch an implicit call made since the last look, because the default tab had
    /// closed: from which tab to which.
    pub fn take_switch(&self) -> Option<Switch> {
        self.switched.lock().take()
    }

    /// Reserves a tab for one page operation. A tab another call holds answers
    /// `target_busy` at once; calls are never queued behind each other.
    ///
    /// A tab whose page waits on a dialog left open for the agent answers
    /// `blocked_by_dialog` at once: its page runs nothing until the dialog is answered,
    /// so the call could only wait out its time.
    pub async fn page(&self, handle: Option<&str>) -> Result<Page> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        if let Some(dialog) = &tab.open_dialog {
            return Err(EngineError::page(
                ErrorCode::BlockedByDialog,
                format!(
                    "a {} dialog is open in this tab ({:?}) and its page waits on it: answer the dialog first",
                    dialog.kind, dialog.message
                ),
                serde_json::json!({ "dialog": dialog }),
            ));
        }
        let page = Page::reserve(browser, tab, self.config.clone()).await?;
        self.cover_with_routes(&page).await?;
        Ok(page)
    }

    /// Brings this session's routes to a tab it drives, unless the tab is another
    /// session's current one (its routes never reach another agent's tab).
    async fn cover_with_routes(&self, page: &Page) -> Result<()> {
        let theirs =
            self.engine
                .claimed_by_other(&page.browser.client_id, page.tab.tab_id, self.id);
        if theirs {
            return Ok(());
        }
        self.engine.routes.cover(page, self.id).await
    }

    /// Adds a network route on the tab `handle` names (else the current one), or on
    /// every tab this session drives.
    pub async fn add_route(
        &self,
        handle: Option<&str>,
        request: crate::data::routes::RouteRequest,
    ) -> Result<(TabInfo, crate::data::routes::RouteInfo)> {
        let page = self.page(handle).await?;
        if self
            .engine
            .claimed_by_other(&page.browser.client_id, page.tab.tab_id, self.id)
        {
            return Err(EngineError::refused(
                ErrorCode::NotOwned,
                "that tab is another agent's current tab: its requests are not this session's to route",
            ));
        }
        let added = self.engine.routes.add(&page, self.id, request).await?;
        Ok((page.info(), added))
    }

    /// This session's routes, oldest first.
    pub fn routes(&self) -> Vec<crate::data::routes::RouteInfo> {
        self.engine.routes.list(self.id)
    }

    /// Removes this session's routes with this id, or this pattern, or all of them.
    pub fn remove_routes(
        &self,
        id: Option<&str>,
        pattern: Option<&str>,
    ) -> Vec<crate::data::routes::RouteInfo> {
        self.engine.routes.remove(self.id, id, pattern)
    }

    /// Reserves a tab to navigate it: a script of an earlier call still holding it is
    /// superseded (stopped, its receipt says so). Also returns that operation's id.
    pub async fn page_to_navigate(&self, handle: Option<&str>) -> Result<(Page, Option<String>)> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        let (page, superseded) =
            Page::reserve_superseding(browser, tab, self.config.clone()).await?;
        self.cover_with_routes(&page).await?;
        Ok((page, superseded))
    }
}

/// One agent call counted as running while it lives.
struct InFlight<'a>(&'a Engine);

impl<'a> InFlight<'a> {
    fn enter(engine: &'a Engine) -> InFlight<'a> {
        engine.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(engine)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A session's default tab replaced by another, because it had closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    pub from: String,
    pub to: String,
}

impl Drop for AgentSession {
    fn drop(&mut self) {
        self.engine.live_sessions.fetch_sub(1, Ordering::Relaxed);
        self.engine
            .defaults
            .lock()
            .retain(|_, session| *session != self.id);
        // What it left recording is stopped, and its routes removed.
        self.engine.recordings.forget(self.id);
        self.engine.routes.forget(self.id);
        // A browser of its own is closed with it; a context of its own is disposed of
        // (its tabs close with it).
        self.engine.browsers.end_session(self.id);
        let context = self.context.lock().take();
        // What this session emulated is undone: the tabs outlive it.
        let emulated = self.engine.emulated_by(self.id);
        if !emulated.is_empty()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(self.engine.clone().clear_emulations(emulated));
        }
        if let Some((browser, context)) = context
            && let Some(browser) = browser.upgrade()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move { browser.dispose_context(&context).await });
        }
    }
}

/// Pages an agent can drive (not the browser's own chrome://, new-tab or extension pages).
fn scriptable(url: &str) -> bool {
    url.starts_with("http://")
        || url.starts_with("https://")
        || url.starts_with("about:blank")
        || url.is_empty()
}
