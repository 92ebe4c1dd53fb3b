//! The browser and its link: finding and launching one (`launch`), reaching it over a
//! pipe, a CDP endpoint or the extension link (`connector`, `link`), the tab table kept
//! current from target events (`tabs`, `events`), dialogs, and browser-API calls through
//! the tabwire extension (`extension_api`), and the downloads it reports (`download_log`).
//!
//! This is the lowest room above the CDP wire: it imports only the base modules (config,
//! error, files, ids). It knows nothing of agents, page operations or faces; what it needs
//! from above (what to do when a browser connects) it is handed.

mod connector;
pub(crate) mod dialogs;
pub mod download_log;
pub mod emulation;
mod events;
mod extension_api;
pub mod farm;
pub mod launch;
mod link;
pub mod page_tools;
mod process;
pub(crate) mod tabs;
pub mod userscripts;

use parking_lot::Mutex;
use platform::process::BrowserProcess as Child;
use std::sync::Arc;
use std::time::Duration;

use process::Process;

use cdp::Connection;
use serde_json::{Value, json};

use crate::error::{EngineError, Result};
pub use connector::{Browsers, Loss, OnConnect};
pub use dialogs::{DialogAnswer, DialogOutcome};
pub use extension_api::ExtensionStatus;
pub use link::{DroppedLink, LINK_WAIT, LinkHello, LinkedBrowser, link_secret_path};
pub use page_tools::{PageTool, PageToolHints};
pub(crate) use tabs::TabState;
pub use tabs::{
    ClosedTab, Dialog, DialogPolicy, Holder, Stop, Tab, TabInfo, TabRegistry, parse_tab_handle,
    tab_handle,
};

/// Deadline for the small housekeeping commands (attach, enable, list).
pub(crate) const HOUSEKEEPING: Duration = Duration::from_secs(10);

/// What a browser connection is given when it starts.
pub(crate) struct BrowserSetup {
    pub registry: Arc<TabRegistry>,
    pub child: Option<Child>,
    pub temp_profile: Option<std::path::PathBuf>,
    pub extension_id: Option<String>,
    /// Whether new tabs open in windows of their own (see `Browsers::own_windows`).
    pub own_windows: bool,
    /// The userscripts every attached tab gets.
    pub userscripts: Arc<userscripts::UserScripts>,
}

/// One CDP target as the browser lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DebugTarget {
    pub target_id: String,
    /// page, iframe, service_worker, …
    pub kind: String,
    pub url: String,
    pub title: String,
    pub attached: bool,
    /// The browser context it lives in, where the browser says.
    #[serde(skip)]
    pub context: Option<String>,
    /// The tab handle, for a page target tabwire tracks.
    pub tab: Option<String>,
    /// That tab's number (the `N` of `client:N`).
    pub tab_id: Option<u64>,
}

/// Where a tab is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowPlace {
    pub window_id: u64,
    /// Whether it is its window's selected tab (None: the link cannot tell).
    pub active: Option<bool>,
    /// normal, minimized, maximized or fullscreen, as the browser says.
    pub state: Option<String>,
}

/// One connected browser: its CDP connection and the tabs we know in it.
pub struct Browser {
    pub(crate) conn: Connection,
    /// The `client` part of `client:tab` handles.
    pub client_id: String,
    pub(crate) table: Mutex<tabs::TabTable>,
    registry: Arc<TabRegistry>,
    /// The process of a browser we launched.
    process: Option<Process>,
    temp_profile: Option<std::path::PathBuf>,
    extension_id: Option<String>,
    own_windows: bool,
    pub product: Mutex<String>,
    /// What a linked browser's extension said of itself (extension link only).
    pub link_info: Mutex<Value>,
    /// A debugger session on the tabwire extension's worker, in a browser we launched.
    pub(crate) extension_session: Mutex<Option<String>>,
    /// The tab tabwire last brought to the front (opened active, or activated).
    front: Mutex<Option<String>>,
    /// Downloads the browser has reported.
    pub downloads: download_log::DownloadLog,
    /// Held while a tab is attached, so two attaches of one tab cannot race (an agent's
    /// call and the search index's read need not hold the same reservation).
    attaching: tokio::sync::Mutex<()>,
    /// Page-tool events of a session the tab table does not know yet: the tools a page
    /// registered before the attach finished, reported by `WebMCP.enable` itself. The
    /// attach takes them once it has recorded the session.
    pub(crate) early_tool_events: Mutex<Vec<Arc<cdp::Event>>>,
    /// Set once its loss is on record (whoever noticed it first: the connection's
    /// watcher, or a call's probe).
    pub(crate) lost: std::sync::atomic::AtomicBool,
    /// Set when tabwire itself closes it (shutting down): its exit is then expected,
    /// not a loss to warn of.
    pub(crate) closing: Arc<std::sync::atomic::AtomicBool>,
    /// The userscripts every tab it attaches to gets.
    userscripts: Arc<userscripts::UserScripts>,
}

impl Browser {
    pub(crate) async fn start(
        conn: Connection,
        client_id: &str,
        setup: BrowserSetup,
    ) -> Result<Arc<Browser>> {
        // The moment a launched browser exits, its connection closes: nothing is written
        // into a pipe nobody reads any more.
        let closing = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let process = setup.child.map(|child| {
            let conn = conn.clone();
            let closing = closing.clone();
            Process::watch(child, move |how| {
                if closing.load(std::sync::atomic::Ordering::Acquire) {
                    tracing::debug!("{how}");
                } else {
                    tracing::warn!("{how}");
                }
                conn.close();
            })
        });
        let browser = Arc::new(Browser {
            conn: conn.clone(),
            client_id: client_id.to_owned(),
            table: Mutex::new(tabs::TabTable::default()),
            registry: setup.registry,
            process,
            temp_profile: setup.temp_profile,
            extension_id: setup.extension_id,
            own_windows: setup.own_windows,
            product: Mutex::new(String::new()),
            link_info: Mutex::new(Value::Null),
            extension_session: Mutex::new(None),
            front: Mutex::new(None),
            downloads: download_log::DownloadLog::default(),
            attaching: tokio::sync::Mutex::new(()),
            early_tool_events: Mutex::new(Vec::new()),
            lost: std::sync::atomic::AtomicBool::new(false),
            closing,
            userscripts: setup.userscripts,
        });
        // Subscribe before discovery so no target event falls between the two.
        let events = conn.subscribe();
        tokio::spawn(events::track(Arc::downgrade(&browser), events));
        conn.call(
            None,
            "Target.setDiscoverTargets",
            json!({"discover": true}),
            HOUSEKEEPING,
        )
        .await?;
        browser.resync().await?;
        if let Ok(version) = conn
            .call(None, "Browser.getVersion", json!({}), HOUSEKEEPING)
            .await
        {
            *browser.product.lock() = version["product"].as_str().unwrap_or_default().into();
        }
        Ok(browser)
    }

    /// Reads every target and brings the tab table in line (at start, and after the event
    /// stream lagged and events may have been lost).
    pub(crate) async fn resync(&self) -> Result<()> {
        let targets = self
            .conn
            .call(None, "Target.getTargets", json!({}), HOUSEKEEPING)
            .await?;
        let infos = targets["targetInfos"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let (added, closed) = self
            .table
            .lock()
            .reconcile(&self.registry, &self.client_id, &infos);
        self.registry.note_change();
        if added + closed > 0 {
            tracing::debug!(added, closed, client = %self.client_id, "tab table resynchronised");
        }
        Ok(())
    }

    /// Whether this browser goes by `name` (chrome, edge, brave, …): the linked
    /// extension's report, or the product it says it is.
    pub fn is_named(&self, name: &str) -> bool {
        let name = name.to_ascii_lowercase();
        let linked = self.link_info.lock()["browser"]
            .as_str()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let product = self.product.lock().to_ascii_lowercase();
        linked.contains(&name) || product.contains(&name) || self.client_id == name
    }

    /// Whether this browser is linked through the extension (not launched or attached).
    pub fn is_linked(&self) -> bool {
        !self.link_info.lock().is_null()
    }

    /// The process id of a browser we launched.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(Process::pid)
    }

    /// Waits up to `timeout` for a browser we launched to be reaped (so its exit can be
    /// told); at once for any other.
    pub(crate) async fn wait_exit(&self, timeout: Duration) {
        if let Some(process) = &self.process {
            process.wait(timeout).await;
        }
    }

    /// How a browser we launched exited, if it has.
    pub fn exit(&self) -> Option<String> {
        self.process.as_ref().and_then(Process::exit)
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub fn registry(&self) -> &TabRegistry {
        &self.registry
    }

    /// One of this browser's tabs as an agent sees it.
    pub fn info(&self, tab: &Tab, default: Option<u64>) -> TabInfo {
        TabInfo::of(&self.client_id, self.kind(), tab, default)
    }

    /// Which browser this is, as a word (chrome, edge, opera): what a linked extension's
    /// user agent or a launched browser's product says. Chromium and other Chrome builds
    /// are `chrome`.
    pub fn kind(&self) -> &'static str {
        let linked = self.link_info.lock()["browser"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let said = format!("{linked} {}", self.product.lock());
        if said.contains("Edg/") || said.contains("Edge/") {
            "edge"
        } else if said.contains("OPR/") || said.contains("Opera") {
            "opera"
        } else {
            "chrome"
        }
    }

    /// The handle (`client:N`) of one of this browser's tabs.
    pub fn handle(&self, tab: &Tab) -> String {
        tab_handle(&self.client_id, tab.tab_id)
    }

    /// Records a page target (idempotent), returning its tab.
    pub(crate) fn note_target(&self, info: &Value) -> Option<Tab> {
        let mut table = self.table.lock();
        let state = table.note(&self.registry, &self.client_id, info)?;
        Some(state.snapshot(&self.registry, &self.client_id))
    }

    pub fn tabs(&self) -> Vec<Tab> {
        let table = self.table.lock();
        let mut tabs: Vec<Tab> = table
            .values()
            .map(|t| t.snapshot(&self.registry, &self.client_id))
            .collect();
        tabs.sort_by_key(|tab| tab.tab_id);
        tabs
    }

    pub fn tab_by_id(&self, tab_id: u64) -> Option<Tab> {
        self.table
            .lock()
            .values()
            .find(|tab| tab.tab_id == tab_id)
            .map(|t| t.snapshot(&self.registry, &self.client_id))
    }

    pub(crate) fn tab_by_target(&self, target_id: &str) -> Option<Tab> {
        self.table
            .lock()
            .get(target_id)
            .map(|t| t.snapshot(&self.registry, &self.client_id))
    }

    pub(crate) fn update_tab(&self, target_id: &str, change: impl FnOnce(&mut TabState)) {
        if let Some(tab) = self.table.lock().get_mut(target_id) {
            change(tab);
        }
    }

    /// Records who owns a tab.
    pub(crate) fn set_owner(&self, target_id: &str, owner: Option<&str>) {
        self.registry
            .set_owner(&self.client_id, target_id, owner.map(str::to_owned));
    }

    /// Forgets every tab (the browser is gone); how many there were.
    pub(crate) fn forget_all(&self) -> usize {
        let targets: Vec<String> = self
            .table
            .lock()
            .values()
            .map(|t| t.target_id.clone())
            .collect();
        for target in &targets {
            self.forget_tab(target);
        }
        self.registry.note_change();
        targets.len()
    }

    /// Forgets a closed tab; late events about it cannot bring it back.
    pub(crate) fn forget_tab(&self, target_id: &str) {
        self.table.lock().remove(target_id);
        self.registry.mark_closed(&self.client_id, target_id);
    }

    pub(crate) fn target_of_session(&self, session_id: &str) -> Option<String> {
        self.table
            .lock()
            .values()
            .find(|tab| tab.session.as_deref() == Some(session_id))
            .map(|tab| tab.target_id.clone())
    }

    /// Opens a tab (in a window of its own where `own_windows`) and records its owner;
    /// with `window`, in a new window of that size (CSS px); with `context`, in that
    /// browser context.
    pub(crate) async fn open_tab_in(
        &self,
        url: &str,
        active: bool,
        owner_id: Option<&str>,
        window: Option<(u32, u32)>,
        context: Option<&str>,
    ) -> Result<Tab> {
        // A context of its own has no window yet to put a tab in.
        let mut create = json!({
            "url": url, "background": !active,
            "newWindow": self.own_windows || window.is_some() || context.is_some(),
        });
        if let Some((width, height)) = window {
            create["width"] = json!(width);
            create["height"] = json!(height);
        }
        if let Some(context) = context {
            create["browserContextId"] = json!(context);
        }
        let created = self
            .conn
            .call(None, "Target.createTarget", create, HOUSEKEEPING)
            .await?;
        let target_id = created["targetId"].as_str().unwrap_or_default().to_owned();
        let info = self.target_info(&target_id).await?;
        self.note_target(&info);
        self.set_owner(&target_id, owner_id);
        if active {
            *self.front.lock() = Some(target_id.clone());
        }
        self.tab_by_target(&target_id)
            .ok_or(EngineError::NoSuchTab(target_id))
    }

    /// Makes a browser context (its own cookies, storage, permissions and cache).
    pub(crate) async fn create_context(&self) -> Result<String> {
        let made = self
            .conn
            .call(
                None,
                "Target.createBrowserContext",
                json!({ "disposeOnDetach": false }),
                HOUSEKEEPING,
            )
            .await?;
        made["browserContextId"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| EngineError::Io("the browser made a context without an id".into()))
    }

    /// Disposes of a browser context: its tabs close, its data goes. Best effort (the
    /// browser may have gone already).
    pub(crate) async fn dispose_context(&self, context: &str) {
        let disposed = self
            .conn
            .call(
                None,
                "Target.disposeBrowserContext",
                json!({ "browserContextId": context }),
                HOUSEKEEPING,
            )
            .await;
        if let Err(error) = disposed {
            tracing::debug!(%error, context, "a session's context was not disposed of");
        }
    }

    /// Closes a tab. Ok(false) when it was already gone.
    pub(crate) async fn close_tab(&self, tab: &Tab) -> Result<bool> {
        let last = self.table.lock().values().count() == 1;
        let closed = self
            .conn
            .call(
                None,
                "Target.closeTarget",
                json!({"targetId": tab.target_id}),
                HOUSEKEEPING,
            )
            .await;
        // Forget it now rather than when the destroyed event arrives, so an immediate
        // retry sees it gone.
        self.forget_tab(&tab.target_id);
        match closed {
            Ok(_) => Ok(true),
            // Closed by someone else between our look-up and the close.
            Err(cdp::CdpError::Protocol { .. }) => Ok(false),
            // A browser whose last tab closes quits, and its link may drop before the
            // answer comes: the tab is gone with it.
            Err(cdp::CdpError::Lost { .. }) if last => Ok(true),
            Err(other) => Err(other.into()),
        }
    }

    /// The window a tab is in, and whether it is that window's selected tab when the
    /// link knows (the extension does; CDP does not: None).
    pub async fn window_of(&self, tab: &Tab) -> Result<(u64, Option<bool>)> {
        let place = self.place_of(tab).await?;
        Ok((place.window_id, place.active))
    }

    /// Where a tab is: its window, whether it is the window's selected tab (where the
    /// link knows), and the window's state.
    pub async fn place_of(&self, tab: &Tab) -> Result<WindowPlace> {
        let reply = self
            .conn
            .call(
                None,
                "Browser.getWindowForTarget",
                json!({ "targetId": tab.target_id }),
                HOUSEKEEPING,
            )
            .await?;
        Ok(WindowPlace {
            window_id: reply["windowId"].as_u64().unwrap_or_default(),
            active: reply["active"].as_bool(),
            state: reply["bounds"]["windowState"].as_str().map(str::to_owned),
        })
    }

    /// Resizes the window a tab is in (CSS px).
    pub async fn set_window_size(&self, tab: &Tab, width: u32, height: u32) -> Result<()> {
        let (window_id, _) = self.window_of(tab).await?;
        self.conn
            .call(
                None,
                "Browser.setWindowBounds",
                json!({ "windowId": window_id, "bounds": { "width": width, "height": height, "windowState": "normal" } }),
                HOUSEKEEPING,
            )
            .await?;
        Ok(())
    }

    /// Brings a tab to the front.
    pub(crate) async fn activate(&self, tab: &Tab) -> Result<()> {
        self.conn
            .call(
                None,
                "Target.activateTarget",
                json!({"targetId": tab.target_id}),
                HOUSEKEEPING,
            )
            .await?;
        *self.front.lock() = Some(tab.target_id.clone());
        self.uncover(&tab.target_id);
        Ok(())
    }

    /// A tab now in front of its window: the tabs that may share that window with it
    /// (its opener, its popups, its opener's other popups) are behind it.
    fn uncover(&self, target_id: &str) {
        let mut table = self.table.lock();
        let opener = table.get(target_id).and_then(|tab| tab.opener.clone());
        for tab in table.values_mut() {
            let beside = tab.opener.as_deref() == Some(target_id)
                || opener.as_deref() == Some(tab.target_id.as_str())
                || (opener.is_some() && tab.opener == opener);
            if tab.target_id == target_id {
                tab.covered = false;
            } else if beside {
                tab.covered = true;
            }
        }
    }

    /// Whether a tab may be hidden behind another of its window (see `TabState::covered`).
    pub(crate) fn is_covered(&self, target_id: &str) -> bool {
        self.table
            .lock()
            .get(target_id)
            .is_some_and(|tab| tab.covered)
    }

    /// The target of the tab tabwire last brought to the front, if it is still open.
    pub(crate) fn front_tab(&self) -> Option<String> {
        let front = self.front.lock().clone()?;
        self.tab_by_target(&front).map(|_| front)
    }

    /// The current URL and title of a tab, asked of the browser (not the table).
    pub async fn target_url(&self, target_id: &str) -> Result<(String, String)> {
        let info = self.target_info(target_id).await?;
        let field = |name: &str| info[name].as_str().unwrap_or_default().to_owned();
        Ok((field("url"), field("title")))
    }

    /// CDP's `TargetInfo` of one target.
    async fn target_info(&self, target_id: &str) -> Result<Value> {
        let reply = self
            .conn
            .call(
                None,
                "Target.getTargetInfo",
                json!({"targetId": target_id}),
                HOUSEKEEPING,
            )
            .await?;
        Ok(reply["targetInfo"].clone())
    }

    /// Every CDP target: pages, service workers, extension pages, iframes.
    pub async fn all_targets(&self) -> Result<Vec<DebugTarget>> {
        let reply = self
            .conn
            .call(None, "Target.getTargets", json!({}), HOUSEKEEPING)
            .await?;
        let field = |t: &Value, name: &str| t[name].as_str().unwrap_or_default().to_owned();
        Ok(reply["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                let tab = self.tab_by_target(&field(t, "targetId"));
                DebugTarget {
                    target_id: field(t, "targetId"),
                    kind: field(t, "type"),
                    url: field(t, "url"),
                    title: field(t, "title"),
                    attached: t["attached"].as_bool().unwrap_or(false),
                    context: t["browserContextId"].as_str().map(str::to_owned),
                    tab: tab.as_ref().map(|tab| self.handle(tab)),
                    tab_id: tab.map(|tab| tab.tab_id),
                }
            })
            .collect())
    }

    /// The flattened CDP session for a tab, attaching on first use. Attaches are one at a
    /// time and the session is looked up again once it is our turn, so a tab is attached
    /// once even when a reserved page and an observer ask together.
    pub(crate) async fn session_for(&self, target_id: &str) -> Result<String> {
        let known = || {
            self.tab_by_target(target_id)
                .and_then(|tab| tab.session.clone())
        };
        if let Some(session) = known() {
            return Ok(session);
        }
        let _one_attach_at_a_time = self.attaching.lock().await;
        if let Some(session) = known() {
            return Ok(session);
        }
        let attached = self
            .conn
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target_id, "flatten": true}),
                HOUSEKEEPING,
            )
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .ok_or_else(|| EngineError::NoSuchTab(target_id.to_owned()))?
            .to_owned();
        let s = Some(session.as_str());
        // The page script is not registered for new documents: the page room installs it
        // in the top document of a tabwire navigation once it has loaded, or with a
        // document's first page-script call, so no frame and no navigation the page makes
        // itself pays for a script no call may need.
        // Page tools (WebMCP): enabling reports the tools already registered, then each
        // one added or removed; a browser without the domain refuses it.
        let (page, frames, auto, webmcp) = tokio::join!(
            self.conn.call(s, "Page.enable", json!({}), HOUSEKEEPING),
            self.conn
                .call(s, "Page.getFrameTree", json!({}), HOUSEKEEPING),
            self.conn.call(
                s,
                "Target.setAutoAttach",
                json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}),
                HOUSEKEEPING,
            ),
            self.conn.call(s, "WebMCP.enable", json!({}), HOUSEKEEPING),
        );
        page?;
        auto?;
        // A tab still on its initial empty document has no frame tree over the extension
        // link; its first navigation names the main frame (see events).
        let main_frame = frames
            .ok()
            .and_then(|f| f["frameTree"]["frame"]["id"].as_str().map(str::to_owned));
        self.update_tab(target_id, |tab| {
            tab.session = Some(session.clone());
            if main_frame.is_some() {
                tab.main_frame = main_frame;
            }
            tab.webmcp = match webmcp {
                Ok(_) => page_tools::Offered::Yes,
                Err(_) => page_tools::Offered::No,
            };
        });
        self.take_early_tool_events(target_id, &session);
        // The agent's userscripts run on this tab's next loads.
        for script in self.userscripts.list().iter().filter(|s| s.enabled) {
            if let Err(error) = self.install_userscript(target_id, &session, script).await {
                tracing::debug!(%error, "could not put a userscript into a tab");
            }
        }
        Ok(session)
    }

    /// Applies the page-tool events that came for `session` before the table knew it.
    pub(super) fn take_early_tool_events(&self, target_id: &str, session: &str) {
        let early: Vec<Arc<cdp::Event>> = {
            let mut waiting = self.early_tool_events.lock();
            let (mine, others) = std::mem::take(&mut *waiting)
                .into_iter()
                .partition(|e| e.session_id.as_deref() == Some(session));
            *waiting = others;
            mine
        };
        let mut changed = false;
        self.update_tab(target_id, |tab| {
            for event in &early {
                changed |= page_tools::on_event(&mut tab.page_tools, &event.method, &event.params);
            }
        });
        if changed {
            self.registry.note_change();
        }
    }

    /// Stops a browser we launched: a polite close, then a kill if it lingers.
    pub async fn shutdown(&self) {
        let Some(process) = &self.process else { return };
        self.closing
            .store(true, std::sync::atomic::Ordering::Release);
        let _ = self
            .conn
            .call(None, "Browser.close", json!({}), Duration::from_secs(3))
            .await;
        if !process.wait(Duration::from_secs(5)).await {
            process.kill();
            process.wait(Duration::from_secs(5)).await;
        }
        if let Some(dir) = &self.temp_profile {
            let _ = tokio::fs::remove_dir_all(dir).await;
        }
    }
}

/// The first line of a thrown exception, from CDP's `exceptionDetails`.
pub(crate) fn exception_text(details: &Value) -> String {
    let description = details["exception"]["description"].as_str();
    let text = details["text"].as_str().unwrap_or("script threw");
    description
        .map(|d| d.lines().next().unwrap_or(d).to_owned())
        .unwrap_or_else(|| text.to_owned())
}

/// The name of tabwire's isolated world in each document, where the page script lives.
pub const WORLD: &str = "tabwire";

impl Drop for Browser {
    fn drop(&mut self) {
        // A browser we launched that was never shut down politely goes with us.
        let process = self.process.take();
        if let Some(process) = &process {
            process.kill();
        }
        let Some(dir) = self.temp_profile.take() else {
            return;
        };
        // Its throw-away profile goes once the browser has stopped writing to it, off
        // the runtime's threads; without a runtime (the process is ending), at once.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if let Some(process) = process {
                        process.wait(Duration::from_secs(5)).await;
                    }
                    let _ = tokio::task::spawn_blocking(move || std::fs::remove_dir_all(dir)).await;
                });
            }
            Err(_) => {
                let _ = std::fs::remove_dir_all(dir);
            }
        }
    }
}
