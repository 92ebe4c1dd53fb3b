use serde_json::{Value, json};

/// Everything an engine call can fail with. `code()` is the stable machine-readable name
/// that faces put in their replies.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    BrowserNotFound(String),
    #[error("browser launch failed: {0}")]
    Launch(String),
    #[error("{0}")]
    Cdp(#[from] cdp::CdpError),
    #[error("cannot attach to the CDP endpoint: {0}")]
    Endpoint(String),
    #[error("no tab '{0}'; call list_tabs for the current ones")]
    NoSuchTab(String),
    #[error("tab {tab} is busy with another call; retry when it finishes or use another tab")]
    TargetBusy { tab: String },
    #[error("{param}: {message}")]
    InvalidArgument { param: String, message: String },
    /// A page-level outcome that means the action did not happen (not_found, ambiguous,
    /// obscured, outside_viewport, invalid_selector, …); `details` carries what the page said.
    #[error("{message}")]
    Page {
        code: String,
        message: String,
        details: Value,
    },
    #[error("{what} did not finish within {seconds} s")]
    Timeout { what: String, seconds: f64 },
    #[error("{0}")]
    Io(String),
    #[error("{message}")]
    Refused { code: String, message: String },
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    ExtensionUnavailable(String),
}

impl EngineError {
    pub fn invalid(param: &str, message: impl Into<String>) -> Self {
        EngineError::InvalidArgument {
            param: param.to_owned(),
            message: message.into(),
        }
    }

    pub fn page(code: &str, message: impl Into<String>, details: Value) -> Self {
        EngineError::Page {
            code: code.to_owned(),
            message: message.into(),
            details,
        }
    }

    pub fn code(&self) -> &str {
        match self {
            EngineError::BrowserNotFound(_) => "browser_not_found",
            EngineError::Launch(_) => "browser_launch_failed",
            EngineError::Cdp(cdp::CdpError::Disconnected | cdp::CdpError::Lost { .. }) => {
                "browser_disconnected"
            }
            EngineError::Cdp(cdp::CdpError::Timeout { .. }) => "timeout",
            EngineError::Cdp(cdp::CdpError::Connect(_)) => "browser_unreachable",
            EngineError::Cdp(cdp::CdpError::Protocol { .. }) => "cdp_error",
            EngineError::Endpoint(_) => "browser_unreachable",
            EngineError::NoSuchTab(_) => "tab_not_found",
            EngineError::TargetBusy { .. } => "target_busy",
            EngineError::InvalidArgument { .. } => "invalid_argument",
            EngineError::Page { code, .. } => code,
            EngineError::Timeout { .. } => "timeout",
            EngineError::Io(_) => "io_error",
            EngineError::Refused { code, .. } => code,
            EngineError::Unsupported(_) => "unsupported",
            EngineError::ExtensionUnavailable(_) => "extension_unavailable",
        }
    }

    /// Whether trying the same call again later can succeed without changing it.
    pub fn retryable(&self) -> bool {
        matches!(
            self,
            EngineError::Cdp(
                cdp::CdpError::Disconnected
                    | cdp::CdpError::Lost { .. }
                    | cdp::CdpError::Timeout { .. }
            ) | EngineError::TargetBusy { .. }
                | EngineError::Timeout { .. }
                | EngineError::ExtensionUnavailable(_)
        )
    }

    pub fn details(&self) -> Value {
        match self {
            EngineError::Page { details, .. } => details.clone(),
            EngineError::InvalidArgument { param, .. } => json!({ "param": param }),
            EngineError::TargetBusy { tab } => json!({ "tab": tab, "delivered": false }),
            // Sent, then the link went: it may have run, so retrying could do it twice.
            EngineError::Cdp(
                cdp::CdpError::Lost { method } | cdp::CdpError::Timeout { method, .. },
            ) => {
                json!({ "method": method, "may_have_executed": true, "retry_safe": false })
            }
            _ => Value::Null,
        }
    }
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;
