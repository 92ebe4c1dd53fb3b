//! Raw CDP on a tab, behind the one policy every path to the machine passes.
//!
//! A raw command may not do what the tools refuse. Before anything is sent:
//! - methods that destroy profile data, close what other agents use, escape the tab or
//!   change the browser for everyone are refused (`HIGH_RISK`, every `Browser.*` but the
//!   reads, `Storage.clear*`);
//! - a URL a method would load must pass the same scheme allow-list as navigation
//!   (`URL_PARAMS`: `Page.navigate`, `Target.createTarget`, `Network.loadNetworkResource`,
//!   and the interception replies that send a request on to another URL);
//! - files a method would hand to the page must lie under the upload roots, links
//!   resolved (`DOM.setFileInputFiles`, `Input.dispatchDragEvent`);
//! - a download path can only be set through `Page.setDownloadBehavior` and
//!   `Browser.setDownloadBehavior`, which are refused outright.
//!
//! Only the operator can lift this: the lab profile with its override switch
//! (`Policy::allow_blocked`). A batch is checked whole before its first member runs.

use crate::ids::Deadline;
use std::path::PathBuf;

use serde_json::Value;

use super::Page;
use crate::error::{EngineError, ErrorCode, Input, Result};

/// `Browser.*` methods that only read.
const BROWSER_READS: &[&str] = &[
    "Browser.getVersion",
    "Browser.getBrowserCommandLine",
    "Browser.getHistograms",
    "Browser.getHistogram",
    "Browser.getWindowBounds",
    "Browser.getWindowForTarget",
];

/// Methods refused whatever their parameters.
const HIGH_RISK: &[&str] = &[
    "Network.clearBrowserCookies",
    "Network.clearBrowserCache",
    "Network.setUserAgentOverride",
    "Emulation.setUserAgentOverride",
    "Page.close",
    "Page.setDownloadBehavior",
    "Target.closeTarget",
    "Target.disposeBrowserContext",
    "Target.sendMessageToTarget",
    "Target.exposeDevToolsProtocol",
    "Target.attachToBrowserTarget",
    "Target.setRemoteLocations",
    // Browser-wide: every agent's TLS checks would go.
    "Security.setIgnoreCertificateErrors",
];

/// Methods that load a URL, and the parameter that names it.
const URL_PARAMS: &[(&str, &str)] = &[
    ("Page.navigate", "url"),
    ("Target.createTarget", "url"),
    ("Network.loadNetworkResource", "url"),
    // An intercepted request sent on to another URL loads that URL instead.
    ("Fetch.continueRequest", "url"),
    ("Network.continueInterceptedRequest", "url"),
];

/// What the operator allows of raw CDP.
#[derive(Debug, Clone, Copy, Default)]
pub struct Policy {
    /// The lab profile with the override switch: nothing is refused.
    pub allow_blocked: bool,
    /// The session is kept apart from the others (a context or browser of its own):
    /// `Target.*` and `Storage.*`, which reach past one page to every tab and context,
    /// are refused as the tools refuse them.
    pub isolated: bool,
}

/// One checked raw command.
#[derive(Debug, Clone)]
pub struct RawCommand {
    pub method: String,
    pub params: Value,
}

impl Policy {
    /// Checks one command against the policy; the files it names are resolved against
    /// the upload roots.
    pub async fn check(
        &self,
        method: &str,
        params: Value,
        upload_roots: &[PathBuf],
    ) -> Result<RawCommand> {
        let well_formed = method.split_once('.').is_some_and(|(domain, name)| {
            !domain.is_empty() && !name.is_empty() && !name.contains('.')
        });
        if !well_formed {
            return Err(EngineError::invalid(
                Input::Method,
                format!("'{method}' is not a CDP method like Page.navigate"),
            ));
        }
        if !params.is_object() {
            return Err(EngineError::invalid(Input::Params, "must be a JSON object"));
        }
        let command = RawCommand {
            method: method.to_owned(),
            params,
        };
        if self.allow_blocked {
            return Ok(command);
        }
        if is_high_risk(method) {
            return Err(blocked(method, "it is a high-risk method"));
        }
        if self.isolated && (method.starts_with("Target.") || method.starts_with("Storage.")) {
            return Err(blocked(
                method,
                "sessions are isolated, and it reaches past this session's own tabs",
            ));
        }
        for (name, param) in URL_PARAMS {
            if method == *name
                && let Some(url) = command.params[*param].as_str()
                && super::check_url_scheme(url).is_err()
            {
                return Err(blocked(
                    method,
                    &format!("{param} '{url}' is not an http(s), data: or about:blank URL"),
                ));
            }
        }
        for files in handed_files(&command) {
            crate::files::readable_files(upload_roots, &files)
                .await
                .map_err(|e| blocked(method, &e.bare_message()))?;
        }
        Ok(command)
    }
}

/// The local files a command would hand to the page.
fn handed_files(command: &RawCommand) -> Vec<Vec<String>> {
    let list = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                f.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| f.to_string())
            })
            .collect()
    };
    match command.method.as_str() {
        "DOM.setFileInputFiles" => vec![list(&command.params["files"])],
        "Input.dispatchDragEvent" => vec![list(&command.params["data"]["files"])],
        _ => Vec::new(),
    }
    .into_iter()
    .filter(|files| !files.is_empty())
    .collect()
}

pub fn is_high_risk(method: &str) -> bool {
    (method.starts_with("Browser.") && !BROWSER_READS.contains(&method))
        || method.starts_with("Storage.clear")
        || HIGH_RISK.contains(&method)
}

fn blocked(method: &str, why: &str) -> EngineError {
    EngineError::refused_input(
        ErrorCode::RawCdpBlocked,
        Input::Method,
        format!(
            "{method} was not sent: {why}; the tools refuse the same, and only the operator can lift it (the lab profile with its override)"
        ),
    )
}

impl Page {
    /// Sends one checked command on this tab's session.
    pub async fn raw_cdp(&self, command: RawCommand, deadline: Deadline) -> Result<Value> {
        self.cdp(&command.method, command.params, deadline).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(method: &str, params: Value, allow_blocked: bool) -> Option<ErrorCode> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let roots = [std::env::temp_dir().join("tabwire-no-such-root")];
        let policy = Policy {
            allow_blocked,
            isolated: false,
        };
        runtime
            .block_on(policy.check(method, params, &roots))
            .err()
            .map(|e| e.code())
    }

    #[test]
    fn high_risk_methods_are_refused_unless_the_operator_lifts_it() {
        for method in [
            "Browser.close",
            "Browser.crash",
            "Storage.clearDataForOrigin",
            "Page.close",
            "Target.closeTarget",
            "Security.setIgnoreCertificateErrors",
        ] {
            assert_eq!(
                refused(method, json!({}), false),
                Some(ErrorCode::RawCdpBlocked),
                "{method}"
            );
            assert_eq!(refused(method, json!({}), true), None, "{method}");
        }
        for method in ["Browser.getVersion", "Runtime.evaluate", "DOM.getDocument"] {
            assert_eq!(refused(method, json!({}), false), None, "{method}");
        }
        assert_eq!(
            refused("nonsense", json!({}), false),
            Some(ErrorCode::InvalidInput)
        );
    }

    #[test]
    fn urls_and_files_are_held_to_what_the_tools_allow() {
        let web = json!({ "url": "https://example.com/" });
        assert_eq!(refused("Page.navigate", web, false), None);
        for (method, url) in [
            ("Page.navigate", "file:///etc/passwd"),
            ("Page.navigate", "chrome://settings"),
            ("Target.createTarget", "file:///etc/passwd"),
            ("Network.loadNetworkResource", "file:///etc/shadow"),
            ("Fetch.continueRequest", "file:///etc/passwd"),
            ("Network.continueInterceptedRequest", "chrome://settings"),
        ] {
            assert_eq!(
                refused(method, json!({ "url": url }), false),
                Some(ErrorCode::RawCdpBlocked),
                "{method} {url}"
            );
        }
        let files = json!({ "files": ["/etc/hostname"], "backendNodeId": 1 });
        assert_eq!(
            refused("DOM.setFileInputFiles", files, false),
            Some(ErrorCode::RawCdpBlocked)
        );
        let drag = json!({ "type": "drop", "x": 1, "y": 1, "data": { "items": [], "files": ["/etc/hostname"], "dragOperationsMask": 1 } });
        assert_eq!(
            refused("Input.dispatchDragEvent", drag, false),
            Some(ErrorCode::RawCdpBlocked)
        );
        // The operator's override lifts it, as it lifts the rest.
        assert_eq!(
            refused(
                "Page.navigate",
                json!({ "url": "file:///etc/passwd" }),
                true
            ),
            None
        );
    }
}
