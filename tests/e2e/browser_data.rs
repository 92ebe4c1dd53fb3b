use serde_json::json;

use crate::support::{
    DATA_JSON, HttpServer, PIXEL_PNG, REPORT, Site, Tabwire, call_on, poll_until, sha256_hex,
};

#[tokio::test]
async fn a_network_capture_records_fetches_with_bodies_and_filters() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("network").await;
    tw.ok("open_url", json!({ "url": site.url("fetcher.html") }))
        .await;
    tw.ok("network_capture_start", json!({})).await;
    tw.ok("page_click", json!({ "selector": "#load" })).await;
    tw.ok("wait_for", json!({ "text": "loaded 3 / 404" })).await;

    // An invalid pattern is refused and the capture keeps running.
    let bad = tw
        .call("network_capture_stop", json!({ "url_pattern": "(" }))
        .await;
    assert_eq!(bad.error_code(), "invalid_request", "{}", bad.envelope);
    assert!(bad.message().contains("url_pattern"));

    let json_only = tw
        .ok("network_capture_stop", json!({ "url_pattern": "/json$" }))
        .await;
    let records = json_only["requests"].as_array().unwrap();
    assert_eq!(records.len(), 1, "{json_only}");
    assert_eq!(json_only["filtered"], true);
    assert_eq!(records[0]["status"], 200);
    assert_eq!(records[0]["type"], "Fetch");
    assert_eq!(records[0]["finished"], true);
    assert!(records[0]["request_headers"].is_object(), "{}", records[0]);
    assert!(
        records[0]["body"].as_str().unwrap().contains("\"items\""),
        "{}",
        records[0]
    );
    // Stopped means stopped: a second stop says nothing runs (as BrowserTap answers it).
    let again = tw.ok("network_capture_stop", json!({})).await;
    assert_eq!(again["status"], "not_running", "{again}");
    assert_eq!(again["requests"], json!([]));

    tw.ok("network_capture_start", json!({ "include_bodies": false }))
        .await;
    tw.ok("page_click", json!({ "selector": "#load" })).await;
    tw.ok("wait_for", json!({ "js": "performance.getEntriesByName(location.origin + '/missing-thing').length >= 2" })).await;
    let failures = tw
        .ok("network_capture_stop", json!({ "status_min": 400 }))
        .await;
    let records = failures["requests"].as_array().unwrap();
    assert!(
        !records.is_empty() && records.iter().all(|r| r["status"] == 404),
        "{failures}"
    );
    assert!(records[0].get("body").is_none());
}

#[tokio::test]
async fn console_messages_and_uncaught_exceptions_are_collected() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("console").await;
    tw.ok("open_url", json!({ "url": site.url("fetcher.html") }))
        .await;
    tw.ok("console_capture_start", json!({})).await;
    tw.ok("page_click", json!({ "selector": "#load" })).await;
    tw.ok("wait_for", json!({ "text": "loaded" })).await;
    tw.ok(
        "execute_js",
        json!({ "script": "console.error('from the agent', 42)" }),
    )
    .await;
    // The uncaught error is thrown from a timer after the load; the page marks it.
    tw.ok("wait_for", json!({ "selector": "body[data-failed]" }))
        .await;
    let messages = tw.ok("get_console_messages", json!({})).await;
    let texts: Vec<String> = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{} {}", m["type"], m["text"].as_str().unwrap_or_default()))
        .collect();
    assert!(
        texts.iter().any(|t| t.contains("\"log\" loaded 3 items")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("\"warning\" missing status 404")),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.contains("from the agent 42")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("\"exception\"") && t.contains("late failure")),
        "{texts:?}"
    );
    let agent = messages["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["text"] == "from the agent 42")
        .expect("the agent's message");
    assert_eq!(agent["args"], json!(["from the agent", 42]), "{agent}");
    assert_eq!(messages["status"], "capturing");

    let paged = tw
        .ok(
            "get_console_messages",
            json!({ "offset": 1, "max_items": 1, "clear": true }),
        )
        .await;
    assert_eq!(paged["messages"].as_array().unwrap().len(), 1);
    assert_eq!(paged["next_offset"], 2);
    assert_eq!(paged["cleared"], paged["message_count"], "{paged}");
    let empty = tw.ok("get_console_messages", json!({})).await;
    assert_eq!(empty["total"], 0);
    let stopped = tw.ok("console_capture_stop", json!({})).await;
    assert_eq!(stopped["status"], "stopped");
    assert!(stopped["stopped_at"].as_u64().is_some(), "{stopped}");
    let after = tw.ok("get_console_messages", json!({})).await;
    assert_eq!(after["status"], "not_running", "{after}");
}

#[tokio::test]
async fn captures_belong_to_the_session_that_started_them() {
    let site = Site::start().await;
    let server = HttpServer::start("capture-owner", &[]).await;
    let (a, b) = (server.client().await, server.client().await);
    call_on(&a, "open_url", json!({ "url": site.url("fetcher.html") }))
        .await
        .ok();
    let tab = call_on(&a, "list_tabs", json!({})).await.ok()["default_session_id"].clone();
    call_on(&a, "network_capture_start", json!({})).await.ok();
    let theirs = call_on(&b, "network_capture_stop", json!({ "session_id": tab })).await;
    assert_eq!(theirs.error_code(), "capture_busy", "{}", theirs.envelope);
    let start = call_on(&b, "network_capture_start", json!({ "session_id": tab })).await;
    assert_eq!(start.error_code(), "capture_busy");
    call_on(&a, "network_capture_stop", json!({})).await.ok();

    // A capture left running ends with its session: the tab is free for B.
    call_on(&a, "network_capture_start", json!({})).await.ok();
    a.cancel().await.expect("close A's session");
    poll_until("A's capture to end with its session", || async {
        let start = call_on(
            &b,
            "network_capture_start",
            json!({ "session_id": tab.clone() }),
        )
        .await;
        start.error_code() != "capture_busy"
    })
    .await;
    let stopped = call_on(&b, "network_capture_stop", json!({ "session_id": tab })).await;
    stopped.ok();
}

#[tokio::test]
async fn an_httponly_cookie_round_trips_through_cdp() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("cookies").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let set = tw
        .ok(
            "set_cookies",
            json!({ "cookies": [
            { "name": "session", "value": "s3cr3t", "httpOnly": true, "path": "/" },
            { "name": "theme", "value": "dark", "path": "/cookies" },
        ] }),
        )
        .await;
    assert_eq!(set["set"], 2, "{set}");
    let read = tw.ok("get_cookies", json!({})).await;
    // As chrome.cookies describes them (BrowserTap reads them so).
    let session = read["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "session")
        .expect("session cookie");
    assert_eq!(session["httpOnly"], true);
    assert_eq!(session["hostOnly"], true);
    assert_eq!(session["sameSite"], "unspecified");
    assert_eq!(session["session"], true);
    assert!(session.get("expirationDate").is_none(), "{session}");
    // Scripts cannot see it; the server receives it.
    let visible = tw
        .ok("execute_js", json!({ "script": "document.cookie" }))
        .await;
    assert!(!visible["js_return"].as_str().unwrap().contains("s3cr3t"));
    tw.ok("open_url", json!({ "url": site.url("cookies") }))
        .await;
    let sent = tw
        .ok(
            "execute_js",
            json!({ "script": "document.getElementById('cookie').textContent" }),
        )
        .await;
    let sent = sent["js_return"].as_str().unwrap();
    assert!(
        sent.contains("session=s3cr3t") && sent.contains("theme=dark"),
        "{sent}"
    );

    let deleted = tw.ok("delete_cookies", json!({ "name": "session" })).await;
    assert_eq!(deleted["remaining"], 0, "{deleted}");
    assert_eq!(deleted["status"], "ok");
    assert!(
        deleted["scope"]["url"]
            .as_str()
            .unwrap()
            .ends_with("/cookies"),
        "the scope defaults to the page: {deleted}"
    );
    tw.ok("open_url", json!({ "url": site.url("cookies") }))
        .await;
    let sent = tw
        .ok(
            "execute_js",
            json!({ "script": "document.getElementById('cookie').textContent" }),
        )
        .await;
    assert!(!sent["js_return"].as_str().unwrap().contains("session="));
    let bad = tw
        .call("set_cookies", json!({ "cookies": { "value": "no name" } }))
        .await;
    assert_eq!(bad.error_code(), "invalid_request");
}

#[tokio::test]
async fn storage_is_paged_and_writes_are_verified() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("storage").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    for i in 0..5 {
        let set = tw
            .ok(
                "storage_set",
                json!({ "key": format!("k{i}"), "value": format!("v{i}") }),
            )
            .await;
        assert_eq!(set["verified"], true);
        assert_eq!(set["status"], "success");
        assert_eq!(set["replaced"], false);
        assert_eq!(set["total_keys"], i + 1);
    }
    tw.ok(
        "storage_set",
        json!({ "key": "obj", "value": { "a": 1 }, "area": "session" }),
    )
    .await;
    let first = tw.ok("storage_get", json!({ "max_items": 2 })).await;
    assert_eq!(first["items"], json!({ "k0": "v0", "k1": "v1" }));
    assert_eq!(first["area"], "localStorage");
    assert_eq!(first["count"], 2);
    assert_eq!(first["total_keys"], 5);
    assert_eq!(
        first["bytes"], 8,
        "UTF-8 bytes of the keys and values: {first}"
    );
    assert_eq!(first["truncated"], true);
    let next = tw
        .ok(
            "storage_get",
            json!({ "offset": first["next_offset"], "max_items": 10 }),
        )
        .await;
    assert_eq!(next["items"].as_object().unwrap().len(), 3);
    assert_eq!(next["truncated"], false);
    let one = tw
        .ok("storage_get", json!({ "key": "obj", "area": "session" }))
        .await;
    assert_eq!(one["value"], "{\"a\":1}");
    assert_eq!(one["area"], "sessionStorage");
    let seen = tw
        .ok(
            "execute_js",
            json!({ "script": "localStorage.getItem('k3')" }),
        )
        .await;
    assert_eq!(seen["js_return"], "v3");
    // A value beyond the quota is reported (BrowserTap's `failed`), not lost silently.
    let huge = "x".repeat(6 * 1024 * 1024);
    let over = tw
        .call("storage_set", json!({ "key": "huge", "value": huge }))
        .await;
    assert_eq!(over.error_code(), "failed", "{}", over.envelope["error"]);
    assert_eq!(over.envelope["legacy"]["reason"], "quota_exceeded");
    assert_eq!(over.envelope["legacy"]["area"], "localStorage");
}

#[tokio::test]
async fn a_download_lands_with_the_right_name_and_bytes() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("download").await;
    let done = tw
        .ok("download_file", json!({ "url": site.url("report") }))
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    let path = done["path"].as_str().unwrap();
    assert!(path.ends_with("/downloads/report.csv"), "{path}");
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(bytes, REPORT.as_bytes());
    assert_eq!(done["sha256"], sha256_hex(&bytes));
    let exists = tw
        .call("download_file", json!({ "url": site.url("report") }))
        .await;
    assert_eq!(exists.reason(), "file_exists");
    // An absolute directory inside the output dir, as BrowserTap takes it.
    let reports = tw.output_dir.canonicalize().unwrap().join("reports");
    let renamed = tw
        .ok(
            "download_file",
            json!({ "url": site.url("report"), "filename": "copy.csv", "directory": reports }),
        )
        .await;
    assert_eq!(
        renamed["path"],
        json!(reports.join("copy.csv")),
        "{renamed}"
    );
    assert_eq!(
        std::fs::read(reports.join("copy.csv")).unwrap(),
        REPORT.as_bytes()
    );
    // A relative directory is not one.
    let relative = tw
        .call(
            "download_file",
            json!({ "url": site.url("report"), "directory": "reports" }),
        )
        .await;
    assert_eq!(
        relative.error_code(),
        "invalid_request",
        "{}",
        relative.envelope
    );
    assert_eq!(relative.envelope["diagnostics"]["param"], "directory");
    let escape = tw
        .call(
            "download_file",
            json!({ "url": site.url("report"), "filename": "../outside.csv" }),
        )
        .await;
    assert_eq!(escape.reason(), "path_outside_output_dir");
}

#[tokio::test]
async fn a_download_lands_in_an_allowed_root_and_nowhere_else() {
    let site = Site::start().await;
    let work = crate::support::scratch("download-roots");
    let exports = work.join("exports");
    let elsewhere = work.join("elsewhere");
    let root = exports.display().to_string();
    let tw = Tabwire::stdio_in(work.clone(), &["--isolated", "--download-root", &root]).await;
    let quarter = exports.canonicalize().unwrap().join("q3");
    let done = tw
        .ok(
            "download_file",
            json!({ "url": site.url("report"), "directory": quarter }),
        )
        .await;
    assert_eq!(done["path"], json!(quarter.join("report.csv")), "{done}");
    assert_eq!(
        std::fs::read(quarter.join("report.csv")).unwrap(),
        REPORT.as_bytes()
    );
    let refused = tw
        .call(
            "download_file",
            json!({ "url": site.url("report"), "directory": elsewhere }),
        )
        .await;
    assert_eq!(
        refused.error_code(),
        "permission_denied",
        "{}",
        refused.envelope
    );
    assert!(
        refused.message().contains("--download-root"),
        "{}",
        refused.envelope
    );
    assert!(
        !elsewhere.exists(),
        "nothing may be written outside the allowed roots"
    );
}

#[tokio::test]
async fn uploads_are_seen_by_the_page_and_only_from_allowed_roots() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("upload").await;
    tw.ok("open_url", json!({ "url": site.url("upload.html") }))
        .await;
    std::fs::create_dir_all(&tw.output_dir).unwrap();
    let file = tw.output_dir.join("note.txt");
    std::fs::write(&file, "hello upload").unwrap();
    tw.ok(
        "upload_files",
        json!({ "selector": "#file", "paths": [file.display().to_string()] }),
    )
    .await;
    tw.ok("wait_for", json!({ "selector": "#seen:not(:empty)" }))
        .await;
    let seen = tw
        .ok(
            "execute_js",
            json!({ "script": "JSON.parse(document.getElementById('seen').textContent)" }),
        )
        .await;
    assert_eq!(
        seen["js_return"],
        json!({ "names": ["note.txt"], "sizes": [12], "first": "hello upload" })
    );

    let outside = tw
        .call(
            "upload_files",
            json!({ "selector": "#file", "paths": "/etc/hostname" }),
        )
        .await;
    assert_eq!(outside.reason(), "path_not_allowed", "{}", outside.envelope);
    let sneaky = tw.call("upload_files", json!({ "selector": "#file", "paths": format!("{}/../../../etc/hostname", tw.output_dir.display()) })).await;
    assert_eq!(sneaky.reason(), "path_not_allowed", "{}", sneaky.envelope);
}

#[tokio::test]
async fn high_risk_cdp_methods_are_refused_before_they_reach_the_browser() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("raw-cdp").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let evaluated = tw
        .ok("cdp_command", json!({ "method": "Runtime.evaluate", "params_json": "{\"expression\": \"6 * 7\", \"returnByValue\": true}" }))
        .await;
    assert_eq!(evaluated["data"]["result"]["value"], 42, "{evaluated}");
    assert_eq!(evaluated["status"], "ok");
    tw.ok(
        "set_cookies",
        json!({ "cookies": { "name": "keep", "value": "me" } }),
    )
    .await;
    let status = tw.ok("get_setup_status", json!({})).await;
    // Only a browser tabwire launched has a pid to watch; a linked one proves it below.
    let browser = status["browser_pid"].as_u64().map(|pid| pid as u32);
    for method in [
        "Page.close",
        "Network.clearBrowserCookies",
        "Browser.close",
        "Storage.clearDataForOrigin",
        "Target.closeTarget",
    ] {
        let refused = tw
            .call(
                "cdp_command",
                json!({ "method": method, "params_json": "{}" }),
            )
            .await;
        assert_eq!(
            refused.error_code(),
            "raw_cdp_blocked",
            "{method}: {}",
            refused.envelope
        );
    }
    // None of them reached the browser: it runs, the tab lives, the cookie is there.
    assert!(browser.is_none_or(crate::support::process_alive));
    assert_eq!(
        tw.ok("execute_js", json!({ "script": "document.title" }))
            .await["js_return"],
        "Form"
    );
    let cookies = tw.ok("get_cookies", json!({})).await;
    assert!(cookies.to_string().contains("\"keep\""));

    // A batch is checked whole: the harmless first member does not run either.
    let batch = json!({ "cmd": "batch", "commands": [
        { "cmd": "cdp", "method": "Runtime.evaluate", "params": { "expression": "document.title = 'changed'" } },
        { "cmd": "cdp", "method": "Page.close", "params": {} },
    ] });
    let refused = tw
        .call("cdp_batch", json!({ "batch_json": batch.to_string() }))
        .await;
    assert_eq!(refused.error_code(), "raw_cdp_blocked");
    assert_eq!(
        tw.ok("execute_js", json!({ "script": "document.title" }))
            .await["js_return"],
        "Form"
    );
    let targets = tw.ok("debugger_targets", json!({})).await;
    assert!(
        targets["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["type"] == "page" && t["tabId"].is_u64()),
        "{targets}"
    );
}

#[tokio::test]
async fn a_batch_in_browsertaps_format_feeds_earlier_results_into_later_members() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("cdp-batch").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    tw.ok(
        "set_cookies",
        json!({ "cookies": { "name": "batch", "value": "yes" } }),
    )
    .await;
    let batch = json!({ "cmd": "batch", "commands": [
        { "cmd": "cdp", "method": "DOM.getDocument", "params": {} },
        { "cmd": "cdp", "method": "DOM.querySelector",
          "params": { "nodeId": "$0.root.nodeId", "selector": "#name" } },
        { "cmd": "cdp", "method": "DOM.getAttributes", "params": { "nodeId": "$1.nodeId" } },
        { "cmd": "tabs" },
        { "cmd": "cookies" },
    ] });
    let done = tw
        .ok("cdp_batch", json!({ "batch_json": batch.to_string() }))
        .await;
    let results = done["data"].as_array().unwrap();
    assert_eq!(results.len(), 5, "{done}");
    assert!(results[1]["nodeId"].as_u64().unwrap() > 0, "{done}");
    let attributes = results[2]["attributes"].as_array().unwrap();
    assert!(
        attributes.contains(&json!("name")),
        "the querySelector found #name: {done}"
    );
    assert!(
        results[3]["data"].to_string().contains("form.html"),
        "{done}"
    );
    assert!(
        results[4]["data"].to_string().contains("\"batch\""),
        "{done}"
    );
    assert!(done["client_id"].is_string(), "{done}");
    // A placeholder that names nothing fails the batch and says which member.
    let broken = json!({ "cmd": "batch", "commands": [
        { "cmd": "cdp", "method": "DOM.getDocument", "params": {} },
        { "cmd": "cdp", "method": "DOM.querySelector", "params": { "nodeId": "$0.nothing.here", "selector": "p" } },
    ] });
    let failed = tw
        .call("cdp_batch", json!({ "batch_json": broken.to_string() }))
        .await;
    assert_eq!(
        failed.error_code(),
        "page_execution_failed",
        "{}",
        failed.envelope
    );
    assert!(failed.message().contains("member 1"), "{}", failed.envelope);
    // Any other member kind is refused before anything runs.
    let other = json!({ "cmd": "batch", "commands": [{ "cmd": "shell", "line": "rm -rf /" }] });
    let refused = tw
        .call("cdp_batch", json!({ "batch_json": other.to_string() }))
        .await;
    assert_eq!(
        refused.error_code(),
        "invalid_request",
        "{}",
        refused.envelope
    );
}

#[tokio::test]
async fn a_file_the_browser_would_show_is_saved_with_its_exact_bytes() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("shown-download").await;
    for (name, served) in [
        ("pixel.png", PIXEL_PNG),
        ("data.json", DATA_JSON.as_bytes()),
    ] {
        let done = tw
            .ok(
                "download_file",
                json!({ "url": site.url(name), "timeout": 30 }),
            )
            .await;
        assert_eq!(done["status"], "completed", "{done}");
        let path = done["path"].as_str().unwrap();
        assert!(path.ends_with(&format!("/downloads/{name}")), "{path}");
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(bytes, served, "{name}");
        assert_eq!(done["sha256"], sha256_hex(&bytes));
        assert_eq!(done["size"], bytes.len());
    }
}

#[tokio::test]
async fn a_url_served_as_html_downloads_with_its_bytes_and_type() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("html-download").await;
    // A page, and an HTML report served as an attachment.
    for (path, name, served) in [
        (
            "form.html",
            "form.html",
            crate::support::page_source("form.html"),
        ),
        (
            "report.html",
            "report.html",
            crate::support::REPORT_HTML.to_owned(),
        ),
    ] {
        let done = tw
            .ok(
                "download_file",
                json!({ "url": site.url(path), "timeout": 30 }),
            )
            .await;
        assert_eq!(done["status"], "completed", "{done}");
        let saved = done["path"].as_str().unwrap();
        assert!(saved.ends_with(&format!("/downloads/{name}")), "{saved}");
        assert_eq!(std::fs::read_to_string(saved).unwrap(), served, "{path}");
        assert!(
            done["content_type"]
                .as_str()
                .unwrap_or_default()
                .starts_with("text/html"),
            "the agent can tell it got a page: {done}"
        );
    }
}

#[tokio::test]
async fn raw_cdp_cannot_do_what_the_tools_refuse() {
    let site = Site::start().await;
    for profile in ["safe", "lab"] {
        let tw = Tabwire::stdio_with(&format!("raw-cdp-{profile}"), &["--profile", profile]).await;
        tw.ok("open_url", json!({ "url": site.url("upload.html") }))
            .await;
        let attempts = [
            ("Page.navigate", json!({ "url": "file:///etc/passwd" })),
            ("Page.navigate", json!({ "url": "chrome://settings" })),
            (
                "Target.createTarget",
                json!({ "url": "file:///etc/passwd" }),
            ),
            (
                "Network.loadNetworkResource",
                json!({ "url": "file:///etc/passwd", "frameId": "x", "options": { "disableCache": true, "includeCredentials": false } }),
            ),
        ];
        for (method, params) in attempts {
            let reply = tw
                .call(
                    "cdp_command",
                    json!({ "method": method, "params_json": params.to_string() }),
                )
                .await;
            assert_eq!(
                reply.error_code(),
                "raw_cdp_blocked",
                "{profile} {method}: {}",
                reply.envelope
            );
        }
        // A local file outside the upload roots cannot be handed to a file input either.
        let document = tw
            .ok(
                "cdp_command",
                json!({ "method": "DOM.getDocument", "params_json": "{}" }),
            )
            .await;
        let input = tw
            .ok(
                "cdp_command",
                json!({ "method": "DOM.querySelector", "params_json": json!({
                "nodeId": document["data"]["root"]["nodeId"], "selector": "#file" }).to_string() }),
            )
            .await;
        let attach = json!({ "files": ["/etc/hostname"], "nodeId": input["data"]["nodeId"] });
        let reply = tw
            .call(
                "cdp_command",
                json!({ "method": "DOM.setFileInputFiles", "params_json": attach.to_string() }),
            )
            .await;
        assert_eq!(
            reply.error_code(),
            "raw_cdp_blocked",
            "{profile}: {}",
            reply.envelope
        );
        // Nor through a batch, whose harmless first member does not run.
        let batch = json!({ "cmd": "batch", "commands": [
            { "cmd": "cdp", "method": "Runtime.evaluate", "params": { "expression": "document.title = 'changed'" } },
            { "cmd": "cdp", "method": "Page.navigate", "params": { "url": "file:///etc/passwd" } },
        ] });
        let reply = tw
            .call("cdp_batch", json!({ "batch_json": batch.to_string() }))
            .await;
        assert_eq!(
            reply.error_code(),
            "raw_cdp_blocked",
            "{profile}: {}",
            reply.envelope
        );
        // Nothing happened: the page is where it was, with no file, and no file: tab opened.
        let state = tw
            .ok("execute_js", json!({ "script": "[location.href, document.title, document.getElementById('file').files.length]" }))
            .await;
        assert_eq!(
            state["js_return"],
            json!([site.url("upload.html"), "Upload", 0]),
            "{profile}"
        );
        let tabs = tw.ok("list_all_tabs", json!({})).await;
        assert!(!tabs.to_string().contains("file:"), "{profile}: {tabs}");
    }
}

/// A browser at a CDP endpoint may not share tabwire's file system (another machine, a
/// farm, or Windows tabwire beside a Linux browser), so its download is streamed to
/// tabwire: the file lands in the output dir with the server's bytes and name, and the
/// profile's cookies went with the request.
#[tokio::test]
async fn a_download_from_a_cdp_endpoint_browser_is_streamed_with_its_cookies() {
    let site = Site::start().await;
    let browser = crate::support::DebuggingBrowser::launch("download-endpoint").await;
    let tw = Tabwire::stdio_with("download-endpoint", &["--cdp-endpoint", &browser.http]).await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    tw.ok(
        "set_cookies",
        json!({ "cookies": [{ "name": "session", "value": "s3cr3t", "httpOnly": true, "path": "/" }] }),
    )
    .await;
    let done = tw
        .ok("download_file", json!({ "url": site.url("report") }))
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    let path = done["path"].as_str().unwrap();
    assert!(
        path.ends_with("/downloads/report.csv"),
        "named by its Content-Disposition: {path}"
    );
    assert_eq!(std::fs::read(path).unwrap(), REPORT.as_bytes());
    assert_eq!(done["content_type"], "text/csv");
    let echoed = tw
        .ok(
            "download_file",
            json!({ "url": site.url("cookies"), "filename": "cookies.html" }),
        )
        .await;
    let page = std::fs::read_to_string(echoed["path"].as_str().unwrap()).unwrap();
    assert!(
        page.contains("session=s3cr3t"),
        "the cookie went with the download: {page}"
    );
    let missing = tw
        .call(
            "download_file",
            json!({ "url": site.url("no-such-file.bin") }),
        )
        .await
        .reported();
    assert_eq!(missing["status"], "failed", "{missing}");
    assert_eq!(missing["reason"], "http_404");
    // Nothing is left half-written in the staging folder.
    let staged: Vec<_> = std::fs::read_dir(tw.output_dir.join(".staging"))
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(staged.is_empty(), "{staged:?}");
}
