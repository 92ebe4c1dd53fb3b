//! The three servers and how each one's tools do the same job.
//!
//! Every server is started the way its own documentation starts it, headless, on Debian's
//! Chromium, with a throw-away profile, and driven over stdio by the same rmcp client.
//! Element handles come from each server's own snapshot (Playwright MCP `ref`s, Chrome
//! DevTools MCP `uid`s, tabwire locators), found by role and name as an agent would.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, bail};
use rmcp::ServiceExt;
use rmcp::service::{Peer, RoleClient, RunningService};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::mcp::{Reply, call_ok, clip};

pub const CHROMIUM: &str = "/usr/bin/chromium";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Tabwire,
    Playwright,
    DevTools,
    /// tabwire serving the Chrome MCP Server's tools (`--face chrome`).
    TabwireChrome,
}

/// tabwire and its two peers: the servers the report compares.
pub const KINDS: [Kind; 3] = [Kind::Tabwire, Kind::Playwright, Kind::DevTools];
/// Every server a run measures: the three, and tabwire's chrome face.
pub const RUN_KINDS: [Kind; 4] = [
    Kind::Tabwire,
    Kind::Playwright,
    Kind::DevTools,
    Kind::TabwireChrome,
];

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::Tabwire => "tabwire",
            Kind::Playwright => "Playwright MCP",
            Kind::DevTools => "Chrome DevTools MCP",
            Kind::TabwireChrome => "tabwire --face chrome",
        }
    }
}

/// Where things are: the tabwire binary, the peers' scratch install, a scratch dir.
#[derive(Clone)]
pub struct Env {
    pub tabwire: PathBuf,
    pub peers: PathBuf,
    pub scratch: PathBuf,
}

impl Env {
    pub fn playwright_cli(&self) -> PathBuf {
        self.peers.join("node_modules/@playwright/mcp/cli.js")
    }

    pub fn devtools_cli(&self) -> PathBuf {
        self.peers
            .join("node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js")
    }

    /// The exact command line of each server, for the report.
    pub fn command_line(&self, kind: Kind, concurrent: bool) -> Vec<String> {
        let s = |x: &str| x.to_owned();
        let p = |x: &Path| x.display().to_string();
        let out = self.scratch.join("out");
        match kind {
            Kind::Tabwire | Kind::TabwireChrome => {
                let mut args = vec![
                    p(&self.tabwire),
                    s("--isolated"),
                    s("--headless"),
                    format!("--browser-path={CHROMIUM}"),
                    format!("--output-dir={}", out.display()),
                ];
                if kind == Kind::TabwireChrome {
                    args.extend([s("--face"), s("chrome")]);
                }
                if concurrent {
                    args.extend([s("--http"), s("127.0.0.1:0")]);
                }
                args
            }
            Kind::Playwright => vec![
                s("node"),
                p(&self.playwright_cli()),
                s("--headless"),
                format!("--executable-path={CHROMIUM}"),
                s("--no-sandbox"),
                s("--isolated"),
                format!("--output-dir={}", out.display()),
            ],
            Kind::DevTools => {
                let mut args = vec![
                    s("node"),
                    p(&self.devtools_cli()),
                    s("--headless"),
                    s("--isolated"),
                    format!("--executablePath={CHROMIUM}"),
                    s("--chromeArg=--no-sandbox"),
                    s("--no-usage-statistics"),
                    s("--no-performance-crux"),
                ];
                // Page-id routing (the server's default) is what lets several agents
                // address their own pages; one agent does not need it.
                if !concurrent {
                    args.push(s("--no-page-id-routing"));
                }
                args
            }
        }
    }
}

/// A running server with our client attached.
pub struct Server {
    pub kind: Kind,
    /// The chrome face's tab, navigated in place.
    pub chrome_tab: parking_lot::Mutex<Option<u64>>,
    pub client: Option<RunningService<RoleClient, ()>>,
    pub child: tokio::process::Child,
    pub pid: u32,
    /// For HTTP: the MCP endpoint.
    pub http_url: Option<String>,
}

impl Server {
    /// Spawns the server and, over stdio, completes the MCP handshake.
    pub async fn start(env: &Env, kind: Kind, concurrent: bool) -> anyhow::Result<Server> {
        let line = env.command_line(kind, concurrent);
        let cwd = env
            .scratch
            .join(format!("cwd-{}", kind.label().replace(' ', "-")));
        std::fs::create_dir_all(&cwd)?;
        let http = matches!(kind, Kind::Tabwire | Kind::TabwireChrome) && concurrent;
        let mut child = tokio::process::Command::new(&line[0])
            .args(&line[1..])
            .current_dir(&cwd)
            .env("CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS", "1")
            .stdin(if http { Stdio::null() } else { Stdio::piped() })
            .stdout(if http { Stdio::null() } else { Stdio::piped() })
            .stderr(if http { Stdio::piped() } else { Stdio::null() })
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", line.join(" ")))?;
        let pid = child.id().context("server pid")?;
        if http {
            let mut lines = BufReader::new(child.stderr.take().context("stderr")?).lines();
            let url = tokio::time::timeout(std::time::Duration::from_secs(30), async {
                while let Some(line) = lines.next_line().await? {
                    if let Some(url) = line.strip_prefix("tabwire: listening on ") {
                        return Ok(url.trim().to_owned());
                    }
                }
                bail!("tabwire --http exited without listening")
            })
            .await
            .context("tabwire --http did not announce its address")??;
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return Ok(Server {
                kind,
                chrome_tab: parking_lot::Mutex::new(None),
                client: None,
                child,
                pid,
                http_url: Some(url),
            });
        }
        let stdout = child.stdout.take().context("stdout")?;
        let stdin = child.stdin.take().context("stdin")?;
        let client = ().serve((stdout, stdin)).await.context("MCP initialize")?;
        Ok(Server {
            kind,
            chrome_tab: parking_lot::Mutex::new(None),
            client: Some(client),
            child,
            pid,
            http_url: None,
        })
    }

    pub fn peer(&self) -> &Peer<RoleClient> {
        self.client.as_ref().expect("a stdio client")
    }

    /// A new client session (HTTP servers only).
    pub async fn http_client(&self) -> anyhow::Result<RunningService<RoleClient, ()>> {
        let url = self.http_url.clone().context("not an HTTP server")?;
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url);
        Ok(().serve(transport).await?)
    }

    /// Closes the client (stdin) and ends the server's process tree.
    pub async fn stop(mut self) {
        if let Some(client) = self.client.take() {
            let _ = client.cancel().await;
        }
        crate::procs::end_tree(&mut self.child).await;
    }

    pub async fn navigate(&self, url: &str) -> anyhow::Result<Reply> {
        let peer = self.peer();
        match self.kind {
            Kind::Tabwire => call_ok(peer, "open_url", json!({ "url": url })).await,
            Kind::Playwright => call_ok(peer, "browser_navigate", json!({ "url": url })).await,
            Kind::DevTools => {
                call_ok(peer, "navigate_page", json!({ "type": "url", "url": url })).await
            }
            // In the tab the session has (the original would open a tab for each URL).
            Kind::TabwireChrome => {
                let tab = *self.chrome_tab.lock();
                let mut args = json!({ "url": url });
                if let Some(tab) = tab {
                    args["tabId"] = json!(tab);
                }
                let reply = call_ok(peer, "chrome_navigate", args).await?;
                if let Some(id) = serde_json::from_str::<Value>(&reply.text)
                    .ok()
                    .and_then(|v| v["tabId"].as_u64())
                {
                    *self.chrome_tab.lock() = Some(id);
                }
                Ok(reply)
            }
        }
    }

    /// The server's page snapshot, as an agent would ask for it (default arguments).
    pub async fn snapshot(&self) -> anyhow::Result<Reply> {
        let peer = self.peer();
        match self.kind {
            Kind::Tabwire => call_ok(peer, "scan_page", json!({})).await,
            Kind::Playwright => call_ok(peer, "browser_snapshot", json!({})).await,
            Kind::DevTools => call_ok(peer, "take_snapshot", json!({})).await,
            Kind::TabwireChrome => call_ok(peer, "chrome_read_page", json!({})).await,
        }
    }

    /// The whole page's snapshot as each server gives it: the chrome face's outline of
    /// the whole page, the others' default (which is already the whole page).
    pub async fn snapshot_whole(&self) -> anyhow::Result<Reply> {
        match self.kind {
            Kind::TabwireChrome => self.snapshot_complete().await,
            _ => self.snapshot().await,
        }
    }

    /// tabwire's whole snapshot: no collapsed lists, the largest caps it takes.
    pub async fn snapshot_complete(&self) -> anyhow::Result<Reply> {
        if self.kind == Kind::TabwireChrome {
            return call_ok(
                self.peer(),
                "chrome_read_page",
                json!({ "viewportOnly": false }),
            )
            .await;
        }
        call_ok(
            self.peer(),
            "scan_page",
            json!({ "cutlist": false, "maxchars": 2_000_000, "max_targets": 200 }),
        )
        .await
    }

    pub async fn click(&self, handle: &Handle) -> anyhow::Result<Reply> {
        let peer = self.peer();
        match (self.kind, handle) {
            (Kind::Tabwire, Handle::Locator(l)) => {
                call_ok(peer, "page_click", json!({ "selector": l })).await
            }
            (Kind::Playwright, Handle::Ref(r, name)) => {
                call_ok(
                    peer,
                    "browser_click",
                    json!({ "target": r, "element": name }),
                )
                .await
            }
            (Kind::DevTools, Handle::Ref(uid, _)) => {
                call_ok(peer, "click", json!({ "uid": uid })).await
            }
            (Kind::TabwireChrome, Handle::Ref(r, _)) => {
                call_ok(peer, "chrome_click_element", json!({ "ref": r })).await
            }
            _ => bail!("wrong handle kind"),
        }
    }

    pub async fn type_text(&self, handle: &Handle, text: &str) -> anyhow::Result<Reply> {
        let peer = self.peer();
        match (self.kind, handle) {
            (Kind::Tabwire, Handle::Locator(l)) => {
                call_ok(peer, "page_type", json!({ "selector": l, "text": text })).await
            }
            (Kind::Playwright, Handle::Ref(r, name)) => {
                call_ok(
                    peer,
                    "browser_type",
                    json!({ "target": r, "element": name, "text": text }),
                )
                .await
            }
            (Kind::DevTools, Handle::Ref(uid, _)) => {
                call_ok(peer, "fill", json!({ "uid": uid, "value": text })).await
            }
            (Kind::TabwireChrome, Handle::Ref(r, _)) => {
                call_ok(
                    peer,
                    "chrome_fill_or_select",
                    json!({ "ref": r, "value": text }),
                )
                .await
            }
            _ => bail!("wrong handle kind"),
        }
    }

    pub async fn screenshot(&self) -> anyhow::Result<Reply> {
        let peer = self.peer();
        match self.kind {
            Kind::Tabwire => call_ok(peer, "capture_page_screenshot", json!({})).await,
            Kind::Playwright => {
                call_ok(peer, "browser_take_screenshot", json!({ "scale": "css" })).await
            }
            Kind::DevTools => call_ok(peer, "take_screenshot", json!({})).await,
            Kind::TabwireChrome => {
                call_ok(
                    peer,
                    "chrome_screenshot",
                    json!({ "storeBase64": true, "savePng": false, "fullPage": false }),
                )
                .await
            }
        }
    }

    /// Evaluates a JS expression in the page; returns the reply and the value as text.
    pub async fn evaluate(&self, expression: &str) -> anyhow::Result<(Reply, String)> {
        let peer = self.peer();
        let function = format!("() => ({expression})");
        let reply = match self.kind {
            Kind::Tabwire => call_ok(peer, "execute_js", json!({ "script": expression })).await?,
            Kind::Playwright => {
                call_ok(peer, "browser_evaluate", json!({ "function": function })).await?
            }
            Kind::DevTools => {
                call_ok(peer, "evaluate_script", json!({ "function": function })).await?
            }
            Kind::TabwireChrome => {
                call_ok(
                    peer,
                    "chrome_javascript",
                    json!({ "code": format!("return ({expression})") }),
                )
                .await?
            }
        };
        let value = evaluated_value(self.kind, &reply.text);
        Ok((reply, value))
    }

    /// The handle of the control with this role and name in the server's snapshot.
    pub fn find(&self, snapshot: &Reply, role: &str, name: &str) -> anyhow::Result<Handle> {
        find_handle(self.kind, &snapshot.text, role, name).with_context(|| {
            format!(
                "{}: no {role} {name:?} in the snapshot: {}",
                self.kind.label(),
                clip(&snapshot.text, 600)
            )
        })
    }
}

/// How a server names an element: a snapshot ref/uid (with a description), or a locator.
#[derive(Clone, Debug)]
pub enum Handle {
    Ref(String, String),
    Locator(Value),
}

pub fn find_handle(kind: Kind, text: &str, role: &str, name: &str) -> Option<Handle> {
    let wanted = format!("{role} \"{name}\"");
    match kind {
        Kind::Tabwire => {
            let envelope: Value = serde_json::from_str(text).ok()?;
            let observation = &envelope["data"]["observation"];
            ["targets", "more_targets"]
                .iter()
                .filter_map(|list| observation[*list].as_array())
                .flatten()
                .find(|t| t["computed_role"] == role && t["name"] == name)
                .map(|t| Handle::Locator(t["locator"].clone()))
        }
        // `- button "Go" [ref=ref_2] (x,y)` inside the payload's pageContent
        Kind::TabwireChrome => {
            let payload: Value = serde_json::from_str(text).ok()?;
            let outline = payload["pageContent"].as_str()?;
            outline
                .lines()
                .find(|l| l.contains(&wanted))
                .and_then(|line| {
                    let start = line.find("[ref=")? + 5;
                    let end = start + line[start..].find(']')?;
                    Some(Handle::Ref(
                        line[start..end].to_owned(),
                        format!("{role} {name}"),
                    ))
                })
        }
        // `- button "Go" [ref=e2]`
        Kind::Playwright => text.lines().find(|l| l.contains(&wanted)).and_then(|line| {
            let start = line.find("[ref=")? + 5;
            let end = start + line[start..].find(']')?;
            Some(Handle::Ref(
                line[start..end].to_owned(),
                format!("{role} {name}"),
            ))
        }),
        // `uid=1_2 button "Go"`
        Kind::DevTools => text.lines().find(|l| l.contains(&wanted)).and_then(|line| {
            let start = line.find("uid=")? + 4;
            let end = start + line[start..].find(' ')?;
            Some(Handle::Ref(
                line[start..end].to_owned(),
                format!("{role} {name}"),
            ))
        }),
    }
}

/// The value an evaluation returned, as text.
pub fn evaluated_value(kind: Kind, text: &str) -> String {
    match kind {
        Kind::Tabwire => serde_json::from_str::<Value>(text)
            .map(|e| match &e["data"]["js_return"] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .unwrap_or_default(),
        Kind::TabwireChrome => serde_json::from_str::<Value>(text)
            .map(|e| e["result"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_default(),
        // "### Result\n<value>\n### Ran Playwright code…"
        Kind::Playwright => text
            .split("### Result\n")
            .nth(1)
            .and_then(|r| r.lines().next())
            .unwrap_or("")
            .trim()
            .trim_matches('"')
            .to_owned(),
        // "Script ran on page and returned:\n```json\n<value>\n```"
        Kind::DevTools => text
            .split("```json\n")
            .nth(1)
            .and_then(|r| r.split("\n```").next())
            .unwrap_or("")
            .trim()
            .trim_matches('"')
            .to_owned(),
    }
}

/// The page id a Chrome DevTools MCP page list marks as selected (`2: url [selected]`).
pub fn selected_page_id(text: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.trim_end().ends_with("[selected]"))
        .and_then(|l| l.split(':').next())
        .and_then(|n| n.trim().parse().ok())
}

/// `tools/list`: (tool count, bytes of the tool list as JSON).
pub async fn tools_list(peer: &Peer<RoleClient>) -> anyhow::Result<(usize, String)> {
    let tools = peer.list_all_tools().await?;
    Ok((tools.len(), serde_json::to_string(&tools)?))
}
