//! The engine: owns the browser link (launching or reconnecting it on demand), the
//! agents' sessions and their default tabs, tab ownership, reservations and receipts.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use crate::browser::{Browser, HOUSEKEEPING, Tab, lock};
use crate::error::{EngineError, Result};
use crate::launch::{self, LaunchOptions};
use crate::page::Page;
use crate::receipts::Receipts;

/// How the engine reaches a browser.
#[derive(Debug, Clone)]
pub enum LinkConfig {
    /// Launch (and relaunch after a crash) a browser of our own over a pipe.
    Managed(LaunchOptions),
    /// Attach to a running browser at a ws:// or http:// CDP endpoint.
    Endpoint(String),
    /// The user's own browsers, linked through the tabwire extension (see `link.rs`).
    Extension,
}

#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub link: LinkConfig,
    /// Every file the engine writes lands under this directory.
    pub output_dir: PathBuf,
    /// upload_files reads only files under these directories.
    pub upload_roots: Vec<PathBuf>,
    /// Where permission leases are kept across restarts (None: in memory only).
    pub state_file: Option<PathBuf>,
    /// The shortest permission lease, in seconds (60 unless a test shortens it).
    pub min_lease_seconds: u64,
    /// The tabwire extension's id, and the folder it is loaded from.
    pub extension_id: Option<String>,
    pub extension_dir: Option<PathBuf>,
    /// The build stamp of the extension sources this binary carries.
    pub extension_stamp: Option<String>,
    /// Where bookmark subtrees are saved before they are removed.
    pub backup_dir: PathBuf,
}

pub struct Engine {
    pub config: EngineConfig,
    browser: tokio::sync::Mutex<Option<Arc<Browser>>>,
    /// Tab ids are never reused, even across a browser relaunch.
    tab_ids: Arc<crate::browser::TabIds>,
    next_session: AtomicU64,
    /// Which agent session uses which tab as its default, so a new session does not
    /// silently share another's page.
    default_claims: Mutex<HashMap<u64, u64>>,
    pub receipts: Receipts,
    pub(crate) creations: crate::tabs::Creations,
    pub(crate) captures: crate::captures::Captures,
    pub(crate) leases: crate::permissions::Leases,
    leftovers: std::sync::Once,
    pub(crate) links: crate::link::Links,
}

impl Engine {
    pub fn new(config: EngineConfig) -> Arc<Engine> {
        Arc::new(Engine {
            config,
            browser: tokio::sync::Mutex::new(None),
            tab_ids: Arc::default(),
            next_session: AtomicU64::new(1),
            default_claims: Mutex::new(HashMap::new()),
            receipts: Receipts::default(),
            creations: Default::default(),
            captures: Default::default(),
            leases: Default::default(),
            leftovers: std::sync::Once::new(),
            links: Default::default(),
        })
    }

    pub fn link_name(&self) -> &'static str {
        match self.config.link {
            LinkConfig::Managed(_) => "managed",
            LinkConfig::Endpoint(_) => "cdp",
            LinkConfig::Extension => "extension",
        }
    }

    /// The connected browser, launching or reconnecting it when there is none or the last
    /// one went away.
    pub async fn browser(&self) -> Result<Arc<Browser>> {
        let mut slot = self.browser.lock().await;
        if let Some(browser) = slot.as_ref()
            && !browser.conn.is_closed()
        {
            return Ok(browser.clone());
        }
        if let Some(dead) = slot.take() {
            tracing::warn!("browser connection lost; reconnecting");
            dead.shutdown().await;
        }
        let browser = self.connect().await?;
        *slot = Some(browser.clone());
        Ok(browser)
    }

    /// Every browser this engine drives: the linked ones for the extension link, else the
    /// one browser (launched or attached on demand).
    pub async fn all_browsers(&self) -> Result<Vec<Arc<Browser>>> {
        if matches!(self.config.link, LinkConfig::Extension) {
            let linked = self.live_links();
            if !linked.is_empty() {
                return Ok(linked);
            }
        }
        Ok(vec![self.browser().await?])
    }

    /// The browser if one is connected now; never launches.
    pub async fn current_browser(&self) -> Option<Arc<Browser>> {
        self.browser
            .lock()
            .await
            .as_ref()
            .filter(|b| !b.conn.is_closed())
            .cloned()
    }

    async fn connect(&self) -> Result<Arc<Browser>> {
        match &self.config.link {
            LinkConfig::Managed(options) => {
                let launched = launch::launch(options)?;
                let conn = cdp::Connection::over_pipe(
                    pipe_sender(launched.to_browser)?,
                    pipe_receiver(launched.from_browser)?,
                );
                let browser = Browser::start(
                    conn,
                    "managed",
                    self.tab_ids.clone(),
                    Some(launched.child),
                    launched.temp_profile,
                )
                .await;
                browser.map_err(|e| EngineError::Launch(format!("browser did not answer: {e}")))
            }
            LinkConfig::Extension => self.wait_for_link().await,
            LinkConfig::Endpoint(endpoint) => {
                let url = cdp::websocket_url(endpoint)
                    .await
                    .map_err(|e| EngineError::Endpoint(e.to_string()))?;
                let conn = cdp::Connection::over_websocket(&url).await?;
                Browser::start(conn, "cdp", self.tab_ids.clone(), None, None).await
            }
        }
    }

    pub async fn shutdown(&self) {
        if let Some(browser) = self.browser.lock().await.take() {
            browser.shutdown().await;
        }
    }

    pub(crate) fn tab_ids(&self) -> Arc<crate::browser::TabIds> {
        self.tab_ids.clone()
    }

    /// A new agent session (one per MCP session).
    pub fn new_session(self: &Arc<Self>) -> AgentSession {
        AgentSession {
            id: self.next_session.fetch_add(1, Ordering::Relaxed),
            engine: self.clone(),
            default_tab: Mutex::new(None),
        }
    }

    /// Opens a new tab and records its owner.
    pub async fn open_tab(&self, url: &str, active: bool, owner_id: Option<&str>) -> Result<Tab> {
        let browser = self.browser().await?;
        let created = browser
            .conn
            .call(
                None,
                "Target.createTarget",
                json!({"url": url, "background": !active, "newWindow": self.tabs_in_own_windows()}),
                HOUSEKEEPING,
            )
            .await?;
        let target_id = created["targetId"].as_str().unwrap_or_default().to_owned();
        let info = browser
            .conn
            .call(
                None,
                "Target.getTargetInfo",
                json!({"targetId": target_id}),
                HOUSEKEEPING,
            )
            .await?;
        browser.note_target(&info["targetInfo"]);
        browser.set_owner(&target_id, owner_id);
        browser
            .tab_by_target(&target_id)
            .ok_or(EngineError::NoSuchTab(target_id))
    }

    /// A headless browser we launched (and a linked one) gets each new tab in a window of
    /// its own: a
    /// background tab in a shared window is hidden, and a hidden page does not render,
    /// so trusted input to it stalls. Nobody sees headless windows, so this costs nothing.
    fn tabs_in_own_windows(&self) -> bool {
        match &self.config.link {
            LinkConfig::Managed(options) => options.is_headless(),
            // In the user's browser an agent works in a window of its own, which also keeps
            // its page visible (and its input flowing) while the user stays in theirs.
            LinkConfig::Extension => true,
            LinkConfig::Endpoint(_) => false,
        }
    }

    /// Parses a tab handle (`client:N`, `N`) and finds the tab.
    pub async fn find_tab(&self, handle: &str) -> Result<(Arc<Browser>, Tab)> {
        let browser = match handle.split_once(':') {
            // Another linked browser (a second profile through the extension).
            Some((client, _)) if matches!(self.config.link, LinkConfig::Extension) => {
                self.linked_browser(client).await?
            }
            _ => self.browser().await?,
        };
        let tab_id = parse_tab_handle(handle, &browser.client_id)?;
        let tab = browser
            .tab_by_id(tab_id)
            .ok_or_else(|| EngineError::NoSuchTab(handle.to_owned()))?;
        Ok((browser, tab))
    }

    fn claim_default(&self, tab_id: u64, session: u64) {
        lock(&self.default_claims).insert(tab_id, session);
    }

    fn claimed_by_other(&self, tab_id: u64, session: u64) -> bool {
        lock(&self.default_claims)
            .get(&tab_id)
            .is_some_and(|owner| *owner != session)
    }
}

/// `managed:3`, `cdp:3` or `3` → 3.
pub fn parse_tab_handle(handle: &str, client_id: &str) -> Result<u64> {
    let handle = handle.trim();
    let number = match handle.split_once(':') {
        Some((client, number)) if client == client_id => number,
        Some((client, _)) => {
            return Err(EngineError::NoSuchTab(format!(
                "{handle} (this server's browser is '{client_id}', not '{client}')"
            )));
        }
        None => handle,
    };
    number.parse().map_err(|_| {
        EngineError::invalid(
            "session_id",
            format!("'{handle}' is not a tab handle like {client_id}:3"),
        )
    })
}

pub fn tab_handle(browser: &Browser, tab: &Tab) -> String {
    format!("{}:{}", browser.client_id, tab.tab_id)
}

fn pipe_sender(fd: OwnedFd) -> Result<tokio::net::unix::pipe::Sender> {
    tokio::net::unix::pipe::Sender::from_owned_fd(fd)
        .map_err(|e| EngineError::Launch(format!("pipe: {e}")))
}

fn pipe_receiver(fd: OwnedFd) -> Result<tokio::net::unix::pipe::Receiver> {
    tokio::net::unix::pipe::Receiver::from_owned_fd(fd)
        .map_err(|e| EngineError::Launch(format!("pipe: {e}")))
}

/// One agent's view of the engine: its default tab and its receipts.
pub struct AgentSession {
    pub id: u64,
    pub engine: Arc<Engine>,
    default_tab: Mutex<Option<u64>>,
}

impl AgentSession {
    /// The tab a call addresses: the explicit handle, else this session's default (chosen
    /// on first use: a tab no other session uses, or a new one).
    pub async fn resolve_tab(&self, handle: Option<&str>) -> Result<(Arc<Browser>, Tab)> {
        // Leases a previous run left are restored once the browser is needed anyway.
        self.engine
            .leftovers
            .call_once(|| self.engine.restore_leftover_leases());
        if let Some(handle) = handle {
            return self.engine.find_tab(handle).await;
        }
        let current = *lock(&self.default_tab);
        if let Some(id) = current {
            for browser in self.engine.all_browsers().await? {
                if let Some(tab) = browser.tab_by_id(id) {
                    return Ok((browser, tab));
                }
            }
        }
        let browser = self.engine.browser().await?;
        // In a browser we launched or attached to, an unused page tab is taken over. The
        // user's own browser is theirs: a session there works in a tab of its own.
        let reuse = !matches!(self.engine.config.link, LinkConfig::Extension);
        let free = browser.tabs().into_iter().find(|tab| {
            reuse
                && !self.engine.claimed_by_other(tab.tab_id, self.id)
                && tab.owner_id.is_none()
                && scriptable(&tab.url)
        });
        let tab = match free {
            Some(tab) => tab,
            None => self.engine.open_tab("about:blank", false, None).await?,
        };
        self.set_default(tab.tab_id);
        Ok((browser, tab))
    }

    pub fn set_default(&self, tab_id: u64) {
        *lock(&self.default_tab) = Some(tab_id);
        self.engine.claim_default(tab_id, self.id);
    }

    pub fn default_tab(&self) -> Option<u64> {
        *lock(&self.default_tab)
    }

    /// Reserves a tab for one page operation. A tab another call holds answers
    /// `target_busy` at once; calls are never queued behind each other.
    pub async fn page(&self, handle: Option<&str>) -> Result<Page> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        let reservation =
            tab.busy
                .clone()
                .try_lock_owned()
                .map_err(|_| EngineError::TargetBusy {
                    tab: tab_handle(&browser, &tab),
                })?;
        let session = browser.session_for(&tab.target_id).await?;
        Ok(Page::new(
            browser,
            tab,
            session,
            reservation,
            self.engine.clone(),
        ))
    }
}

impl Drop for AgentSession {
    fn drop(&mut self) {
        lock(&self.engine.default_claims).retain(|_, owner| *owner != self.id);
    }
}

/// Pages an agent can drive (not the browser's own chrome://, new-tab or extension pages).
fn scriptable(url: &str) -> bool {
    url.starts_with("http://")
        || url.starts_with("https://")
        || url.starts_with("about:blank")
        || url.is_empty()
}

/// The deadline helper every page operation uses: seconds from a tool's `timeout`.
pub fn seconds(timeout: f64) -> Duration {
    Duration::from_secs_f64(timeout.clamp(0.0, 3600.0))
}
