//! Holding the line against careless operators and hostile clients: public binding,
//! messages before initialize, floods of sessions and idle sockets, malformed bodies,
//! links in the output dir, pages that lie.

use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::support::{BINARY, HttpServer, PATIENCE, Site, Tabwire, call_on, scratch};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[tokio::test]
async fn a_public_address_needs_a_real_token() {
    for (addr, token) in [
        ("0.0.0.0:0", None),
        ("0.0.0.0:0", Some("")),
        ("0.0.0.0:0", Some("   ")),
        ("[::]:0", None),
    ] {
        let mut command = tokio::process::Command::new(BINARY);
        command.args(["--http", addr, "--isolated"]);
        if let Some(token) = token {
            command.args(["--token", token]);
        }
        let output = command
            .env_remove("TABWIRE_TOKEN")
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        assert!(!output.status.success(), "{addr} {token:?} started");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--token"), "{addr} {token:?}: {stderr}");
    }
    // With a token, a remote client names the server as it reaches it.
    let server = HttpServer::start_at("public-token", &["--token", "s3cret"], "0.0.0.0:0").await;
    let http = reqwest::Client::new();
    let port = server
        .url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/mcp")
        .to_owned();
    let post = |bearer: Option<&str>| {
        let mut request = http
            .post(format!("http://127.0.0.1:{port}/mcp"))
            .header("host", format!("tabwire.lan:{port}"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(INITIALIZE);
        if let Some(bearer) = bearer {
            request = request.header("authorization", format!("Bearer {bearer}"));
        }
        request.send()
    };
    let remote = post(Some("s3cret")).await.unwrap();
    assert!(remote.status().is_success(), "{}", remote.status());
    assert_eq!(post(None).await.unwrap().status().as_u16(), 401);
    assert_eq!(post(Some("guess")).await.unwrap().status().as_u16(), 401);
}

/// Reads lines from a child's stdout until one is the reply to `id`.
async fn reply_to(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    id: impl Into<Value>,
) -> Value {
    let id = id.into();
    tokio::time::timeout(PATIENCE, async {
        loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("tabwire still writes");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    })
    .await
    .expect("a reply")
}

#[tokio::test]
async fn stdio_answers_what_comes_before_initialize_and_keeps_serving() {
    let work = scratch("early-messages");
    let mut child = tokio::process::Command::new(BINARY)
        .args([
            "--isolated",
            "--output-dir",
            &work.join("out").display().to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let early = [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":"early-ping","method":"ping"}"#,
        "this is not json",
        INITIALIZE,
    ];
    for line in early {
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let refused = reply_to(&mut lines, 2).await;
    assert_eq!(refused["error"]["code"], -32002, "{refused}");
    // MCP allows a ping at any time, before initialize too.
    let pong = reply_to(&mut lines, "early-ping").await;
    assert_eq!(pong["result"], json!({}), "{pong}");
    let initialized = reply_to(&mut lines, 1).await;
    assert!(
        initialized["result"]["serverInfo"].is_object(),
        "{initialized}"
    );
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}\n")
        .await
        .unwrap();
    let tools = reply_to(&mut lines, 3).await;
    assert!(
        tools["result"]["tools"].as_array().unwrap().len() >= 51,
        "{tools}"
    );
    assert!(child.try_wait().unwrap().is_none(), "tabwire exited");
}

#[tokio::test]
async fn a_flood_of_abandoned_sessions_is_bounded_and_a_live_client_is_served() {
    let server = HttpServer::start("session-flood", &["--max-sessions", "8"]).await;
    let http = reqwest::Client::new();
    let mut abandoned = Vec::new();
    for _ in 0..40 {
        let reply = http
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(INITIALIZE)
            .send()
            .await
            .unwrap();
        assert!(reply.status().is_success(), "{}", reply.status());
        if let Some(id) = reply.headers().get("mcp-session-id") {
            abandoned.push(id.to_str().unwrap().to_owned());
        }
    }
    assert_eq!(abandoned.len(), 40);
    let live = server.client().await;
    let status = call_on(&live, "get_setup_status", json!({})).await.ok();
    let sessions = status["agent_sessions"].as_u64().unwrap();
    assert!(
        sessions <= 8,
        "{sessions} agent sessions live with --max-sessions 8"
    );
    // The oldest abandoned session was closed to make room.
    let stale = http
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &abandoned[0])
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    assert!(!stale.status().is_success(), "{}", stale.status());
    call_on(&live, "list_tabs", json!({})).await.ok();
}

#[tokio::test]
async fn idle_sockets_and_bad_bodies_do_not_stop_the_server() {
    let server = HttpServer::start("socket-flood", &["--max-connections", "64"]).await;
    let addr = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    // More idle connections than the server takes at once.
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    // A live client is still served (once the idle ones have been let go).
    let live = tokio::time::timeout(PATIENCE, server.client())
        .await
        .expect("a live client is served during the flood");
    call_on(&live, "list_tabs", json!({})).await.ok();
    // An idle connection is closed by the server, not held forever.
    let mut first = idle.remove(0);
    let mut buffer = [0u8; 64];
    let read = tokio::time::timeout(PATIENCE, first.read(&mut buffer))
        .await
        .expect("the server closes an idle connection");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    drop(idle);
    // A body that is not JSON gets JSON-RPC's parse error.
    let malformed = reqwest::Client::new()
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status().as_u16(), 400);
    let error: Value = malformed.json().await.unwrap();
    assert_eq!(error["error"]["code"], -32700, "{error}");
}

#[tokio::test]
async fn a_link_in_the_output_dir_does_not_redirect_a_write() {
    let site = Site::start().await;
    let tw = Tabwire::managed("output-links").await;
    let outside = scratch("output-links-outside");
    std::fs::create_dir_all(&tw.output_dir).unwrap();
    std::os::unix::fs::symlink(&outside, tw.output_dir.join("shots")).unwrap();
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let shot = tw
        .call(
            "capture_page_screenshot",
            json!({ "save_path": "shots/page.png" }),
        )
        .await;
    shot.err();
    let pdf = tw
        .call("save_pdf", json!({ "save_path": "shots/page.pdf" }))
        .await;
    pdf.err();
    let download = tw
        .call(
            "download_file",
            json!({ "url": site.url("report"), "directory": tw.output_dir.canonicalize().unwrap().join("shots") }),
        )
        .await;
    download.err();
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "nothing may land outside the output dir through a link"
    );
}

#[tokio::test]
async fn a_page_cannot_lie_to_a_permission_lease() {
    let site = Site::start().await;
    let tw = Tabwire::managed("lying-page").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    // The page claims every permission is already granted.
    tw.ok(
        "execute_js",
        json!({ "script": "navigator.permissions.query = async () => ({ state: 'granted' }); true" }),
    )
    .await;
    let lease = tw
        .ok(
            "set_site_permission",
            json!({ "permission": "geolocation", "setting": "block" }),
        )
        .await;
    assert_eq!(lease["lease"]["prior"], "prompt", "{lease}");
    tw.ok("reset_site_permissions", json!({})).await;
    // Restored to what it really was, not to what the page said.
    let state = tw
        .ok(
            "execute_js",
            json!({ "script": "delete navigator.permissions.query; (await navigator.permissions.query({name: 'geolocation'})).state" }),
        )
        .await;
    assert_eq!(state["js_return"], "prompt", "{state}");
}

#[tokio::test]
async fn http_answers_a_ping_before_initialize() {
    let server = HttpServer::start("early-ping", &[]).await;
    let reply = reqwest::Client::new()
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert!(reply.status().is_success(), "{}", reply.status());
    let pong: Value = reply.json().await.unwrap();
    assert_eq!(pong["id"], 5, "{pong}");
    assert_eq!(pong["result"], json!({}), "{pong}");
    // The server goes on serving sessions.
    let client = server.client().await;
    call_on(&client, "get_setup_status", json!({})).await.ok();
}

/// A client that asked for logs gets each call's notices in the order they were made:
/// a call's start before its finish, and calls in the order they ran.
#[tokio::test]
async fn log_notices_arrive_in_the_order_they_were_made() {
    let work = scratch("log-order");
    let mut child = tokio::process::Command::new(BINARY)
        .args([
            "--isolated",
            "--output-dir",
            &work.join("out").display().to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let start = [
        INITIALIZE,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}"#,
    ];
    for line in start {
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    reply_to(&mut lines, 2).await;
    // One call after another; every notice read as it comes, in the stream's order.
    let calls = 30;
    let mut states: Vec<String> = Vec::new();
    let mut next = 0;
    while next < calls || states.len() < 2 * calls {
        if next < calls && states.len() == 2 * next {
            let call = json!({ "jsonrpc": "2.0", "id": 100 + next, "method": "tools/call",
                               "params": { "name": "get_automation_profile", "arguments": {} } });
            stdin
                .write_all(format!("{call}\n").as_bytes())
                .await
                .unwrap();
            next += 1;
        }
        let line = tokio::time::timeout(PATIENCE, lines.next_line())
            .await
            .expect("tabwire writes")
            .unwrap()
            .expect("tabwire writes");
        let message: Value = serde_json::from_str(&line).unwrap();
        let data = &message["params"]["data"];
        if message["method"] == "notifications/message" && data["call"] == "get_automation_profile"
        {
            states.push(data["state"].as_str().unwrap_or_default().to_owned());
        }
    }
    // Each call is sent once the one before has said it finished, so the notices
    // alternate, start before finish.
    let expected: Vec<&str> = (0..calls).flat_map(|_| ["started", "finished"]).collect();
    assert_eq!(states, expected);
}

/// A client that ends its session with DELETE is told it is gone (204, no body), and the
/// session is: a request naming it afterwards is refused.
#[tokio::test]
async fn a_session_ended_with_delete_answers_no_content_and_is_gone() {
    let server = HttpServer::start("session-delete", &[]).await;
    let http = reqwest::Client::new();
    let opened = http
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE)
        .send()
        .await
        .unwrap();
    assert!(opened.status().is_success(), "{}", opened.status());
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let ended = http
        .delete(&server.url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status(), reqwest::StatusCode::NO_CONTENT);
    assert!(ended.bytes().await.unwrap().is_empty());
    let after = http
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    assert!(!after.status().is_success(), "{}", after.status());
}

/// A client that is done closes stdin; tabwire closes its browser and exits, and says
/// nothing at warning level about it: a browser closed on purpose is not a lost one.
#[tokio::test]
async fn a_normal_shutdown_warns_of_nothing() {
    let work = scratch("quiet-shutdown");
    let mut child = tokio::process::Command::new(BINARY)
        .args([
            "--isolated",
            "--output-dir",
            &work.join("out").display().to_string(),
        ])
        .env_remove("TABWIRE_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stderr = child.stderr.take().unwrap();
    let open = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "open_url", "arguments": { "url": "data:text/html,<p>hi</p>" } },
    });
    for line in [
        INITIALIZE.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        open.to_string(),
    ] {
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let opened = reply_to(&mut lines, 2).await;
    assert_eq!(opened["result"]["isError"], false, "{opened}");
    drop(stdin);
    let status = tokio::time::timeout(PATIENCE, child.wait())
        .await
        .expect("tabwire exits when its client leaves")
        .unwrap();
    assert!(status.success(), "{status}");
    let mut logged = String::new();
    stderr.read_to_string(&mut logged).await.unwrap();
    assert!(!logged.contains("WARN"), "{logged}");
}
