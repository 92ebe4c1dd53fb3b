//! Keeps a browser's tab table current from CDP events: targets appearing, changing and
//! closing, sessions attaching and detaching, top documents committing, dialogs. When the
//! event stream lags (events were lost), the table is rebuilt from a full target list.

use std::sync::{Arc, Weak};

use cdp::Event;
use serde_json::json;
use tokio::sync::broadcast::{Receiver, error::RecvError};

use super::{Browser, HOUSEKEEPING, dialogs, page_tools};

/// Page-tool events kept for attaches under way, at most (a browser's tabs attach one at
/// a time, so a handful is what one attach sees).
const EARLY_TOOL_EVENTS_MAX: usize = 256;

pub(super) async fn track(browser: Weak<Browser>, mut events: Receiver<Arc<Event>>) {
    loop {
        let event = events.recv().await;
        let Some(browser) = browser.upgrade() else {
            return;
        };
        match event {
            Ok(event) => on_event(&browser, &event),
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "tab tracker fell behind; resynchronising");
                // Off this task, so the events after the gap keep flowing meanwhile.
                tokio::spawn(async move {
                    if let Err(error) = browser.resync().await {
                        tracing::warn!(%error, "tab table resync failed");
                    }
                });
            }
            Err(RecvError::Closed) => return,
        }
    }
}

fn on_event(browser: &Arc<Browser>, event: &Event) {
    let params = &event.params;
    match event.method.as_str() {
        "Target.targetCreated" | "Target.targetInfoChanged"
            if browser.note_target(&params["targetInfo"]).is_some() =>
        {
            browser.registry.note_change();
        }
        "Target.targetDestroyed" => {
            if let Some(target_id) = params["targetId"].as_str() {
                browser.forget_tab(target_id);
                browser.registry.note_change();
            }
        }
        "Target.detachedFromTarget" => {
            if let Some(session) = params["sessionId"].as_str() {
                on_detached(browser, session);
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
                    // Its tools went with the old document (the browser says nothing of
                    // that); the new one's are reported after this event, in order.
                    tab.page_tools.clear();
                });
                browser.registry.note_change();
            }
        }
        // A frame's new document has none of the old one's tools, nor has a frame gone.
        "Page.frameNavigated" => drop_frame_tools(browser, event, &params["frame"]["id"]),
        "Page.frameDetached" => drop_frame_tools(browser, event, &params["frameId"]),
        "WebMCP.toolsAdded" | "WebMCP.toolsRemoved" => {
            let Some(target) = event
                .session_id
                .as_deref()
                .and_then(|s| browser.target_of_session(s))
            else {
                // Sent while the tab's attach is still under way: kept for the attach.
                {
                    let mut early = browser.early_tool_events.lock();
                    if early.len() < EARLY_TOOL_EVENTS_MAX {
                        early.push(Arc::new(event.clone()));
                    }
                }
                // The attach may have finished meanwhile, and taken what was kept before.
                if let Some(session) = event.session_id.as_deref()
                    && let Some(target) = browser.target_of_session(session)
                {
                    browser.take_early_tool_events(&target, session);
                }
                return;
            };
            let mut changed = false;
            browser.update_tab(&target, |tab| {
                changed = page_tools::on_event(&mut tab.page_tools, &event.method, params);
            });
            if changed {
                browser.registry.note_change();
            }
        }
        "Browser.downloadWillBegin" | "Browser.downloadProgress" => {
            browser.downloads.on_event(&event.method, params);
        }
        "Page.javascriptDialogOpening" => {
            if let Some(session) = event.session_id.as_deref() {
                dialogs::on_dialog_opening(browser, session, params);
            }
        }
        "Page.javascriptDialogClosed" => {
            if let Some(target) = event
                .session_id
                .as_deref()
                .and_then(|s| browser.target_of_session(s))
            {
                browser.update_tab(&target, |tab| tab.open_dialog = None);
                // A page blocked by its dialog can be read again.
                browser.registry.note_change();
            }
        }
        _ => {}
    }
}

/// Forgets the page tools a frame of the event's tab registered.
fn drop_frame_tools(browser: &Browser, event: &Event, frame: &serde_json::Value) {
    let (Some(session), Some(frame)) = (event.session_id.as_deref(), frame.as_str()) else {
        return;
    };
    let Some(target) = browser.target_of_session(session) else {
        return;
    };
    let mut dropped = false;
    browser.update_tab(&target, |tab| {
        let before = tab.page_tools.len();
        tab.page_tools.retain(|t| t.frame_id != frame);
        dropped = tab.page_tools.len() != before;
    });
    if dropped {
        browser.registry.note_change();
    }
}

fn on_detached(browser: &Browser, session: &str) {
    let mut worker = browser.extension_session.lock();
    if worker.as_deref() == Some(session) {
        *worker = None;
    }
    drop(worker);
    let mut table = browser.table.lock();
    for tab in table.values_mut() {
        if tab.session.as_deref() == Some(session) {
            tab.session = None;
            tab.top_world = None;
        }
        tab.child_sessions.retain(|_, s| s != session);
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
    {
        let mut table = browser.table.lock();
        for tab in table.values_mut() {
            let owns_parent = tab.session.as_deref() == Some(parent)
                || tab.child_sessions.values().any(|s| s == parent);
            if owns_parent {
                tab.child_sessions
                    .insert(frame.to_owned(), child.to_owned());
            }
        }
    }
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
