//! Windows and tabs: listing them, navigating (to a URL, back, forward, a refresh),
//! switching and closing.

use serde_json::{Value, json};

use engine::{CloseResult, CloseScope, OpenTabRequest, Opened, Reused, TabInfo};

use super::tab_arg;
use crate::face::{Call, Reply, ToolError};
use crate::params::NoParams;
use crate::tool_params;

tool_params! {
    pub struct Navigate {
        url: Option<String> = Str, optional, "URL to open; \"back\" or \"forward\" move through the tab's history";
        newWindow: bool = Bool, default(false), "";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "navigate this tab instead of opening one";
        windowId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        background: bool = Bool, default(false), "";
        width: Option<f64> = Num { min: 100.0, max: 10000.0 }, optional, "px; opens a new window";
        height: Option<f64> = Num { min: 100.0, max: 10000.0 }, optional, "px; opens a new window";
        refresh: bool = Bool, default(false), "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Millis { max: 600_000.0 }, default(30_000.0), "ms";
    }
}

tool_params! {
    pub struct CloseTabs {
        tabIds: Option<Vec<u64>> = IntList, optional, "";
        windowIds: Option<Vec<u64>> = IntList, optional, "";
        url: Option<String> = Str, optional, "close the tabs whose URL contains this";
    }
}

tool_params! {
    pub struct SwitchTab {
        tabId: i64 = Int { min: 0, max: i64::MAX }, required, "";
        windowId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "its window (checked when given)";
    }
}

tool_params! {
    pub struct MoveTab {
        tabId: i64 = Int { min: 0, max: i64::MAX }, required, "";
        windowId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "the window to move it to";
        newWindow: bool = Bool, default(false), "move it into a window of its own";
        index: i64 = Int { min: -1, max: 10_000 }, default(-1), "its place in the window (-1: last)";
        focused: bool = Bool, default(true), "bring that window forward";
    }
}

tool_params! {
    pub struct BackOrForward {
        direction: Option<String> = Choice(&["back", "forward"]), optional, "back (the default) or forward";
        isForward: Option<bool> = Bool, optional, "older form of direction";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

pub async fn get_windows_and_tabs(call: Call, _: NoParams) -> Result<Reply, ToolError> {
    let windows = call.session.windows().await?;
    let tab_count: usize = windows.iter().map(|w| w.tabs.len()).sum();
    let windows: Vec<Value> = windows
        .iter()
        .map(|w| {
            let tabs: Vec<Value> = w
                .tabs
                .iter()
                .map(|t| json!({ "tabId": t.tab.tab_id, "url": t.tab.url, "title": t.tab.title, "active": t.active }))
                .collect();
            json!({ "windowId": w.window_id, "tabs": tabs })
        })
        .collect();
    Ok(Reply::data(json!({
        "windowCount": windows.len(), "tabCount": tab_count, "windows": windows,
    })))
}

pub async fn navigate(call: Call, p: Navigate) -> Result<Reply, ToolError> {
    let deadline = call.deadline;
    // A window names the tab it shows for a refresh or a history move; a URL opens a
    // new tab unless tabId names one.
    let shown = super::target_tab(&call, &p.tabId, p.windowId).await?;
    let tab = tab_arg(&p.tabId);
    if p.refresh {
        let page = call.session.page(shown.as_deref()).await?;
        let landed = page.reload(deadline).await?;
        let info = page.info();
        return Ok(Reply::navigation(with_tab(
            json!({ "success": true, "message": "Successfully refreshed current tab", "url": landed.url, "title": landed.title }),
            &call,
            &info,
        )
        .await));
    }
    let Some(url) = p.url.filter(|u| !u.trim().is_empty()) else {
        return Err(ToolError::param(
            "url",
            "give a URL, \"back\" or \"forward\" (or refresh: true)",
        ));
    };
    if url == "back" || url == "forward" {
        return history(&call, shown.as_deref(), url == "forward").await;
    }
    engine::check_url_scheme(&url)?;
    if let Some(tab) = tab {
        let (page, _) = call.session.page_to_navigate(Some(&tab)).await?;
        let landed = page.navigate(&url, deadline).await?;
        if !p.background {
            call.session
                .set_default(&page.browser.client_id, page.tab.tab_id);
        }
        let info = page.info();
        return Ok(Reply::navigation(with_tab(
            json!({ "success": true, "message": "Navigated the tab", "url": landed.url, "title": landed.title }),
            &call,
            &info,
        )
        .await));
    }
    let window = match (p.width, p.height) {
        (None, None) if !p.newWindow => None,
        (width, height) => Some((
            width.unwrap_or(1280.0) as u32,
            height.unwrap_or(720.0) as u32,
        )),
    };
    if window.is_none()
        && let Some(reply) = reuse_own_tab(&call, &url, p.background).await?
    {
        return Ok(reply);
    }
    let opened = call
        .session
        .open_new_tab(OpenTabRequest {
            browser: None,
            url: url.clone(),
            active: !p.background,
            owner_id: None,
            operation_id: None,
            deadline,
            window,
        })
        .await?;
    let Opened::Created { tab, .. } = opened else {
        return Err(ToolError::Face {
            code: "navigation_failed",
            message: format!(
                "Error navigating to URL: the browser did not confirm a new tab for {url}"
            ),
            details: Value::Null,
            may_have_run: true,
        });
    };
    if !p.background {
        call.session.set_default(&tab.client_id, tab.tab_id);
    }
    let window_id = window_of(&call, &tab).await;
    if window.is_some() {
        return Ok(Reply::navigation(json!({
            "success": true, "message": "Opened URL in new window", "windowId": window_id,
            "tabs": [{ "tabId": tab.tab_id, "url": tab.url }],
        }))
        .on(tab));
    }
    Ok(Reply::navigation(json!({
        "success": true, "message": "Opened URL in new tab in existing window",
        "tabId": tab.tab_id, "windowId": window_id, "url": tab.url, "title": tab.title,
    }))
    .on(tab))
}

/// The agent's own tab, where the engine's policy lets it serve the navigation
/// (`AgentSession::reuse_tab_for`), in the original's words.
async fn reuse_own_tab(
    call: &Call,
    url: &str,
    background: bool,
) -> Result<Option<Reply>, ToolError> {
    let (message, url, title, info) = match call
        .session
        .reuse_tab_for(url, background, call.deadline)
        .await?
    {
        None => return Ok(None),
        Some(Reused::Shown(tab)) => (
            "Activated existing tab",
            tab.url.clone(),
            tab.title.clone(),
            tab,
        ),
        Some(Reused::Loaded { tab, landed }) => (
            "Opened URL in the session's tab",
            landed.url,
            landed.title,
            tab,
        ),
    };
    let data = json!({ "success": true, "message": message, "url": url, "title": title });
    Ok(Some(Reply::navigation(with_tab(data, call, &info).await)))
}

pub async fn go_back_or_forward(call: Call, p: BackOrForward) -> Result<Reply, ToolError> {
    let forward = match (p.direction.as_deref(), p.isForward) {
        (Some("forward"), _) => true,
        (Some(_), _) => false,
        (None, forward) => forward.unwrap_or(false),
    };
    history(&call, tab_arg(&p.tabId).as_deref(), forward).await
}

async fn history(call: &Call, tab: Option<&str>, forward: bool) -> Result<Reply, ToolError> {
    let page = call.session.page(tab).await?;
    let landed = page
        .go_history(if forward { 1 } else { -1 }, call.deadline)
        .await?;
    let way = if forward { "forward" } else { "back" };
    let info = page.info();
    Ok(Reply::navigation(
        with_tab(
            json!({
                "success": true,
                "message": format!("Successfully navigated {way} in browser history"),
                "url": landed.url, "title": landed.title,
            }),
            call,
            &info,
        )
        .await,
    ))
}

pub async fn close_tabs(call: Call, p: CloseTabs) -> Result<Reply, ToolError> {
    let session = &call.session;
    if let Some(pattern) = p.url.filter(|u| !u.is_empty()) {
        let handles: Vec<String> = session
            .list_tabs(false)
            .await?
            .tabs
            .iter()
            .filter(|t| t.url.contains(&pattern) || engine::urls::same_page(&t.url, &pattern))
            .map(|t| t.handle.clone())
            .collect();
        if handles.is_empty() {
            return Ok(Reply::data(json!({
                "success": false, "message": format!("No tabs found with URL: {pattern}"), "closedCount": 0,
            })));
        }
        let closed = closed_ids(&session.close_tabs(&handles, CloseScope::Any).await?);
        return Ok(Reply::data(json!({
            "success": true, "message": format!("Closed {} tabs with URL: {pattern}", closed.len()),
            "closedCount": closed.len(), "closedTabIds": closed,
        })));
    }
    let mut handles: Vec<String> = p
        .tabIds
        .unwrap_or_default()
        .iter()
        .map(u64::to_string)
        .collect();
    if let Some(windows) = p.windowIds.filter(|w| !w.is_empty()) {
        for window in session.windows().await? {
            if windows.contains(&window.window_id) {
                handles.extend(window.tabs.iter().map(|t| t.tab.handle.clone()));
            }
        }
    }
    if handles.is_empty() {
        let Some(current) = session.default_handle() else {
            return Err(ToolError::param(
                "tabIds",
                "name the tabs to close (this session has no tab yet)",
            ));
        };
        let results = session.close_tabs(&[current], CloseScope::Any).await?;
        let closed = closed_ids(&results);
        return Ok(Reply::data(json!({
            "success": !closed.is_empty(), "message": "Closed active tab",
            "closedCount": closed.len(), "closedTabIds": closed,
        })));
    }
    let results = session.close_tabs(&handles, CloseScope::Any).await?;
    let closed = closed_ids(&results);
    let invalid: Vec<Value> = results
        .iter()
        .filter_map(|r| match r {
            CloseResult::NotFound { handle } => Some(json!(handle.parse::<u64>().ok())),
            CloseResult::AlreadyGone { tab_id } => Some(json!(tab_id)),
            _ => None,
        })
        .collect();
    if closed.is_empty() {
        return Ok(Reply::data(json!({
            "success": false, "message": "None of the provided tab IDs exist", "closedCount": 0,
            "invalidTabIds": invalid,
        })));
    }
    Ok(Reply::data(json!({
        "success": true, "message": format!("Closed {} tabs", closed.len()),
        "closedCount": closed.len(), "closedTabIds": closed, "invalidTabIds": invalid,
    })))
}

fn closed_ids(results: &[CloseResult]) -> Vec<u64> {
    results
        .iter()
        .filter_map(|r| match r {
            CloseResult::Closed { tab_id, .. } => Some(*tab_id),
            _ => None,
        })
        .collect()
}

pub async fn switch_tab(call: Call, p: SwitchTab) -> Result<Reply, ToolError> {
    let handle = p.tabId.to_string();
    let (browser, tab) = call.session.switch_tab(Some(&handle), None, None).await?;
    let info = browser.info(&tab, Some(tab.tab_id));
    if let Some(window) = p.windowId {
        let in_window = window_of(&call, &info).await;
        if in_window != Some(window as u64) {
            return Err(ToolError::param(
                "windowId",
                format!(
                    "tab {} is in window {}, not {window}",
                    info.tab_id,
                    in_window.map_or("?".into(), |w| w.to_string())
                ),
            ));
        }
    }
    call.session.activate_tab(Some(&info.handle)).await?;
    Ok(Reply::data(
        with_tab(
            json!({
                "success": true, "message": format!("Successfully switched to tab ID: {}", info.tab_id),
                "url": info.url, "title": info.title,
            }),
            &call,
            &info,
        )
        .await,
    )
    .on(info))
}

/// Adds `tabId` and `windowId` to a payload.
pub async fn with_tab(mut payload: Value, call: &Call, tab: &TabInfo) -> Value {
    payload["tabId"] = json!(tab.tab_id);
    payload["windowId"] = json!(window_of(call, tab).await);
    payload
}

/// The window a tab is in, if the browser says.
pub async fn window_of(call: &Call, tab: &TabInfo) -> Option<u64> {
    let (browser, tab) = call.session.resolve_tab(Some(&tab.handle)).await.ok()?;
    browser.window_of(&tab).await.ok().map(|(id, _)| id)
}

pub async fn move_tab(call: Call, p: MoveTab) -> Result<Reply, ToolError> {
    let to = match (p.windowId, p.newWindow) {
        (Some(_), true) => {
            return Err(ToolError::param(
                "newWindow",
                "cannot be given with windowId: move the tab into one or the other",
            ));
        }
        (Some(window), false) => engine::WindowTarget::Existing(window as u64),
        (None, true) => engine::WindowTarget::New,
        (None, false) => {
            return Err(ToolError::param(
                "windowId",
                "is required unless newWindow is true",
            ));
        }
    };
    let (tab, window, index) = call
        .session
        .move_tab(tab_arg(&Some(p.tabId)).as_deref(), to, p.index, p.focused)
        .await?;
    Ok(Reply::data(json!({
        "success": true,
        "message": format!("Moved tab {} to window {window}", tab.tab_id),
        "tabId": tab.tab_id, "windowId": window, "index": index,
    }))
    .on(tab))
}
