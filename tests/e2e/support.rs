//! The harness: pages served on loopback, tabwire started as a real MCP server (stdio or
//! HTTP) and driven by rmcp's client, and helpers that read the btap.result.v1 envelope.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path as UrlPath, Query};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub const BINARY: &str = env!("CARGO_BIN_EXE_tabwire");

/// Generous: tests must pass on a loaded 2-core machine. Nothing waits this long when
/// things work; it only bounds a hang.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Serves `tests/pages/*.html` and a few dynamic routes on 127.0.0.1:<port>.
pub struct Site {
    pub port: u16,
}

impl Site {
    pub async fn start() -> Site {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind site");
        let port = listener.local_addr().expect("site addr").port();
        tokio::spawn(async move {
            let _ = axum::serve(listener, routes()).await;
        });
        Site { port }
    }

    /// A page by name on 127.0.0.1.
    pub fn url(&self, path: &str) -> String {
        format!(
            "http://127.0.0.1:{}/{}",
            self.port,
            path.trim_start_matches('/')
        )
    }
}

fn pages_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/pages")
}

fn routes() -> Router {
    Router::new()
        .route(
            "/json",
            get(|| async { axum::Json(json!({"items": [1, 2, 3]})) }),
        )
        .route(
            "/list/{count}",
            get(|UrlPath(count): UrlPath<usize>| async move { html(long_list(count)) }),
        )
        .route(
            "/echo",
            get(
                |Query(q): Query<std::collections::HashMap<String, String>>| async move {
                    html(format!(
                        "<title>echo</title><pre id=q>{}</pre>",
                        escape(&format!("{q:?}"))
                    ))
                },
            ),
        )
        .route("/cookies", get(echo_cookies))
        .route("/hold/{key}", get(hold).post(hold))
        .route("/echo-request", axum::routing::any(echo_request))
        .route("/report", get(report))
        .route("/report.html", get(html_report))
        .route(
            "/pixel.png",
            get(|| async { ([(header::CONTENT_TYPE, "image/png")], PIXEL_PNG).into_response() }),
        )
        .route(
            "/data.json",
            get(|| async {
                ([(header::CONTENT_TYPE, "application/json")], DATA_JSON).into_response()
            }),
        )
        .route(
            "/{name}",
            get(|UrlPath(name): UrlPath<String>| async move { page(&name) }),
        )
        .route("/extra/{name}", get(extra_page))
        .route("/slow/{ms}/{name}", get(slow_asset))
        .route(
            "/search/{name}",
            get(|UrlPath(name): UrlPath<String>| async move { page(&format!("search/{name}")) }),
        )
        .route(
            "/corpus/{name}",
            get(|UrlPath(name): UrlPath<String>| async move { page(&format!("corpus/{name}")) }),
        )
}

/// Gates of `/hold/{key}`: a request arrives (`arrived`) and is answered only when the
/// test lets it go (`release`), so a page script can be kept running for exactly as long
/// as a test needs, without timers.
#[derive(Default)]
struct Gate {
    arrived: tokio::sync::Notify,
    released: tokio::sync::Notify,
}

fn gate(key: &str) -> std::sync::Arc<Gate> {
    static GATES: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<Gate>>>,
    > = std::sync::OnceLock::new();
    GATES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(key.to_owned())
        .or_default()
        .clone()
}

async fn hold(UrlPath(key): UrlPath<String>) -> Response {
    let gate = gate(&key);
    gate.arrived.notify_one();
    gate.released.notified().await;
    (
        [(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")],
        format!("released {key}"),
    )
        .into_response()
}

impl Site {
    /// Waits until the page has asked for `/hold/{key}`.
    pub async fn arrived(&self, key: &str) {
        tokio::time::timeout(PATIENCE, gate(key).arrived.notified())
            .await
            .unwrap_or_else(|_| panic!("the page never asked for /hold/{key}"));
    }

    /// Answers the page's `/hold/{key}` (now, or as soon as it asks).
    pub fn release(&self, key: &str) {
        gate(key).released.notify_one();
    }
}

/// Says what request came: its method, body, cookies and one custom header.
async fn echo_request(
    method: axum::http::Method,
    headers: axum::http::HeaderMap,
    body: String,
) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    axum::Json(json!({
        "method": method.as_str(), "body": body, "cookie": header("cookie"),
        "x_test": header("x-test"), "content_type": header("content-type"),
    }))
    .into_response()
}

/// Shows the Cookie header the server received.
async fn echo_cookies(headers: axum::http::HeaderMap) -> Response {
    let cookie = headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    html(format!(
        "<title>cookies</title><pre id=cookie>{}</pre>",
        escape(cookie)
    ))
}

/// A CSV served as an attachment, as a report export would be.
async fn report() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/csv"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"report.csv\"",
            ),
        ],
        REPORT,
    )
        .into_response()
}

/// An HTML report served as an attachment, as a reporting tool's export would be.
async fn html_report() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"report.html\"",
            ),
        ],
        REPORT_HTML,
    )
        .into_response()
}

/// The bytes `/report.html` serves.
pub const REPORT_HTML: &str =
    "<!doctype html><title>Q3</title><table><tr><td>alpha</td><td>1</td></tr></table>\n";

/// A test page's source, as the site serves it.
pub fn page_source(name: &str) -> String {
    std::fs::read_to_string(pages_dir().join(name)).expect("test page")
}

/// The bytes `/report` serves as an attachment.
pub const REPORT: &str = "id,name\n1,alpha\n2,beta\n";

/// A 1×1 PNG `/pixel.png` serves inline: a browser shows it rather than downloading it.
pub const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// The JSON `/data.json` serves inline.
pub const DATA_JSON: &str = "{\"rows\": [1, 2, 3], \"note\": \"caf\u{e9}\"}";

/// A page by file name: `name`, or `corpus/name` for the fidelity corpus.
fn page(name: &str) -> Response {
    let file = ["corpus/", "search/"]
        .iter()
        .find_map(|dir| name.strip_prefix(dir))
        .unwrap_or(name);
    if file.contains("..") || file.contains('/') {
        return StatusCode::NOT_FOUND.into_response();
    }
    match std::fs::read_to_string(pages_dir().join(name)) {
        Ok(body) => html(body),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

/// A file of `tests/pages/perf`, answered after `ms` milliseconds: the planted
/// slowness of the performance tests (a late hero image, a slow document, a blocking
/// script). The delay is the page's content, not a wait of the test's.
async fn slow_asset(UrlPath((ms, name)): UrlPath<(u64, String)>) -> Response {
    if name.contains('/') || name.contains("..") || ms > 10_000 {
        return StatusCode::NOT_FOUND.into_response();
    }
    let Ok(body) = std::fs::read(pages_dir().join("perf").join(&name)) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    let kind = match name.rsplit('.').next() {
        Some("js") => "text/javascript",
        Some("svg") => "image/svg+xml",
        Some("css") => "text/css",
        _ => "text/html; charset=utf-8",
    };
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// A page of the folder `TABWIRE_FIDELITY_EXTRA` names, with the fidelity corpus's
/// click-logging harness appended (see `fidelity.rs`).
async fn extra_page(UrlPath(name): UrlPath<String>) -> Response {
    const HARNESS: &str = "<script>window.clickLog = [];\
        addEventListener('click', (e) => { clickLog.push(e.composedPath()); e.preventDefault(); e.stopImmediatePropagation(); }, true);\
        addEventListener('mousedown', (e) => e.preventDefault(), true);</script>";
    let Some(dir) = std::env::var_os("TABWIRE_FIDELITY_EXTRA") else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if name.contains('/') || name.contains("..") {
        return StatusCode::NOT_FOUND.into_response();
    }
    // A relative folder is the workspace's (the test runs in the crate's folder).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(dir);
    match std::fs::read(dir.join(&name)) {
        Ok(body) => html(String::from_utf8_lossy(&body).into_owned() + HARNESS),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

fn html(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;")
}

/// A page with `count` list items.
pub fn long_list(count: usize) -> String {
    let mut body = String::from("<title>list</title><h1>Results</h1><ul id=results>");
    for i in 0..count {
        body.push_str(&format!(
            "<li class=item><a href=\"/item/{i}\">Item {i}</a> <button>Add {i}</button></li>"
        ));
    }
    body.push_str("</ul><p id=after>End of results</p>");
    body
}

/// A tabwire process and the MCP client talking to it.
/// The test's MCP client: rmcp's, with a handler that keeps the server's notifications
/// (progress, log messages) for tests to read.
pub type Client = RunningService<RoleClient, Listener>;

#[derive(Clone, Default)]
pub struct Listener {
    heard: std::sync::Arc<std::sync::Mutex<Vec<Heard>>>,
    news: std::sync::Arc<tokio::sync::Notify>,
}

/// One notification the server sent.
#[allow(deprecated)] // MCP logging (SEP-2577); tabwire still offers it
#[derive(Debug, Clone)]
pub enum Heard {
    Progress(rmcp::model::ProgressNotificationParam),
    Log(rmcp::model::LoggingMessageNotificationParam),
    ToolListChanged,
}

impl Listener {
    fn hear(&self, heard: Heard) {
        self.heard
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(heard);
        self.news.notify_waiters();
    }

    /// Waits until a notification matching `wanted` has come, and returns it.
    pub async fn wait_for(&self, what: &str, wanted: impl Fn(&Heard) -> bool) -> Heard {
        self.wait_for_nth(what, 1, wanted).await
    }

    /// Waits until the `n`th notification matching `wanted` has come, and returns it.
    pub async fn wait_for_nth(
        &self,
        what: &str,
        n: usize,
        wanted: impl Fn(&Heard) -> bool,
    ) -> Heard {
        let look = async {
            loop {
                let news = self.news.notified();
                if let Some(found) = self
                    .heard
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .iter()
                    .filter(|h| wanted(h))
                    .nth(n - 1)
                {
                    return found.clone();
                }
                news.await;
            }
        };
        tokio::time::timeout(PATIENCE, look)
            .await
            .unwrap_or_else(|_| panic!("no {what} within {PATIENCE:?}"))
    }

    pub fn all(&self) -> Vec<Heard> {
        self.heard.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[allow(deprecated)] // MCP logging (SEP-2577); tabwire still offers it
impl rmcp::ClientHandler for Listener {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.hear(Heard::Progress(params));
    }

    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.hear(Heard::Log(params));
    }

    async fn on_tool_list_changed(&self, _: rmcp::service::NotificationContext<RoleClient>) {
        self.hear(Heard::ToolListChanged);
    }
}

pub struct Tabwire {
    pub client: Client,
    pub child: Child,
    pub output_dir: PathBuf,
    pub work: PathBuf,
    /// A browser linked through the extension, when the suite runs over that link.
    pub linked_browser: Option<Child>,
}

/// Which link `Tabwire::stdio` drives: the browser tabwire launches (default), or, with
/// TABWIRE_E2E_LINK=extension, a browser linked through the extension. The page-tool
/// tests run unchanged over both.
pub fn over_extension() -> bool {
    std::env::var("TABWIRE_E2E_LINK").is_ok_and(|v| v == "extension")
}

async fn tabwire_command(args: &[&str], data: &Path) -> String {
    let output = Command::new(BINARY)
        .args(args)
        .env("XDG_DATA_HOME", data)
        .env("XDG_CONFIG_HOME", config_dir())
        .output()
        .await
        .expect("run tabwire");
    assert!(
        output.status.success(),
        "tabwire {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8")
}

/// Chromium with the tabwire extension loaded and its native host registered in a fresh
/// profile, linking to the tabwire of this test process (same runtime dir).
pub async fn start_linked_browser(work: &Path, profile_name: &str, extra: &[&str]) -> Child {
    let extension = tabwire_command(&["extension-path"], &work.join("data"))
        .await
        .trim()
        .to_owned();
    start_browser_with_extension(work, profile_name, Path::new(&extension), extra).await
}

/// The same, loading the extension from a given folder.
pub async fn start_browser_with_extension(
    work: &Path,
    profile_name: &str,
    extension: &Path,
    extra: &[&str],
) -> Child {
    let data = work.join("data");
    let profile = work.join(profile_name);
    let extension = extension.display();
    let profile_arg = profile.display().to_string();
    tabwire_command(
        &[
            "install-native-host",
            "--browser-user-data-dir",
            &profile_arg,
        ],
        &data,
    )
    .await;
    Command::new(system_browser())
        .args(HEADLESS)
        .args(extra)
        .arg("about:blank")
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--load-extension={extension}"))
        // A Chromium with page tools (WebMCP) on, as one started with the flag is.
        .arg("--enable-features=WebMCP")
        // The native host inherits this and finds the link socket there.
        .env("XDG_RUNTIME_DIR", runtime_dir())
        .env("XDG_CONFIG_HOME", config_dir())
        // Its own download folder, not the real home's.
        .env("HOME", profile.join("home"))
        .stdout(Stdio::null())
        // Piped only when the caller reads the DevTools endpoint from it (and drains it).
        .stderr(
            if extra.iter().any(|a| a.starts_with("--remote-debugging")) {
                Stdio::piped()
            } else {
                Stdio::null()
            },
        )
        .kill_on_drop(true)
        .spawn()
        .expect("start chromium")
}

/// The flags of every headless Chromium the tests start themselves.
pub const HEADLESS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
];

/// A Chromium of the test's own, with a throw-away profile and a DevTools endpoint (for
/// `--cdp-endpoint`, and for tests that speak CDP themselves).
pub struct DebuggingBrowser {
    pub child: Child,
    /// `http://127.0.0.1:PORT`
    pub http: String,
    /// The browser's `ws://…/devtools/browser/…` URL.
    pub ws: String,
}

impl DebuggingBrowser {
    pub async fn launch(name: &str) -> DebuggingBrowser {
        let work = scratch(name);
        let mut child = Command::new(system_browser())
            .args(HEADLESS)
            .args(["--remote-debugging-port=0", "about:blank"])
            .arg(format!(
                "--user-data-dir={}",
                work.join("profile").display()
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start chromium");
        // Chromium announces its endpoint on stderr once it listens.
        let ws = devtools_endpoint(&mut child).await;
        let port = ws
            .split(':')
            .nth(2)
            .and_then(|p| p.split('/').next())
            .expect("a port in the DevTools URL")
            .to_owned();
        DebuggingBrowser {
            child,
            http: format!("http://127.0.0.1:{port}"),
            ws,
        }
    }
}

pub fn system_browser() -> String {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .unwrap_or("chromium")
    .into()
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tabwire-e2e-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The usual flags: a private output dir and, unless `extra` names a browser to attach
/// to, a throw-away profile.
fn base_args(work: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = Vec::new();
    if !extra.contains(&"--output-dir") {
        args.push("--output-dir".into());
        args.push(work.join("out").display().to_string());
    }
    let chooses_browser = [
        "--cdp-endpoint",
        "--user-data-dir",
        "--extension",
        "--isolated",
    ]
    .iter()
    .any(|flag| extra.contains(flag));
    if !chooses_browser {
        args.push("--isolated".into());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

impl Tabwire {
    /// tabwire over stdio with a throw-away profile.
    /// tabwire over stdio on the suite's link (see `over_extension`).
    pub async fn stdio(name: &str) -> Tabwire {
        Tabwire::on_link(name, &[]).await
    }

    /// tabwire over stdio on the suite's link, with more flags (`--face chrome`).
    pub async fn on_link(name: &str, extra: &[&str]) -> Tabwire {
        if !over_extension() {
            return Tabwire::stdio_with(name, extra).await;
        }
        let work = scratch(name);
        let mut args = vec!["--extension", "--broker-grace", "0"];
        args.extend_from_slice(extra);
        let mut tw = Tabwire::stdio_in(work.clone(), &args).await;
        tw.linked_browser = Some(start_linked_browser(&work, "browser-profile", &[]).await);
        tw
    }

    /// Calls a tool of the chrome face; returns its reply as the Chrome MCP Server gives it.
    pub async fn chrome(&self, tool: &str, arguments: Value) -> ChromeReply {
        chrome_call(&self.client, tool, arguments).await
    }

    /// Calls a chrome-face tool that must succeed; its payload.
    pub async fn chrome_ok(&self, tool: &str, arguments: Value) -> Value {
        let reply = self.chrome(tool, arguments.clone()).await;
        assert!(!reply.is_error, "{tool} {arguments} failed: {}", reply.text);
        reply.payload
    }

    /// tabwire over stdio with a browser it launches, whatever the suite's link.
    pub async fn managed(name: &str) -> Tabwire {
        Tabwire::stdio_with(name, &[]).await
    }

    pub async fn stdio_with(name: &str, extra: &[&str]) -> Tabwire {
        let work = scratch(name);
        Tabwire::stdio_in(work, extra).await
    }

    /// A client in an existing work dir (several clients of one shared browser).
    pub async fn stdio_in(work: PathBuf, extra: &[&str]) -> Tabwire {
        let mut child = Command::new(BINARY)
            .args(base_args(&work, extra))
            .env("XDG_RUNTIME_DIR", runtime_dir())
            .env("XDG_CONFIG_HOME", config_dir())
            // Its extension folder is the one the test's browser loads.
            .env("XDG_DATA_HOME", work.join("data"))
            .env(
                "XDG_STATE_HOME",
                std::env::var_os("XDG_STATE_HOME")
                    .unwrap_or_else(|| runtime_dir().join("state").into()),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log_file(&work))
            .kill_on_drop(true)
            .spawn()
            .expect("spawn tabwire");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let client = Listener::default()
            .serve((stdout, stdin))
            .await
            .expect("MCP initialize over stdio");
        Tabwire {
            linked_browser: None,
            client,
            child,
            output_dir: work.join("out"),
            work,
        }
    }

    /// Calls a tool; returns the parsed reply.
    pub async fn call(&self, tool: &str, arguments: Value) -> Reply {
        call_on(&self.client, tool, arguments).await
    }

    /// Calls a tool that must succeed.
    pub async fn ok(&self, tool: &str, arguments: Value) -> Value {
        self.call(tool, arguments).await.ok()
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("tabwire pid")
    }
}

/// Brokers (and their sockets) of one test process stay private to it.
/// The config dir every tabwire and browser of this run shares: the link's pairing secret
/// lives there, never in the real home.
pub fn config_dir() -> PathBuf {
    runtime_dir().join("config")
}

pub fn runtime_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tabwire-e2e-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("runtime dir");
    dir
}

fn log_file(work: &Path) -> Stdio {
    std::fs::File::create(work.join("tabwire.log"))
        .map(Stdio::from)
        .unwrap_or_else(|_| Stdio::null())
}

/// `tabwire --http 127.0.0.1:0`, its address read from its own announcement.
pub struct HttpServer {
    /// Killed when the test drops the server.
    child: Child,
    pub url: String,
}

impl HttpServer {
    pub async fn start(name: &str, extra: &[&str]) -> HttpServer {
        HttpServer::start_at(name, extra, "127.0.0.1:0").await
    }

    /// The same, listening on `addr`.
    pub async fn start_at(name: &str, extra: &[&str], addr: &str) -> HttpServer {
        let work = scratch(name);
        let mut args = base_args(&work, extra);
        args.extend(["--http".to_string(), addr.to_string()]);
        let mut child = Command::new(BINARY)
            .args(&args)
            .env("XDG_RUNTIME_DIR", runtime_dir())
            .env("XDG_CONFIG_HOME", config_dir())
            .env("XDG_DATA_HOME", work.join("data"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn tabwire --http");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let url = tokio::time::timeout(PATIENCE, async {
            while let Some(line) = lines.next_line().await.expect("read stderr") {
                if let Some(url) = line.strip_prefix("tabwire: listening on ") {
                    return url.trim().to_owned();
                }
            }
            panic!("tabwire --http exited without listening");
        })
        .await
        .expect("tabwire --http did not start");
        // Keep draining stderr so the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        HttpServer { child, url }
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("the server is running")
    }

    /// Asks the server to stop, as an orchestrator does (SIGTERM).
    pub fn terminate(&self) {
        // SAFETY: kill(2) with a pid this test spawned and a valid signal number.
        let sent = unsafe { libc::kill(self.pid() as i32, libc::SIGTERM) };
        assert_eq!(sent, 0, "SIGTERM not sent");
    }

    pub async fn client(&self) -> Client {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(self.url.clone());
        Listener::default()
            .serve(transport)
            .await
            .expect("MCP initialize over HTTP")
    }
}

/// One tool reply: the envelope, any images, and whether MCP flagged an error.
#[derive(Debug)]
pub struct Reply {
    pub is_error: bool,
    pub envelope: Value,
    pub images: Vec<(String, String)>,
}

impl Reply {
    /// The `data` of a successful reply; panics with the error otherwise.
    pub fn ok(self) -> Value {
        assert!(
            !self.is_error && self.envelope["ok"] == true,
            "expected success, got {}",
            self.envelope
        );
        self.envelope["data"].clone()
    }

    /// The envelope of a failed reply; panics on success.
    pub fn err(self) -> Value {
        assert!(
            self.is_error && self.envelope["ok"] == false,
            "expected failure, got {}",
            self.envelope
        );
        self.envelope
    }

    /// The payload of a failure the tool reports in its own result (`legacy`): the call
    /// ran and says why it did not succeed (a timeout with a receipt, an obscured click).
    pub fn reported(self) -> Value {
        assert!(
            self.is_error && self.envelope["ok"] == false && self.envelope.get("legacy").is_some(),
            "expected a failure reported in the result, got {}",
            self.envelope
        );
        assert!(self.envelope.get("data").is_none(), "{}", self.envelope);
        self.envelope["legacy"].clone()
    }

    /// BrowserTap's code for the failure.
    pub fn error_code(&self) -> &str {
        self.envelope["error_code"].as_str().unwrap_or_default()
    }

    /// tabwire's more specific code, where it has one beside BrowserTap's; else the code.
    pub fn reason(&self) -> &str {
        self.envelope["diagnostics"]["reason"]
            .as_str()
            .unwrap_or_else(|| self.error_code())
    }

    /// The failure's message.
    pub fn message(&self) -> &str {
        self.envelope["error"]["message"]
            .as_str()
            .unwrap_or_default()
    }
}

pub async fn call_on(client: &Client, tool: &str, arguments: Value) -> Reply {
    read_reply(tool, call_tool(client, tool, arguments).await)
}

/// One tools/call, within PATIENCE; the raw result.
async fn call_tool(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    let arguments: Map<String, Value> = arguments
        .as_object()
        .cloned()
        .expect("arguments must be an object");
    tokio::time::timeout(
        PATIENCE,
        client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)),
    )
    .await
    .unwrap_or_else(|_| panic!("{tool} did not answer within {PATIENCE:?}"))
    .unwrap_or_else(|e| panic!("{tool}: MCP error {e}"))
}

/// A chrome-face reply: the text (the payload JSON, or a plain error message), the
/// payload parsed, images, and whether MCP flagged an error.
#[derive(Debug)]
pub struct ChromeReply {
    pub is_error: bool,
    pub text: String,
    pub payload: Value,
    pub images: Vec<(String, String)>,
}

pub async fn chrome_call(client: &Client, tool: &str, arguments: Value) -> ChromeReply {
    let result = call_tool(client, tool, arguments).await;
    let mut text = String::new();
    let mut images = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => text = t.text.clone(),
            ContentBlock::Image(image) => {
                images.push((image.data.clone(), image.mime_type.clone()))
            }
            _ => {}
        }
    }
    // Never base64 inside the text.
    assert!(
        !text.contains("iVBORw0KGgo"),
        "{tool}: base64 image data in the text"
    );
    ChromeReply {
        is_error: result.is_error == Some(true),
        payload: serde_json::from_str(&text).unwrap_or(Value::Null),
        text,
        images,
    }
}

/// Reads a tool's result as its envelope, checking what every reply must carry.
pub fn read_reply(tool: &str, result: CallToolResult) -> Reply {
    let mut envelope = Value::Null;
    let mut images = Vec::new();
    for block in &result.content {
        match block {
            ContentBlock::Text(text) => {
                envelope = serde_json::from_str(&text.text).expect("envelope is JSON")
            }
            ContentBlock::Image(image) => {
                images.push((image.data.clone(), image.mime_type.clone()))
            }
            _ => {}
        }
    }
    // BrowserTap's envelope, as the text and as structuredContent alike.
    assert_eq!(envelope["result_contract"], "btap.result.v1", "{envelope}");
    assert_eq!(envelope["version"], 1, "{envelope}");
    assert_eq!(
        result.structured_content.as_ref(),
        Some(&envelope),
        "structuredContent differs from the text"
    );
    assert_eq!(envelope["diagnostics"]["tool"], tool, "{envelope}");
    Reply {
        is_error: result.is_error == Some(true),
        envelope,
        images,
    }
}

/// Waits for a process (not necessarily our child) to exit, on the kernel's pidfd
/// readiness event rather than by polling. False if it is still running after PATIENCE.
pub async fn process_exits(pid: u32) -> bool {
    use std::os::fd::{FromRawFd, OwnedFd};
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return !process_alive(pid); // already gone (ESRCH)
    }
    // SAFETY: the syscall returned a fresh fd that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // SAFETY: the AsyncFd owns the fd, so it stays open for as long as it is registered.
    let registered = unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
    };
    let Ok(fd) = registered else {
        return false;
    };
    tokio::time::timeout(PATIENCE, fd.readable()).await.is_ok() || !process_alive(pid)
}

pub fn process_alive(pid: u32) -> bool {
    // A zombie still has a /proc entry; read its state.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .split(") ")
            .nth(1)
            .is_some_and(|rest| rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Browser processes whose parent is `pid` (what tabwire launched).
pub fn browser_children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let comm = stat
            .split_once(" (")
            .and_then(|(_, r)| r.rsplit_once(')'))
            .map(|(c, _)| c)
            .unwrap_or("");
        if fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid)
            && comm.contains("chrom")
            && fields[0] != "Z"
        {
            found.push(child);
        }
    }
    found
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Re-checks a condition the server exposes no event for (a second browser linking in
/// the background), until it holds or PATIENCE runs out. The check, not the pause, ends
/// the wait; the pause only keeps the loop from spinning.
pub async fn poll_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Reads the DevTools WebSocket URL a Chromium started with --remote-debugging-port
/// announces on stderr, then keeps draining stderr so it never blocks.
pub async fn devtools_endpoint(chromium: &mut Child) -> String {
    let mut lines = BufReader::new(chromium.stderr.take().expect("chromium stderr piped")).lines();
    let ws = tokio::time::timeout(PATIENCE, async {
        while let Some(line) = lines.next_line().await.expect("read chromium stderr") {
            if let Some(url) = line.strip_prefix("DevTools listening on ") {
                return url.trim().to_owned();
            }
        }
        panic!("chromium exited without listening");
    })
    .await
    .expect("chromium endpoint");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    ws
}

/// tabwire built for Windows, run under Wine (scripts/test-windows.sh sets these):
/// `TABWIRE_WINE_EXE` is the `tabwire.exe` to run, `WINEPREFIX` the prefix it runs in.
pub struct Wine {
    pub exe: PathBuf,
}

impl Wine {
    /// The Windows build (the tests that need it are ignored by default and run by
    /// scripts/test-windows.sh).
    pub fn get() -> Wine {
        let exe = std::env::var_os("TABWIRE_WINE_EXE")
            .map(PathBuf::from)
            .expect("TABWIRE_WINE_EXE names tabwire.exe (run scripts/test-windows.sh)");
        Wine { exe }
    }

    /// The Wine loader.
    pub fn loader() -> String {
        std::env::var("TABWIRE_WINE").unwrap_or_else(|_| "/usr/lib/wine/wine64".into())
    }

    /// A Windows program (or tabwire.exe) under Wine, its output not read.
    pub fn command(program: &Path) -> Command {
        let mut command = Command::new(Wine::loader());
        command
            .arg(program)
            .env("WINEDEBUG", "-all")
            .kill_on_drop(true);
        command
    }

    /// Runs `tabwire.exe args` to the end; its stdout (asserting it succeeded).
    pub async fn run(&self, args: &[&str]) -> String {
        let output = Wine::command(&self.exe)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .await
            .expect("run tabwire.exe");
        assert!(
            output.status.success(),
            "tabwire.exe {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("utf-8")
    }

    /// `tabwire.exe` as an MCP server over stdio, with an output dir in `work`.
    pub async fn stdio(&self, work: PathBuf, extra: &[&str]) -> Tabwire {
        std::fs::create_dir_all(work.join("out")).expect("output dir");
        let mut args = vec!["--output-dir".to_owned(), win_path(&work.join("out"))];
        args.extend(extra.iter().map(|s| s.to_string()));
        let mut child = Wine::command(&self.exe)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log_file(&work))
            .spawn()
            .expect("spawn tabwire.exe");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let client = tokio::time::timeout(PATIENCE, Listener::default().serve((stdout, stdin)))
            .await
            .expect("tabwire.exe did not initialize in time")
            .expect("MCP initialize over stdio with tabwire.exe");
        Tabwire {
            linked_browser: None,
            client,
            child,
            output_dir: work.join("out"),
            work,
        }
    }
}

/// A Linux path as a Windows program under Wine names it (Wine maps `Z:` to `/`).
pub fn win_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

/// A tool reply read as text, whatever its shape (a lean reply, an envelope, a payload):
/// whether MCP flagged an error, the text, and any images.
#[derive(Debug)]
pub struct TextReply {
    pub is_error: bool,
    pub text: String,
    pub images: usize,
    pub structured: bool,
}

pub async fn text_call(client: &Client, tool: &str, arguments: Value) -> TextReply {
    let result = call_tool(client, tool, arguments).await;
    let mut text = String::new();
    let mut images = 0;
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::Image(_) => images += 1,
            _ => {}
        }
    }
    TextReply {
        is_error: result.is_error == Some(true),
        text,
        images,
        structured: result.structured_content.is_some(),
    }
}

impl Tabwire {
    /// A tool call whose reply is read as text (lean replies).
    pub async fn text(&self, tool: &str, arguments: Value) -> TextReply {
        text_call(&self.client, tool, arguments).await
    }

    /// A lean read followed through every cursor it names: the outline lines of all its
    /// replies (header and cut notes left out) and the characters the agent read.
    pub async fn read_all(&self, tool: &str, arguments: Value) -> (String, usize) {
        let mut call = arguments;
        let (mut outline, mut chars) = (String::new(), 0);
        for _ in 0..1000 {
            let reply = self.text(tool, call.clone()).await;
            assert!(!reply.is_error, "{tool} {call}: {}", reply.text);
            chars += reply.text.chars().count();
            let mut cursor = None;
            for (i, line) in reply.text.lines().enumerate() {
                if i == 0 {
                    continue; // the header: title · url · tab
                }
                if let Some(rest) = line.strip_prefix("[cut: ") {
                    cursor = rest.split('"').nth(1).map(str::to_owned);
                    continue;
                }
                if line.starts_with('[')
                    && (line.ends_with("outside the viewport: scroll, or viewportOnly: false]")
                        || line.starts_with("[choose options with "))
                {
                    continue;
                }
                outline.push_str(line);
                outline.push('\n');
            }
            match cursor {
                Some(cursor) => call["cursor"] = json!(cursor),
                None => return (outline, chars),
            }
        }
        panic!("{tool} kept naming cursors");
    }
}
