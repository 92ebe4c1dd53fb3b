//! The extension link: the user's own browsers, reached through the tabwire extension.
//!
//! The extension's service worker talks to a native-messaging host (`tabwire
//! native-host`), which relays newline-delimited JSON to the process that owns the
//! engine. The first line is a hello naming the browser profile (`client_id`); after it,
//! every line is a CDP message. The extension emulates the browser-level `Target.*`
//! commands with `chrome.tabs` and carries page sessions through `chrome.debugger`, so
//! the engine drives a linked browser exactly as it drives one it launched.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::browser::{Browser, lock};
use crate::engine::Engine;
use crate::error::{EngineError, Result};

/// How long a call waits for a browser to link before answering `extension_unavailable`.
pub const LINK_WAIT: Duration = Duration::from_secs(10);
/// How long a new link connection may take to say hello.
const HELLO_WAIT: Duration = Duration::from_secs(10);

const NEXT_ACTION: &str = "load the tabwire extension (folder: `tabwire extension-path`) in the browser and register its native host with `tabwire install-native-host`; `tabwire doctor` checks both";

#[derive(Default)]
pub(crate) struct Links {
    live: Mutex<Vec<Arc<Browser>>>,
    changed: tokio::sync::Notify,
}

/// The hello line the extension sends first.
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
pub struct LinkHello {
    pub tabwire_link: u32,
    pub client_id: String,
    #[serde(default)]
    pub browser: String,
    #[serde(default)]
    pub extension_version: String,
    #[serde(default)]
    pub build_stamp: String,
    /// The pairing secret, added by the native host; never kept or reported.
    #[serde(default, skip_serializing)]
    pub pairing: String,
}

impl Engine {
    /// Takes one linked browser's connection: reads its hello, checks its pairing secret,
    /// then serves CDP over it until it closes. Returns the client id once the browser is
    /// usable. A refused connection is told why in one error line, then closed.
    pub async fn attach_link<R, W>(
        self: &Arc<Self>,
        reader: R,
        mut writer: W,
        pairing: &str,
    ) -> Result<String>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let mut reader = BufReader::new(reader);
        match read_hello(&mut reader, pairing).await {
            Ok(hello) => self.link_browser(reader, writer, hello).await,
            Err(error) => {
                let line =
                    json!({ "error": { "code": error.code(), "message": error.to_string() } });
                let _ = writer.write_all(format!("{line}\n").as_bytes()).await;
                let _ = writer.shutdown().await;
                Err(error)
            }
        }
    }

    async fn link_browser<R, W>(
        self: &Arc<Self>,
        reader: BufReader<R>,
        writer: W,
        hello: LinkHello,
    ) -> Result<String>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let conn = cdp::Connection::over_lines(reader, writer);
        let browser =
            Browser::start(conn.clone(), &hello.client_id, self.tab_ids(), None, None).await?;
        *lock(&browser.link_info) = serde_json::to_value(&hello).unwrap_or(Value::Null);
        {
            let mut live = lock(&self.links.live);
            live.retain(|b| b.client_id != hello.client_id && !b.conn.is_closed());
            live.push(browser.clone());
        }
        self.links.changed.notify_waiters();
        let engine = Arc::downgrade(self);
        let client = hello.client_id.clone();
        tokio::spawn(async move {
            conn.closed().await;
            if let Some(engine) = engine.upgrade() {
                lock(&engine.links.live).retain(|b| !(b.client_id == client && b.conn.is_closed()));
            }
        });
        Ok(hello.client_id)
    }

    /// The most recently linked browser, waiting up to LINK_WAIT for one.
    pub(crate) async fn wait_for_link(&self) -> Result<Arc<Browser>> {
        let deadline = tokio::time::Instant::now() + LINK_WAIT;
        loop {
            let changed = self.links.changed.notified();
            if let Some(browser) = lock(&self.links.live)
                .iter()
                .rev()
                .find(|b| !b.conn.is_closed())
                .cloned()
            {
                return Ok(browser);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return Err(EngineError::ExtensionUnavailable(format!(
                    "no browser is linked through the tabwire extension; {NEXT_ACTION}"
                )));
            }
        }
    }

    /// A linked browser by client id, waiting up to LINK_WAIT for it to (re)link.
    pub(crate) async fn linked_browser(&self, client: &str) -> Result<Arc<Browser>> {
        let deadline = tokio::time::Instant::now() + LINK_WAIT;
        loop {
            let changed = self.links.changed.notified();
            let found = lock(&self.links.live)
                .iter()
                .find(|b| b.client_id == client && !b.conn.is_closed())
                .cloned();
            if let Some(browser) = found {
                return Ok(browser);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return Err(EngineError::ExtensionUnavailable(format!(
                    "browser '{client}' is not linked now (its extension worker may be restarting); retry, or call list_tabs for the linked ones"
                )));
            }
        }
    }

    pub(crate) fn live_links(&self) -> Vec<Arc<Browser>> {
        lock(&self.links.live)
            .iter()
            .filter(|b| !b.conn.is_closed())
            .cloned()
            .collect()
    }

    /// Every linked browser, for status reports.
    pub fn linked_browsers(&self) -> Vec<Value> {
        lock(&self.links.live)
            .iter()
            .filter(|b| !b.conn.is_closed())
            .map(|b| json!({ "client_id": b.client_id, "hello": lock(&b.link_info).clone() }))
            .collect()
    }
}

/// Reads and checks the hello line a linked browser sends first.
async fn read_hello<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    pairing: &str,
) -> Result<LinkHello> {
    let refused = |message: &str| EngineError::Refused {
        code: "link_refused".into(),
        message: message.into(),
    };
    let mut first = String::new();
    tokio::time::timeout(HELLO_WAIT, reader.read_line(&mut first))
        .await
        .map_err(|_| refused("no hello within 10 s"))?
        .map_err(|e| EngineError::Io(format!("link: {e}")))?;
    let mut hello: LinkHello = serde_json::from_str(first.trim())
        .map_err(|e| refused(&format!("the first line is not a tabwire link hello: {e}")))?;
    if !same_secret(&hello.pairing, pairing) {
        return Err(refused(
            "the hello lacks this tabwire's pairing secret; links come only through the native host (`tabwire install-native-host`)",
        ));
    }
    // Checked; nothing after this needs it, and nothing should be able to print it.
    hello.pairing.clear();
    let valid_id = !hello.client_id.is_empty()
        && hello.client_id.len() <= 40
        && hello
            .client_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-');
    if hello.tabwire_link != 1 || !valid_id {
        return Err(refused("unsupported link hello"));
    }
    Ok(hello)
}

/// Compares in time independent of where the strings differ.
fn same_secret(given: &str, expected: &str) -> bool {
    given.len() == expected.len()
        && !expected.is_empty()
        && given
            .bytes()
            .zip(expected.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// How long to wait for the extension's worker to show up in a browser we launched.
const WORKER_WAIT: Duration = Duration::from_secs(10);

impl Engine {
    /// Calls a browser API by name (`bookmarks.getTree`, …) through the tabwire extension:
    /// over the link for a linked browser, or by evaluating in the extension's worker for
    /// a browser we launched with it loaded. Both reach the same function in api.js.
    pub async fn extension_call(&self, name: &str, args: Value) -> Result<Value> {
        let browser = self.browser().await?;
        self.extension_call_on(&browser, name, args).await
    }

    /// The same, on one given browser.
    pub(crate) async fn extension_call_on(
        &self,
        browser: &Browser,
        name: &str,
        args: Value,
    ) -> Result<Value> {
        if browser.is_linked() {
            let reply = browser
                .conn
                .call(
                    None,
                    "Tabwire.call",
                    json!({ "name": name, "args": args }),
                    Duration::from_secs(30),
                )
                .await
                .map_err(api_error)?;
            return Ok(reply["result"].clone());
        }
        let session = self.extension_worker(browser).await?;
        let expression = format!("self.tabwireCall({}, {})", json!(name), args);
        let reply = browser
            .conn
            .call(
                Some(&session),
                "Runtime.evaluate",
                json!({ "expression": expression, "awaitPromise": true, "returnByValue": true }),
                Duration::from_secs(30),
            )
            .await?;
        if let Some(details) = reply.get("exceptionDetails") {
            return Err(EngineError::page(
                "browser_api_error",
                crate::page::exception_text(details),
                json!({ "api": name }),
            ));
        }
        Ok(reply["result"]["value"].clone())
    }

    /// A debugger session on our extension's service worker (which also keeps it awake).
    async fn extension_worker(&self, browser: &Browser) -> Result<String> {
        if let Some(session) = lock(&browser.extension_session).clone() {
            return Ok(session);
        }
        let Some(id) = &self.config.extension_id else {
            return Err(EngineError::ExtensionUnavailable(
                "the tabwire extension is not configured for this browser".into(),
            ));
        };
        let prefix = format!("chrome-extension://{id}/");
        let mut events = browser.conn.subscribe();
        let find = |targets: &Value| {
            targets["targetInfos"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| {
                    t["type"] == "service_worker"
                        && t["url"].as_str().is_some_and(|u| u.starts_with(&prefix))
                })
                .and_then(|t| t["targetId"].as_str().map(str::to_owned))
        };
        let targets = browser
            .conn
            .call(
                None,
                "Target.getTargets",
                json!({}),
                crate::browser::HOUSEKEEPING,
            )
            .await?;
        let mut target = find(&targets);
        let deadline = tokio::time::Instant::now() + WORKER_WAIT;
        while target.is_none() {
            let event = match tokio::time::timeout_at(deadline, events.recv()).await {
                Ok(Ok(event)) => event,
                Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => continue,
                _ => {
                    return Err(EngineError::ExtensionUnavailable(format!(
                        "the tabwire extension is not running in this browser (no worker at {prefix}); {NEXT_ACTION}"
                    )));
                }
            };
            if event.method == "Target.targetCreated" {
                target = find(&json!({ "targetInfos": [event.params["targetInfo"]] }));
            }
        }
        let attached = browser
            .conn
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target, "flatten": true }),
                crate::browser::HOUSEKEEPING,
            )
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        // A worker caught while starting waits for its debugger; let it run.
        browser
            .conn
            .call(
                Some(&session),
                "Runtime.runIfWaitingForDebugger",
                json!({}),
                crate::browser::HOUSEKEEPING,
            )
            .await?;
        // A worker that has just started may not have run its modules yet.
        let ready = tokio::time::Instant::now() + WORKER_WAIT;
        loop {
            let probe = browser
                .conn
                .call(
                    Some(&session),
                    "Runtime.evaluate",
                    json!({ "expression": "typeof self.tabwireCall", "returnByValue": true }),
                    crate::browser::HOUSEKEEPING,
                )
                .await?;
            if probe["result"]["value"] == "function" {
                break;
            }
            if tokio::time::Instant::now() > ready {
                return Err(EngineError::ExtensionUnavailable(
                    "the tabwire extension's worker did not finish starting".into(),
                ));
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        *lock(&browser.extension_session) = Some(session.clone());
        Ok(session)
    }
}

fn api_error(error: cdp::CdpError) -> EngineError {
    match error {
        cdp::CdpError::Protocol { message, .. } => {
            EngineError::page("browser_api_error", message, Value::Null)
        }
        other => other.into(),
    }
}

impl Engine {
    /// What the running extension reports of itself, compared with the sources this binary
    /// carries. Never launches a browser: without one, the verdict is unverifiable.
    pub async fn extension_status(&self) -> Value {
        let expected = self.config.extension_stamp.clone();
        let running = match self.current_browser().await {
            Some(browser) if !lock(&browser.link_info).is_null() => {
                let hello = lock(&browser.link_info).clone();
                Some((
                    hello["extension_version"].clone(),
                    hello["build_stamp"].as_str().map(str::to_owned),
                ))
            }
            Some(_) => match tokio::time::timeout(
                Duration::from_secs(3),
                self.extension_call("runtime.self", json!({})),
            )
            .await
            {
                Ok(Ok(me)) => Some((
                    me["version"].clone(),
                    me["build_stamp"].as_str().map(str::to_owned),
                )),
                _ => None,
            },
            None => None,
        };
        let (version, stamp) = running.unwrap_or((Value::Null, None));
        // The folder the browser loads the extension from; another tabwire build may have
        // written it since this server started.
        let on_disk = self
            .config
            .extension_dir
            .as_ref()
            .and_then(|dir| std::fs::read_to_string(dir.join("stamp.js")).ok())
            .and_then(|text| stamp_in(&text));
        let verdict = build_verdict(stamp.as_deref(), expected.as_deref(), on_disk.as_deref());
        let next_action = match verdict {
            "stale_worker" => {
                "reload the tabwire extension (chrome://extensions, Reload) so it runs the files this server wrote"
            }
            "stale_server" => {
                "restart tabwire: the extension runs files another tabwire build wrote, not this server's"
            }
            "stamp_not_regenerated" => {
                "load the folder `tabwire extension-path` prints, not the repository's extension/"
            }
            _ => "",
        };
        json!({
            "extension_version": version,
            "extension_build_stamp": stamp,
            "expected_extension_build_stamp": expected,
            "extension_folder_build_stamp": on_disk,
            "extension_build_verdict": verdict,
            "reload_extension_required": verdict == "stale_worker",
            "restart_server_required": verdict == "stale_server",
            "extension_next_action": next_action,
            "extension_status_available": stamp.is_some(),
        })
    }
}

/// Whether the running extension, this server and the extension folder agree.
/// `stale_worker`: the folder holds this server's build but the worker runs an older
/// load of it (a Reload fixes it). `stale_server`: the worker runs what the folder holds,
/// written by another tabwire build than this server (a restart fixes it).
fn build_verdict(
    running: Option<&str>,
    server: Option<&str>,
    folder: Option<&str>,
) -> &'static str {
    match (running, server) {
        (Some("dev"), _) => "stamp_not_regenerated",
        (Some(running), Some(server)) if running == server => "matches_tree",
        (Some(running), Some(_)) if folder == Some(running) => "stale_server",
        (Some(_), Some(server)) if folder == Some(server) || folder.is_none() => "stale_worker",
        _ => "unverifiable",
    }
}

/// The stamp in stamp.js (`export const BUILD_STAMP = '…';`).
fn stamp_in(text: &str) -> Option<String> {
    let start = text.find("BUILD_STAMP = '")? + "BUILD_STAMP = '".len();
    let end = start + text[start..].find('\'')?;
    Some(text[start..end].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_names_who_is_stale() {
        let v = |r, s, f| build_verdict(r, s, f);
        assert_eq!(v(Some("a"), Some("a"), Some("a")), "matches_tree");
        assert_eq!(v(Some("old"), Some("new"), Some("new")), "stale_worker");
        assert_eq!(v(Some("old"), Some("new"), None), "stale_worker");
        assert_eq!(v(Some("new"), Some("old"), Some("new")), "stale_server");
        assert_eq!(v(Some("x"), Some("y"), Some("z")), "unverifiable");
        assert_eq!(v(None, Some("y"), Some("y")), "unverifiable");
        assert_eq!(
            v(Some("dev"), Some("y"), Some("y")),
            "stamp_not_regenerated"
        );
    }

    #[test]
    fn the_stamp_is_read_from_stamp_js() {
        let text = "// comment\nexport const BUILD_STAMP = '0123abcd4567';\n";
        assert_eq!(stamp_in(text).as_deref(), Some("0123abcd4567"));
        assert_eq!(stamp_in("nothing here"), None);
    }
}
