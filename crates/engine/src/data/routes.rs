//! Network routes: an agent's rules for its tabs' requests. A request whose URL a route's
//! pattern matches is fulfilled with the route's response, aborted, or let through with
//! headers changed; any other goes on untouched. Routes live until removed or until their
//! session ends, and cover only that session's tabs (the one named, or every tab it
//! drives): another agent's tabs never see them.
//!
//! How: a covered tab's requests are held at the `Fetch` domain's request stage, each
//! answered by one task per tab (`pump`) from the routes in force when it arrives.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use base64::Engine as _;
use parking_lot::Mutex;
use serde::Serialize;
use serde_json::{Value, json};

use crate::browser::{Browser, HOUSEKEEPING};
use crate::error::{EngineError, Input, Result};
use crate::page::Page;

/// What a route does with a request it matches.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RouteAction {
    /// Answer it here, without the network.
    Fulfill {
        status: u16,
        body: String,
        content_type: String,
        headers: Vec<(String, String)>,
    },
    /// Fail it as the network would (`reason`: CDP's `Failed`, `Aborted`,
    /// `ConnectionRefused`, …).
    Abort { reason: String },
    /// Send it on, with these headers set.
    Continue { headers: Vec<(String, String)> },
}

/// Which of the session's tabs a route covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RouteScope {
    /// The tab it was added on.
    Tab,
    /// Every tab the session drives, now and later.
    Session,
}

pub struct RouteRequest {
    /// A glob (`**/api/*`: `*` is anything but `/`, `**` anything, `{a,b}` either) or a
    /// regular expression written `/…/` (`/…/i` ignores case), matched against the whole
    /// URL without its fragment.
    pub pattern: String,
    pub action: RouteAction,
    pub scope: RouteScope,
}

/// A route as its session sees it.
#[derive(Debug, Clone, Serialize)]
pub struct RouteInfo {
    pub id: String,
    pub pattern: String,
    pub action: RouteAction,
    pub scope: RouteScope,
    /// The tab of a tab route.
    pub tab: Option<String>,
    /// Requests it has answered so far.
    pub matched: u64,
}

struct Route {
    id: String,
    session: u64,
    pattern: String,
    matcher: regex::Regex,
    action: RouteAction,
    scope: RouteScope,
    /// The tab (its key) of a tab route, and its handle.
    tab: Option<(String, String)>,
    matched: AtomicU64,
}

impl Route {
    fn info(&self) -> RouteInfo {
        RouteInfo {
            id: self.id.clone(),
            pattern: self.pattern.clone(),
            action: self.action.clone(),
            scope: self.scope,
            tab: self.tab.as_ref().map(|(_, handle)| handle.clone()),
            matched: self.matched.load(Ordering::Relaxed),
        }
    }

    fn covers(&self, tab: &str, covered: &HashMap<u64, HashSet<String>>) -> bool {
        match (&self.tab, self.scope) {
            (Some((key, _)), _) => key == tab,
            (None, _) => covered
                .get(&self.session)
                .is_some_and(|tabs| tabs.contains(tab)),
        }
    }
}

/// A tab whose requests are held: where, and the task answering them.
struct Held {
    browser: Weak<Browser>,
    cdp_session: String,
    pump: tokio::task::AbortHandle,
}

#[derive(Default)]
struct State {
    /// Newest last; the newest matching route answers.
    routes: Vec<Arc<Route>>,
    /// The tabs each session drives, for its session routes (tab keys).
    driven: HashMap<u64, HashSet<String>>,
    held: HashMap<String, Held>,
}

#[derive(Default)]
pub struct Routes {
    state: Arc<Mutex<State>>,
}

/// A tab's key: unique across browsers, for the life of the tab.
fn tab_key(page: &Page) -> String {
    format!("{}/{}", page.browser.client_id, page.tab.target_id)
}

impl Routes {
    /// Adds a route on `page`'s tab (or, for a session route, every tab `session`
    /// drives); requests from then on obey it.
    pub async fn add(&self, page: &Page, session: u64, request: RouteRequest) -> Result<RouteInfo> {
        let matcher = url_matcher(&request.pattern)?;
        let key = tab_key(page);
        let route = Arc::new(Route {
            id: crate::ids::unique("route"),
            session,
            pattern: request.pattern,
            matcher,
            action: request.action,
            scope: request.scope,
            tab: (request.scope == RouteScope::Tab).then(|| (key.clone(), page.handle())),
            matched: AtomicU64::new(0),
        });
        {
            let mut state = self.state.lock();
            state.driven.entry(session).or_default().insert(key);
            state.routes.push(route.clone());
        }
        if let Err(error) = self.hold(page).await {
            // Not in force: not listed either.
            let mut state = self.state.lock();
            state.routes.retain(|r| !Arc::ptr_eq(r, &route));
            release_unrouted(&mut state);
            return Err(error);
        }
        Ok(route.info())
    }

    /// Notes that `session` drives `page`'s tab: its session routes cover it now. A tab
    /// any route covers is held (again, after its session with the browser was renewed).
    pub async fn cover(&self, page: &Page, session: u64) -> Result<()> {
        let key = tab_key(page);
        let routed = {
            let mut state = self.state.lock();
            let session_routes = state
                .routes
                .iter()
                .any(|r| r.session == session && r.scope == RouteScope::Session);
            if session_routes {
                state.driven.entry(session).or_default().insert(key.clone());
            }
            let held_here = state
                .held
                .get(&key)
                .is_some_and(|h| h.cdp_session == page.session);
            !held_here && state.routes.iter().any(|r| r.covers(&key, &state.driven))
        };
        if routed {
            self.hold(page).await?;
        }
        Ok(())
    }

    /// The session's routes, oldest first.
    pub fn list(&self, session: u64) -> Vec<RouteInfo> {
        let state = self.state.lock();
        state
            .routes
            .iter()
            .filter(|r| r.session == session)
            .map(|r| r.info())
            .collect()
    }

    /// Removes the session's routes with this id, or this pattern, or (neither given)
    /// all of them; what was removed.
    pub fn remove(&self, session: u64, id: Option<&str>, pattern: Option<&str>) -> Vec<RouteInfo> {
        let mut state = self.state.lock();
        let mut removed = Vec::new();
        state.routes.retain(|r| {
            let gone = r.session == session
                && id.is_none_or(|id| r.id == id)
                && pattern.is_none_or(|p| r.pattern == p);
            if gone {
                removed.push(r.info());
            }
            !gone
        });
        release_unrouted(&mut state);
        removed
    }

    /// Everything of a session that ended.
    pub fn forget(&self, session: u64) {
        let mut state = self.state.lock();
        state.routes.retain(|r| r.session != session);
        state.driven.remove(&session);
        release_unrouted(&mut state);
    }

    /// Holds `page`'s tab's requests for the routes, once per browser session of the
    /// tab. The answering task starts before the browser holds anything, and the hold is
    /// made in a task of its own: a call cancelled meanwhile never leaves requests held
    /// with nobody to answer them.
    async fn hold(&self, page: &Page) -> Result<()> {
        let key = tab_key(page);
        let pump = {
            let mut state = self.state.lock();
            if state
                .held
                .get(&key)
                .is_some_and(|h| h.cdp_session == page.session)
            {
                return Ok(());
            }
            let pump = tokio::spawn(pump(
                Arc::downgrade(&self.state),
                Arc::downgrade(&page.browser),
                page.session.clone(),
                key.clone(),
                page.browser.conn.subscribe(),
            ));
            let held = Held {
                browser: Arc::downgrade(&page.browser),
                cdp_session: page.session.clone(),
                pump: pump.abort_handle(),
            };
            if let Some(earlier) = state.held.insert(key.clone(), held) {
                earlier.pump.abort();
            }
            pump.abort_handle()
        };
        let browser = page.browser.clone();
        let session = page.session.clone();
        let state = self.state.clone();
        let enabled = tokio::spawn(async move {
            let conn = browser.connection();
            let enabled = conn
                .call(
                    Some(&session),
                    "Fetch.enable",
                    hold_everything(),
                    HOUSEKEEPING,
                )
                .await;
            if enabled.is_err() {
                // It may have been applied all the same: let go, and forget the hold.
                let _ = conn
                    .call(Some(&session), "Fetch.disable", json!({}), HOUSEKEEPING)
                    .await;
                let mut state = state.lock();
                if state
                    .held
                    .get(&key)
                    .is_some_and(|h| h.cdp_session == session)
                {
                    state.held.remove(&key);
                }
                pump.abort();
            }
            enabled
        })
        .await;
        match enabled {
            Ok(result) => result.map(drop).map_err(EngineError::from),
            Err(join) => Err(EngineError::Io(format!(
                "holding the tab's requests failed: {join}"
            ))),
        }
    }
}

/// `Fetch.enable`'s patterns: every request, at the request stage.
fn hold_everything() -> Value {
    json!({ "patterns": [{ "urlPattern": "*", "requestStage": "Request" }] })
}

/// Lets go of tabs no route covers any more: their requests go straight on again.
fn release_unrouted(state: &mut State) {
    let State {
        routes,
        driven,
        held,
    } = state;
    held.retain(|key, hold| {
        if routes.iter().any(|r| r.covers(key, driven)) {
            return true;
        }
        hold.pump.abort();
        if let Some(browser) = hold.browser.upgrade() {
            let session = hold.cdp_session.clone();
            tokio::spawn(async move {
                let conn = browser.connection();
                let _ = conn
                    .call(Some(&session), "Fetch.disable", json!({}), HOUSEKEEPING)
                    .await;
            });
        }
        false
    });
}

/// Answers one tab's held requests until the tab goes away.
async fn pump(
    state: Weak<Mutex<State>>,
    browser: Weak<Browser>,
    cdp_session: String,
    key: String,
    mut events: tokio::sync::broadcast::Receiver<Arc<cdp::Event>>,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let event = match events.recv().await {
            Ok(event) => event,
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(
                    missed,
                    "the route pump fell behind; held requests may stall"
                );
                continue;
            }
            Err(RecvError::Closed) => {
                if let Some(state) = state.upgrade() {
                    state.lock().held.remove(&key);
                }
                return;
            }
        };
        if event.session_id.as_deref() != Some(cdp_session.as_str()) {
            if event.method == "Target.detachedFromTarget"
                && event.params["sessionId"] == cdp_session.as_str()
            {
                if let Some(state) = state.upgrade() {
                    state.lock().held.remove(&key);
                }
                return;
            }
            continue;
        }
        if event.method != "Fetch.requestPaused" {
            continue;
        }
        let (Some(state), Some(browser)) = (state.upgrade(), browser.upgrade()) else {
            return;
        };
        let route = {
            let state = state.lock();
            let url = event.params["request"]["url"].as_str().unwrap_or_default();
            let url = url.split('#').next().unwrap_or(url);
            state
                .routes
                .iter()
                .rev()
                .find(|r| r.covers(&key, &state.driven) && r.matcher.is_match(url))
                .cloned()
        };
        let session = cdp_session.clone();
        // Each on its own, so one slow answer holds up no other request.
        tokio::spawn(async move {
            let (method, params) = answer(route.as_deref(), &event.params);
            if let Some(route) = &route {
                route.matched.fetch_add(1, Ordering::Relaxed);
            }
            let conn = browser.connection();
            let answered = conn
                .call(Some(&session), method, params, HOUSEKEEPING)
                .await;
            // A held request must be let go, or it waits for ever: if the route's answer
            // was refused, it goes on as it was.
            if let Err(error) = answered
                && method != "Fetch.continueRequest"
            {
                tracing::warn!(%error, "a route's answer was refused; the request goes on");
                let id = json!({ "requestId": event.params["requestId"] });
                let _ = conn
                    .call(Some(&session), "Fetch.continueRequest", id, HOUSEKEEPING)
                    .await;
            }
        });
    }
}

/// The `Fetch` command that answers a held request as `route` says (none: it goes on).
fn answer(route: Option<&Route>, paused: &Value) -> (&'static str, Value) {
    let id = &paused["requestId"];
    let Some(route) = route else {
        return ("Fetch.continueRequest", json!({ "requestId": id }));
    };
    match &route.action {
        RouteAction::Fulfill {
            status,
            body,
            content_type,
            headers,
        } => {
            let mut sent = vec![json!({ "name": "Content-Type", "value": content_type })];
            sent.extend(
                headers
                    .iter()
                    .filter(|(name, _)| !name.eq_ignore_ascii_case("content-type"))
                    .map(|(name, value)| json!({ "name": name, "value": value })),
            );
            let body = base64::engine::general_purpose::STANDARD.encode(body);
            let params = json!({
                "requestId": id, "responseCode": status, "responseHeaders": sent, "body": body,
            });
            ("Fetch.fulfillRequest", params)
        }
        RouteAction::Abort { reason } => (
            "Fetch.failRequest",
            json!({ "requestId": id, "errorReason": reason }),
        ),
        RouteAction::Continue { headers } => {
            // CDP replaces a request's headers whole: the page's, with the route's set.
            let mut merged: Vec<(String, String)> = paused["request"]["headers"]
                .as_object()
                .map(|all| {
                    all.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                        .collect()
                })
                .unwrap_or_default();
            for (name, value) in headers {
                merged.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
                merged.push((name.clone(), value.clone()));
            }
            let sent: Vec<Value> = merged
                .iter()
                .map(|(name, value)| json!({ "name": name, "value": value }))
                .collect();
            (
                "Fetch.continueRequest",
                json!({ "requestId": id, "headers": sent }),
            )
        }
    }
}

/// The reasons a route may abort with, as CDP names them (`Fetch.failRequest`).
pub const ABORT_REASONS: &[&str] = &[
    "Failed",
    "Aborted",
    "TimedOut",
    "AccessDenied",
    "ConnectionClosed",
    "ConnectionReset",
    "ConnectionRefused",
    "ConnectionAborted",
    "ConnectionFailed",
    "NameNotResolved",
    "InternetDisconnected",
    "AddressUnreachable",
    "BlockedByClient",
    "BlockedByResponse",
];

/// A reason as CDP names it, from any case (`connectionrefused`, `ConnectionRefused`).
pub fn abort_reason(given: &str) -> Result<&'static str> {
    let wanted = given.replace(['_', '-', ' '], "");
    ABORT_REASONS
        .iter()
        .find(|r| r.eq_ignore_ascii_case(&wanted))
        .copied()
        .ok_or_else(|| {
            EngineError::invalid(
                Input::Reason,
                format!("'{given}' is not one of {}", ABORT_REASONS.join(", ")),
            )
        })
}

/// A route's pattern as a regular expression over the whole URL.
fn url_matcher(pattern: &str) -> Result<regex::Regex> {
    let invalid = |why: String| EngineError::invalid(Input::Pattern, why);
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return Err(invalid("the pattern is empty".into()));
    }
    let written = match regex_literal(pattern) {
        Some((body, ignore_case)) => format!("{}(?:{body})", if ignore_case { "(?i)" } else { "" }),
        None => format!("^{}$", glob_to_regex(pattern)?),
    };
    regex::Regex::new(&written).map_err(|e| invalid(format!("'{pattern}' is not a pattern: {e}")))
}

/// `/body/flags` as a regular expression's body and whether it ignores case.
fn regex_literal(pattern: &str) -> Option<(&str, bool)> {
    let rest = pattern.strip_prefix('/')?;
    let end = rest.rfind('/')?;
    let (body, flags) = (&rest[..end], &rest[end + 1..]);
    (!body.is_empty() && flags.chars().all(|f| matches!(f, 'i' | 'g' | 'm' | 'u')))
        .then_some((body, flags.contains('i')))
}

/// A glob as the body of a regular expression: `**` anything, `*` anything but `/`,
/// `{a,b}` either; everything else (a URL's `?` included) stands for itself.
fn glob_to_regex(glob: &str) -> Result<String> {
    let mut out = String::new();
    let mut chars = glob.chars().peekable();
    let mut in_group = false;
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                out.push_str(".*");
            }
            '*' => out.push_str("[^/]*"),
            '{' if !in_group => {
                in_group = true;
                out.push_str("(?:");
            }
            '}' if in_group => {
                in_group = false;
                out.push(')');
            }
            ',' if in_group => out.push('|'),
            other => out.push_str(&regex::escape(&other.to_string())),
        }
    }
    if in_group {
        return Err(EngineError::invalid(
            Input::Pattern,
            format!("'{glob}' opens a {{ group it does not close"),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, url: &str) -> bool {
        url_matcher(pattern).unwrap().is_match(url)
    }

    #[test]
    fn globs_match_whole_urls_as_agents_write_them() {
        assert!(matches("**/api/*", "http://127.0.0.1:8080/api/items"));
        assert!(!matches("**/api/*", "http://127.0.0.1:8080/api/items/3"));
        assert!(matches("**/api/**", "http://127.0.0.1:8080/api/items/3"));
        assert!(matches("**/*.{png,jpg}", "https://cdn.test/a/b.jpg"));
        assert!(!matches("**/*.{png,jpg}", "https://cdn.test/a/b.gif"));
        // A URL's ? is itself, not a wildcard.
        assert!(matches("**/search?q=*", "https://a.test/search?q=tea"));
        assert!(!matches("**/search?q=*", "https://a.test/searchXq=tea"));
        assert!(matches("https://a.test/", "https://a.test/"));
        assert!(url_matcher("**/{a,b").is_err());
        assert!(url_matcher("  ").is_err());
    }

    #[test]
    fn a_regex_is_written_between_slashes() {
        assert!(matches(r"/\/api\/v\d+\//", "https://a.test/api/v2/x"));
        assert!(matches("/TRACKER/i", "https://ads.test/tracker.js"));
        assert!(!matches("/TRACKER/", "https://ads.test/tracker.js"));
        assert!(url_matcher("/(/").is_err());
    }

    #[test]
    fn abort_reasons_are_cdps_in_any_case() {
        assert_eq!(
            abort_reason("connectionrefused").unwrap(),
            "ConnectionRefused"
        );
        assert_eq!(
            abort_reason("blocked_by_client").unwrap(),
            "BlockedByClient"
        );
        assert!(abort_reason("because").is_err());
    }

    #[test]
    fn a_continued_request_keeps_its_headers_with_the_routes_set() {
        let route = Route {
            id: "r".into(),
            session: 1,
            pattern: "**".into(),
            matcher: url_matcher("**").unwrap(),
            action: RouteAction::Continue {
                headers: vec![("X-Test".into(), "routed".into())],
            },
            scope: RouteScope::Session,
            tab: None,
            matched: AtomicU64::new(0),
        };
        let paused = json!({
            "requestId": "7",
            "request": { "url": "https://a.test/", "headers": { "Accept": "*/*", "x-test": "page" } },
        });
        let (method, params) = answer(Some(&route), &paused);
        assert_eq!(method, "Fetch.continueRequest");
        let headers = params["headers"].as_array().unwrap();
        assert_eq!(headers.len(), 2, "{params}");
        assert!(headers.contains(&json!({ "name": "X-Test", "value": "routed" })));
        assert_eq!(answer(None, &paused).1, json!({ "requestId": "7" }));
    }
}
