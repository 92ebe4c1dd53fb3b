//! The tab table of one connected browser, the registry of tab ids and owners that
//! outlives a connection, and the handles (`client:N`) tabs are named by.
//!
//! Each fact has one home: a tab's id, owner and whether it closed live in the
//! [`TabRegistry`]; what the connection knows of it now (URL, CDP session, frames,
//! dialogs) lives in the [`TabTable`]. A [`Tab`] is a snapshot of both.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::error::{EngineError, Input, Result};

/// Closed tabs are remembered this long (so a late event cannot revive one, and a close
/// of one the user closed says `already_gone`)…
const CLOSED_KEPT: Duration = Duration::from_secs(600);
/// …and at most this many, oldest forgotten first.
const MAX_CLOSED: usize = 1024;

/// What a connection knows of one page target now.
#[derive(Debug, Clone)]
pub struct TabState {
    pub tab_id: u64,
    pub target_id: String,
    pub url: String,
    pub title: String,
    pub generation: u64,
    pub opener: Option<String>,
    /// The browser context it lives in (`browserContextId`), where the browser says.
    pub context: Option<String>,
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
    /// tabwire's isolated world in the top document, once made.
    pub(crate) top_world: Option<i64>,
    /// Held while that world is being made, so a call waits for the one a navigation
    /// started making instead of making a second.
    pub(crate) world_lock: Arc<tokio::sync::Mutex<()>>,
    /// Counts top documents, so a world made for one is never recorded for the next.
    pub(crate) document_seq: u64,
    /// What holds the reservation beyond one call, if anything does.
    pub(crate) holder: Option<Holder>,
    /// Element refs handed out in this tab (`ref_N`): the next number, unique across the
    /// tab's documents, and the frame path of each ref that lives in an iframe.
    pub(crate) refs: RefBook,
    /// A dialog an input left open for the agent: answering it puts back the policy the
    /// tab had before that input (this one).
    pub(crate) dialog_left_open: Option<DialogPolicy>,
    /// A call that ended with a key or button down is releasing it; the tab is let go
    /// right after, so the next call waits for that instead of answering target_busy.
    pub(crate) releasing: bool,
    /// Another tab of its window may be in front of it (a popup its page opened, a tab
    /// brought forward beside it): the page is hidden, and trusted input to a hidden page
    /// stalls until it is brought to the front.
    pub(crate) covered: bool,
    /// What the tab is set to emulate, and which agent session set it.
    pub(crate) emulation: Option<super::emulation::Emulated>,
    /// The userscripts put into this tab's session: script id → CDP identifier.
    pub(crate) userscripts: HashMap<String, String>,
    /// Whether the browser offers page tools (WebMCP) here, once asked at attach.
    pub(crate) webmcp: super::page_tools::Offered,
    /// The tools its documents registered, in order (from the browser's WebMCP events).
    pub(crate) page_tools: Vec<super::page_tools::PageTool>,
}

/// A tab's element refs (see `page::tree`).
#[derive(Debug, Clone)]
pub(crate) struct RefBook {
    pub next: u64,
    pub framed: HashMap<String, Vec<Value>>,
}

impl Default for RefBook {
    fn default() -> Self {
        RefBook {
            next: 1,
            framed: HashMap::new(),
        }
    }
}

/// An operation that holds a tab's reservation after its call returned (an agent's
/// script still running), and how to ask it to let go.
#[derive(Debug, Clone)]
pub struct Holder {
    pub operation_id: String,
    pub stop: Arc<Stop>,
}

/// A request to stop an operation, and why. While its caller waits, the caller's own
/// cancellation counts as one, from the moment the client's cancellation arrives; once
/// the caller has stopped waiting (`abandon`), only an explicit `ask` does.
#[derive(Debug, Default)]
pub struct Stop {
    asked: tokio_util::sync::CancellationToken,
    caller: tokio_util::sync::CancellationToken,
    abandoned: std::sync::atomic::AtomicBool,
    reason: Mutex<Option<crate::error::ErrorCode>>,
}

impl Stop {
    /// A stop that is also asked (as `cancelled`) when `caller` is cancelled while the
    /// caller still waits.
    pub fn linked(caller: &tokio_util::sync::CancellationToken) -> Stop {
        Stop {
            caller: caller.clone(),
            ..Stop::default()
        }
    }

    pub fn ask(&self, reason: crate::error::ErrorCode) {
        self.reason.lock().get_or_insert(reason);
        self.asked.cancel();
    }

    /// The caller stopped waiting: its cancellation no longer stops the operation
    /// (its session ending, or its reply being sent, cancel it too).
    pub fn abandon(&self) {
        self.abandoned
            .store(true, std::sync::atomic::Ordering::Release);
    }

    pub fn is_abandoned(&self) -> bool {
        self.abandoned.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Whether it has been asked to stop (and is stopping).
    pub fn is_asked(&self) -> bool {
        self.asked.is_cancelled() || (!self.is_abandoned() && self.caller.is_cancelled())
    }

    /// Resolves once asked; with why.
    pub async fn asked(&self) -> crate::error::ErrorCode {
        tokio::select! {
            () = self.asked.cancelled() => {}
            () = self.caller.cancelled(), if !self.is_abandoned() => {
                if self.is_abandoned() {
                    self.asked.cancelled().await;
                }
            }
        }
        self.reason
            .lock()
            .unwrap_or(crate::error::ErrorCode::Cancelled)
    }
}

impl TabState {
    /// A new top document: its world is made on first use.
    pub(crate) fn new_document(&mut self) {
        self.document_seq += 1;
        self.top_world = None;
        // Refs of the old document's frames name nothing now; numbers go on rising.
        self.refs.framed.clear();
    }
}

/// A snapshot of one tab: its state and its owner.
#[derive(Debug, Clone)]
pub struct Tab {
    state: TabState,
    pub owner_id: Option<String>,
}

impl std::ops::Deref for Tab {
    type Target = TabState;
    fn deref(&self) -> &TabState {
        &self.state
    }
}

/// Page targets of one connection, by target id.
#[derive(Default)]
pub(crate) struct TabTable {
    by_target: HashMap<String, TabState>,
}

/// How many dialogs a tab remembers having answered until someone reads them.
const MAX_ANSWERED: usize = 32;

impl TabTable {
    pub(crate) fn get(&self, target: &str) -> Option<&TabState> {
        self.by_target.get(target)
    }

    pub(crate) fn get_mut(&mut self, target: &str) -> Option<&mut TabState> {
        self.by_target.get_mut(target)
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &TabState> {
        self.by_target.values()
    }

    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut TabState> {
        self.by_target.values_mut()
    }

    pub(crate) fn remove(&mut self, target: &str) -> Option<TabState> {
        self.by_target.remove(target)
    }

    /// Records a page target from its CDP `TargetInfo` (idempotent). A target the
    /// registry knows as closed stays closed.
    pub(crate) fn note(
        &mut self,
        registry: &TabRegistry,
        client: &str,
        info: &Value,
    ) -> Option<&TabState> {
        if info["type"] != "page" {
            return None;
        }
        let target_id = info["targetId"].as_str()?;
        let tab_id = registry.live_id(client, target_id)?;
        // A popup opens in front of its opener, in the opener's window.
        let opener = info["openerId"]
            .as_str()
            .filter(|_| !self.by_target.contains_key(target_id));
        if let Some(opener) = opener.and_then(|id| self.by_target.get_mut(id)) {
            opener.covered = true;
        }
        let tab = self
            .by_target
            .entry(target_id.to_owned())
            .or_insert_with(|| TabState {
                tab_id,
                target_id: target_id.to_owned(),
                url: String::new(),
                title: String::new(),
                generation: 1,
                opener: info["openerId"].as_str().map(str::to_owned),
                context: info["browserContextId"].as_str().map(str::to_owned),
                session: None,
                busy: Arc::new(tokio::sync::Mutex::new(())),
                dialog_policy: DialogPolicy::default(),
                open_dialog: None,
                answered_dialogs: Vec::new(),
                child_sessions: HashMap::new(),
                main_frame: None,
                top_world: None,
                world_lock: Arc::new(tokio::sync::Mutex::new(())),
                document_seq: 0,
                holder: None,
                refs: RefBook::default(),
                dialog_left_open: None,
                releasing: false,
                covered: false,
                emulation: None,
                userscripts: HashMap::new(),
                webmcp: Default::default(),
                page_tools: Vec::new(),
            });
        if let Some(url) = info["url"].as_str() {
            tab.url = url.to_owned();
        }
        if let Some(title) = info["title"].as_str() {
            tab.title = title.to_owned();
        }
        Some(tab)
    }

    /// Brings the table in line with a full list of the browser's targets (at start, and
    /// after the event stream lagged): new pages are added, vanished ones closed.
    /// Returns how many were added and closed.
    pub(crate) fn reconcile(
        &mut self,
        registry: &TabRegistry,
        client: &str,
        infos: &[Value],
    ) -> (usize, usize) {
        let present: std::collections::HashSet<&str> = infos
            .iter()
            .filter(|i| i["type"] == "page")
            .filter_map(|i| i["targetId"].as_str())
            .collect();
        let before = self.by_target.len();
        let vanished: Vec<String> = self
            .by_target
            .keys()
            .filter(|t| !present.contains(t.as_str()))
            .cloned()
            .collect();
        for target in &vanished {
            self.by_target.remove(target);
            registry.mark_closed(client, target);
        }
        // Tabs of an earlier connection that are not in this browser any more.
        registry.close_missing(client, &present);
        for info in infos {
            self.note(registry, client, info);
        }
        let added = self.by_target.len() + vanished.len() - before;
        (added, vanished.len())
    }

    pub(crate) fn push_answered(&mut self, target: &str, dialog: Dialog) {
        if let Some(tab) = self.by_target.get_mut(target) {
            if tab.answered_dialogs.len() == MAX_ANSWERED {
                tab.answered_dialogs.remove(0);
            }
            tab.answered_dialogs.push(dialog);
        }
    }
}

/// Tab ids, owners and closures that outlive one connection to a browser: a linked
/// browser whose extension worker restarts comes back with the same tab ids and owners.
/// Ids are never reused.
pub struct TabRegistry {
    next: AtomicU64,
    records: Mutex<HashMap<TargetKey, TabRecord>>,
    /// Rises whenever a tab of any browser appears, closes, or changes URL, title or
    /// document, so a watcher (the tab search index) wakes without polling.
    changes: tokio::sync::watch::Sender<u64>,
}

type TargetKey = (String, String);

#[derive(Debug, Clone)]
struct TabRecord {
    id: u64,
    owner: Option<String>,
    closed: Option<Instant>,
}

/// What the registry remembers of a tab that has closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosedTab {
    pub owner: Option<String>,
}

impl Default for TabRegistry {
    fn default() -> Self {
        TabRegistry {
            next: AtomicU64::new(1),
            records: Mutex::new(HashMap::new()),
            changes: tokio::sync::watch::Sender::new(0),
        }
    }
}

impl TabRegistry {
    /// Says that some tab appeared, closed or changed.
    pub(crate) fn note_change(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// Wakes on every [`TabRegistry::note_change`].
    pub fn watch_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// The id of a live target, made on first sight; None if it is known to have closed.
    /// A linked browser names its targets after Chrome's own tab ids (`tab-N`), which are
    /// kept as ours; elsewhere ids come from a counter and are never reused.
    fn live_id(&self, client: &str, target: &str) -> Option<u64> {
        let mut records = self.records.lock();
        let record = records
            .entry((client.to_owned(), target.to_owned()))
            .or_insert_with(|| TabRecord {
                id: native_tab_id(target)
                    .unwrap_or_else(|| self.next.fetch_add(1, Ordering::Relaxed)),
                owner: None,
                closed: None,
            });
        record.closed.is_none().then_some(record.id)
    }

    pub(crate) fn owner(&self, client: &str, target: &str) -> Option<String> {
        self.records
            .lock()
            .get(&(client.to_owned(), target.to_owned()))
            .and_then(|r| r.owner.clone())
    }

    pub(crate) fn set_owner(&self, client: &str, target: &str, owner: Option<String>) {
        if let Some(record) = self
            .records
            .lock()
            .get_mut(&(client.to_owned(), target.to_owned()))
        {
            record.owner = owner;
        }
    }

    pub(crate) fn mark_closed(&self, client: &str, target: &str) {
        let mut records = self.records.lock();
        if let Some(record) = records.get_mut(&(client.to_owned(), target.to_owned())) {
            record.closed.get_or_insert_with(Instant::now);
        }
        prune(&mut records);
    }

    /// Closes the live records of `client` whose targets are not `present`.
    fn close_missing(&self, client: &str, present: &std::collections::HashSet<&str>) {
        let mut records = self.records.lock();
        let now = Instant::now();
        for ((c, target), record) in records.iter_mut() {
            if c == client && record.closed.is_none() && !present.contains(target.as_str()) {
                record.closed = Some(now);
            }
        }
        prune(&mut records);
    }

    /// A closed tab of this client with this id, if one is still on record.
    pub fn closed(&self, client: &str, tab_id: u64) -> Option<ClosedTab> {
        self.records
            .lock()
            .iter()
            .find(|((c, _), r)| c == client && r.id == tab_id && r.closed.is_some())
            .map(|(_, r)| ClosedTab {
                owner: r.owner.clone(),
            })
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.records.lock().len()
    }
}

/// Chrome's tab id in a linked browser's target id (`tab-42` → 42).
fn native_tab_id(target: &str) -> Option<u64> {
    target.strip_prefix("tab-")?.parse().ok()
}

/// Forgets closed records past their time, then the oldest beyond the cap.
fn prune(records: &mut HashMap<TargetKey, TabRecord>) {
    records.retain(|_, r| r.closed.is_none_or(|at| at.elapsed() < CLOSED_KEPT));
    let mut closed: Vec<(Instant, TargetKey)> = records
        .iter()
        .filter_map(|(key, r)| r.closed.map(|at| (at, key.clone())))
        .collect();
    if closed.len() > MAX_CLOSED {
        closed.sort();
        for (_, key) in closed.iter().take(closed.len() - MAX_CLOSED) {
            records.remove(key);
        }
    }
}

impl TabState {
    /// The snapshot callers get, with the owner from the registry.
    pub(crate) fn snapshot(&self, registry: &TabRegistry, client: &str) -> Tab {
        Tab {
            owner_id: registry.owner(client, &self.target_id),
            state: self.clone(),
        }
    }
}

/// One tab as an agent sees it.
#[derive(Debug, Clone, Serialize)]
pub struct TabInfo {
    /// `client:N`.
    pub handle: String,
    pub client_id: String,
    pub tab_id: u64,
    pub url: String,
    pub title: String,
    pub generation: u64,
    pub owner_id: Option<String>,
    /// Whether it is the calling session's default tab.
    pub default: bool,
    /// Which browser it is in: chrome, edge, opera (see [`super::Browser::kind`]).
    pub browser: &'static str,
    /// What names this tab for its whole life, across navigations: its target id.
    pub identity: String,
}

impl TabInfo {
    /// `default`: the calling session's default tab id.
    pub fn of(client_id: &str, browser: &'static str, tab: &Tab, default: Option<u64>) -> TabInfo {
        TabInfo {
            handle: tab_handle(client_id, tab.tab_id),
            client_id: client_id.to_owned(),
            tab_id: tab.tab_id,
            url: tab.url.clone(),
            title: tab.title.clone(),
            generation: tab.generation,
            owner_id: tab.owner_id.clone(),
            default: default == Some(tab.tab_id),
            browser,
            identity: tab.target_id.clone(),
        }
    }
}

/// `client:N`, the handle a tab is named by across the engine.
pub fn tab_handle(client_id: &str, tab_id: u64) -> String {
    format!("{client_id}:{tab_id}")
}

/// `managed:3`, `cdp:3` or `3` → 3, for a browser whose client id is `client_id`.
pub fn parse_tab_handle(handle: &str, client_id: &str) -> Result<u64> {
    let handle = handle.trim();
    let number = match handle.split_once(':') {
        Some((client, number)) if client == client_id => number,
        Some((client, _)) => {
            return Err(EngineError::NoSuchTab(format!(
                "{handle} (this browser is '{client_id}', not '{client}')"
            )));
        }
        None => handle,
    };
    number.parse().map_err(|_| {
        EngineError::invalid(
            Input::Tab,
            format!("'{handle}' is not a tab id (3) or handle like {client_id}:3"),
        )
    })
}

// A tab's dialogs: how it answers them, and one it saw (answering them: `dialogs`).

/// What a script-opened dialog gets when nobody is waiting to answer it by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DialogPolicy {
    #[default]
    Dismiss,
    Accept,
    /// Left open for the agent to answer.
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
    /// When it opened, in milliseconds since the Unix epoch.
    pub opened_at_ms: u64,
}

impl Dialog {
    pub(crate) fn from_event(params: &Value) -> Dialog {
        Dialog {
            kind: params["type"].as_str().unwrap_or("alert").to_owned(),
            message: params["message"].as_str().unwrap_or_default().to_owned(),
            default_prompt: params["defaultPrompt"].as_str().map(str::to_owned),
            action: None,
            opened_at_ms: epoch_ms(),
        }
    }
}

fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|since| since.as_millis() as u64)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(target: &str) -> Value {
        json!({ "type": "page", "targetId": target, "url": format!("http://x/{target}") })
    }

    #[test]
    fn a_resync_adds_new_tabs_and_closes_vanished_ones() {
        let registry = TabRegistry::default();
        let mut table = TabTable::default();
        table.note(&registry, "managed", &page("A"));
        table.note(&registry, "managed", &page("B"));
        // Events were lost: B closed and C opened meanwhile.
        let (added, closed) = table.reconcile(
            &registry,
            "managed",
            &[
                page("A"),
                page("C"),
                json!({"type": "iframe", "targetId": "F"}),
            ],
        );
        assert_eq!((added, closed), (1, 1));
        let mut targets: Vec<&str> = table.values().map(|t| t.target_id.as_str()).collect();
        targets.sort();
        assert_eq!(targets, ["A", "C"]);
        // A late event for B cannot bring it back.
        assert!(table.note(&registry, "managed", &page("B")).is_none());
    }

    #[test]
    fn ids_survive_a_reconnect_and_closed_tabs_say_who_owned_them() {
        let registry = TabRegistry::default();
        let mut first = TabTable::default();
        let id = first.note(&registry, "ext-1", &page("T")).unwrap().tab_id;
        registry.set_owner("ext-1", "T", Some("task".into()));
        // The link comes back: the same target keeps its id and owner.
        let mut second = TabTable::default();
        second.reconcile(&registry, "ext-1", &[page("T")]);
        let again = second.get("T").unwrap().snapshot(&registry, "ext-1");
        assert_eq!(
            (again.tab_id, again.owner_id.as_deref()),
            (id, Some("task"))
        );
        second.reconcile(&registry, "ext-1", &[]);
        assert_eq!(
            registry.closed("ext-1", id),
            Some(ClosedTab {
                owner: Some("task".into())
            })
        );
    }

    #[test]
    fn closed_records_are_bounded() {
        let registry = TabRegistry::default();
        let mut table = TabTable::default();
        for n in 0..(MAX_CLOSED + 50) {
            let target = format!("T{n}");
            table.note(&registry, "managed", &page(&target));
            table.remove(&target);
            registry.mark_closed("managed", &target);
        }
        assert_eq!(registry.len(), MAX_CLOSED);
    }

    #[test]
    fn answered_dialogs_are_bounded() {
        let registry = TabRegistry::default();
        let mut table = TabTable::default();
        table.note(&registry, "managed", &page("A"));
        for n in 0..(MAX_ANSWERED + 5) {
            let dialog = Dialog {
                kind: "alert".into(),
                message: n.to_string(),
                default_prompt: None,
                action: Some("dismissed"),
                opened_at_ms: 0,
            };
            table.push_answered("A", dialog);
        }
        let answered = &table.get("A").unwrap().answered_dialogs;
        assert_eq!(answered.len(), MAX_ANSWERED);
        assert_eq!(answered[0].message, "5");
    }

    #[test]
    fn handles_name_their_browser() {
        assert_eq!(parse_tab_handle("managed:3", "managed").unwrap(), 3);
        assert_eq!(parse_tab_handle(" 7 ", "managed").unwrap(), 7);
        assert!(parse_tab_handle("cdp:3", "managed").is_err());
        assert_eq!(
            parse_tab_handle("x", "managed").unwrap_err().input(),
            Some(Input::Tab)
        );
    }
}
