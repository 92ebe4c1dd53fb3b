use serde_json::json;

use crate::support::{HttpServer, Site, Tabwire, call_on};

#[tokio::test]
async fn agents_own_the_tabs_they_open_and_cannot_close_others() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("ownership").await;
    // The user's tab (the one the browser started with) is this session's default.
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let user_tab = tw.ok("list_tabs", json!({})).await["default_session_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let opened = tw
        .ok(
            "open_new_tab",
            json!({ "url": site.url("fold.html"), "owner_id": "task-1" }),
        )
        .await;
    assert_eq!(opened["status"], "ok");
    assert_eq!(opened["owned"], true);
    assert_eq!(opened["opener"], "agent");
    assert_eq!(opened["owner_id"], "task-1");
    assert_eq!(opened["load_status"], "complete");
    assert!(opened["generation"].is_string(), "{opened}");
    assert_eq!(opened["result"]["data"]["operation_status"], "completed");
    assert_eq!(opened["result"]["data"]["id"], opened["tab_id"]);
    let tab = opened["session_id"].as_str().unwrap().to_owned();
    let scan = tw
        .ok("scan_page", json!({ "session_id": tab, "text_only": true }))
        .await;
    assert!(scan["content"].as_str().unwrap().contains("Deep button"));

    // Recovery with the same operation_id reads the record; it never opens a second tab.
    let before = tw.ok("list_tabs", json!({})).await["count"]
        .as_u64()
        .unwrap();
    let recovered = tw
        .ok(
            "open_new_tab",
            json!({ "url": site.url("fold.html"), "operation_id": opened["operation_id"] }),
        )
        .await;
    // BrowserTap's answer for a completed creation, read again: the same tab.
    assert_eq!(recovered["status"], "ok");
    assert_eq!(recovered["recovered"], true);
    assert_eq!(recovered["replayed"], false);
    assert_eq!(recovered["session_id"], tab);
    assert_eq!(recovered["generation"], opened["generation"]);
    assert_eq!(
        tw.ok("list_tabs", json!({})).await["count"]
            .as_u64()
            .unwrap(),
        before
    );

    // Not this owner's tab: refused.
    let refused = tw
        .call(
            "close_tabs",
            json!({ "tab_id": user_tab, "owner_id": "task-1" }),
        )
        .await;
    assert_eq!(refused.error_code(), "permission_denied");
    assert_eq!(refused.reason(), "not_owned", "{}", refused.envelope);
    let wrong_owner = tw
        .call("close_tabs", json!({ "tab_id": tab, "owner_id": "task-2" }))
        .await;
    assert_eq!(wrong_owner.reason(), "not_owned");
    // Without the owner_id open_new_tab handed out, nothing is closed.
    let no_owner = tw.call("close_tabs", json!({ "tab_id": tab })).await;
    assert_eq!(
        no_owner.error_code(),
        "permission_denied",
        "{}",
        no_owner.envelope
    );
    assert_eq!(no_owner.reason(), "owner_required");
    // A request naming one tab that is not this owner's closes none of them.
    let mixed = tw
        .call(
            "close_tabs",
            json!({ "tab_id": [tab, user_tab], "owner_id": "task-1" }),
        )
        .await;
    assert_eq!(mixed.reason(), "not_owned", "{}", mixed.envelope);
    assert!(
        tw.ok("list_tabs", json!({}))
            .await
            .to_string()
            .contains(&tab)
    );
    let closed = tw
        .ok("close_tabs", json!({ "tab_id": tab, "owner_id": "task-1" }))
        .await;
    // BrowserTap's words: the tab id named, closed by the agent.
    assert_eq!(closed["status"], "ok");
    assert_eq!(closed["closed"], opened["tab_id"]);
    assert_eq!(closed["requested"], opened["tab_id"]);
    assert_eq!(closed["closed_by"], "agent");
    assert_eq!(closed["results"][0]["closed_by"], "agent");
    let again = tw
        .ok("close_tabs", json!({ "tab_id": tab, "owner_id": "task-1" }))
        .await;
    assert_eq!(again["status"], "already_gone");
    assert_eq!(again["already_gone"], opened["tab_id"]);
    assert_eq!(again["results"][0]["status"], "already_gone");
    let tabs = tw.ok("list_tabs", json!({})).await;
    assert!(
        !tabs.to_string().contains(&format!("\"{tab}\"")),
        "closed tab still listed: {tabs}"
    );
}

#[tokio::test]
async fn switch_tab_changes_only_this_sessions_default() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("switch").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let opened = tw
        .ok("open_new_tab", json!({ "url": site.url("fold.html") }))
        .await;
    let switched = tw
        .ok("switch_tab", json!({ "url_pattern": "fold.html" }))
        .await;
    assert_eq!(switched["session_id"], opened["session_id"]);
    let title = tw
        .ok("execute_js", json!({ "script": "document.title" }))
        .await;
    assert_eq!(title["js_return"], "Below the fold");
    // A pattern is the caller's to fix: several tabs are a bad request naming them, none
    // is not_found; both raised, as BrowserTap raises them.
    let ambiguous = tw
        .call("switch_tab", json!({ "url_pattern": "127.0.0.1" }))
        .await;
    assert_eq!(ambiguous.error_code(), "invalid_request");
    assert_eq!(ambiguous.reason(), "ambiguous");
    assert_eq!(
        ambiguous.envelope["diagnostics"]["candidates"]
            .as_array()
            .map(Vec::len),
        Some(2),
        "{}",
        ambiguous.envelope
    );
    let none = tw
        .call("switch_tab", json!({ "url_pattern": "no-such-page" }))
        .await;
    assert_eq!(none.error_code(), "not_found");
    assert!(none.envelope.get("legacy").is_none(), "{}", none.envelope);
    // The switch lists the tabs as list_tabs does, and the page says its own title.
    let tabs = switched["tabs"].as_array().expect("tabs");
    let row = tabs
        .iter()
        .find(|t| t["id"] == opened["session_id"])
        .expect("the switched-to tab");
    assert_eq!(row["title"], "Below the fold", "{row}");
    assert_eq!(row["browser"], "chrome");
    assert!(
        row["generation"].is_string() && row["tab_identity"].is_string(),
        "{row}"
    );
    let activated = tw
        .ok(
            "activate_tab",
            json!({ "session_id": opened["session_id"] }),
        )
        .await;
    assert_eq!(activated["status"], "ok");
    assert_eq!(activated["activated_session_id"], opened["session_id"]);
    assert_eq!(activated["on_screen"], true, "{activated}");
    assert!(activated["window_state"].is_string(), "{activated}");
    // A handle of a browser that is not linked: nothing was sent, and it may link later.
    let unlinked = tw
        .call("activate_tab", json!({ "session_id": "nobody:404" }))
        .await;
    assert_eq!(unlinked.error_code(), "extension_not_connected");
    assert_eq!(unlinked.envelope["delivery_state"], "undelivered");
}

#[tokio::test]
async fn http_sessions_each_get_their_own_tab_and_work_at_once() {
    let site = Site::start().await;
    let server = HttpServer::start("http-sessions", &[]).await;
    let (a, b) = (server.client().await, server.client().await);
    let (ra, rb) = tokio::join!(
        call_on(&a, "open_url", json!({ "url": site.url("form.html") })),
        call_on(&b, "open_url", json!({ "url": site.url("fold.html") })),
    );
    let (ta, tb) = (ra.envelope["target"].clone(), rb.envelope["target"].clone());
    ra.ok();
    rb.ok();
    assert_ne!(ta, tb, "two sessions must not share a default tab");
    let (sa, sb) = tokio::join!(
        call_on(&a, "execute_js", json!({ "script": "document.title" })),
        call_on(&b, "execute_js", json!({ "script": "document.title" })),
    );
    assert_eq!(sa.ok()["js_return"], "Form");
    assert_eq!(sb.ok()["js_return"], "Below the fold");
    // Trusted input reaches both tabs at once, though only one can be in front.
    let (ca, cb) = tokio::join!(
        call_on(&a, "page_click", json!({ "selector": "#terms" })),
        call_on(&b, "page_click", json!({ "selector": "#deep" })),
    );
    ca.ok();
    cb.ok();
    let checked = call_on(
        &a,
        "execute_js",
        json!({ "script": "document.getElementById('terms').checked" }),
    )
    .await
    .ok();
    assert_eq!(checked["js_return"], true);
    let deep = call_on(
        &b,
        "execute_js",
        json!({ "script": "document.getElementById('deep').textContent" }),
    )
    .await
    .ok();
    assert_eq!(deep["js_return"], "Clicked deep");
    // A session cannot read another's receipts.
    let started = call_on(&a, "execute_js", json!({ "script": "1", "wait": false }))
        .await
        .ok();
    let foreign = call_on(
        &b,
        "get_execute_js_result",
        json!({ "operation_id": started["operation_id"] }),
    )
    .await;
    assert_eq!(foreign.reason(), "foreign_operation");
}

#[tokio::test]
async fn http_refuses_foreign_hosts_and_origins() {
    let server = HttpServer::start("http-guard", &[]).await;
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let post = |host: Option<&str>, origin: Option<&str>| {
        let mut request = http
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init.to_string());
        if let Some(host) = host {
            request = request.header("host", host);
        }
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    let ok = post(None, None).await.unwrap();
    assert!(ok.status().is_success(), "{}", ok.status());
    let rebinding = post(Some("evil.example:80"), None).await.unwrap();
    assert_eq!(
        rebinding.status().as_u16(),
        403,
        "DNS-rebinding Host must be refused"
    );
    let cross_origin = post(None, Some("http://evil.example")).await.unwrap();
    assert_eq!(
        cross_origin.status().as_u16(),
        403,
        "a foreign Origin must be refused"
    );
    let local_origin = post(None, Some("http://localhost:3000")).await.unwrap();
    assert!(local_origin.status().is_success());
}
