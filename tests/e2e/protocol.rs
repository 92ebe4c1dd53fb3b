//! MCP's own machinery as a client meets it: cancelling a call, progress on long calls,
//! and log messages at the level the client chose.
// MCP logging is deprecated by SEP-2577 but still what clients use; tabwire offers it.
#![allow(deprecated)]

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, LoggingLevel, ProgressNotificationParam,
    ReadResourceRequestParams, ResourceContents, SetLevelRequestParams,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{Map, Value, json};

use crate::support::{Client, Heard, HttpServer, Site, Tabwire, call_on};

fn call_request(tool: &str, arguments: Value) -> ClientRequest {
    let arguments: Map<String, Value> = arguments.as_object().cloned().unwrap_or_default();
    ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments),
    ))
}

/// Sends a call, waits for the server's first progress notification on it (so it is
/// surely running), and cancels it.
async fn cancel_once_running(
    client: &Client,
    tool: &str,
    arguments: Value,
) -> ProgressNotificationParam {
    let handle = client
        .send_cancellable_request(
            call_request(tool, arguments),
            PeerRequestOptions::no_options(),
        )
        .await
        .expect("send the call");
    let token = handle.progress_token.clone();
    let heard = client
        .service()
        .wait_for(
            "progress on the call",
            |heard| matches!(heard, Heard::Progress(p) if p.progress_token == token),
        )
        .await;
    handle
        .cancel(Some("the test moved on".into()))
        .await
        .expect("cancel");
    match heard {
        Heard::Progress(progress) => progress,
        Heard::Log(_) | Heard::ToolListChanged => unreachable!(),
    }
}

#[tokio::test]
async fn a_cancelled_call_stops_its_script_and_frees_the_tab_at_once() {
    let site = Site::start().await;
    let tw = Tabwire::managed("cancel-script").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    // A script awaiting a request nobody answers, then one spinning synchronously (only
    // terminating the page's script stops that one).
    let awaiting = format!("await fetch('{}'); 'finished'", site.url("hold/cancelled"));
    for script in [awaiting.as_str(), "while (true) {}"] {
        let progress = cancel_once_running(
            &tw.client,
            "execute_js",
            json!({ "script": script, "timeout": 300 }),
        )
        .await;
        assert_eq!(progress.total, Some(300.0), "{progress:?}");
        assert!(
            progress
                .message
                .as_deref()
                .unwrap_or("")
                .contains("execute_js"),
            "{progress:?}"
        );
        // The very next call on the tab is served, and the page is responsive.
        let title = tw
            .ok("execute_js", json!({ "script": "document.title" }))
            .await;
        assert_eq!(title["js_return"], "Form", "after cancelling {script}");
    }
    let scan = tw.ok("scan_page", json!({})).await;
    assert!(scan.to_string().contains("Email"), "{scan}");
}

#[tokio::test]
async fn a_cancelled_wait_frees_its_tab_over_http() {
    let site = Site::start().await;
    let server = HttpServer::start("cancel-wait", &[]).await;
    let client = server.client().await;
    call_on(&client, "open_url", json!({ "url": site.url("form.html") }))
        .await
        .ok();
    cancel_once_running(
        &client,
        "wait_for",
        json!({ "selector": "#never-there", "timeout": 300 }),
    )
    .await;
    let scan = call_on(&client, "scan_page", json!({})).await.ok();
    assert!(scan.to_string().contains("Email"), "{scan}");
}

#[tokio::test]
async fn a_client_that_sets_a_level_reads_why_a_call_took_its_time() {
    let site = Site::start().await;
    let tw = Tabwire::managed("logging").await;
    tw.client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
        .await
        .expect("logging/setLevel");
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let listener = tw.client.service();
    // The engine's own account of the browser it started for this call.
    listener
        .wait_for("the engine's connect log", |heard| {
            matches!(heard, Heard::Log(log) if log.data["message"] == "browser connected"
                && log.data["elapsed_ms"].is_u64())
        })
        .await;
    // And each call's end, with its time and outcome.
    listener
        .wait_for("open_url's finish log", |heard| {
            matches!(heard, Heard::Log(log) if log.data["call"] == "open_url"
                && log.data["state"] == "finished" && log.data["ok"] == true
                && log.data["elapsed_ms"].is_u64())
        })
        .await;

    // Raised to warning, only failures are told.
    tw.client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .expect("logging/setLevel");
    tw.ok("scan_page", json!({})).await;
    tw.call(
        "page_click",
        json!({ "selector": "#no-such-thing", "timeout": 0.2 }),
    )
    .await;
    let failed = listener
        .wait_for(
            "page_click failure log",
            |heard| matches!(heard, Heard::Log(log) if log.data["call"] == "page_click"),
        )
        .await;
    let Heard::Log(failed) = failed else {
        unreachable!()
    };
    assert_eq!(failed.level, LoggingLevel::Warning, "{failed:?}");
    assert_eq!(failed.data["ok"], false);
    let told_scan = listener
        .all()
        .iter()
        .any(|heard| matches!(heard, Heard::Log(log) if log.data["call"] == "scan_page"));
    assert!(!told_scan, "a successful call is below the warning level");
}

/// A call cancelled mid-flight leaves the tab as it found it: a script run under its own
/// dialog policy puts the tab's back, so a dialog opened later is answered as the tab
/// would have answered it (dismissed), not as the cancelled call asked (accepted).
#[tokio::test]
async fn a_cancelled_script_puts_back_the_tabs_dialog_policy() {
    let site = Site::start().await;
    let tw = Tabwire::managed("cancel-dialog-policy").await;
    tw.ok("open_url", json!({ "url": site.url("confirm.html") }))
        .await;
    let script = format!("await fetch('{}'); 1", site.url("hold/policy"));
    cancel_once_running(
        &tw.client,
        "execute_js",
        json!({ "script": script, "dialog_policy": "accept", "timeout": 300 }),
    )
    .await;
    site.release("policy");
    // A dialog the page opens on its own, outside any call, is answered by the tab's
    // policy (a click's dialog stays open for the agent instead).
    let opens_later = json!({
        "expression": "setTimeout(() => document.getElementById('ask').click(), 0); 1"
    });
    tw.ok(
        "cdp_command",
        json!({ "method": "Runtime.evaluate", "params_json": opens_later.to_string() }),
    )
    .await;
    tw.ok("wait_for", json!({ "text": "dismissed" })).await;
}

/// A drag cancelled while its button is down: the page sees the button come up before
/// the next call.
#[tokio::test]
async fn a_cancelled_drag_releases_its_mouse_button() {
    let site = Site::start().await;
    let tw = Tabwire::managed("cancel-drag").await;
    tw.ok("open_url", json!({ "url": site.url("held.html") }))
        .await;
    cancel_once_running(
        &tw.client,
        "page_drag",
        json!({ "x1": 50, "y1": 50, "x2": 350, "y2": 250, "duration": 10, "timeout": 60 }),
    )
    .await;
    let seen = tw
        .ok(
            "execute_js",
            json!({ "script": "({ held: heldNow(), events: events.join(';') })" }),
        )
        .await;
    let seen = &seen["js_return"];
    assert!(
        seen["events"].as_str().unwrap().contains("mousedown 0"),
        "{seen}"
    );
    assert_eq!(seen["held"], "", "a button stayed down: {seen}");
}

/// A key chord cancelled between its press and its release (the page's keydown handler
/// is slow): the key is released, and the rest of the chord is never sent.
#[tokio::test]
async fn a_cancelled_key_chord_releases_what_it_pressed_and_sends_no_more() {
    let site = Site::start().await;
    let tw = Tabwire::stdio_with("cancel-chord", &["--face", "btap,chrome"]).await;
    tw.ok(
        "open_url",
        json!({ "url": site.url("held.html?slow=Shift") }),
    )
    .await;
    cancel_once_running(&tw.client, "chrome_keyboard", json!({ "keys": "Shift+A" })).await;
    let seen = tw
        .ok(
            "execute_js",
            json!({ "script": "({ held: heldNow(), events: events.join(';') })" }),
        )
        .await;
    let seen = &seen["js_return"];
    let events = seen["events"].as_str().unwrap();
    assert!(events.starts_with("keydown Shift"), "{seen}");
    assert!(!events.contains("keydown A"), "{seen}");
    assert_eq!(seen["held"], "", "a key stayed down: {seen}");
}

/// Progress counts seconds toward the call's own limit, in whatever unit its tool takes
/// that limit (the chrome face's are milliseconds).
#[tokio::test]
async fn progress_counts_seconds_toward_a_limit_given_in_milliseconds() {
    let site = Site::start().await;
    let tw = Tabwire::stdio_with("progress-ms", &["--face", "btap,chrome"]).await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let code = format!("await fetch('{}'); return 1", site.url("hold/progress-ms"));
    let progress = cancel_once_running(
        &tw.client,
        "chrome_javascript",
        json!({ "code": code, "timeoutMs": 120_000 }),
    )
    .await;
    site.release("progress-ms");
    assert_eq!(progress.total, Some(120.0), "{progress:?}");
    assert!(progress.progress < 120.0, "{progress:?}");
}

/// BrowserTap's two guides are resources at its URIs, markdown, written for tabwire; the
/// instructions carry the rules an agent needs before its first call. The chrome face
/// serves neither resources nor prompts.
#[tokio::test]
async fn the_btap_face_serves_its_guides_as_resources_and_its_rules_as_instructions() {
    let tw = Tabwire::managed("guides").await;
    let info = tw.client.peer_info().expect("initialize result");
    let instructions = info.instructions.clone().unwrap_or_default();
    for rule in [
        "session_id",
        "open_new_tab",
        "owner_id",
        "close_tabs",
        r#"{"ref": "e12"}"#,
        r#""selector": "e12""#,
        r#""ref_12""#,
        "\"frame\": [...]",
        "retry_safe",
        "delivery_state=undelivered",
        "get_execute_js_result(operation_id)",
        "dialog_policy",
        "handle_dialog",
        "result_file",
        "browsertap://agent/workflow",
        "browsertap://agent/recovery",
    ] {
        assert!(
            instructions.contains(rule),
            "instructions lack {rule}: {instructions}"
        );
    }
    assert!(info.capabilities.resources.is_some() && info.capabilities.prompts.is_some());

    let resources = tw
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        ["browsertap://agent/workflow", "browsertap://agent/recovery"]
    );
    for (resource, says) in resources.iter().zip([
        [
            "owner_id",
            "continuation.cursor",
            "frame",
            "dialog_policy",
            "result_file",
        ],
        [
            "retry_safe",
            "undelivered",
            "get_execute_js_result",
            "target_busy",
            "action",
        ],
    ]) {
        assert_eq!(resource.mime_type.as_deref(), Some("text/markdown"));
        let read = tw
            .client
            .read_resource(ReadResourceRequestParams::new(resource.uri.clone()))
            .await
            .expect("resources/read");
        let [
            ResourceContents::TextResourceContents {
                text,
                mime_type,
                uri,
                ..
            },
        ] = read.contents.as_slice()
        else {
            panic!("one text content: {read:?}");
        };
        assert_eq!(
            (uri.as_str(), mime_type.as_deref()),
            (resource.uri.as_str(), Some("text/markdown"))
        );
        assert!(text.starts_with("# "), "{text}");
        for word in says {
            assert!(text.contains(word), "{} lacks {word}", resource.uri);
        }
    }
    let missing = tw
        .client
        .read_resource(ReadResourceRequestParams::new("browsertap://agent/nothing"))
        .await;
    assert!(missing.is_err(), "{missing:?}");
    assert!(
        tw.client
            .list_all_prompts()
            .await
            .expect("prompts/list")
            .is_empty()
    );

    let chrome = Tabwire::stdio_with("guides-chrome", &["--face", "chrome"]).await;
    let info = chrome.client.peer_info().expect("initialize result");
    assert!(info.capabilities.resources.is_none() && info.capabilities.prompts.is_none());
    assert!(chrome.client.list_all_resources().await.is_err());
}
