//! Reaching the browser the engine is configured for: launching (and relaunching) a
//! managed one, attaching to a CDP endpoint, or waiting for a browser to link through the
//! extension. One `Browsers` per engine.
//!
//! A connect never holds the lock that readers of the current browser take: a status
//! report during a slow launch or an unreachable endpoint answers at once.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, OnceLock};

use super::farm::{self, Pool, Seat};
use super::link::Links;
use super::{Browser, BrowserSetup, Tab, TabRegistry, launch, parse_tab_handle};
use crate::config::{EngineConfig, LinkConfig, SessionBrowsers};
use crate::error::{EngineError, Result};

/// How many browser losses are kept on record (one a session's browser, at most).
const LOSSES_KEPT: usize = 64;

/// A connected browser and, for a CDP endpoint, its seat in the pool.
struct Slot {
    browser: Arc<Browser>,
    seat: Option<Seat>,
}

/// How long a probe waits for a busy browser before the call goes ahead anyway.
const PROBE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Told of every browser as it connects (a launch, an attach, a link), so a higher room
/// can do its start-up work there (restoring leftover permission leases, say).
pub type OnConnect = Box<dyn Fn(Arc<Browser>) + Send + Sync>;

pub struct Browsers {
    config: Arc<EngineConfig>,
    /// Tab ids are never reused, even across a browser relaunch.
    registry: Arc<TabRegistry>,
    /// The launched or attached browser every session shares (not used by the extension
    /// link, nor when each session has a browser of its own).
    current: Mutex<Option<Slot>>,
    /// Held only while connecting, so two calls never launch two browsers.
    connecting: tokio::sync::Mutex<()>,
    /// Each agent session's own browser (`SessionBrowsers::PerSession`), by session id.
    own: Mutex<HashMap<u64, Slot>>,
    /// Held while a session's own browser connects: one lock a session, so one
    /// session's wait in a farm's queue holds up no other.
    own_connecting: Mutex<HashMap<u64, Arc<tokio::sync::Mutex<()>>>>,
    /// A CDP link's endpoints.
    pool: Option<Pool>,
    pub(super) links: Links,
    on_connect: OnceLock<OnConnect>,
    /// The browsers that went away under us, and why (the latest last).
    lost: Mutex<VecDeque<Loss>>,
    /// The agents' userscripts, for every browser.
    userscripts: Arc<super::userscripts::UserScripts>,
}

/// A browser that went away: when, why, and how many tabs went with it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Loss {
    /// Counts losses, so a session can tell one it has not reported yet.
    pub seq: u64,
    pub client_id: String,
    /// Milliseconds since the epoch.
    pub at_ms: u64,
    pub reason: String,
    pub tabs_lost: usize,
    /// The agent session whose own browser it was, when each has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<u64>,
}

impl Browsers {
    /// The agents' userscripts.
    pub fn userscripts(&self) -> &super::userscripts::UserScripts {
        &self.userscripts
    }

    /// Keeps a userscript and puts it into every attached tab of every browser.
    pub async fn add_userscript(
        &self,
        new: super::userscripts::NewUserScript,
    ) -> Result<super::userscripts::UserScript> {
        let script = self.userscripts.add(new)?;
        for browser in self.connected_now() {
            browser.install_everywhere(&script).await;
        }
        Ok(script)
    }

    /// Changes a userscript and puts the new one in every tab in place of the old (only
    /// if it is enabled).
    pub async fn update_userscript(
        &self,
        id: &str,
        new: super::userscripts::NewUserScript,
    ) -> Result<super::userscripts::UserScript> {
        let script = self.userscripts.replace(id, new)?;
        for browser in self.connected_now() {
            browser.uninstall_userscript(id).await;
            if script.enabled {
                browser.install_everywhere(&script).await;
            }
        }
        Ok(script)
    }

    /// Forgets a userscript and takes it out of every tab that has it.
    pub async fn remove_userscript(&self, id: &str) -> Result<super::userscripts::UserScript> {
        let script = self.userscripts.remove(id)?;
        for browser in self.connected_now() {
            browser.uninstall_userscript(id).await;
        }
        Ok(script)
    }

    /// Turns a userscript on (into every attached tab) or off (out of them).
    pub async fn set_userscript_enabled(
        &self,
        id: &str,
        enabled: bool,
    ) -> Result<super::userscripts::UserScript> {
        let script = self.userscripts.set_enabled(id, enabled)?;
        for browser in self.connected_now() {
            if enabled {
                browser.install_everywhere(&script).await;
            } else {
                browser.uninstall_userscript(id).await;
            }
        }
        Ok(script)
    }

    pub fn new(config: Arc<EngineConfig>) -> Browsers {
        let pool = match &config.link {
            LinkConfig::Endpoint(urls) => Some(Pool::new(urls)),
            _ => None,
        };
        Browsers {
            config,
            registry: Arc::default(),
            current: Mutex::new(None),
            connecting: tokio::sync::Mutex::new(()),
            own: Mutex::default(),
            own_connecting: Mutex::default(),
            pool,
            links: Links::default(),
            on_connect: OnceLock::new(),
            lost: Mutex::default(),
            userscripts: Arc::default(),
        }
    }

    /// Whether each agent session has a browser of its own.
    pub fn per_session(&self) -> bool {
        self.config.sessions == SessionBrowsers::PerSession
    }

    /// Seats taken at each CDP endpoint now (none for other links).
    pub fn endpoint_load(&self) -> Vec<(String, usize)> {
        self.pool.as_ref().map(Pool::load).unwrap_or_default()
    }

    /// Sets what happens as each browser connects (once).
    pub fn on_connect(&self, callback: OnConnect) {
        let _ = self.on_connect.set(callback);
    }

    pub(super) fn connected(&self, browser: &Arc<Browser>) {
        if let Some(callback) = self.on_connect.get() {
            callback(browser.clone());
        }
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    pub fn registry(&self) -> &TabRegistry {
        &self.registry
    }

    pub fn link_name(&self) -> &'static str {
        self.config.link.name()
    }

    fn is_extension(&self) -> bool {
        matches!(self.config.link, LinkConfig::Extension)
    }

    /// The connected browser, launching or reconnecting it when there is none or the last
    /// one went away. Over the extension link: the most recently linked browser.
    pub async fn browser(self: &Arc<Self>) -> Result<Arc<Browser>> {
        if self.is_extension() {
            return self.wait_for_link().await;
        }
        // There is no shared browser to make: each session has its own (`browser_of`).
        if self.per_session() {
            return Err(EngineError::Unsupported(
                "each agent session has a browser of its own here; none is shared".into(),
            ));
        }
        if let Some(browser) = self.current() {
            return Ok(browser);
        }
        let _connecting = self.connecting.lock().await;
        if let Some(browser) = self.current() {
            return Ok(browser);
        }
        let dead = self.current.lock().take();
        if let Some(dead) = dead {
            tracing::warn!("browser connection lost; reconnecting");
            dead.browser.shutdown().await;
        }
        let slot = self.connect_slot(false).await?;
        let browser = slot.browser.clone();
        *self.current.lock() = Some(slot);
        self.connected(&browser);
        self.watch_for_loss(&browser);
        Ok(browser)
    }

    /// The browser an agent session works in: its own when each session has one
    /// (connected on first use, waiting in the farm's queue as long as the call may),
    /// else the shared one.
    pub async fn browser_of(self: &Arc<Self>, session: u64) -> Result<Arc<Browser>> {
        if !self.per_session() {
            return self.browser().await;
        }
        if let Some(browser) = self.own_now(session) {
            return Ok(browser);
        }
        let gate = self
            .own_connecting
            .lock()
            .entry(session)
            .or_default()
            .clone();
        let _connecting = gate.lock().await;
        if let Some(browser) = self.own_now(session) {
            return Ok(browser);
        }
        // Its browser went a moment ago and the watcher has not put that on record yet:
        // do it now, as this session's loss, so the reply says what was lost.
        let dead = self
            .own
            .lock()
            .get(&session)
            .map(|slot| slot.browser.clone());
        if let Some(dead) = dead {
            self.lose(&dead);
        }
        let slot = self.connect_slot(true).await?;
        let browser = slot.browser.clone();
        self.own.lock().insert(session, slot);
        self.connected(&browser);
        self.watch_for_loss(&browser);
        Ok(browser)
    }

    /// A session's own browser if it is connected now.
    fn own_now(&self, session: u64) -> Option<Arc<Browser>> {
        self.own
            .lock()
            .get(&session)
            .map(|slot| slot.browser.clone())
            .filter(|b| !b.conn.is_closed())
    }

    /// The browsers a session may use that are connected now; never connects.
    pub fn connected_of(&self, session: u64) -> Vec<Arc<Browser>> {
        if self.per_session() {
            return self.own_now(session).into_iter().collect();
        }
        self.connected_now()
    }

    /// Every browser a session may use, connecting its own or the shared one on demand.
    pub async fn all_of(self: &Arc<Self>, session: u64) -> Result<Vec<Arc<Browser>>> {
        if self.per_session() {
            return Ok(vec![self.browser_of(session).await?]);
        }
        self.all().await
    }

    /// A tab by handle, among the browsers a session may use.
    pub async fn find_tab_of(
        self: &Arc<Self>,
        session: u64,
        handle: &str,
    ) -> Result<(Arc<Browser>, Tab)> {
        if !self.per_session() {
            return self.find_tab(handle).await;
        }
        let browser = self.browser_of(session).await?;
        let tab_id = parse_tab_handle(handle, &browser.client_id)?;
        let tab = browser
            .tab_by_id(tab_id)
            .ok_or_else(|| EngineError::NoSuchTab(handle.trim().to_owned()))?;
        Ok((browser, tab))
    }

    /// Ends a session's own browser, if it has one: the connection is closed (a farm
    /// closes the browser with it) and its seat given back. Not a loss.
    pub fn end_session(&self, session: u64) {
        self.own_connecting.lock().remove(&session);
        let Some(slot) = self.own.lock().remove(&session) else {
            return;
        };
        slot.browser
            .lost
            .store(true, std::sync::atomic::Ordering::Release);
        slot.browser.forget_all();
        slot.browser.conn.close();
        tracing::info!(session, "the session's own browser was closed with it");
    }

    /// Connects the configured browser, timing it.
    async fn connect_slot(&self, for_session: bool) -> Result<Slot> {
        let started = std::time::Instant::now();
        let slot = match &self.config.link {
            LinkConfig::Endpoint(_) => self.attach_pooled(for_session).await?,
            _ => Slot {
                browser: self.connect().await?,
                seat: None,
            },
        };
        tracing::info!(
            link = self.link_name(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "browser connected"
        );
        Ok(slot)
    }

    /// Attaches to the pool's least-loaded endpoint, trying the next when one refuses
    /// or cannot be reached; the last failure is the call's, a farm's "full" preferred
    /// (it is the one worth retrying).
    async fn attach_pooled(&self, for_session: bool) -> Result<Slot> {
        let pool = self
            .pool
            .as_ref()
            .ok_or_else(|| EngineError::Endpoint("no CDP endpoint is configured".into()))?;
        let mut failure: Option<EngineError> = None;
        for candidate in pool.candidates() {
            let seat = candidate.take();
            let url = if for_session {
                farm::session_url(seat.url())
            } else {
                seat.url().to_owned()
            };
            match self.attach(&url).await {
                Ok(browser) => {
                    return Ok(Slot {
                        browser,
                        seat: Some(seat),
                    });
                }
                Err(error) => {
                    tracing::warn!(endpoint = %cdp::without_query(seat.url()), %error, "endpoint refused or unreachable");
                    seat.failed();
                    let busy = |e: &EngineError| e.code() == crate::error::ErrorCode::BrowserBusy;
                    if failure
                        .as_ref()
                        .is_none_or(|kept| !busy(kept) || busy(&error))
                    {
                        failure = Some(error);
                    }
                }
            }
        }
        Err(failure.unwrap_or_else(|| EngineError::Endpoint("no CDP endpoint answered".into())))
    }

    /// Attaches to one endpoint. The handshake may wait in a farm's queue: as long as
    /// the call being run may still take (less a moment to answer in), else 10 s.
    async fn attach(&self, endpoint: &str) -> Result<Arc<Browser>> {
        let url = cdp::websocket_url(endpoint)
            .await
            .map_err(|e| EngineError::Endpoint(e.to_string()))?;
        let wait = crate::ids::Deadline::of_call()
            .map(|deadline| {
                deadline
                    .remaining()
                    .saturating_sub(std::time::Duration::from_millis(500))
            })
            .filter(|wait| !wait.is_zero())
            .unwrap_or(std::time::Duration::from_secs(10));
        let conn = cdp::Connection::over_websocket_within(&url, wait).await?;
        Browser::start(conn, "cdp", self.setup(None, None)).await
    }

    /// When the browser's connection closes (its process exited, the endpoint went
    /// away), its tabs are dropped at once and the loss is put on record.
    fn watch_for_loss(self: &Arc<Self>, browser: &Arc<Browser>) {
        let (weak, browser) = (Arc::downgrade(self), Arc::downgrade(browser));
        let Some(conn) = browser.upgrade().map(|b| b.conn.clone()) else {
            return;
        };
        tokio::spawn(async move {
            conn.closed().await;
            let (Some(browsers), Some(browser)) = (weak.upgrade(), browser.upgrade()) else {
                return;
            };
            browsers.settle_loss(&browser).await;
        });
    }

    /// Puts a browser whose connection closed on record as lost (once, whoever asks).
    async fn settle_loss(&self, browser: &Arc<Browser>) {
        // The pipe may close a moment before the process is reaped: wait for it, so the
        // record says how it ended.
        browser.wait_exit(std::time::Duration::from_secs(2)).await;
        self.lose(browser);
    }

    /// Makes sure every browser connected now is alive before a call sends it anything.
    ///
    /// Between calls a browser can die, and tabwire learns of it only when its process
    /// is reaped or its connection closes: tens of milliseconds after a kill while the
    /// process tears down, a moment after an extension worker stops. A call made in that
    /// window would write into a dead connection and could not tell whether its command
    /// ran. Each browser is asked for a reply to a command that does nothing; one that
    /// answers with its connection closing is put on record as lost first, so the call
    /// finds a new browser (managed), waits for the relink (extension), or is told the
    /// endpoint went, and nothing it sends is lost in between.
    pub async fn confirm(&self, session: u64) {
        let connected = self.connected_of(session);
        let probes = connected.iter().map(|browser| async move {
            if browser.conn.confirm_alive(PROBE_WAIT).await.is_err() {
                tracing::info!(client = %browser.client_id, "a probe found the browser gone");
                if !self.is_extension() {
                    self.settle_loss(browser).await;
                }
            }
        });
        futures_util::future::join_all(probes).await;
    }

    fn lose(&self, browser: &Arc<Browser>) {
        if browser.lost.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        let reason = browser
            .exit()
            .unwrap_or_else(|| match self.endpoint_of(browser) {
                Some(endpoint) => format!("the connection to the CDP endpoint {endpoint} closed"),
                None => "the browser connection closed".to_owned(),
            });
        let tabs_lost = browser.forget_all();
        // Whose browser it was: the shared one, or one session's own.
        let session = {
            let mut own = self.own.lock();
            let session = own
                .iter()
                .find(|(_, slot)| Arc::ptr_eq(&slot.browser, browser))
                .map(|(session, _)| *session);
            if let Some(session) = session {
                own.remove(&session);
            }
            session
        };
        let mut lost = self.lost.lock();
        let seq = lost.back().map_or(1, |l| l.seq + 1);
        let at_ms = crate::ids::now_ms();
        if browser.closing.load(std::sync::atomic::Ordering::Acquire) {
            tracing::debug!(%reason, tabs_lost, ?session, "browser closed");
        } else {
            tracing::warn!(%reason, tabs_lost, ?session, "browser lost");
        }
        if lost.len() == LOSSES_KEPT {
            lost.pop_front();
        }
        lost.push_back(Loss {
            seq,
            client_id: browser.client_id.clone(),
            at_ms,
            reason,
            tabs_lost,
            session,
        });
        drop(lost);
        let mut current = self.current.lock();
        if current
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(&c.browser, browser))
        {
            *current = None;
        }
    }

    /// The endpoint a browser was reached at (without its query), if it was.
    fn endpoint_of(&self, browser: &Arc<Browser>) -> Option<String> {
        let seat_url = |slot: &Slot| {
            Arc::ptr_eq(&slot.browser, browser)
                .then(|| {
                    slot.seat
                        .as_ref()
                        .map(|seat| cdp::without_query(seat.url()))
                })
                .flatten()
        };
        let current = self.current.lock().as_ref().and_then(seat_url);
        current.or_else(|| self.own.lock().values().find_map(seat_url))
    }

    /// The last browser lost, if one was.
    pub fn last_loss(&self) -> Option<Loss> {
        self.lost.lock().back().cloned()
    }

    /// The last loss of a browser a session used: its own, when each has one.
    pub fn last_loss_of(&self, session: u64) -> Option<Loss> {
        let lost = self.lost.lock();
        if !self.per_session() {
            return lost.back().cloned();
        }
        lost.iter()
            .rev()
            .find(|loss| loss.session == Some(session))
            .cloned()
    }

    /// The browser if one is connected now; never launches and never waits.
    pub fn current(&self) -> Option<Arc<Browser>> {
        if self.is_extension() {
            return self.links.live().pop();
        }
        self.current
            .lock()
            .as_ref()
            .map(|slot| slot.browser.clone())
            .filter(|b| !b.conn.is_closed())
    }

    /// Every browser connected now (several profiles can link at once); never launches.
    pub fn connected_now(&self) -> Vec<Arc<Browser>> {
        if self.is_extension() {
            return self.links.live();
        }
        if self.per_session() {
            return self
                .own
                .lock()
                .values()
                .map(|slot| slot.browser.clone())
                .filter(|b| !b.conn.is_closed())
                .collect();
        }
        self.current().into_iter().collect()
    }

    /// Every browser this engine drives: the linked ones for the extension link, else the
    /// one browser (launched or attached on demand).
    pub async fn all(self: &Arc<Self>) -> Result<Vec<Arc<Browser>>> {
        if self.is_extension() {
            let linked = self.links.live();
            if !linked.is_empty() {
                return Ok(linked);
            }
        }
        Ok(vec![self.browser().await?])
    }

    /// Finds a tab by handle (`client:N`, or `N` in the current browser).
    pub async fn find_tab(self: &Arc<Self>, handle: &str) -> Result<(Arc<Browser>, Tab)> {
        let browser = match handle.split_once(':') {
            // Another linked browser (a second profile through the extension).
            Some((client, _)) if self.is_extension() => self.linked_browser(client).await?,
            _ => self.browser().await?,
        };
        let tab_id = parse_tab_handle(handle, &browser.client_id)?;
        let tab = browser
            .tab_by_id(tab_id)
            .ok_or_else(|| EngineError::NoSuchTab(handle.trim().to_owned()))?;
        Ok((browser, tab))
    }

    pub async fn shutdown(&self) {
        let sessions: Vec<u64> = self.own.lock().keys().copied().collect();
        for session in sessions {
            self.end_session(session);
        }
        let slot = self.current.lock().take();
        if let Some(slot) = slot {
            slot.browser.shutdown().await;
        }
    }

    pub(super) fn setup(
        &self,
        child: Option<platform::process::BrowserProcess>,
        temp: Option<std::path::PathBuf>,
    ) -> BrowserSetup {
        BrowserSetup {
            registry: self.registry.clone(),
            child,
            temp_profile: temp,
            extension_id: self.config.extension_id.clone(),
            own_windows: self.own_windows(),
            userscripts: self.userscripts.clone(),
        }
    }

    /// A headless browser we launched (and a linked one) gets each new tab in a window of
    /// its own: a background tab in a shared window is hidden, and a hidden page does not
    /// render, so trusted input to it stalls. Nobody sees headless windows, so this costs
    /// nothing; in the user's own browser it keeps an agent's page out of their windows.
    fn own_windows(&self) -> bool {
        match &self.config.link {
            LinkConfig::Managed(options) => options.is_headless(),
            LinkConfig::Extension => true,
            // A farm's browser is headless and nobody else's: the same holds. Another
            // endpoint may be a person's browser, whose windows are theirs.
            LinkConfig::Endpoint(_) => self.per_session(),
        }
    }

    async fn connect(&self) -> Result<Arc<Browser>> {
        match &self.config.link {
            LinkConfig::Managed(options) => {
                let launched = launch::launch_connected(options).await?;
                let conn = launched.connection;
                let setup = self.setup(Some(launched.child), launched.temp_profile);
                Browser::start(conn, "managed", setup)
                    .await
                    .map_err(|e| EngineError::Launch(format!("browser did not answer: {e}")))
            }
            LinkConfig::Endpoint(_) => Ok(self.attach_pooled(false).await?.browser),
            LinkConfig::Extension => self.wait_for_link().await,
        }
    }
}
