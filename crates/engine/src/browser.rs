//! One connected browser: its CDP connection, the tabs we know in it, and the background
//! task that keeps that knowledge current from CDP events.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::process::Child;

use cdp::{Connection, Event};
use serde_json::{Value, json};

use crate::error::{EngineError, Result};

/// Deadline for the small housekeeping commands (attach, enable, list).
pub(crate) const HOUSEKEEPING: Duration = Duration::from_secs(10);

/// What a script-opened dialog gets when nobody is waiting to answer it by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DialogPolicy {
    #[default]
    Dismiss,
    Accept,
    Manual,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Dialog {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<&'static str>,
}

/// Our record of one page target.
#[derive(Debug, Clone)]
pub struct Tab {
    pub tab_id: u64,
    pub target_id: String,
    pub url: String,
    pub title: String,
    pub generation: u64,
    pub owner_id: Option<String>,
    pub opener: Option<String>,
    pub(crate) session: Option<String>,
    pub(crate) busy: Arc<tokio::sync::Mutex<()>>,
    pub(crate) dialog_policy: DialogPolicy,
    pub(crate) open_dialog: Option<Dialog>,
    pub(crate) answered_dialogs: Vec<Dialog>,
    /// Sessions of out-of-process iframes, by frame id (which is their target id).
    pub(crate) child_sessions: HashMap<String, String>,
    /// The top frame's id, known once attached. Over CDP it equals the target id; over
    /// the extension link targets are named after tabs, so it is asked for.
    pub(crate) main_frame: Option<String>,
    /// tabwire's isolated world in the top document, once made (see `Page::evaluate_op`).
    pub(crate) top_world: Option<i64>,
    /// Counts top documents, so a world made for one is never recorded for the next.
    pub(crate) document_seq: u64,
}

impl Tab {
    /// A new top document: its world is made on first use.
    pub(crate) fn new_document(&mut self) {
        self.document_seq += 1;
        self.top_world = None;
    }
}

pub(crate) struct Tabs {
    by_target: HashMap<String, Tab>,
    /// Targets known to be closed; late info events must not bring them back.
    gone: std::collections::HashSet<String>,
}

/// Tab ids and owners that outlive one connection to a browser: a linked browser whose
/// extension worker restarts comes back with the same tab ids and owners. Ids are never
/// reused.
pub struct TabIds {
    next: AtomicU64,
    /// (client id, target id) → (tab id, owner id).
    known: Mutex<HashMap<TargetKey, (u64, Option<String>)>>,
}

type TargetKey = (String, String);

impl Default for TabIds {
    fn default() -> Self {
        TabIds {
            next: AtomicU64::new(1),
            known: Mutex::new(HashMap::new()),
        }
    }
}

impl TabIds {
    fn id_for(&self, client: &str, target: &str) -> (u64, Option<String>) {
        lock(&self.known)
            .entry((client.to_owned(), target.to_owned()))
            .or_insert_with(|| (self.next.fetch_add(1, Ordering::Relaxed), None))
            .clone()
    }

    fn set_owner(&self, client: &str, target: &str, owner: Option<String>) {
        if let Some(entry) = lock(&self.known).get_mut(&(client.to_owned(), target.to_owned())) {
            entry.1 = owner;
        }
    }
}

pub struct Browser {
    pub(crate) conn: Connection,
    /// The `client` part of `client:tab` handles.
    pub client_id: String,
    pub(crate) tabs: Mutex<Tabs>,
    ids: Arc<TabIds>,
    pub(crate) child: Mutex<Option<Child>>,
    pub(crate) temp_profile: Option<std::path::PathBuf>,
    pub product: Mutex<String>,
    /// What a linked browser's extension said of itself (extension link only).
    pub link_info: Mutex<Value>,
    /// A debugger session on the tabwire extension's worker, in a browser we launched.
    pub(crate) extension_session: Mutex<Option<String>>,
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section here only swaps map entries; a panic cannot leave them torn.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Browser {
    pub(crate) async fn start(
        conn: Connection,
        client_id: &str,
        ids: Arc<TabIds>,
        child: Option<Child>,
        temp_profile: Option<std::path::PathBuf>,
    ) -> Result<Arc<Browser>> {
        let browser = Arc::new(Browser {
            conn: conn.clone(),
            client_id: client_id.to_owned(),
            tabs: Mutex::new(Tabs {
                by_target: HashMap::new(),
                gone: Default::default(),
            }),
            ids,
            child: Mutex::new(child),
            temp_profile,
            product: Mutex::new(String::new()),
            link_info: Mutex::new(Value::Null),
            extension_session: Mutex::new(None),
        });
        // Subscribe before discovery so no target event falls between the two.
        let events = conn.subscribe();
        tokio::spawn(track_events(Arc::downgrade(&browser), events));
        conn.call(
            None,
            "Target.setDiscoverTargets",
            json!({"discover": true}),
            HOUSEKEEPING,
        )
        .await?;
        let targets = conn
            .call(None, "Target.getTargets", json!({}), HOUSEKEEPING)
            .await?;
        for info in targets["targetInfos"].as_array().into_iter().flatten() {
            browser.note_target(info);
        }
        if let Ok(version) = conn
            .call(None, "Browser.getVersion", json!({}), HOUSEKEEPING)
            .await
        {
            *lock(&browser.product) = version["product"].as_str().unwrap_or_default().into();
        }
        Ok(browser)
    }

    /// Whether this browser is linked through the extension (not launched or attached).
    pub fn is_linked(&self) -> bool {
        !lock(&self.link_info).is_null()
    }

    /// The process id of a browser we launched.
    pub fn pid(&self) -> Option<u32> {
        lock(&self.child).as_ref().and_then(|c| c.id())
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Records a page target (idempotent), returning its tab.
    pub(crate) fn note_target(&self, info: &Value) -> Option<Tab> {
        if info["type"] != "page" {
            return None;
        }
        let target_id = info["targetId"].as_str()?.to_owned();
        let mut tabs = lock(&self.tabs);
        // An info event that arrives after the tab was closed must not bring it back.
        if tabs.gone.contains(&target_id) {
            return None;
        }
        let tab = tabs.by_target.entry(target_id.clone()).or_insert_with(|| {
            let (tab_id, owner_id) = self.ids.id_for(&self.client_id, &target_id);
            Tab {
                tab_id,
                target_id,
                url: String::new(),
                title: String::new(),
                generation: 1,
                owner_id,
                opener: info["openerId"].as_str().map(str::to_owned),
                session: None,
                busy: Arc::new(tokio::sync::Mutex::new(())),
                dialog_policy: DialogPolicy::default(),
                open_dialog: None,
                answered_dialogs: Vec::new(),
                child_sessions: HashMap::new(),
                main_frame: None,
                top_world: None,
                document_seq: 0,
            }
        });
        if let Some(url) = info["url"].as_str() {
            tab.url = url.to_owned();
        }
        if let Some(title) = info["title"].as_str() {
            tab.title = title.to_owned();
        }
        Some(tab.clone())
    }

    pub fn tabs(&self) -> Vec<Tab> {
        let mut tabs: Vec<Tab> = lock(&self.tabs).by_target.values().cloned().collect();
        tabs.sort_by_key(|tab| tab.tab_id);
        tabs
    }

    pub fn tab_by_id(&self, tab_id: u64) -> Option<Tab> {
        lock(&self.tabs)
            .by_target
            .values()
            .find(|tab| tab.tab_id == tab_id)
            .cloned()
    }

    pub(crate) fn update_tab(&self, target_id: &str, change: impl FnOnce(&mut Tab)) {
        if let Some(tab) = lock(&self.tabs).by_target.get_mut(target_id) {
            change(tab);
        }
    }

    /// Records who owns a tab, here and in the ids that outlive this connection.
    pub(crate) fn set_owner(&self, target_id: &str, owner: Option<&str>) {
        self.update_tab(target_id, |tab| tab.owner_id = owner.map(str::to_owned));
        self.ids
            .set_owner(&self.client_id, target_id, owner.map(str::to_owned));
    }

    pub(crate) fn forget_tab(&self, target_id: &str) {
        let mut tabs = lock(&self.tabs);
        tabs.by_target.remove(target_id);
        tabs.gone.insert(target_id.to_owned());
    }

    pub(crate) fn tab_by_target(&self, target_id: &str) -> Option<Tab> {
        lock(&self.tabs).by_target.get(target_id).cloned()
    }

    fn target_of_session(&self, session_id: &str) -> Option<String> {
        lock(&self.tabs)
            .by_target
            .values()
            .find(|tab| tab.session.as_deref() == Some(session_id))
            .map(|tab| tab.target_id.clone())
    }

    /// The flattened CDP session for a tab, attaching on first use. Callers hold the tab's
    /// reservation, so two attaches for one tab cannot race.
    pub(crate) async fn session_for(&self, target_id: &str) -> Result<String> {
        if let Some(session) = self.tab_by_target(target_id).and_then(|tab| tab.session) {
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
        let install = json!({
            "source": crate::script::install_source(),
            "worldName": crate::script::WORLD,
            "runImmediately": true,
        });
        let (page, auto, frames, installed) = tokio::join!(
            self.conn.call(s, "Page.enable", json!({}), HOUSEKEEPING),
            self.conn.call(
                s,
                "Page.addScriptToEvaluateOnNewDocument",
                install,
                HOUSEKEEPING
            ),
            self.conn
                .call(s, "Page.getFrameTree", json!({}), HOUSEKEEPING),
            self.conn.call(
                s,
                "Target.setAutoAttach",
                json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}),
                HOUSEKEEPING,
            ),
        );
        page?;
        auto?;
        // Without it each document gets the script with its first call instead.
        if let Err(error) = installed {
            tracing::debug!(%error, "page script not registered for new documents");
        }
        // A tab still on its initial empty document has no frame tree over the extension
        // link; its first navigation names the main frame (see on_event).
        let main_frame = frames
            .ok()
            .and_then(|f| f["frameTree"]["frame"]["id"].as_str().map(str::to_owned));
        self.update_tab(target_id, |tab| {
            tab.session = Some(session.clone());
            if main_frame.is_some() {
                tab.main_frame = main_frame;
            }
        });
        Ok(session)
    }

    /// Stops a browser we launched: a polite close, then a kill if it lingers.
    pub async fn shutdown(&self) {
        let child = lock(&self.child).take();
        let Some(mut child) = child else { return };
        let _ = self
            .conn
            .call(None, "Browser.close", json!({}), Duration::from_secs(3))
            .await;
        if tokio::time::timeout(Duration::from_secs(5), child.wait())
            .await
            .is_err()
        {
            let _ = child.kill().await;
        }
        if let Some(dir) = &self.temp_profile {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // kill_on_drop ends a browser we launched that was never shut down politely.
        drop(lock(&self.child).take());
        if let Some(dir) = &self.temp_profile {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Keeps the tab table current and answers dialogs per each tab's policy.
async fn track_events(
    browser: std::sync::Weak<Browser>,
    mut events: tokio::sync::broadcast::Receiver<Arc<Event>>,
) {
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "target tracker fell behind");
                continue;
            }
            Err(_) => return,
        };
        let Some(browser) = browser.upgrade() else {
            return;
        };
        on_event(&browser, &event);
    }
}

fn on_event(browser: &Arc<Browser>, event: &Event) {
    let params = &event.params;
    match event.method.as_str() {
        "Target.targetCreated" | "Target.targetInfoChanged" => {
            browser.note_target(&params["targetInfo"]);
        }
        "Target.targetDestroyed" => {
            if let Some(target_id) = params["targetId"].as_str() {
                browser.forget_tab(target_id);
            }
        }
        "Target.detachedFromTarget" => {
            if let Some(session) = params["sessionId"].as_str() {
                let mut tabs = lock(&browser.tabs);
                let mut worker = lock(&browser.extension_session);
                if worker.as_deref() == Some(session) {
                    *worker = None;
                }
                drop(worker);
                for tab in tabs.by_target.values_mut() {
                    if tab.session.as_deref() == Some(session) {
                        tab.session = None;
                        tab.top_world = None;
                    }
                    tab.child_sessions.retain(|_, s| s != session);
                }
            }
        }
        "Target.attachedToTarget" => note_child_session(browser, event),
        "Page.frameNavigated" if params["frame"]["parentId"].is_null() => {
            let (Some(session), Some(frame)) =
                (event.session_id.as_deref(), params["frame"]["id"].as_str())
            else {
                return;
            };
            if let Some(target) = browser.target_of_session(session) {
                browser.update_tab(&target, |tab| {
                    tab.main_frame = Some(frame.to_owned());
                    tab.new_document();
                });
            }
        }
        "Page.javascriptDialogOpening" => on_dialog(browser, event),
        "Page.javascriptDialogClosed" => {
            if let Some(target) = event
                .session_id
                .as_deref()
                .and_then(|s| browser.target_of_session(s))
            {
                browser.update_tab(&target, |tab| tab.open_dialog = None);
            }
        }
        _ => {}
    }
}

/// Out-of-process iframes arrive as auto-attached child sessions of their page's session.
fn note_child_session(browser: &Arc<Browser>, event: &Event) {
    let info = &event.params["targetInfo"];
    let (Some(parent), Some(child), Some(frame)) = (
        event.session_id.as_deref(),
        event.params["sessionId"].as_str(),
        info["targetId"].as_str(),
    ) else {
        return;
    };
    if info["type"] != "iframe" {
        return;
    }
    let mut tabs = lock(&browser.tabs);
    for tab in tabs.by_target.values_mut() {
        let owns_parent = tab.session.as_deref() == Some(parent)
            || tab.child_sessions.values().any(|s| s == parent);
        if owns_parent {
            tab.child_sessions
                .insert(frame.to_owned(), child.to_owned());
        }
    }
    drop(tabs);
    // Nested OOPIFs inside this frame attach to its session in turn.
    let conn = browser.conn.clone();
    let child = child.to_owned();
    tokio::spawn(async move {
        let _ = conn
            .call(
                Some(&child),
                "Target.setAutoAttach",
                json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}),
                HOUSEKEEPING,
            )
            .await;
    });
}

fn on_dialog(browser: &Arc<Browser>, event: &Event) {
    let Some(session) = event.session_id.clone() else {
        return;
    };
    let Some(target) = browser.target_of_session(&session) else {
        return;
    };
    let params = &event.params;
    let mut dialog = Dialog {
        kind: params["type"].as_str().unwrap_or("alert").to_owned(),
        message: params["message"].as_str().unwrap_or_default().to_owned(),
        default_prompt: params["defaultPrompt"].as_str().map(str::to_owned),
        action: None,
    };
    let policy = browser
        .tab_by_target(&target)
        .map(|tab| tab.dialog_policy)
        .unwrap_or_default();
    if policy == DialogPolicy::Manual {
        browser.update_tab(&target, |tab| tab.open_dialog = Some(dialog));
        return;
    }
    let accept = policy == DialogPolicy::Accept;
    dialog.action = Some(if accept { "accepted" } else { "dismissed" });
    let mut answer = json!({ "accept": accept });
    if accept && let Some(prompt) = &dialog.default_prompt {
        answer["promptText"] = json!(prompt);
    }
    browser.update_tab(&target, |tab| tab.answered_dialogs.push(dialog));
    let conn = browser.conn.clone();
    tokio::spawn(async move {
        let _ = conn
            .call(
                Some(&session),
                "Page.handleJavaScriptDialog",
                answer,
                HOUSEKEEPING,
            )
            .await;
    });
}
