//! Browser APIs (bookmarks, history, downloads, content settings, extensions) called
//! by name through the tabwire extension: over the link for a linked browser, or by
//! evaluating in the extension's service worker for a browser tabwire launched with the
//! extension loaded. Both reach the same function in the extension's `api.js`. Also the
//! report of which extension build is running.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Browser, Browsers, HOUSEKEEPING};
use crate::error::{EngineError, ErrorCode, Result};

const NEXT_ACTION: &str = super::link::NEXT_ACTION;

/// How long to wait for the extension's worker to show up in a browser we launched.
const WORKER_WAIT: Duration = Duration::from_secs(10);

impl Browser {
    /// Calls a browser API by name (`bookmarks.getTree`, …) through the tabwire extension.
    pub async fn extension_call(&self, name: &str, args: Value) -> Result<Value> {
        if self.is_linked() {
            let reply = self
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
        let session = self.extension_worker().await?;
        let expression = format!("self.tabwireCall({}, {})", json!(name), args);
        let reply = self
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
                ErrorCode::BrowserApiError,
                super::exception_text(details),
                json!({ "api": name }),
            ));
        }
        Ok(reply["result"]["value"].clone())
    }

    /// A debugger session on our extension's service worker (which also keeps it awake).
    async fn extension_worker(&self) -> Result<String> {
        if let Some(session) = self.extension_session.lock().clone() {
            return Ok(session);
        }
        let Some(id) = &self.extension_id else {
            return Err(EngineError::ExtensionUnavailable(
                "the tabwire extension is not configured for this browser".into(),
            ));
        };
        let prefix = format!("chrome-extension://{id}/");
        let mut events = self.conn.subscribe();
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
        let targets = self
            .conn
            .call(None, "Target.getTargets", json!({}), HOUSEKEEPING)
            .await?;
        let mut target = find(&targets);
        // A browser reached over a CDP endpoint was not started with the extension: no
        // worker will come.
        if target.is_none() && self.process.is_none() {
            return Err(EngineError::page(
                ErrorCode::Unsupported,
                "this needs the tabwire extension's browser APIs, which a browser reached over --cdp-endpoint lacks; the browser tabwire launches (the default) and the extension link (--extension) have them",
                json!({ "api": "extension" }),
            ));
        }
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
        let attached = self
            .conn
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target, "flatten": true }),
                HOUSEKEEPING,
            )
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        // A worker caught while starting waits for its debugger; let it run.
        self.conn
            .call(
                Some(&session),
                "Runtime.runIfWaitingForDebugger",
                json!({}),
                HOUSEKEEPING,
            )
            .await?;
        // A worker that has just started may not have run its modules yet.
        let ready = tokio::time::Instant::now() + WORKER_WAIT;
        loop {
            let probe = self
                .conn
                .call(
                    Some(&session),
                    "Runtime.evaluate",
                    json!({ "expression": "typeof self.tabwireCall", "returnByValue": true }),
                    HOUSEKEEPING,
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
        *self.extension_session.lock() = Some(session.clone());
        Ok(session)
    }
}

fn api_error(error: cdp::CdpError) -> EngineError {
    match error {
        cdp::CdpError::Protocol { message, .. } => {
            EngineError::page(ErrorCode::BrowserApiError, message, Value::Null)
        }
        other => other.into(),
    }
}

impl Browsers {
    /// Calls a browser API on the current browser (launching or waiting for one).
    pub async fn extension_call(
        self: &std::sync::Arc<Self>,
        name: &str,
        args: Value,
    ) -> Result<Value> {
        self.browser().await?.extension_call(name, args).await
    }

    /// What the running extension reports of itself, compared with the sources this binary
    /// carries. Never launches a browser: without one, the verdict is unverifiable.
    pub async fn extension_status(&self) -> ExtensionStatus {
        let expected = self.config().extension_stamp.clone();
        let running = match self.current() {
            Some(browser) if !browser.link_info.lock().is_null() => {
                let hello = browser.link_info.lock().clone();
                Some((
                    hello["extension_version"].as_str().map(str::to_owned),
                    hello["build_stamp"].as_str().map(str::to_owned),
                ))
            }
            Some(browser) => match tokio::time::timeout(
                Duration::from_secs(3),
                browser.extension_call("runtime.self", json!({})),
            )
            .await
            {
                Ok(Ok(me)) => Some((
                    me["version"].as_str().map(str::to_owned),
                    me["build_stamp"].as_str().map(str::to_owned),
                )),
                _ => None,
            },
            None => None,
        };
        let (version, stamp) = running.unwrap_or((None, None));
        // The folder the browser loads the extension from; another tabwire build may have
        // written it since this server started.
        let on_disk = match &self.config().extension_dir {
            Some(dir) => tokio::fs::read_to_string(dir.join("stamp.js"))
                .await
                .ok()
                .and_then(|text| stamp_in(&text)),
            None => None,
        };
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
        ExtensionStatus {
            extension_status_available: stamp.is_some(),
            extension_version: version,
            extension_build_stamp: stamp,
            expected_extension_build_stamp: expected,
            extension_folder_build_stamp: on_disk,
            extension_build_verdict: verdict,
            reload_extension_required: verdict == "stale_worker",
            restart_server_required: verdict == "stale_server",
            extension_next_action: next_action,
        }
    }
}

/// Whether the extension the browser runs is the one this server wrote, and what to do
/// when it is not (its fields are named as a status report shows them).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ExtensionStatus {
    pub extension_version: Option<String>,
    /// The build stamp the running extension reports; none when no extension answered.
    pub extension_build_stamp: Option<String>,
    pub expected_extension_build_stamp: Option<String>,
    pub extension_folder_build_stamp: Option<String>,
    /// `matches_tree`, `stale_worker`, `stale_server`, `stamp_not_regenerated`, …
    pub extension_build_verdict: &'static str,
    pub reload_extension_required: bool,
    pub restart_server_required: bool,
    pub extension_next_action: &'static str,
    pub extension_status_available: bool,
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
