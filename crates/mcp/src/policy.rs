//! The raw CDP policy: which methods `cdp_command` and `cdp_batch` refuse before anything
//! is sent. A batch is checked whole, so a refused member means no member runs.

use engine::{EngineError, ErrorCode};

use crate::face::ToolError;

use crate::face::Profile;

/// Set to 1 (with the lab profile) to allow the methods below anyway.
pub const OVERRIDE_ENV: &str = "TABWIRE_ALLOW_BLOCKED_CDP";

/// `Browser.*` methods that only read.
const BROWSER_READS: &[&str] = &[
    "Browser.getVersion",
    "Browser.getBrowserCommandLine",
    "Browser.getHistograms",
    "Browser.getHistogram",
    "Browser.getWindowBounds",
    "Browser.getWindowForTarget",
];

/// Methods that destroy profile data, close what other agents use, escape the tab, or
/// change the browser for everyone.
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
];

pub fn is_high_risk(method: &str) -> bool {
    (method.starts_with("Browser.") && !BROWSER_READS.contains(&method))
        || method.starts_with("Storage.clear")
        || HIGH_RISK.contains(&method)
}

/// Refuses a method the policy blocks, unless lab plus the override switch allow it.
pub fn check(method: &str, profile: Profile, param: &str) -> Result<(), ToolError> {
    let well_formed = method.split_once('.').is_some_and(|(domain, name)| {
        !domain.is_empty() && !name.is_empty() && !name.contains('.')
    });
    if !well_formed {
        return Err(ToolError::param(
            param,
            format!("'{method}' is not a CDP method like Page.navigate"),
        ));
    }
    if !is_high_risk(method) {
        return Ok(());
    }
    let overridden = profile == Profile::Lab && std::env::var(OVERRIDE_ENV).is_ok_and(|v| v == "1");
    if overridden {
        return Ok(());
    }
    let how = match profile {
        Profile::Safe => "the safe profile always blocks it".to_owned(),
        Profile::Lab => format!(
            "to allow it, the operator must start tabwire with {OVERRIDE_ENV}=1 (lab profile only)"
        ),
    };
    Err(EngineError::refused(
        ErrorCode::RawCdpBlocked,
        format!("{param}: {method} is a high-risk CDP method and was not sent; {how}"),
    )
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn high_risk_methods_are_refused_and_reads_pass() {
        for method in [
            "Browser.close",
            "Browser.crash",
            "Storage.clearDataForOrigin",
            "Page.close",
            "Target.closeTarget",
        ] {
            let error = check(method, Profile::Lab, "method").unwrap_err();
            assert_eq!(error.code(), "raw_cdp_blocked", "{method}");
            assert!(error.to_string().contains(method));
        }
        for method in [
            "Browser.getVersion",
            "Page.navigate",
            "Runtime.evaluate",
            "DOM.getDocument",
        ] {
            check(method, Profile::Safe, "method").unwrap();
        }
        assert_eq!(
            check("nonsense", Profile::Lab, "method")
                .unwrap_err()
                .code(),
            "invalid_argument"
        );
    }
}
