//! The extension link: a headless Chromium loads extension/ and links through the native
//! host; tabwire --extension drives it like a browser it launched.

use std::path::Path;
use std::process::Stdio;

use serde_json::json;

use crate::support::{BINARY, Site, Tabwire, runtime_dir, scratch, start_browser_with_extension};

/// A browser with our extension loaded and its native host registered in its profile.
struct LinkedBrowser {
    _chromium: tokio::process::Child,
}

async fn linked_browser(work: &Path) -> LinkedBrowser {
    linked_browser_profile(work, "browser-profile").await
}

async fn linked_browser_profile(work: &Path, profile_name: &str) -> LinkedBrowser {
    LinkedBrowser {
        _chromium: crate::support::start_linked_browser(work, profile_name, &[]).await,
    }
}

#[tokio::test]
async fn the_users_browser_is_driven_through_the_extension() {
    let site = Site::start().await;
    let work = scratch("extension");
    let tw = Tabwire::stdio_in(work.clone(), &["--extension", "--broker-grace", "0"]).await;
    let _browser = linked_browser(&work).await;

    // The first call waits for the browser to link.
    let tabs = tw.ok("list_tabs", json!({})).await;
    let handle = tabs["tabs"][0]["session_id"].as_str().unwrap().to_owned();
    assert!(handle.starts_with("ext-"), "{tabs}");

    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;

    // A web page in the linked browser cannot reach the extension (no externally
    // connectable pages) nor its native host (native messaging is for extensions only).
    let reach = format!(
        r#"(async () => {{
            if (typeof chrome !== 'object' || !chrome.runtime) return 'no chrome.runtime';
            if (chrome.runtime.connectNative) return 'native messaging exposed';
            if (!chrome.runtime.sendMessage) return 'no sendMessage';
            try {{
                return await new Promise((resolve) => chrome.runtime.sendMessage(
                    {:?}, {{ name: 'bookmarks.getTree' }},
                    (answer) => resolve(chrome.runtime.lastError ? 'refused' : 'answered: ' + JSON.stringify(answer))));
            }} catch (e) {{ return 'refused'; }}
        }})()"#,
        tabwire_extension_id()
    );
    let reached = tw.ok("execute_js", json!({ "script": reach })).await;
    let verdict = reached["js_return"].as_str().unwrap_or_default().to_owned();
    assert!(
        verdict == "no chrome.runtime" || verdict == "no sendMessage" || verdict == "refused",
        "a web page reached the extension: {reached}"
    );

    tw.ok(
        "page_type",
        json!({ "selector": { "label": "Full name" }, "text": "Through the extension" }),
    )
    .await;
    tw.ok(
        "page_click",
        json!({ "selector": { "role": "checkbox", "name": "I agree" } }),
    )
    .await;
    tw.ok(
        "page_type",
        json!({ "selector": "#email", "text": "x@example.org", "submit_key": "enter" }),
    )
    .await;
    tw.ok("wait_for", json!({ "selector": "#result:not(:empty)" }))
        .await;
    let submitted = tw
        .ok(
            "execute_js",
            json!({ "script": "JSON.parse(document.getElementById('result').textContent)" }),
        )
        .await;
    assert_eq!(submitted["js_return"]["name"], "Through the extension");
    assert_eq!(submitted["js_return"]["terms"], "on");

    // An out-of-process iframe, through chrome.debugger's child sessions.
    tw.ok("open_url", json!({ "url": site.url("frames.html") }))
        .await;
    tw.ok(
        "wait_for",
        json!({ "selector": { "frame": ["#cross"], "css": "#inner" } }),
    )
    .await;
    tw.ok(
        "page_click",
        json!({ "selector": { "frame": ["#cross"], "role": "button", "name": "Inner button" } }),
    )
    .await;
    let inner = tw
        .ok(
            "scan_page",
            json!({ "frame": ["#cross"], "text_only": true }),
        )
        .await;
    assert!(
        inner["content"].as_str().unwrap().contains("inner clicked"),
        "{}",
        inner["content"]
    );

    // Permission leases go through chrome.contentSettings on this link.
    let state = |expected: &str| json!({ "js": format!("navigator.permissions.query({{name: 'geolocation'}}).then(s => s.state === '{expected}')"), "timeout": 30 });
    let lease = tw
        .ok(
            "set_site_permission",
            json!({ "permission": "geolocation", "setting": "allow" }),
        )
        .await;
    assert_eq!(lease["lease"]["prior"], "prompt");
    tw.ok("wait_for", state("granted")).await;
    tw.ok("reset_site_permissions", json!({})).await;
    tw.ok("wait_for", state("prompt")).await;

    // Downloads go through chrome.downloads and land, verified, under the output dir.
    let done = tw
        .ok("download_file", json!({ "url": site.url("report") }))
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    let bytes = std::fs::read(done["path"].as_str().unwrap()).unwrap();
    assert_eq!(bytes, crate::support::REPORT.as_bytes());
    assert!(
        done["path"]
            .as_str()
            .unwrap()
            .ends_with("/downloads/report.csv"),
        "{done}"
    );

    // Browser APIs travel over the same link.
    let created = tw
        .ok(
            "create_bookmark",
            json!({ "title": "Linked", "url": site.url("form.html") }),
        )
        .await;
    assert_eq!(created["status"], "ok");
    assert_eq!(created["operation"], "create_bookmark");
    assert!(in_tree(&tw.ok("get_bookmarks", json!({})).await, "Linked").is_some());

    let shot = tw.call("capture_page_screenshot", json!({})).await;
    assert_eq!(shot.images.len(), 1);
    let status = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(status["link"], "extension");
    assert_eq!(
        status["linked_browsers"][0]["hello"]["extension_version"],
        "0.1.0"
    );
    assert_eq!(
        status["extension_build_verdict"], "matches_tree",
        "{status}"
    );
    assert_eq!(status["reload_extension_required"], false);
}

#[tokio::test]
async fn only_our_extension_and_a_proper_hello_can_link() {
    // The native host serves only our extension's origin.
    let other = tokio::process::Command::new(BINARY)
        .arg("chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/")
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!other.status.success());
    assert!(
        String::from_utf8_lossy(&other.stderr).contains("refusing"),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );

    // A local process that connects to the link socket without the hello is dropped, and
    // no browser is linked by it.
    let work = scratch("extension-refuse");
    let tw = Tabwire::stdio_in(work.clone(), &["--extension", "--broker-grace", "0"]).await;
    tw.ok("get_setup_status", json!({})).await;
    let socket = runtime_dir().join("tabwire/extension-link.sock");
    let mut stream = tokio::net::UnixStream::connect(&socket)
        .await
        .expect("link socket");
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream
        .write_all(b"{\"id\":1,\"method\":\"Target.getTargets\"}\n")
        .await
        .unwrap();
    let mut rest = Vec::new();
    let closed =
        tokio::time::timeout(crate::support::PATIENCE, stream.read_to_end(&mut rest)).await;
    assert!(
        closed.is_ok(),
        "the engine kept a link that never said hello"
    );

    // A proper hello without the pairing secret, or with a wrong one, is refused with a
    // reason and closed: only the native host knows the secret.
    let wrong = "0".repeat(64);
    for pairing in [None, Some(wrong.as_str())] {
        let mut hello = json!({ "tabwire_link": 1, "client_id": "ext-forged" });
        if let Some(secret) = pairing {
            hello["pairing"] = json!(secret);
        }
        let mut stream = tokio::net::UnixStream::connect(&socket)
            .await
            .expect("link socket");
        stream
            .write_all(format!("{hello}\n").as_bytes())
            .await
            .unwrap();
        let mut answer = String::new();
        tokio::time::timeout(crate::support::PATIENCE, stream.read_to_string(&mut answer))
            .await
            .expect("a refused link is closed")
            .unwrap();
        let refusal: serde_json::Value = serde_json::from_str(answer.trim()).expect("one line");
        assert_eq!(refusal["error"]["code"], "link_refused", "{answer}");
        assert!(
            refusal["error"]["message"]
                .as_str()
                .unwrap()
                .contains("pairing secret"),
            "{answer}"
        );
    }
    let secret = std::fs::read_to_string(crate::support::config_dir().join("tabwire/link-secret"))
        .expect("the link's pairing secret exists");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(crate::support::config_dir().join("tabwire/link-secret"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "the secret is private");
    assert_eq!(secret.trim().len(), 64);
    let reply = tw.call("list_tabs", json!({})).await;
    assert_eq!(
        reply.reason(),
        "extension_unavailable",
        "{}",
        reply.envelope
    );
    assert!(reply.message().contains("install-native-host"));
}

fn find<'a>(node: &'a serde_json::Value, title: &str) -> Option<&'a serde_json::Value> {
    if node["title"] == title {
        return Some(node);
    }
    node["children"]
        .as_array()?
        .iter()
        .find_map(|c| find(c, title))
}

fn in_tree<'a>(tree: &'a serde_json::Value, title: &str) -> Option<&'a serde_json::Value> {
    tree["data"]
        .as_array()?
        .iter()
        .find_map(|root| find(root, title))
}

/// Bookmarks through the extension loaded into the browser tabwire launched: created,
/// backed up, removed, and restored from the backup file.
#[tokio::test]
async fn bookmarks_are_backed_up_before_removal_and_restorable() {
    let tw = Tabwire::stdio("bookmarks").await;
    let extensions = tw.ok("list_extensions", json!({})).await;
    assert!(
        extensions.to_string().contains("tabwire link"),
        "{extensions}"
    );

    let folder = tw
        .ok("create_bookmark", json!({ "title": "Research" }))
        .await;
    let folder_id = folder["data"]["id"].as_str().unwrap().to_owned();
    for (title, url) in [
        ("Rust", "https://www.rust-lang.org/"),
        ("CDP", "https://chromedevtools.github.io/devtools-protocol/"),
    ] {
        tw.ok(
            "create_bookmark",
            json!({ "title": title, "url": url, "parent_id": folder_id }),
        )
        .await;
    }
    let tree = tw.ok("get_bookmarks", json!({})).await;
    assert_eq!(
        in_tree(&tree, "Research").unwrap()["children"]
            .as_array()
            .unwrap()
            .len(),
        2
    );

    let refused = tw
        .call("remove_bookmark", json!({ "bookmark_id": folder_id }))
        .await;
    assert_eq!(
        refused.error_code(),
        "invalid_request",
        "{}",
        refused.envelope
    );
    // One the browser does not have cannot be backed up: nothing is sent, and the call
    // may be made again as it is (BrowserTap's bookmark_backup_failed).
    let unknown = tw
        .call("remove_bookmark", json!({ "bookmark_id": "999999" }))
        .await;
    assert_eq!(
        unknown.error_code(),
        "bookmark_backup_failed",
        "{}",
        unknown.envelope
    );
    assert_eq!(unknown.envelope["retryable"], true);
    assert_eq!(unknown.envelope["legacy"]["phase"], "backup");
    let removed = tw
        .ok(
            "remove_bookmark",
            json!({ "bookmark_id": folder_id, "recursive": true }),
        )
        .await;
    assert_eq!(removed["removed"], 3);
    assert_eq!(removed["status"], "ok");
    assert!(
        removed["backup_expires_at"].as_f64().unwrap()
            > removed["backup_captured_at"].as_f64().unwrap(),
        "{removed}"
    );
    let backup = std::fs::read(removed["backup_path"].as_str().unwrap()).expect("backup file");
    assert_eq!(
        removed["backup_sha256"],
        crate::support::sha256_hex(&backup)
    );
    assert!(in_tree(&tw.ok("get_bookmarks", json!({})).await, "Research").is_none());

    // Restore from the backup, as a user would.
    let saved: serde_json::Value = serde_json::from_slice(&backup).unwrap();
    let root = &saved["root"];
    let restored = tw
        .ok("create_bookmark", json!({ "title": root["title"] }))
        .await;
    let parent = restored["data"]["id"].clone();
    for child in root["children"].as_array().unwrap() {
        tw.ok(
            "create_bookmark",
            json!({ "title": child["title"], "url": child["url"], "parent_id": parent }),
        )
        .await;
    }
    let tree = tw.ok("get_bookmarks", json!({})).await;
    let back = in_tree(&tree, "Research").expect("restored folder");
    let urls: Vec<&str> = back["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls,
        [
            "https://www.rust-lang.org/",
            "https://chromedevtools.github.io/devtools-protocol/"
        ]
    );
    let status = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(
        status["extension_build_verdict"], "matches_tree",
        "{status}"
    );
    let own = tw
        .call(
            "set_extension_enabled",
            json!({ "extension_id": "ppccifgifikdledggbjmlefilliimeen", "enabled": false }),
        )
        .await;
    assert_eq!(own.error_code(), "invalid_request");
    // What the browser itself refuses is BrowserTap's page_execution_failed, not retryable.
    let unknown = tw
        .call(
            "set_extension_enabled",
            json!({ "extension_id": "a".repeat(32), "enabled": false }),
        )
        .await;
    assert_eq!(
        unknown.error_code(),
        "page_execution_failed",
        "{}",
        unknown.envelope
    );
    assert_eq!(unknown.envelope["retry_safe"], false);
    assert!(unknown.message().contains("aaaa"), "{}", unknown.message());
}

#[tokio::test]
async fn two_browser_profiles_are_linked_at_once() {
    let site = Site::start().await;
    let work = scratch("extension-two");
    let tw = Tabwire::stdio_in(work.clone(), &["--extension", "--broker-grace", "0"]).await;
    let _first = linked_browser_profile(&work, "profile-a").await;
    tw.ok("list_tabs", json!({})).await;
    let _second = linked_browser_profile(&work, "profile-b").await;
    let clients = || async {
        let status = tw.ok("get_setup_status", json!({})).await;
        status["linked_browsers"].as_array().map_or(0, Vec::len)
    };
    crate::support::poll_until("the second profile to link", || async {
        clients().await == 2
    })
    .await;

    // One tab in each profile, addressed by its client-qualified handle.
    let tabs = tw.ok("list_tabs", json!({})).await;
    let handles: Vec<String> = tabs["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["session_id"].as_str().unwrap().to_owned())
        .collect();
    let mut prefixes: Vec<&str> = handles
        .iter()
        .map(|h| h.split(':').next().unwrap())
        .collect();
    prefixes.dedup();
    assert_eq!(prefixes.len(), 2, "{handles:?}");
    let (a, b) = (
        &handles[0],
        handles
            .iter()
            .find(|h| !h.starts_with(prefixes[0]))
            .unwrap(),
    );
    tw.ok(
        "open_url",
        json!({ "url": site.url("form.html"), "session_id": a }),
    )
    .await;
    tw.ok(
        "open_url",
        json!({ "url": site.url("fold.html"), "session_id": b }),
    )
    .await;
    let ta = tw
        .ok(
            "execute_js",
            json!({ "script": "document.title", "session_id": a }),
        )
        .await;
    let tb = tw
        .ok(
            "execute_js",
            json!({ "script": "document.title", "session_id": b }),
        )
        .await;
    assert_eq!(
        (ta["js_return"].as_str(), tb["js_return"].as_str()),
        (Some("Form"), Some("Below the fold"))
    );

    // Tab search reads the tabs of both profiles.
    for (query, handle) in [("Deep button below the fold", b), ("Form", a)] {
        let found = tw.ok("search_tabs", json!({ "query": query })).await;
        assert_eq!(
            found["results"][0]["session_id"],
            handle.as_str(),
            "{query}: {found}"
        );
    }

    // By URL pattern, the second profile's tab is found and closed like the first's.
    let switched = tw
        .ok("switch_tab", json!({ "url_pattern": "fold.html" }))
        .await;
    assert_eq!(switched["session_id"], b.as_str(), "{switched}");
    let title = tw
        .ok("execute_js", json!({ "script": "document.title" }))
        .await;
    assert_eq!(title["js_return"], "Below the fold");
    let closed = tw
        .ok(
            "close_tabs",
            json!({ "tab_id": b, "only_if_agent_owned": false }),
        )
        .await;
    assert_eq!(closed["results"][0]["status"], "closed", "{closed}");
    let left = tw.ok("list_tabs", json!({})).await;
    assert!(!left.to_string().contains(b.as_str()), "{left}");
    assert!(left.to_string().contains(a.as_str()), "{left}");
}

/// Sends one CDP command over a browser's own debugging WebSocket (the test's view of the
/// browser, independent of tabwire).
async fn cdp_once(ws: &str, method: &str, params: serde_json::Value) -> serde_json::Value {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let (mut socket, _) = tokio_tungstenite::connect_async(ws)
        .await
        .expect("browser websocket");
    let request = json!({ "id": 1, "method": method, "params": params }).to_string();
    socket.send(Message::Text(request.into())).await.unwrap();
    while let Some(Ok(message)) = socket.next().await {
        if let Message::Text(text) = message {
            let reply: serde_json::Value = serde_json::from_str(text.as_str()).unwrap();
            if reply["id"] == 1 {
                return reply;
            }
        }
    }
    panic!("{method}: no reply");
}

#[tokio::test]
async fn the_link_comes_back_after_the_worker_restarts_and_in_flight_calls_say_so() {
    let site = Site::start().await;
    let work = scratch("extension-restart");
    let tw = Tabwire::stdio_in(work.clone(), &["--extension", "--broker-grace", "0"]).await;
    let mut chromium = crate::support::start_linked_browser(
        &work,
        "browser-profile",
        &["--remote-debugging-port=0"],
    )
    .await;
    let ws = crate::support::devtools_endpoint(&mut chromium).await;

    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let owned = tw
        .ok(
            "open_new_tab",
            json!({ "url": site.url("fold.html"), "owner_id": "task-7" }),
        )
        .await;
    let tab = owned["session_id"].as_str().unwrap().to_owned();
    let pending = tw
        .ok(
            "execute_js",
            json!({ "script": "await new Promise(() => {})", "wait": false }),
        )
        .await;

    // The browser stops the extension's worker (as it does to idle or updated workers).
    let targets = cdp_once(&ws, "Target.getTargets", json!({})).await;
    let worker = targets["result"]["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "service_worker")
        .expect("extension worker")["targetId"]
        .clone();
    cdp_once(&ws, "Target.closeTarget", json!({ "targetId": worker })).await;

    // The script in flight gets an honest receipt: it may have run, do not replay it.
    let outcome = tw
        .call(
            "get_execute_js_result",
            json!({ "operation_id": pending["operation_id"], "timeout": 60 }),
        )
        .await;
    assert_eq!(
        outcome.reason(),
        "browser_disconnected",
        "{}",
        outcome.envelope
    );
    assert_eq!(
        outcome.envelope["retry_safe"], false,
        "{}",
        outcome.envelope
    );

    // Any browser event wakes the worker; the link comes back by itself, with the same
    // tab handles and owners.
    cdp_once(&ws, "Target.createTarget", json!({ "url": "about:blank" })).await;
    let title = tw
        .ok(
            "execute_js",
            json!({ "script": "document.title", "session_id": tab }),
        )
        .await;
    assert_eq!(title["js_return"], "Below the fold");
    let closed = tw
        .ok("close_tabs", json!({ "tab_id": tab, "owner_id": "task-7" }))
        .await;
    assert_eq!(closed["results"][0]["closed_by"], "agent");
}

/// Our extension's id, as `tabwire extension-path` writes it out (fixed by its key).
fn tabwire_extension_id() -> &'static str {
    "ppccifgifikdledggbjmlefilliimeen"
}

#[tokio::test]
async fn setup_status_tells_a_stale_worker_from_a_stale_server() {
    let work = scratch("extension-stale");
    let tw = Tabwire::stdio_in(work.clone(), &["--extension", "--broker-grace", "0"]).await;
    // The server wrote its extension folder at start; a copy stamped by some other build
    // stands for an extension loaded before this server's files were written.
    tw.ok("get_setup_status", json!({})).await;
    let folder = work.join("data/tabwire/extension");
    let old = work.join("old-extension");
    std::fs::create_dir_all(&old).unwrap();
    for entry in std::fs::read_dir(&folder).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), old.join(entry.file_name())).unwrap();
    }
    let other_build = "export const BUILD_STAMP = 'feedfacecafe';\n";
    std::fs::write(old.join("stamp.js"), other_build).unwrap();
    let _browser = start_browser_with_extension(&work, "browser-profile", &old, &[]).await;
    tw.ok("list_tabs", json!({})).await; // waits for the link

    let status = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(status["extension_build_stamp"], "feedfacecafe", "{status}");
    assert_eq!(
        status["extension_build_verdict"], "stale_worker",
        "{status}"
    );
    assert_eq!(status["reload_extension_required"], true);
    assert_eq!(status["restart_server_required"], false);

    // Another tabwire build wrote the folder the worker runs: now the server is stale.
    std::fs::write(folder.join("stamp.js"), other_build).unwrap();
    let status = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(
        status["extension_build_verdict"], "stale_server",
        "{status}"
    );
    assert_eq!(status["restart_server_required"], true);
    assert_eq!(status["reload_extension_required"], false);
    assert!(
        status["extension_next_action"]
            .as_str()
            .unwrap()
            .contains("restart tabwire"),
        "{status}"
    );
}

/// The test's own CDP connection to a browser, which reports target events: how it sees
/// the extension's worker stop and start, independently of tabwire (and without waking
/// the worker: nothing it sends is an event an extension hears).
struct TargetWatch {
    socket: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    next_id: u64,
}

impl TargetWatch {
    async fn open(ws: &str) -> TargetWatch {
        let (socket, _) = tokio_tungstenite::connect_async(ws)
            .await
            .expect("browser websocket");
        let mut watch = TargetWatch { socket, next_id: 1 };
        watch
            .command("Target.setDiscoverTargets", json!({ "discover": true }))
            .await;
        watch
    }

    async fn command(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        use futures_util::SinkExt;
        use tokio_tungstenite::tungstenite::Message;
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({ "id": id, "method": method, "params": params }).to_string();
        self.socket
            .send(Message::Text(request.into()))
            .await
            .expect("send to the browser");
        self.next(|m| m["id"] == id).await
    }

    /// The next message matching `wanted` (events before it are passed over).
    async fn next(&mut self, wanted: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        use futures_util::StreamExt;
        use tokio_tungstenite::tungstenite::Message;
        let read = async {
            while let Some(Ok(message)) = self.socket.next().await {
                if let Message::Text(text) = message {
                    let message: serde_json::Value =
                        serde_json::from_str(text.as_str()).expect("CDP JSON");
                    if wanted(&message) {
                        return message;
                    }
                }
            }
            panic!("the browser closed its debugging connection");
        };
        tokio::time::timeout(crate::support::PATIENCE, read)
            .await
            .expect("the awaited browser message did not come")
    }

    async fn worker(&mut self) -> String {
        let targets = self.command("Target.getTargets", json!({})).await;
        targets["result"]["targetInfos"]
            .as_array()
            .expect("targets")
            .iter()
            .find(|t| t["type"] == "service_worker")
            .expect("the extension's worker")["targetId"]
            .as_str()
            .expect("target id")
            .to_owned()
    }
}

fn linked_at(status: &serde_json::Value) -> u64 {
    status["linked_browsers"][0]["hello"]["linked_at_ms"]
        .as_u64()
        .unwrap_or_default()
}

#[tokio::test]
#[allow(deprecated)] // MCP logging (SEP-2577), which tabwire still offers
async fn a_stopped_worker_relinks_by_itself_in_an_idle_browser() {
    use crate::support::Heard;
    use rmcp::model::{LoggingLevel, SetLevelRequestParams};
    let site = Site::start().await;
    let work = scratch("extension-idle");
    let tw = Tabwire::stdio_in(work.clone(), &["--extension", "--broker-grace", "0"]).await;
    let mut chromium = crate::support::start_linked_browser(
        &work,
        "browser-profile",
        &["--remote-debugging-port=0"],
    )
    .await;
    let ws = crate::support::devtools_endpoint(&mut chromium).await;
    tw.client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .expect("logging/setLevel");
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let mut watch = TargetWatch::open(&ws).await;
    // TABWIRE_WORKER_ROUNDS=N runs a longer campaign.
    let rounds: usize = std::env::var("TABWIRE_WORKER_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let mut seen_waiting = 0;
    let mut slowest = std::time::Duration::ZERO;
    for round in 0..rounds {
        let before = linked_at(&tw.ok("get_setup_status", json!({})).await);
        // The browser stops the worker, as it does on a crash, an update or its schedule;
        // nothing else happens in the browser after that.
        let worker = watch.worker().await;
        watch
            .command("Target.closeTarget", json!({ "targetId": worker }))
            .await;
        watch
            .next(|m| m["method"] == "Target.targetDestroyed" && m["params"]["targetId"] == worker)
            .await;
        let stopped = std::time::Instant::now();
        // tabwire hears the link drop (its log says so to a client that listens); until
        // the worker is back, the status says tabwire waits for it, and since when.
        tw.client
            .service()
            .wait_for_nth("the log of the dropped link", round + 1, |heard| {
                matches!(heard, Heard::Log(log) if log.data["message"].as_str().is_some_and(|m| m.starts_with("browser link dropped")))
            })
            .await;
        let status = tw.ok("get_setup_status", json!({})).await;
        if status["link_state"] == "waiting_for_worker" {
            seen_waiting += 1;
            let waiting = &status["waiting_for_worker"][0];
            assert!(waiting["client_id"].is_string(), "{status}");
            assert!(
                waiting["waiting_for_worker_since_ms"].as_u64().unwrap() >= before,
                "{status}"
            );
        } else {
            assert!(linked_at(&status) > before, "round {round}: {status}");
        }
        // A call made now waits for the link and is served on it.
        let title = tw
            .ok("execute_js", json!({ "script": "document.title" }))
            .await;
        assert_eq!(title["js_return"], "Form", "round {round}");
        slowest = slowest.max(stopped.elapsed());
        let status = tw.ok("get_setup_status", json!({})).await;
        assert!(linked_at(&status) > before, "round {round}: {status}");
        assert_eq!(status["waiting_for_worker"], json!([]), "{status}");
    }
    eprintln!("{rounds} rounds; the slowest from the worker's stop to a served call: {slowest:?}");
    assert!(
        seen_waiting > 0,
        "the status never said it was waiting for the worker in {rounds} rounds"
    );
}

/// The worker stops, and the agent calls at once, before tabwire could hear the link
/// drop: the call must know the link is gone before it sends anything, wait for the
/// worker to come back, and run there; never fail as "may have run".
#[tokio::test]
async fn a_call_made_at_once_after_the_worker_stops_waits_for_the_relink_and_runs() {
    let site = Site::start().await;
    let work = scratch("extension-stop-then-call");
    let tw = Tabwire::stdio_in(work.clone(), &["--extension", "--broker-grace", "0"]).await;
    let mut chromium = crate::support::start_linked_browser(
        &work,
        "browser-profile",
        &["--remote-debugging-port=0"],
    )
    .await;
    let ws = crate::support::devtools_endpoint(&mut chromium).await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let mut watch = TargetWatch::open(&ws).await;
    let rounds: usize = std::env::var("TABWIRE_WORKER_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10);
    let (mut failures, mut slowest) = (Vec::new(), std::time::Duration::ZERO);
    // What the field holds: each round's text typed once (typing appends).
    let mut expected = String::new();
    for round in 0..rounds {
        let worker = watch.worker().await;
        watch
            .command("Target.closeTarget", json!({ "targetId": worker }))
            .await;
        let stopped = std::time::Instant::now();
        // At once: a call that acts on the page, then one that reads it.
        let typed = tw
            .call(
                "page_type",
                json!({ "selector": "#email", "text": format!("r{round}") }),
            )
            .await;
        if typed.is_error {
            failures.push(format!("round {round}: page_type: {}", typed.envelope));
        } else {
            expected.push_str(&format!("r{round}"));
        }
        let read = tw
            .call(
                "execute_js",
                json!({ "script": "document.querySelector('#email').value" }),
            )
            .await;
        slowest = slowest.max(stopped.elapsed());
        if read.is_error {
            failures.push(format!("round {round}: execute_js: {}", read.envelope));
        } else {
            // Typed once, not twice.
            assert_eq!(
                read.envelope["data"]["js_return"], expected,
                "round {round}"
            );
        }
    }
    eprintln!(
        "worker stopped, then a call at once: {} failures in {rounds} rounds; the slowest round took {slowest:?}",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The worker stops while a call is in flight in the page: the call answers honestly
/// (what it sent may have run), never hangs, and the next call runs on the relinked
/// worker.
#[tokio::test]
async fn a_worker_stopped_while_a_call_runs_fails_it_honestly_and_the_next_call_runs() {
    let site = Site::start().await;
    let work = scratch("extension-stop-busy");
    let tw = Tabwire::stdio_in(work.clone(), &["--extension", "--broker-grace", "0"]).await;
    let mut chromium = crate::support::start_linked_browser(
        &work,
        "browser-profile",
        &["--remote-debugging-port=0"],
    )
    .await;
    let ws = crate::support::devtools_endpoint(&mut chromium).await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let mut watch = TargetWatch::open(&ws).await;
    for round in 0..3 {
        // A script that waits in the page until the test lets it go.
        let key = format!("busy-{round}");
        let script = format!("await fetch('/hold/{key}'); return 1");
        let waiting = tw.call("execute_js", json!({ "script": script, "timeout": 60 }));
        let stop = async {
            site.arrived(&key).await;
            let worker = watch.worker().await;
            watch
                .command("Target.closeTarget", json!({ "targetId": worker }))
                .await;
        };
        let (reply, ()) = tokio::join!(waiting, stop);
        assert!(reply.is_error, "round {round}: {}", reply.envelope);
        let diagnostics = &reply.envelope["diagnostics"];
        assert!(
            diagnostics["elapsed_ms"].as_u64().unwrap() < 30_000,
            "round {round}: the wait outlived its link: {}",
            reply.envelope
        );
        if reply.envelope["delivery_state"] != "undelivered" {
            assert_eq!(reply.envelope["retry_safe"], false, "{}", reply.envelope);
        }
        site.release(&key);
        let title = tw
            .ok("execute_js", json!({ "script": "document.title" }))
            .await;
        assert_eq!(title["js_return"], "Form", "round {round}");
    }
}
