//! Tab-level operations of an agent session: listing, choosing its default, activating,
//! opening exactly once, closing only what its task owns, and answering dialogs.

use crate::ids::Deadline;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use super::AgentSession;
use crate::browser::{
    Browser, Dialog, DialogAnswer, DialogOutcome, Tab, TabInfo, parse_tab_handle,
};
use crate::error::{EngineError, ErrorCode, Input, Result};
use crate::page::check_url_scheme;

/// How an agent's own tab served a navigation ([`AgentSession::reuse_tab_for`]).
#[derive(Debug)]
pub enum Reused {
    /// It showed that page already: brought forward, not loaded again.
    Shown(TabInfo),
    /// It was blank: the page was loaded in it.
    Loaded {
        tab: TabInfo,
        landed: crate::page::navigation::Navigated,
    },
}

/// Creation records are kept this long, and at most this many (as receipts are).
const CREATION_KEPT: Duration = Duration::from_secs(600);
const MAX_CREATIONS: usize = 512;

/// What the engine remembers of a tab creation, keyed by its operation id, so a retried
/// call with the same id never creates a second tab.
#[derive(Debug, Clone)]
enum Creation {
    Pending,
    Done { tab: TabInfo, owner_id: String },
    Failed(String),
}

/// Creation records: (session, record, when it was made).
#[derive(Default)]
pub(super) struct Creations {
    by_operation: Mutex<HashMap<String, (u64, Creation, Instant)>>,
}

impl Creations {
    fn record(&self, operation_id: &str, session: u64, creation: Creation) {
        let mut records = self.by_operation.lock();
        let made = records
            .get(operation_id)
            .map_or_else(Instant::now, |(_, _, at)| *at);
        records.insert(operation_id.to_owned(), (session, creation, made));
        records.retain(|_, (_, _, at)| at.elapsed() < CREATION_KEPT);
        if records.len() > MAX_CREATIONS {
            let mut by_age: Vec<(Instant, String)> = records
                .iter()
                .map(|(id, (_, _, at))| (*at, id.clone()))
                .collect();
            by_age.sort();
            for (_, id) in by_age.iter().take(records.len() - MAX_CREATIONS) {
                records.remove(id);
            }
        }
    }

    /// Whether `session` created this tab (as far as the records still go).
    pub(super) fn made_by(&self, session: u64, client: &str, tab_id: u64) -> bool {
        self.by_operation.lock().values().any(|(s, creation, _)| {
            *s == session
                && matches!(creation, Creation::Done { tab, .. } if tab.client_id == client && tab.tab_id == tab_id)
        })
    }

    fn get(&self, operation_id: &str) -> Option<(u64, Creation)> {
        self.by_operation
            .lock()
            .get(operation_id)
            .map(|(session, creation, _)| (*session, creation.clone()))
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.by_operation.lock().len()
    }
}

pub struct OpenTabRequest {
    /// The browser to open it in: a client id, or a tab handle of that browser (None:
    /// the session's).
    pub browser: Option<String>,
    pub url: String,
    pub active: bool,
    pub owner_id: Option<String>,
    /// Recovers an earlier creation instead of making one.
    pub operation_id: Option<String>,
    pub deadline: Deadline,
    /// Open it in a new window of this size (CSS px).
    pub window: Option<(u32, u32)>,
}

/// Every tab of every connected browser, and which is the caller's default.
#[derive(Debug, Clone, Serialize)]
pub struct TabList {
    pub tabs: Vec<TabInfo>,
    pub default: Option<String>,
    /// A browser lost (with its tabs) since this session last listed them.
    pub lost: Option<crate::browser::Loss>,
}

/// What `activate_tab` found once the tab was in front.
#[derive(Debug, Clone, Serialize)]
pub struct Activated {
    /// The page says it is visible.
    pub on_screen: bool,
    /// Its window's state (normal, minimized, maximized, fullscreen), where the browser
    /// says.
    pub window_state: Option<String>,
}

/// What a navigation that names no tab does with the agent's current tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reuse {
    /// It shows that page already: bring it forward, load nothing.
    Show,
    /// It is blank: load the page there.
    Load,
    /// It shows something else, which stays: open a new tab.
    OpenNew,
}

/// The tab-reuse policy, as the Chrome MCP Server's navigation has it.
fn reuse_for(current_url: &str, url: &str) -> Reuse {
    if crate::urls::same_page(current_url, url) {
        Reuse::Show
    } else if current_url.is_empty() || current_url == "about:blank" {
        Reuse::Load
    } else {
        Reuse::OpenNew
    }
}

/// What became of an `open_new_tab`.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Opened {
    Created {
        operation_id: String,
        tab: TabInfo,
        owner_id: String,
        opener: Option<String>,
        load_status: String,
    },
    /// The browser did not confirm the tab: it may exist.
    Unconfirmed {
        operation_id: String,
        owner_id: String,
    },
    /// A recovery found the earlier creation done; nothing was created now.
    Recovered {
        operation_id: String,
        tab: TabInfo,
        owner_id: String,
    },
    Pending {
        operation_id: String,
    },
    Failed {
        operation_id: String,
        message: String,
    },
    /// No record of that operation here.
    Unknown {
        operation_id: String,
    },
}

/// One tab's fate in a close request.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum CloseResult {
    Closed {
        tab_id: u64,
        by_owner: bool,
    },
    /// It had closed already (the user, or the page, closed it).
    AlreadyGone {
        tab_id: u64,
    },
    NotFound {
        handle: String,
    },
}

/// Which tabs a close may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseScope<'a> {
    /// Only tabs this owner opened.
    OwnedBy(&'a str),
    /// Any tab (the user asked for it).
    Any,
}

impl AgentSession {
    /// Tabs an agent can drive (`all` adds chrome-extension:// and other internal pages).
    pub async fn list_tabs(&self, all: bool) -> Result<TabList> {
        // Every linked browser (the extension link can have several profiles at once).
        let browsers = self.engine.browsers.all_of(self.id).await?;
        let mut list = self.tabs_of(browsers, all).await;
        list.lost = self.unreported_loss();
        Ok(list)
    }

    /// The tabs of the browsers connected now, starting or linking none (a status report
    /// must not launch a browser); a lost browser is left for `list_tabs` to report.
    pub async fn list_tabs_connected(&self) -> TabList {
        let browsers = self.engine.browsers.connected_of(self.id);
        self.tabs_of(browsers, false).await
    }

    async fn tabs_of(&self, browsers: Vec<Arc<Browser>>, all: bool) -> TabList {
        let mut tabs = Vec::new();
        let mut default_handle = None;
        for browser in browsers {
            // Titles change as pages load, and the browser does not say so by event;
            // read them fresh (a browser that cannot answer keeps what the table knows).
            let _ = browser.resync().await;
            let default = self.default_in(&browser);
            for tab in browser.tabs() {
                if !self.sees(&browser, &tab) {
                    continue;
                }
                if default == Some(tab.tab_id) {
                    default_handle = Some(browser.handle(&tab));
                }
                if all || !tab.url.starts_with("chrome-extension://") {
                    tabs.push(browser.info(&tab, default));
                }
            }
        }
        TabList {
            tabs,
            default: default_handle,
            lost: None,
        }
    }

    /// Makes a tab this session's default; `url_pattern` must match exactly one tab of
    /// all the connected browsers (or of the one `browser` names: chrome, edge, …).
    pub async fn switch_tab(
        &self,
        handle: Option<&str>,
        url_pattern: Option<&str>,
        browser_name: Option<&str>,
    ) -> Result<(Arc<Browser>, Tab)> {
        let (browser, tab) = match (handle, url_pattern) {
            (Some(handle), _) => self.find_tab(handle).await?,
            (None, Some(pattern)) => self.tab_by_url(pattern, browser_name).await?,
            (None, None) if browser_name.is_some() => self.tab_by_url("", browser_name).await?,
            (None, None) => {
                return Err(EngineError::invalid(
                    Input::Tab,
                    "name a tab, or a URL pattern that matches one",
                ));
            }
        };
        self.set_default(&browser.client_id, tab.tab_id);
        Ok((browser, tab))
    }

    /// The one tab whose URL contains `pattern`, in any connected browser (or those
    /// `browser_name` names).
    async fn tab_by_url(
        &self,
        pattern: &str,
        browser_name: Option<&str>,
    ) -> Result<(Arc<Browser>, Tab)> {
        let mut matches = Vec::new();
        let browsers = self.engine.browsers.all_of(self.id).await?;
        for browser in browsers
            .into_iter()
            .filter(|b| browser_name.is_none_or(|name| b.is_named(name)))
        {
            for tab in browser.tabs() {
                if tab.url.contains(pattern) && self.sees(&browser, &tab) {
                    matches.push((browser.clone(), tab));
                }
            }
        }
        match matches.len() {
            1 => Ok(matches.remove(0)),
            0 => Err(EngineError::page(
                ErrorCode::NotFound,
                format!("no tab URL contains '{pattern}'"),
                Value::Null,
            )),
            many => {
                let candidates: Vec<String> = matches.iter().map(|(b, t)| b.handle(t)).collect();
                Err(EngineError::page(
                    ErrorCode::Ambiguous,
                    format!("{many} tabs match '{pattern}'; name one"),
                    json!({ "candidates": candidates }),
                ))
            }
        }
    }

    /// Brings a tab to the front and reports whether the page now says it is visible,
    /// and the state of its window.
    pub async fn activate_tab(&self, handle: Option<&str>) -> Result<Activated> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        browser.activate(&tab).await?;
        let page = self.page(Some(&browser.handle(&tab))).await?;
        let visible = page
            .cdp(
                "Runtime.evaluate",
                json!({"expression": "document.visibilityState", "returnByValue": true}),
                Deadline::after(crate::browser::HOUSEKEEPING),
            )
            .await
            .ok()
            .and_then(|r| r["result"]["value"].as_str().map(|s| s == "visible"));
        // A browser that cannot say where its tab is shown still activated it.
        let window_state = browser.place_of(&tab).await.ok().and_then(|p| p.state);
        Ok(Activated {
            on_screen: visible.unwrap_or(false),
            window_state,
        })
    }

    /// The agent's current tab, when it can serve a navigation to `url` that names no
    /// tab: one that shows that page already ([`crate::urls::same_page`]) is brought
    /// forward (unless `background`) and not loaded again; a blank one loads it. None
    /// when neither holds (or the agent has no tab yet): open a new tab.
    pub async fn reuse_tab_for(
        &self,
        url: &str,
        background: bool,
        deadline: Deadline,
    ) -> Result<Option<Reused>> {
        let Ok((browser, tab)) = self.resolve_tab(None).await else {
            return Ok(None);
        };
        let current = browser.handle(&tab);
        match reuse_for(&tab.url, url) {
            Reuse::OpenNew => Ok(None),
            Reuse::Show => {
                if !background {
                    self.activate_tab(Some(&current)).await?;
                }
                let (browser, tab) = self.resolve_tab(Some(&current)).await?;
                Ok(Some(Reused::Shown(browser.info(&tab, Some(tab.tab_id)))))
            }
            Reuse::Load => {
                let (page, _) = self.page_to_navigate(Some(&current)).await?;
                let landed = page.navigate(url, deadline).await?;
                Ok(Some(Reused::Loaded {
                    tab: page.info(),
                    landed,
                }))
            }
        }
    }

    /// A tab showing `url` ([`crate::urls::same_page`]; the agent's current tab first),
    /// else a new one opened to it (in the background with `background`): its handle.
    pub async fn tab_showing(
        &self,
        url: &str,
        background: bool,
        deadline: Deadline,
    ) -> Result<String> {
        let list = self.list_tabs(false).await?;
        let open = list
            .tabs
            .iter()
            .filter(|t| crate::urls::same_page(&t.url, url))
            .min_by_key(|t| Some(&t.handle) != list.default.as_ref());
        if let Some(tab) = open {
            return Ok(tab.handle.clone());
        }
        check_url_scheme(url)?;
        let request = OpenTabRequest {
            browser: None,
            url: url.to_owned(),
            active: !background,
            owner_id: None,
            operation_id: None,
            deadline,
            window: None,
        };
        match self.open_new_tab(request).await? {
            Opened::Created { tab, .. } | Opened::Recovered { tab, .. } => Ok(tab.handle),
            _ => Err(EngineError::page(
                ErrorCode::TabNotFound,
                format!("the browser did not confirm a tab for {url}; one may have opened"),
                json!({ "url": url }),
            )
            .may_have_run()),
        }
    }

    /// Opens a tab exactly once per operation id.
    pub async fn open_new_tab(&self, request: OpenTabRequest) -> Result<Opened> {
        check_url_scheme(&request.url)?;
        if let Some(id) = &request.operation_id {
            return self.recover_creation(id);
        }
        let creations = &self.engine.creations;
        let operation_id = crate::ids::unique("create");
        let owner_id = request
            .owner_id
            .clone()
            .unwrap_or_else(|| crate::ids::unique("owner"));
        creations.record(&operation_id, self.id, Creation::Pending);
        // The tab starts blank and is navigated like any other, so its load is awaited by
        // the one navigation path.
        let created = async {
            let browser = self.browser_named(request.browser.as_deref()).await?;
            let tab = self
                .open_tab(
                    &browser,
                    "about:blank",
                    request.active,
                    Some(&owner_id),
                    request.window,
                )
                .await?;
            Ok::<_, EngineError>((browser, tab))
        }
        .await;
        let (browser, tab) = match created {
            Ok(done) => done,
            Err(error) => {
                // A create that failed before the browser answered may or may not exist.
                let may_have_created =
                    matches!(error, EngineError::Cdp(cdp::CdpError::Timeout { .. }));
                creations.record(&operation_id, self.id, Creation::Failed(error.to_string()));
                if may_have_created {
                    return Ok(Opened::Unconfirmed {
                        operation_id,
                        owner_id,
                    });
                }
                return Err(error);
            }
        };
        let info = browser.info(&tab, None);
        creations.record(
            &operation_id,
            self.id,
            Creation::Done {
                tab: info,
                owner_id: owner_id.clone(),
            },
        );
        let navigation = match self.page(Some(&browser.handle(&tab))).await {
            Ok(page) => page.navigate(&request.url, request.deadline).await,
            Err(error) => Err(error),
        };
        let load_status = match &navigation {
            Ok(nav) => nav.load_status().to_owned(),
            Err(error) => format!("failed: {error}"),
        };
        let current = browser.tab_by_id(tab.tab_id).unwrap_or(tab);
        let mut info = browser.info(&current, self.default_in(&browser));
        // Where it landed, as the page says (the tab table learns the title a moment later).
        if let Ok(landed) = &navigation {
            info.url = landed.url.clone();
            info.title = landed.title.clone();
        }
        Ok(Opened::Created {
            operation_id,
            tab: info,
            owner_id,
            opener: current.opener.clone(),
            load_status,
        })
    }

    fn recover_creation(&self, operation_id: &str) -> Result<Opened> {
        let operation_id = operation_id.to_owned();
        Ok(match self.engine.creations.get(&operation_id) {
            Some((session, _)) if session != self.id => {
                return Err(EngineError::refused(
                    ErrorCode::ForeignOperation,
                    format!("operation '{operation_id}' belongs to another agent session"),
                ));
            }
            Some((_, Creation::Done { tab, owner_id })) => Opened::Recovered {
                operation_id,
                tab,
                owner_id,
            },
            Some((_, Creation::Pending)) => Opened::Pending { operation_id },
            Some((_, Creation::Failed(message))) => Opened::Failed {
                operation_id,
                message,
            },
            None => Opened::Unknown { operation_id },
        })
    }

    /// Closes tabs, each in whichever linked browser its handle names. Under `OwnedBy`
    /// the request is closed whole or not at all: one tab that is not this owner's (or
    /// that nobody here knows) refuses it before any tab closes.
    pub async fn close_tabs(
        &self,
        handles: &[String],
        scope: CloseScope<'_>,
    ) -> Result<Vec<CloseResult>> {
        let mut found = Vec::with_capacity(handles.len());
        for handle in handles {
            found.push(self.close_target(handle).await?);
        }
        if let CloseScope::OwnedBy(owner) = scope
            && let Some(stranger) = found.iter().find(|t| !t.owned_by(owner))
        {
            return Err(EngineError::refused(
                ErrorCode::NotOwned,
                format!(
                    "close_tabs refused: {} is not owned by owner_id '{owner}'; nothing was closed",
                    stranger.handle()
                ),
            ));
        }
        let by_owner = matches!(scope, CloseScope::OwnedBy(_));
        let mut results = Vec::with_capacity(found.len());
        for target in found {
            results.push(match target {
                CloseTarget::Live { browser, tab } => match browser.close_tab(&tab).await? {
                    true => CloseResult::Closed {
                        tab_id: tab.tab_id,
                        by_owner,
                    },
                    false => CloseResult::AlreadyGone { tab_id: tab.tab_id },
                },
                CloseTarget::Gone { tab_id, .. } => CloseResult::AlreadyGone { tab_id },
                CloseTarget::Unknown { handle } => CloseResult::NotFound { handle },
            });
        }
        Ok(results)
    }

    /// What a handle names for a close: an open tab, one that has closed, or nothing
    /// known.
    async fn close_target(&self, handle: &str) -> Result<CloseTarget> {
        let browser = match handle.split_once(':') {
            Some(_) => match self.find_tab(handle).await {
                Ok((browser, _)) => browser,
                Err(EngineError::NoSuchTab(_)) => return Ok(self.closed_or_unknown(handle)),
                Err(other) => return Err(other),
            },
            None => self.engine.browsers.browser_of(self.id).await?,
        };
        let tab_id = parse_tab_handle(handle, &browser.client_id)?;
        // Another session's tab, under isolation, is not there for this one.
        Ok(
            match browser
                .tab_by_id(tab_id)
                .filter(|tab| self.sees(&browser, tab))
            {
                Some(tab) => CloseTarget::Live {
                    browser,
                    tab: Box::new(tab),
                },
                None => gone_or_unknown(&browser, tab_id, handle),
            },
        )
    }

    /// A handle of a browser not linked now (or of a tab that closed with it).
    fn closed_or_unknown(&self, handle: &str) -> CloseTarget {
        for browser in self.engine.browsers.connected_of(self.id) {
            if let Ok(tab_id) = parse_tab_handle(handle, &browser.client_id) {
                return gone_or_unknown(&browser, tab_id, handle);
            }
        }
        CloseTarget::Unknown {
            handle: handle.to_owned(),
        }
    }

    /// Reports or answers a dialog left open on a tab. Does not reserve the tab: the call
    /// that opened the dialog still holds it.
    pub async fn answer_dialog(
        &self,
        handle: Option<&str>,
        answer: DialogAnswer,
        prompt_text: Option<&str>,
        deadline: Deadline,
    ) -> Result<DialogOutcome> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        browser
            .answer_dialog(&tab, answer, prompt_text, deadline)
            .await
    }

    /// Accepts an open leave-page prompt through the protocol. None: no prompt is open;
    /// else the prompt, the attempts made, and whether it closed.
    pub async fn accept_leave_prompt(
        &self,
        handle: Option<&str>,
    ) -> Result<Option<(Dialog, u32, bool)>> {
        let (browser, tab) = self.resolve_tab(handle).await?;
        browser.accept_leave_prompt(&tab).await
    }
}

/// What a close request names.
enum CloseTarget {
    Live {
        browser: Arc<Browser>,
        tab: Box<Tab>,
    },
    /// Closed already; the registry remembers whose it was.
    Gone {
        handle: String,
        tab_id: u64,
        owner: Option<String>,
    },
    Unknown {
        handle: String,
    },
}

impl CloseTarget {
    fn owned_by(&self, owner: &str) -> bool {
        match self {
            CloseTarget::Live { tab, .. } => tab.owner_id.as_deref() == Some(owner),
            CloseTarget::Gone { owner: was, .. } => was.as_deref() == Some(owner),
            CloseTarget::Unknown { .. } => false,
        }
    }

    fn handle(&self) -> String {
        match self {
            CloseTarget::Live { browser, tab } => browser.handle(tab),
            CloseTarget::Gone { handle, .. } | CloseTarget::Unknown { handle } => handle.clone(),
        }
    }
}

/// A tab id the browser no longer has: gone if the registry remembers it closing, else
/// unknown.
fn gone_or_unknown(browser: &Browser, tab_id: u64, handle: &str) -> CloseTarget {
    match browser.registry().closed(&browser.client_id, tab_id) {
        Some(closed) => CloseTarget::Gone {
            handle: handle.to_owned(),
            tab_id,
            owner: closed.owner,
        },
        None => CloseTarget::Unknown {
            handle: handle.to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creation_records_are_bounded() {
        let creations = Creations::default();
        for n in 0..(MAX_CREATIONS + 10) {
            creations.record(&format!("op-{n}"), 1, Creation::Pending);
        }
        assert_eq!(creations.len(), MAX_CREATIONS);
        assert!(creations.get("op-0").is_none());
        assert!(
            creations
                .get(&format!("op-{}", MAX_CREATIONS + 9))
                .is_some()
        );
    }

    #[test]
    fn the_current_tab_is_reused_only_for_its_own_page_or_when_blank() {
        // The same page, as the Chrome MCP Server compares them: no `www.`, no final
        // slash; the fragment does not count.
        assert_eq!(
            reuse_for(
                "https://www.example.com/docs/",
                "https://example.com/docs#top"
            ),
            Reuse::Show
        );
        assert_eq!(
            reuse_for("about:blank", "https://example.com/"),
            Reuse::Load
        );
        assert_eq!(reuse_for("", "https://example.com/"), Reuse::Load);
        // Another page (or the same path with another query) is left alone.
        assert_eq!(
            reuse_for("https://example.com/a", "https://example.com/b"),
            Reuse::OpenNew
        );
        assert_eq!(
            reuse_for("https://example.com/a?x=1", "https://example.com/a?x=2"),
            Reuse::OpenNew
        );
    }
}
