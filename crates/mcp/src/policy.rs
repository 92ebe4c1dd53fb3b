//! The raw CDP policy: which methods `cdp_command` and `cdp_batch` refuse before anything
//! is sent. A batch is checked whole, so a refused member means no member runs.

use engine::{EngineError, ErrorCode};

use crate::face::ToolError;

use crate::face::{Profile, SessionSettings};

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

/// Refuses a method the policy blocks, unless the lab profile plus the operator's
/// override allow it.
pub fn check(method: &str, settings: &SessionSettings, param: &str) -> Result<(), ToolError> {
    check_with(
        method,
        settings.profile(),
        settings.allow_blocked_cdp,
        param,
    )
}

fn check_with(method: &str, profile: Profile, allowed: bool, param: &str) -> Result<(), ToolError> {
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
    if profile == Profile::Lab && allowed {
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

    fn refusal(method: &str, profile: Profile, allowed: bool) -> Option<String> {
        match check_with(method, profile, allowed, "method") {
            Ok(()) => None,
            Err(ToolError::Engine(error)) => Some(error.code().as_str().to_owned()),
            Err(ToolError::Param { .. }) => Some("invalid_request".into()),
            Err(other) => Some(other.to_string()),
        }
    }

    #[test]
    fn high_risk_methods_are_refused_and_reads_pass() {
        for method in [
            "Browser.close",
            "Browser.crash",
            "Storage.clearDataForOrigin",
            "Page.close",
            "Target.closeTarget",
        ] {
            assert_eq!(
                refusal(method, Profile::Lab, false).as_deref(),
                Some("raw_cdp_blocked"),
                "{method}"
            );
            // The operator's override lifts it in lab, never in safe.
            assert_eq!(refusal(method, Profile::Lab, true), None, "{method}");
            assert_eq!(
                refusal(method, Profile::Safe, true).as_deref(),
                Some("raw_cdp_blocked"),
                "{method}"
            );
        }
        for method in ["Browser.getVersion", "Runtime.evaluate", "DOM.getDocument"] {
            assert_eq!(refusal(method, Profile::Safe, false), None, "{method}");
        }
        assert_eq!(
            refusal("nonsense", Profile::Lab, false).as_deref(),
            Some("invalid_request")
        );
    }
}
