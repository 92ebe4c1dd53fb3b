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
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};

use crate::browser::{Browser, lock};
use crate::engine::Engine;
use crate::error::{EngineError, Result};

/// How long a call waits for a browser to link before answering `extension_unavailable`.
pub const LINK_WAIT: Duration = Duration::from_secs(10);

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
}

impl Engine {
    /// Takes one linked browser's connection: reads its hello, then serves CDP over it
    /// until it closes. Returns the client id once the browser is usable.
    pub async fn attach_link<R, W>(self: &Arc<Self>, reader: R, writer: W) -> Result<String>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let mut reader = BufReader::new(reader);
        let mut first = String::new();
        tokio::time::timeout(Duration::from_secs(10), reader.read_line(&mut first))
            .await
            .map_err(|_| EngineError::Refused {
                code: "link_refused".into(),
                message: "no hello within 10 s".into(),
            })?
            .map_err(|e| EngineError::Io(format!("link: {e}")))?;
        let hello: LinkHello =
            serde_json::from_str(first.trim()).map_err(|e| EngineError::Refused {
                code: "link_refused".into(),
                message: format!("the first line is not a tabwire link hello: {e}"),
            })?;
        let valid_id = !hello.client_id.is_empty()
            && hello.client_id.len() <= 40
            && hello
                .client_id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-');
        if hello.tabwire_link != 1 || !valid_id {
            return Err(EngineError::Refused {
                code: "link_refused".into(),
                message: "unsupported link hello".into(),
            });
        }
        let conn = cdp::Connection::over_lines(reader, writer);
        let browser = Browser::start(
            conn.clone(),
            &hello.client_id,
            self.tab_counter(),
            None,
            None,
        )
        .await?;
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

    /// A linked browser by client id.
    pub(crate) async fn linked_browser(&self, client: &str) -> Result<Arc<Browser>> {
        let found = lock(&self.links.live)
            .iter()
            .find(|b| b.client_id == client && !b.conn.is_closed())
            .cloned();
        found.ok_or_else(|| {
            EngineError::ExtensionUnavailable(format!(
                "browser '{client}' is not linked now; call list_tabs for the linked ones"
            ))
        })
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
