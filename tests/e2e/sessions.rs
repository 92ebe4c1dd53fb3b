//! Sessions kept apart and servers a balancer can run: `--isolate-sessions` (a browser
//! context per MCP session), a pool of CDP endpoints, `/health`, the drain on SIGTERM,
//! and the 404 a session another server held gets.

use serde_json::{Value, json};

use crate::support::{
    Client, DebuggingBrowser, HttpServer, Site, call_on, poll_until, process_exits,
};

/// What a script returns in the session's default tab.
async fn js(client: &Client, script: &str) -> Value {
    call_on(client, "execute_js", json!({ "script": script }))
        .await
        .ok()["js_return"]
        .clone()
}

/// The page targets a browser lists on its DevTools endpoint, by URL.
async fn page_urls(browser: &DebuggingBrowser) -> Vec<String> {
    let list: Value = reqwest::Client::new()
        .get(format!("{}/json/list", browser.http))
        .send()
        .await
        .expect("GET /json/list")
        .json()
        .await
        .expect("/json/list is JSON");
    list.as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["type"] == "page")
        .filter_map(|t| t["url"].as_str().map(str::to_owned))
        .collect()
}

/// The handle of the one tab in a session's list whose URL contains `part`.
fn handle_of(tabs: &Value, part: &str) -> String {
    tabs["tabs"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["url"].as_str().is_some_and(|u| u.contains(part)))
        .and_then(|t| t["session_id"].as_str())
        .unwrap_or_else(|| panic!("no tab with {part} in {tabs}"))
        .to_owned()
}

#[tokio::test]
async fn isolated_sessions_keep_cookies_storage_tabs_and_files_apart() {
    let site = Site::start().await;
    let browser = DebuggingBrowser::launch("isolated-browser").await;
    let server = HttpServer::start(
        "isolated",
        &["--isolate-sessions", "--cdp-endpoint", &browser.ws],
    )
    .await;
    let (a, b) = (server.client().await, server.client().await);
    // Both on one origin, each setting its own cookie and storage.
    call_on(&a, "open_url", json!({ "url": site.url("form.html") }))
        .await
        .ok();
    call_on(&b, "open_url", json!({ "url": site.url("fold.html") }))
        .await
        .ok();
    let set = |who: &str| {
        format!(
            "document.cookie = 'who={who}; path=/'; localStorage.setItem('who', '{who}'); document.cookie"
        )
    };
    let jar = "[document.cookie, localStorage.getItem('who')]";
    js(&a, &set("a")).await;
    assert_eq!(
        js(&b, jar).await,
        json!(["", null]),
        "B saw A's cookie or storage"
    );
    js(&b, &set("b")).await;
    assert_eq!(js(&a, jar).await, json!(["who=a", "a"]));

    // Permissions: A's grant is A's context's; B's pages of the same origin still ask.
    call_on(
        &a,
        "set_site_permission",
        json!({ "permission": "geolocation", "setting": "allow" }),
    )
    .await
    .ok();
    let state = |expected: &str| {
        json!({ "js": format!(
            "navigator.permissions.query({{name: 'geolocation'}}).then(s => s.state === '{expected}')"
        ), "timeout": 30 })
    };
    call_on(&a, "wait_for", state("granted")).await.ok();
    assert_eq!(
        js(
            &b,
            "(await navigator.permissions.query({name: 'geolocation'})).state"
        )
        .await,
        "prompt",
        "A's grant reached B's context"
    );

    // Tabs: each lists only its own, and cannot reach the other's by handle.
    let a_tabs = call_on(&a, "list_tabs", json!({})).await.ok();
    let b_tabs = call_on(&b, "list_tabs", json!({})).await.ok();
    let a_tab = handle_of(&a_tabs, "form.html");
    assert!(
        !a_tabs.to_string().contains("fold.html"),
        "A lists B's tab: {a_tabs}"
    );
    assert!(
        !b_tabs.to_string().contains("form.html"),
        "B lists A's tab: {b_tabs}"
    );
    let switch = call_on(&b, "switch_tab", json!({ "session_id": a_tab })).await;
    assert!(
        switch.is_error,
        "B switched to A's tab: {}",
        switch.envelope
    );
    let by_url = call_on(&b, "switch_tab", json!({ "url_pattern": "form.html" })).await;
    assert!(
        by_url.is_error,
        "B found A's tab by URL: {}",
        by_url.envelope
    );
    let close = call_on(
        &b,
        "close_tabs",
        json!({ "tab_id": [a_tab], "only_if_agent_owned": false }),
    )
    .await
    .ok();
    assert_eq!(close["closed"], json!([]), "B closed A's tab: {close}");
    assert_eq!(close["closed_count"], 0, "{close}");
    let read = call_on(
        &b,
        "execute_js",
        json!({ "script": "document.title", "session_id": a_tab }),
    )
    .await;
    assert!(read.is_error, "B ran script in A's tab: {}", read.envelope);
    // Nor through raw CDP or the target list.
    for method in ["Target.getTargets", "Storage.getCookies"] {
        let raw = call_on(&b, "cdp_command", json!({ "method": method })).await;
        assert_eq!(raw.error_code(), "raw_cdp_blocked", "{}", raw.envelope);
    }
    let targets = call_on(&b, "debugger_targets", json!({})).await.ok();
    assert!(
        !targets.to_string().contains("form.html"),
        "B sees A's target: {targets}"
    );
    // Nor through search: A finds its page, B does not.
    let query = json!({ "query": "Form", "mode": "words" });
    let found = call_on(&a, "search_tabs", query.clone()).await.ok();
    assert!(found.to_string().contains("form.html"), "{found}");
    let hidden = call_on(&b, "search_tabs", query).await.ok();
    assert!(
        !hidden.to_string().contains("form.html"),
        "B's search found A's tab: {hidden}"
    );

    // Files: each session writes in its own folder under the output dir.
    let shot = call_on(
        &a,
        "capture_page_screenshot",
        json!({ "save_path": "a.png" }),
    )
    .await
    .ok();
    let path = shot.to_string();
    assert!(path.contains("/sessions/session-"), "{shot}");
    let done = call_on(&a, "download_file", json!({ "url": site.url("report") }))
        .await
        .ok();
    let saved = done["path"].as_str().unwrap_or_default();
    assert!(
        saved.contains("/sessions/session-") && saved.ends_with("/downloads/report.csv"),
        "{done}"
    );
    assert!(std::fs::read(saved).is_ok_and(|bytes| !bytes.is_empty()));
    // The output dir beyond its own folder is not its to write in.
    let shared_out = std::env::temp_dir()
        .join(format!("tabwire-e2e-isolated-{}", std::process::id()))
        .join("out")
        .canonicalize()
        .expect("the server's output dir");
    let elsewhere = call_on(
        &a,
        "download_file",
        json!({ "url": site.url("report"), "directory": shared_out.join("elsewhere") }),
    )
    .await;
    assert_eq!(
        elsewhere.reason(),
        "path_not_allowed",
        "{}",
        elsewhere.envelope
    );

    // A's session ends: its context goes, and its tab with it; B goes on.
    a.cancel().await.expect("close A's session");
    poll_until("A's tab to close with its context", || async {
        !page_urls(&browser)
            .await
            .iter()
            .any(|u| u.contains("form.html"))
    })
    .await;
    assert!(
        page_urls(&browser)
            .await
            .iter()
            .any(|u| u.contains("fold.html"))
    );
    assert_eq!(js(&b, "document.cookie").await, "who=b");
}

#[tokio::test]
async fn an_endpoint_that_cannot_be_reached_is_passed_over_for_the_next() {
    let browser = DebuggingBrowser::launch("pool-browser").await;
    let site = Site::start().await;
    // Port 9 (discard) has nobody listening: the first endpoint fails at once.
    let server = HttpServer::start(
        "pool",
        &[
            "--cdp-endpoint",
            "ws://127.0.0.1:9/devtools/browser/gone",
            "--cdp-endpoint",
            &browser.ws,
        ],
    )
    .await;
    let client = server.client().await;
    let opened = call_on(&client, "open_url", json!({ "url": site.url("form.html") }))
        .await
        .ok();
    assert!(opened.to_string().contains("form.html"), "{opened}");
    let status = call_on(&client, "get_setup_status", json!({})).await.ok();
    let load = &status["endpoint_load"];
    assert_eq!(load[0]["browsers"], 0, "{status}");
    assert_eq!(load[1]["browsers"], 1, "{status}");
    assert!(
        page_urls(&browser)
            .await
            .iter()
            .any(|u| u.contains("form.html"))
    );
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"balancer-test","version":"1"}}}"#;

fn post(http: &reqwest::Client, url: &str, body: &str) -> reqwest::RequestBuilder {
    http.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_owned())
}

#[tokio::test]
async fn health_answers_and_a_session_this_server_does_not_hold_gets_404() {
    let server = HttpServer::start("health", &[]).await;
    let http = reqwest::Client::new();
    let health_url = server.url.replace("/mcp", "/health");
    let health = http.get(&health_url).send().await.expect("GET /health");
    assert_eq!(health.status().as_u16(), 200);
    let body: Value = health.json().await.expect("health is JSON");
    assert_eq!(body["status"], "serving", "{body}");
    // A session id from another server (or from before a restart).
    let stale = post(
        &http,
        &server.url,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
    .header("mcp-session-id", "a-session-some-other-server-held")
    .send()
    .await
    .expect("POST");
    assert_eq!(stale.status().as_u16(), 404, "a stale session must get 404");
}

#[tokio::test]
async fn sigterm_drains_new_sessions_are_refused_and_the_call_in_flight_finishes() {
    let site = Site::start().await;
    let server = HttpServer::start("drain", &["--drain-seconds", "60"]).await;
    let client = std::sync::Arc::new(server.client().await);
    call_on(&client, "open_url", json!({ "url": site.url("form.html") }))
        .await
        .ok();
    let http = reqwest::Client::new();
    let health_url = server.url.replace("/mcp", "/health");
    // A call that runs until the test lets the page's request go.
    let running = tokio::spawn({
        let client = client.clone();
        async move {
            call_on(
                &client,
                "execute_js",
                json!({
                    "script": "await (await fetch('/hold/drain')).text()",
                    "timeout": 60,
                }),
            )
            .await
        }
    });
    site.arrived("drain").await;
    server.terminate();
    poll_until("/health to say draining", || async {
        http.get(&health_url)
            .send()
            .await
            .is_ok_and(|r| r.status().as_u16() == 503)
    })
    .await;
    let refused = post(&http, &server.url, INITIALIZE)
        .send()
        .await
        .expect("POST initialize");
    assert_eq!(
        refused.status().as_u16(),
        503,
        "a new session while draining"
    );
    let body: Value = http
        .get(&health_url)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["calls_in_flight"], 1, "{body}");
    assert!(crate::support::process_alive(server.pid()));
    // The call in flight finishes, and its answer arrives.
    site.release("drain");
    let finished = running.await.expect("the call task").ok();
    assert_eq!(finished["js_return"], "released drain");
    assert!(
        process_exits(server.pid()).await,
        "the server did not exit once drained"
    );
}

#[tokio::test]
async fn an_idle_isolated_session_is_closed_and_its_context_goes_with_it() {
    let site = Site::start().await;
    let browser = DebuggingBrowser::launch("idle-browser").await;
    let server = HttpServer::start(
        "idle",
        &[
            "--isolate-sessions",
            "--cdp-endpoint",
            &browser.ws,
            "--session-idle",
            "2",
        ],
    )
    .await;
    let client = server.client().await;
    call_on(&client, "open_url", json!({ "url": site.url("fold.html") }))
        .await
        .ok();
    assert!(
        page_urls(&browser)
            .await
            .iter()
            .any(|u| u.contains("fold.html"))
    );
    // The agent says nothing more: its session expires, and its context and tab go.
    poll_until("the idle session's tab to close", || async {
        !page_urls(&browser)
            .await
            .iter()
            .any(|u| u.contains("fold.html"))
    })
    .await;
    let health: Value = reqwest::Client::new()
        .get(server.url.replace("/mcp", "/health"))
        .send()
        .await
        .expect("GET /health")
        .json()
        .await
        .expect("health is JSON");
    assert_eq!(health["sessions"], 0, "{health}");
}
