//! What an input set off in its page: a navigation and where it landed, and tabs the
//! page opened. Watched from just before the input until the page has had a moment to
//! act on it; a navigation that started is followed until its new document has
//! committed (or the call's time runs out), so the next call can never cancel it.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::broadcast::{Receiver, error::TryRecvError};
use tokio::time::Instant;

use super::Page;
use crate::ids::Deadline;

/// How long a page has, after an input, to start what the input sets off (a handler that
/// navigates from a timer, a form checked before it is sent). Nothing started by then:
/// the input is done.
const SETTLE: Duration = Duration::from_millis(40);
/// How long a committed document is given to parse far enough to have its title.
const TITLE_WAIT: Duration = Duration::from_secs(2);

/// Events seen since `Page::watch_effects`.
pub struct EffectWatch {
    events: Receiver<Arc<cdp::Event>>,
    /// The tab's top frame, looked up once: a navigation keeps the frame's id.
    main_frame: String,
}

/// What an input caused.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Aftermath {
    /// The top document it navigated to; None when it did not navigate.
    pub navigation: Option<Landing>,
    /// Tabs the page opened (`window.open`, a `target=_blank` link).
    pub new_tabs: Vec<OpenedByPage>,
}

/// Where a navigation an input started stands when the call answers.
#[derive(Debug, Clone, Serialize)]
pub struct Landing {
    /// The new document's URL (the one asked for, while it has not committed).
    pub url: String,
    /// Its title, once parsed far enough to have one.
    pub title: String,
    /// The new document replaced the old one. False: it was still on its way when the
    /// call's time ran out (a slow server), and the tab may yet land there.
    pub committed: bool,
}

/// A tab a page opened.
#[derive(Debug, Clone, Serialize)]
pub struct OpenedByPage {
    /// Its handle, once tabwire has it in its table (None for the moment after).
    pub handle: Option<String>,
    pub url: String,
}

#[derive(Default)]
struct Seen {
    started: Option<String>,
    committed: Option<String>,
    new_tabs: Vec<(String, String)>,
    /// URLs the page asked new windows for (`window.open`), in order: a tab's own record
    /// is still blank the moment it is made.
    window_urls: Vec<String>,
}

impl Page {
    /// Starts watching for what the next input sets off; hand the watch to `effects`.
    pub fn watch_effects(&self) -> EffectWatch {
        let main_frame = self
            .browser
            .tab_by_target(&self.tab.target_id)
            .and_then(|tab| tab.main_frame.clone())
            .unwrap_or_else(|| self.tab.target_id.clone());
        EffectWatch {
            events: self.browser.conn.subscribe(),
            main_frame,
        }
    }

    /// What the input since `watch` caused, waiting (until `Deadline::for_waiting` ends) for a navigation it
    /// started to commit.
    pub async fn effects(&self, mut watch: EffectWatch, deadline: Deadline) -> Aftermath {
        let budget = deadline.for_waiting();
        let deadline = Instant::now() + budget;
        // Events a command caused come before its reply on CDP transports; the extension
        // relay needs a fence for that.
        let _ = self
            .browser
            .conn
            .settle_events(&self.session, SETTLE.min(budget))
            .await;
        let mut seen = Seen::default();
        self.drain(&mut watch, &mut seen);
        let settled = (Instant::now() + SETTLE).min(deadline);
        while seen.started.is_none() && Instant::now() < settled {
            if !self.next_event(&mut watch, &mut seen, settled).await {
                break;
            }
        }
        while seen.started.is_some() && seen.committed.is_none() && Instant::now() < deadline {
            if !self.next_event(&mut watch, &mut seen, deadline).await {
                break;
            }
        }
        Aftermath {
            navigation: self.landing(&seen, deadline).await,
            new_tabs: self.opened_tabs(&seen),
        }
    }

    fn drain(&self, watch: &mut EffectWatch, seen: &mut Seen) {
        loop {
            match watch.events.try_recv() {
                Ok(event) => self.note(&watch.main_frame, &event, seen),
                Err(TryRecvError::Lagged(_)) => {}
                Err(_) => return,
            }
        }
    }

    /// Waits for the next event until `until`; false when none came.
    async fn next_event(&self, watch: &mut EffectWatch, seen: &mut Seen, until: Instant) -> bool {
        match tokio::time::timeout_at(until, watch.events.recv()).await {
            Ok(Ok(event)) => {
                self.note(&watch.main_frame, &event, seen);
                true
            }
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => true,
            Ok(Err(_)) | Err(_) => false,
        }
    }

    fn note(&self, main_frame: &str, event: &cdp::Event, seen: &mut Seen) {
        let params = &event.params;
        if event.method == "Target.targetCreated" {
            let info = &params["targetInfo"];
            if info["type"] == "page" && info["openerId"] == self.tab.target_id.as_str() {
                let target = info["targetId"].as_str().unwrap_or_default().to_owned();
                let url = info["url"].as_str().unwrap_or_default().to_owned();
                seen.new_tabs.push((target, url));
            }
            return;
        }
        match navigation_event(event, &self.session, main_frame) {
            Some(NavigationEvent::WindowOpen(url)) => seen.window_urls.push(url),
            Some(NavigationEvent::Started(url)) => seen.started = Some(url),
            Some(NavigationEvent::Committed {
                url,
                restored: false,
            }) => {
                seen.started.get_or_insert_with(|| url.clone());
                seen.committed = Some(url);
            }
            Some(NavigationEvent::WithinDocument(url)) => {
                seen.started = Some(url.clone());
                seen.committed = Some(url);
            }
            _ => {}
        }
    }

    /// Where the navigation stands: the committed document's URL and title (read from
    /// the page once it has one), or the URL it is on its way to.
    async fn landing(&self, seen: &Seen, deadline: Instant) -> Option<Landing> {
        let started = seen.started.clone()?;
        let Some(committed) = seen.committed.clone() else {
            return Some(Landing {
                url: started,
                title: String::new(),
                committed: false,
            });
        };
        let until = (Instant::now() + TITLE_WAIT).min(deadline);
        let mut read = self.url_and_title().await.ok();
        while read.as_ref().is_some_and(|(_, title)| title.is_empty()) && Instant::now() < until {
            let ready = self
                .wait_ready(until.saturating_duration_since(Instant::now()))
                .await;
            read = self.url_and_title().await.ok();
            if ready {
                break;
            }
        }
        let (url, title) = read.unwrap_or_default();
        Some(Landing {
            url: if url.is_empty() { committed } else { url },
            title,
            committed: true,
        })
    }

    fn opened_tabs(&self, seen: &Seen) -> Vec<OpenedByPage> {
        seen.new_tabs
            .iter()
            .enumerate()
            .map(|(index, (target, created_at))| {
                let tab = self.browser.tab_by_target(target);
                let known = tab.as_ref().map(|t| t.url.clone()).unwrap_or_default();
                let url = [known, created_at.clone()]
                    .into_iter()
                    .chain(seen.window_urls.get(index).cloned())
                    .find(|url| !url.is_empty() && url != "about:blank")
                    .unwrap_or_default();
                OpenedByPage {
                    handle: tab.map(|tab| self.browser.info(&tab, None).handle),
                    url,
                }
            })
            .collect()
    }
}

/// What a CDP event says of a tab's top document: a navigation it started, committed or
/// made within the document, its load, or a window it asked for. The one reading of these
/// events, for inputs' aftermath and for scripts (`agent_js`).
pub(crate) enum NavigationEvent {
    Started(String),
    /// A new document replaced the old one; `restored` when it came back from the
    /// back-forward cache.
    Committed {
        url: String,
        restored: bool,
    },
    WithinDocument(String),
    Loaded,
    WindowOpen(String),
}

/// `event` read for the top frame `main_frame` of the tab whose CDP session is `session`;
/// None when it says nothing of it.
pub(crate) fn navigation_event(
    event: &cdp::Event,
    session: &str,
    main_frame: &str,
) -> Option<NavigationEvent> {
    if event.session_id.as_deref() != Some(session) {
        return None;
    }
    let params = &event.params;
    let url = |value: &serde_json::Value| value.as_str().unwrap_or_default().to_owned();
    let main = params["frameId"] == main_frame || params["frame"]["id"] == main_frame;
    let same_document = params["navigationType"] == "sameDocument"
        || params["navigationType"] == "historySameDocument";
    match event.method.as_str() {
        "Page.windowOpen" => Some(NavigationEvent::WindowOpen(url(&params["url"]))),
        "Page.frameRequestedNavigation" | "Page.frameStartedNavigating"
            if main && !same_document =>
        {
            Some(NavigationEvent::Started(url(&params["url"])))
        }
        "Page.frameNavigated" if main => Some(NavigationEvent::Committed {
            url: url(&params["frame"]["url"]),
            restored: params["type"] == "BackForwardCacheRestore",
        }),
        "Page.navigatedWithinDocument" if main => {
            Some(NavigationEvent::WithinDocument(url(&params["url"])))
        }
        "Page.loadEventFired" => Some(NavigationEvent::Loaded),
        _ => None,
    }
}
