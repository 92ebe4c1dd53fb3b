//! The extension link: the user's own browsers, reached through the tabwire extension.
//!
//! The extension's service worker talks to a native-messaging host (`tabwire
//! native-host`), which relays newline-delimited JSON to the process that owns the
//! engine. The first line is a hello naming the browser profile (`client_id`); after it,
//! every line is a CDP message. The extension emulates the browser-level `Target.*`
//! commands with `chrome.tabs` and carries page sessions through `chrome.debugger`, so
//! the engine drives a linked browser exactly as it drives one it launched.

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use super::{Browser, Browsers};
use crate::error::{EngineError, ErrorCode, Result};

/// How long a call waits for a browser to link before answering `extension_unavailable`.
pub const LINK_WAIT: Duration = Duration::from_secs(10);
/// How long after a link dropped its browser counts as restarting its worker.
const WORKER_RESTART_GRACE_MS: u64 = 60_000;
/// How long a new link connection may take to say hello.
const HELLO_WAIT: Duration = Duration::from_secs(10);

pub(super) const NEXT_ACTION: &str = "load the tabwire extension (folder: `tabwire extension-path`) in the browser and register its native host with `tabwire install-native-host`; `tabwire doctor` checks both";

/// The browsers linked now, and those whose link dropped and has not come back yet.
#[derive(Default)]
pub(super) struct Links {
    live: Mutex<Vec<Arc<Browser>>>,
    /// Client id → when its link dropped (ms since the epoch). The extension's worker
    /// relinks by itself (its alarm wakes it within seconds); until it has, calls for
    /// that browser wait and status reports say since when.
    dropped: Mutex<std::collections::BTreeMap<String, u64>>,
    changed: tokio::sync::Notify,
}

impl Links {
    /// The live links, most recently linked last.
    pub(super) fn live(&self) -> Vec<Arc<Browser>> {
        self.live
            .lock()
            .iter()
            .filter(|b| !b.conn.is_closed())
            .cloned()
            .collect()
    }
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

/// Where the pairing secret a linked browser's hello must carry is kept (`link-secret`
/// in the config dir: `~/.config/tabwire` on Linux, `%APPDATA%\tabwire` on Windows).
pub fn link_secret_path() -> std::path::PathBuf {
    platform::dirs::config_dir().join("link-secret")
}

impl Browsers {
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
                let line = json!({ "error": { "code": error.code().as_str(), "message": error.to_string() } });
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
            Browser::start(conn.clone(), &hello.client_id, self.setup(None, None)).await?;
        let mut info = serde_json::to_value(&hello).unwrap_or(Value::Null);
        info["linked_at_ms"] = json!(crate::ids::now_ms());
        *browser.link_info.lock() = info;
        {
            let mut live = self.links.live.lock();
            live.retain(|b| b.client_id != hello.client_id && !b.conn.is_closed());
            live.push(browser.clone());
        }
        self.links.dropped.lock().remove(&hello.client_id);
        self.links.changed.notify_waiters();
        self.connected(&browser);
        let browsers = Arc::downgrade(self);
        let client = hello.client_id.clone();
        tokio::spawn(async move {
            conn.closed().await;
            if let Some(browsers) = browsers.upgrade() {
                let mut live = browsers.links.live.lock();
                live.retain(|b| !(b.client_id == client && b.conn.is_closed()));
                if !live.iter().any(|b| b.client_id == client) {
                    tracing::info!(client = %client, "browser link dropped; waiting for it to relink");
                    browsers
                        .links
                        .dropped
                        .lock()
                        .insert(client, crate::ids::now_ms());
                }
            }
        });
        Ok(hello.client_id)
    }

    /// The most recently linked browser, waiting up to LINK_WAIT for one.
    pub(crate) async fn wait_for_link(&self) -> Result<Arc<Browser>> {
        let deadline = tokio::time::Instant::now() + LINK_WAIT;
        loop {
            let changed = self.links.changed.notified();
            if let Some(browser) = self.links.live().pop() {
                return Ok(browser);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return Err(self.no_link());
            }
        }
    }

    /// Why no browser is linked: one whose worker stopped and has not come back yet, or
    /// none ever linked.
    fn no_link(&self) -> EngineError {
        let dropped = self.links.dropped.lock();
        let message = match dropped.iter().max_by_key(|(_, since)| **since) {
            Some((client, since)) => format!(
                "browser '{client}' lost its link {} s ago (its extension worker stopped) and has not relinked within {} s; the extension's alarm wakes its worker every few seconds (every 30 s when installed packed); retry shortly, or open the browser to wake it",
                crate::ids::now_ms().saturating_sub(*since) / 1000,
                LINK_WAIT.as_secs()
            ),
            None => format!("no browser is linked through the tabwire extension; {NEXT_ACTION}"),
        };
        EngineError::ExtensionUnavailable(message)
    }

    /// A linked browser by client id, waiting up to LINK_WAIT for it to (re)link.
    pub(crate) async fn linked_browser(&self, client: &str) -> Result<Arc<Browser>> {
        let deadline = tokio::time::Instant::now() + LINK_WAIT;
        loop {
            let changed = self.links.changed.notified();
            let found = self
                .links
                .live
                .lock()
                .iter()
                .find(|b| b.client_id == client && !b.conn.is_closed())
                .cloned();
            if let Some(browser) = found {
                return Ok(browser);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return Err(EngineError::ExtensionUnavailable(format!(
                    "browser '{client}' is not linked now (its extension worker may be restarting); retry shortly"
                )));
            }
        }
    }

    /// Browsers whose link dropped within the last minute and has not come back. (A link
    /// gone longer is a browser closed, not a worker restarting.)
    pub fn dropped_links(&self) -> Vec<DroppedLink> {
        let now = crate::ids::now_ms();
        self.links
            .dropped
            .lock()
            .iter()
            .filter(|(_, since)| now.saturating_sub(**since) < WORKER_RESTART_GRACE_MS)
            .map(|(client, since)| DroppedLink {
                client_id: client.clone(),
                waiting_for_worker_since_ms: *since,
                waiting_ms: now.saturating_sub(*since),
            })
            .collect()
    }

    /// Every linked browser, for status reports.
    pub fn linked_browsers(&self) -> Vec<LinkedBrowser> {
        self.links
            .live()
            .iter()
            .map(|b| LinkedBrowser {
                client_id: b.client_id.clone(),
                hello: b.link_info.lock().clone(),
            })
            .collect()
    }
}

/// A browser whose link dropped lately and has not come back: most likely its extension's
/// worker restarting, which relinks by itself.
#[derive(Debug, Clone, Serialize)]
pub struct DroppedLink {
    pub client_id: String,
    /// When the link dropped (ms since the epoch).
    pub waiting_for_worker_since_ms: u64,
    pub waiting_ms: u64,
}

/// A linked browser: its client id, and what its extension said of itself when it linked
/// (its hello, as it sent it).
#[derive(Debug, Clone, Serialize)]
pub struct LinkedBrowser {
    pub client_id: String,
    pub hello: Value,
}

/// Reads and checks the hello line a linked browser sends first.
async fn read_hello<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    pairing: &str,
) -> Result<LinkHello> {
    let refused = |message: &str| EngineError::refused(ErrorCode::LinkRefused, message);
    let mut first = String::new();
    tokio::time::timeout(HELLO_WAIT, reader.read_line(&mut first))
        .await
        .map_err(|_| refused("no hello within 10 s"))?
        .map_err(|e| EngineError::io("link", e))?;
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
    use subtle::ConstantTimeEq;
    !expected.is_empty()
        && given.len() == expected.len()
        && bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
}
