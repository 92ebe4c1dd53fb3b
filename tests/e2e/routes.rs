//! Network routes: a fetch and an XMLHttpRequest fulfilled, a request aborted and one let
//! through with a header set, a document and a script served by routes, routes listed
//! with their counts and removed, and two agents' routes kept apart.

use serde_json::{Value, json};

use crate::support::{Client, HttpServer, Site, Tabwire, call_on};

/// What the page gets when it fetches `path`: `status body`, or `failed: why`.
fn fetching(path: &str) -> String {
    format!(
        "return fetch('{path}').then(async r => r.status + ' ' + await r.text(), e => 'failed: ' + e.message)"
    )
}

async fn fetch_in(tw: &Tabwire, path: &str) -> String {
    let ran = tw
        .ok("execute_js", json!({ "script": fetching(path) }))
        .await;
    ran["js_return"].as_str().unwrap_or_default().to_owned()
}

async fn route(tw: &Tabwire, arguments: Value) -> Value {
    let mut arguments = arguments;
    arguments["action"] = json!("add");
    tw.ok("network_route", arguments).await
}

#[tokio::test]
async fn a_route_fulfils_aborts_and_passes_requests_through_until_removed() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("routes").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    assert!(fetch_in(&tw, "/api/data").await.starts_with("404"));

    // Fulfilled here: the page gets the route's status and body.
    let stub = route(
        &tw,
        json!({ "pattern": "**/api/data", "fulfill": { "status": 201, "body": { "stub": true } } }),
    )
    .await;
    assert_eq!(stub["route"]["kind"], "fulfill");
    assert_eq!(fetch_in(&tw, "/api/data").await, r#"201 {"stub":true}"#);
    let typed = tw
        .ok(
            "execute_js",
            json!({ "script": "return fetch('/api/data').then(r => r.headers.get('content-type'))" }),
        )
        .await;
    assert_eq!(typed["js_return"], "application/json");
    // An XMLHttpRequest obeys it as a fetch does.
    let xhr = "return new Promise(done => { const x = new XMLHttpRequest(); x.open('GET', '/api/data'); x.onload = () => done(x.status + ' ' + x.responseText); x.send(); })";
    let sent = tw.ok("execute_js", json!({ "script": xhr })).await;
    assert_eq!(sent["js_return"], r#"201 {"stub":true}"#);

    // Let through with a header set: the server sees it.
    route(
        &tw,
        json!({ "pattern": "**/echo-request", "continue": { "headers": { "x-test": "from-route" } } }),
    )
    .await;
    let echoed = fetch_in(&tw, "/echo-request").await;
    assert!(echoed.contains(r#""x_test":"from-route""#), "{echoed}");

    // Aborted, by a regular expression: the page's request fails.
    route(
        &tw,
        json!({ "pattern": "/tracker\\.js$/", "abort": { "reason": "BlockedByClient" } }),
    )
    .await;
    assert!(
        fetch_in(&tw, "/ads/tracker.js")
            .await
            .starts_with("failed:")
    );

    // A document too: the tab shows what the route serves.
    route(
        &tw,
        json!({
            "pattern": "**/stubbed.html",
            "fulfill": { "body": "<title>Stubbed</title><h1 id=h>from the route</h1>", "contentType": "text/html" },
        }),
    )
    .await;
    let landed = tw
        .ok("open_url", json!({ "url": site.url("stubbed.html") }))
        .await;
    assert_eq!(landed["title"], "Stubbed", "{landed}");

    // A subresource too: the script the page adds is the route's.
    route(
        &tw,
        json!({
            "pattern": "**/lib.js",
            "fulfill": { "body": "window.fromRoute = 42;", "contentType": "text/javascript" },
        }),
    )
    .await;
    let script = "return new Promise(done => { const s = document.createElement('script'); s.src = '/lib.js'; s.onload = () => done(String(window.fromRoute)); s.onerror = () => done('failed'); document.head.append(s); })";
    let loaded = tw.ok("execute_js", json!({ "script": script })).await;
    assert_eq!(loaded["js_return"], "42");

    // Listed with what each matched; removed by id, then all.
    let listed = tw.ok("network_route", json!({ "action": "list" })).await;
    assert_eq!(listed["count"], 5, "{listed}");
    let matched = |pattern: &str| {
        listed["routes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["pattern"] == pattern)
            .map(|r| r["matched"].as_u64().unwrap())
    };
    assert_eq!(matched("**/api/data"), Some(3));
    assert_eq!(matched("**/stubbed.html"), Some(1));
    assert_eq!(matched("**/lib.js"), Some(1));
    let removed = tw
        .ok(
            "network_route",
            json!({ "action": "remove", "route_id": stub["route"]["id"] }),
        )
        .await;
    assert_eq!(removed["count"], 1);
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    assert!(fetch_in(&tw, "/api/data").await.starts_with("404"));
    assert!(fetch_in(&tw, "/echo-request").await.contains("from-route"));
    let all = tw.ok("network_route", json!({ "action": "remove" })).await;
    assert_eq!(all["count"], 4);
    assert!(
        fetch_in(&tw, "/echo-request")
            .await
            .contains(r#""x_test":"""#)
    );
    assert!(fetch_in(&tw, "/ads/tracker.js").await.starts_with("404"));
}

async fn js(client: &Client, session_tab: Option<&str>, script: &str) -> String {
    let mut arguments = json!({ "script": script });
    if let Some(tab) = session_tab {
        arguments["session_id"] = json!(tab);
    }
    let ran = call_on(client, "execute_js", arguments).await.ok();
    ran["js_return"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn two_agents_routes_stay_apart_and_a_session_route_covers_its_new_tabs() {
    let site = Site::start().await;
    let server = HttpServer::start("routes-two", &[]).await;
    let (a, b) = (server.client().await, server.client().await);
    for client in [&a, &b] {
        call_on(client, "open_url", json!({ "url": site.url("form.html") }))
            .await
            .ok();
    }
    call_on(
        &a,
        "network_route",
        json!({
            "action": "add", "pattern": "**/api/data", "scope": "session",
            "fulfill": { "body": "for a" },
        }),
    )
    .await
    .ok();
    assert_eq!(js(&a, None, &fetching("/api/data")).await, "200 for a");
    assert!(
        js(&b, None, &fetching("/api/data"))
            .await
            .starts_with("404")
    );
    // B sees none of A's routes, and cannot remove them.
    let listed = call_on(&b, "network_route", json!({ "action": "list" }))
        .await
        .ok();
    assert_eq!(listed["count"], 0);
    let removed = call_on(&b, "network_route", json!({ "action": "remove" }))
        .await
        .ok();
    assert_eq!(removed["count"], 0);
    // A tab A opens is covered by A's session route.
    let opened = call_on(&a, "open_new_tab", json!({ "url": site.url("fold.html") }))
        .await
        .ok();
    let tab = opened["session_id"].as_str().unwrap();
    assert_eq!(js(&a, Some(tab), &fetching("/api/data")).await, "200 for a");
}

#[tokio::test]
async fn the_chrome_face_routes_requests() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("routes-chrome", &["--face", "chrome"]).await;
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("form.html") }))
        .await;
    let added = tw
        .chrome_ok(
            "chrome_network_route",
            json!({ "action": "add", "pattern": "**/echo-request", "abort": { "reason": "ConnectionRefused" } }),
        )
        .await;
    assert_eq!(added["route"]["reason"], "ConnectionRefused");
    let ran = tw
        .chrome_ok(
            "chrome_javascript",
            json!({ "code": fetching("/echo-request") }),
        )
        .await;
    assert!(
        ran["result"].as_str().unwrap().starts_with("failed:"),
        "{ran}"
    );
    let listed = tw
        .chrome_ok("chrome_network_route", json!({ "action": "list" }))
        .await;
    assert_eq!(listed["routes"][0]["matched"], 1);
    tw.chrome_ok("chrome_network_route", json!({ "action": "remove" }))
        .await;
    let ran = tw
        .chrome_ok(
            "chrome_javascript",
            json!({ "code": fetching("/echo-request") }),
        )
        .await;
    assert!(ran["result"].as_str().unwrap().starts_with("200"), "{ran}");
    // A route needs exactly one action.
    let refused = tw
        .chrome(
            "chrome_network_route",
            json!({ "action": "add", "pattern": "**", "fulfill": {}, "abort": {} }),
        )
        .await;
    assert!(refused.is_error);
}

#[tokio::test]
async fn a_browser_at_a_cdp_endpoint_obeys_routes_too() {
    let site = Site::start().await;
    let browser = crate::support::DebuggingBrowser::launch("routes-endpoint").await;
    let tw = Tabwire::stdio_with("routes-endpoint", &["--cdp-endpoint", &browser.http]).await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    route(
        &tw,
        json!({ "pattern": "**/api/*", "fulfill": { "status": 503, "body": "down" } }),
    )
    .await;
    assert_eq!(fetch_in(&tw, "/api/anything").await, "503 down");
}
