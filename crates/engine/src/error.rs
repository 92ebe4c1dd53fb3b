//! What an engine call can fail with, in the engine's own words: a typed error, a stable
//! [`ErrorCode`] and, for bad input, which [`Input`] was wrong. Faces turn these into
//! their own vocabulary (a parameter name, an error code of the original they imitate);
//! nothing here names a tool or a parameter of a face.

use serde_json::{Value, json};

/// Declares an enum of unit variants with a stable snake_case name for each.
macro_rules! named_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($variant,)* }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }

            /// The variant a stable name stands for.
            pub fn parse(text: &str) -> Option<$name> {
                match text { $($text => Some($name::$variant),)* _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

named_enum! {
    /// Every way an engine call can fail, by a stable name.
    ErrorCode {
        BrowserNotFound => "browser_not_found",
        BrowserLaunchFailed => "browser_launch_failed",
        BrowserDisconnected => "browser_disconnected",
        BrowserUnreachable => "browser_unreachable",
        // A farm with no browser free for us now (over its limit or its queue full).
        BrowserBusy => "browser_busy",
        ExtensionUnavailable => "extension_unavailable",
        CdpError => "cdp_error",
        Timeout => "timeout",
        TabNotFound => "tab_not_found",
        TargetBusy => "target_busy",
        // The tab's page waits on a JavaScript dialog left open for the agent.
        BlockedByDialog => "blocked_by_dialog",
        // The element that was to take input lost focus on the way.
        FocusFailed => "focus_failed",
        InvalidInput => "invalid_input",
        Io => "io_error",
        Unsupported => "unsupported",
        // What the page script reports when an action could not happen.
        NotFound => "not_found",
        Ambiguous => "ambiguous",
        Obscured => "obscured",
        OutsideViewport => "outside_viewport",
        NotInteractable => "not_interactable",
        ReadOnly => "read_only",
        NotEditable => "not_editable",
        NoFocus => "no_focus",
        InvalidSelector => "invalid_selector",
        InvalidPattern => "invalid_pattern",
        NotAFrame => "not_a_frame",
        StaleFrame => "stale_frame",
        ScriptError => "script_error",
        ScanFailed => "scan_failed",
        StorageUnavailable => "storage_unavailable",
        StorageError => "storage_error",
        QuotaExceeded => "quota_exceeded",
        NotPersisted => "not_persisted",
        // Page and browser operations.
        NavigationFailed => "navigation_failed",
        NoHistory => "no_history",
        StaleRef => "stale_ref",
        NoOption => "no_option",
        NoDownload => "no_download",
        RequestFailed => "request_failed",
        ClickNotConfirmed => "click_not_confirmed",
        ClickNotDelivered => "click_not_delivered",
        BrowserApiError => "browser_api_error",
        DownloadNotStarted => "download_not_started",
        RemoveUnconfirmed => "remove_unconfirmed",
        NotOwned => "not_owned",
        // An operation stopped before it finished.
        Cancelled => "cancelled",
        Superseded => "superseded",
        // Refusals: the engine would not do it.
        UrlSchemeRefused => "url_scheme_refused",
        PathOutsideOutputDir => "path_outside_output_dir",
        PathNotAllowed => "path_not_allowed",
        FileExists => "file_exists",
        CaptureBusy => "capture_busy",
        TooManyOperations => "too_many_operations",
        NoCapture => "no_capture",
        ForeignOperation => "foreign_operation",
        UnknownOperation => "unknown_operation",
        LinkRefused => "link_refused",
        BackupFailed => "backup_failed",
        RawCdpBlocked => "raw_cdp_blocked",
        // A page's own tool (WebMCP) threw or was cancelled.
        PageToolFailed => "page_tool_failed",
    }
}

named_enum! {
    /// The part of a request that was wrong, in the engine's terms. A face maps it to the
    /// name its own parameter has.
    Input {
        Tab => "tab",
        Url => "url",
        Locator => "locator",
        Frame => "frame",
        Point => "point",
        Keys => "keys",
        Button => "button",
        Owner => "owner",
        Operation => "operation",
        Permission => "permission",
        Setting => "setting",
        Origin => "origin",
        Duration => "duration",
        Format => "format",
        Quality => "quality",
        Clip => "clip",
        Scale => "scale",
        PageRanges => "page_ranges",
        OutputPath => "output_path",
        Filename => "filename",
        Directory => "directory",
        Files => "files",
        Cookies => "cookies",
        Area => "area",
        Pattern => "pattern",
        Script => "script",
        ExtraScript => "extra_script",
        DialogAction => "dialog_action",
        Bookmark => "bookmark",
        Arguments => "arguments",
        Reason => "reason",
        Extension => "extension",
        Method => "method",
        Params => "params",
        Condition => "condition",
        Ref => "ref",
        Value => "value",
        Options => "options",
        Text => "text",
        Date => "date",
        Folder => "folder",
        Window => "window",
        Request => "request",
        Query => "query",
        Viewport => "viewport",
        UserAgent => "user_agent",
        Network => "network",
        CpuRate => "cpu_rate",
        Geolocation => "geolocation",
        ColorScheme => "color_scheme",
        Headers => "headers",
        Cursor => "cursor",
    }
}

/// What a failed call had done before it failed: whether trying it again could do it
/// twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Delivery {
    /// Nothing reached the browser, or the page saw none of it: safe to try again as is.
    #[default]
    Undelivered,
    /// It was sent and may have run (or had some effect).
    MayHaveRun,
}

/// Everything an engine call can fail with. Clone gives a second reader of one stored
/// outcome (a receipt) the very same error: code, verdict and delivery facts.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    #[error("{0}")]
    BrowserNotFound(String),
    #[error("browser launch failed: {0}")]
    Launch(String),
    #[error("{0}")]
    Cdp(#[from] cdp::CdpError),
    #[error("cannot attach to the CDP endpoint: {0}")]
    Endpoint(String),
    #[error("no tab '{0}' (it may have closed)")]
    NoSuchTab(String),
    #[error("tab {tab} is busy with another call{}; retry when it finishes or use another tab", held_by.as_ref().map(|op| format!(" (operation {op}, which a navigation supersedes)")).unwrap_or_default())]
    TargetBusy {
        tab: String,
        /// The operation still holding it after its caller stopped waiting, if one is.
        held_by: Option<String>,
    },
    #[error("{input}: {message}")]
    Invalid { input: Input, message: String },
    /// A page-level outcome that means the action did not happen (not_found, ambiguous,
    /// obscured, …); `details` carries what the page said.
    #[error("{message}")]
    Page {
        code: ErrorCode,
        message: String,
        details: Value,
        delivery: Delivery,
    },
    #[error("{what} did not finish within {seconds} s")]
    Timeout { what: String, seconds: f64 },
    #[error("{0}")]
    Io(String),
    /// The engine would not do it; `input` names the part of the request refused.
    #[error("{}{message}", input.map(|i| format!("{i}: ")).unwrap_or_default())]
    Refused {
        code: ErrorCode,
        input: Option<Input>,
        message: String,
    },
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    ExtensionUnavailable(String),
}

impl EngineError {
    pub fn invalid(input: Input, message: impl Into<String>) -> Self {
        EngineError::Invalid {
            input,
            message: message.into(),
        }
    }

    /// A page-level outcome; nothing was delivered unless `may_have_run` says so.
    pub fn page(code: ErrorCode, message: impl Into<String>, details: Value) -> Self {
        EngineError::Page {
            code,
            message: message.into(),
            details,
            delivery: Delivery::Undelivered,
        }
    }

    /// The same error, for a call that had dispatched something that may have run.
    pub fn may_have_run(self) -> Self {
        match self {
            EngineError::Page {
                code,
                message,
                details,
                ..
            } => EngineError::Page {
                code,
                message,
                details,
                delivery: Delivery::MayHaveRun,
            },
            other => other,
        }
    }

    /// What the call had done before it failed.
    pub fn delivery(&self) -> Delivery {
        match self {
            EngineError::Page { delivery, .. } => *delivery,
            // Written, then the link went, the reply never came or could not be read:
            // it may have run.
            EngineError::Cdp(
                cdp::CdpError::Lost { .. }
                | cdp::CdpError::Timeout { .. }
                | cdp::CdpError::Unreadable { .. },
            ) => Delivery::MayHaveRun,
            _ => Delivery::Undelivered,
        }
    }

    pub fn refused(code: ErrorCode, message: impl Into<String>) -> Self {
        EngineError::Refused {
            code,
            input: None,
            message: message.into(),
        }
    }

    /// A refusal of one named part of the request.
    pub fn refused_input(code: ErrorCode, input: Input, message: impl Into<String>) -> Self {
        EngineError::Refused {
            code,
            input: Some(input),
            message: message.into(),
        }
    }

    pub fn io(what: impl std::fmt::Display, error: std::io::Error) -> Self {
        EngineError::Io(format!("{what}: {error}"))
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            EngineError::BrowserNotFound(_) => ErrorCode::BrowserNotFound,
            EngineError::Launch(_) => ErrorCode::BrowserLaunchFailed,
            EngineError::Cdp(
                cdp::CdpError::Disconnected
                | cdp::CdpError::Lost { .. }
                | cdp::CdpError::Undelivered { .. },
            ) => ErrorCode::BrowserDisconnected,
            EngineError::Cdp(cdp::CdpError::Unreadable { .. }) => ErrorCode::CdpError,
            EngineError::Cdp(cdp::CdpError::Timeout { .. }) => ErrorCode::Timeout,
            EngineError::Cdp(cdp::CdpError::Connect(_)) => ErrorCode::BrowserUnreachable,
            EngineError::Cdp(cdp::CdpError::Refused { status, .. }) if farm_is_full(*status) => {
                ErrorCode::BrowserBusy
            }
            EngineError::Cdp(cdp::CdpError::Refused { .. }) => ErrorCode::BrowserUnreachable,
            EngineError::Cdp(cdp::CdpError::Queued { .. }) => ErrorCode::BrowserBusy,
            EngineError::Cdp(cdp::CdpError::Protocol { .. }) => ErrorCode::CdpError,
            EngineError::Endpoint(_) => ErrorCode::BrowserUnreachable,
            EngineError::NoSuchTab(_) => ErrorCode::TabNotFound,
            EngineError::TargetBusy { .. } => ErrorCode::TargetBusy,
            EngineError::Invalid { .. } => ErrorCode::InvalidInput,
            EngineError::Page { code, .. } | EngineError::Refused { code, .. } => *code,
            EngineError::Timeout { .. } => ErrorCode::Timeout,
            EngineError::Io(_) => ErrorCode::Io,
            EngineError::Unsupported(_) => ErrorCode::Unsupported,
            EngineError::ExtensionUnavailable(_) => ErrorCode::ExtensionUnavailable,
        }
    }

    /// The part of the request that was wrong or refused, when one was.
    pub fn input(&self) -> Option<Input> {
        match self {
            EngineError::Invalid { input, .. } => Some(*input),
            EngineError::Refused { input, .. } => *input,
            _ => None,
        }
    }

    /// The message without the engine's name for the input (a face adds its own).
    pub fn bare_message(&self) -> String {
        match self {
            EngineError::Invalid { message, .. } | EngineError::Refused { message, .. } => {
                message.clone()
            }
            other => other.to_string(),
        }
    }

    /// Whether trying the same call again later can succeed without changing it.
    pub fn retryable(&self) -> bool {
        self.code() == ErrorCode::BrowserBusy
            || matches!(
                self,
                EngineError::Cdp(
                    cdp::CdpError::Disconnected
                        | cdp::CdpError::Lost { .. }
                        | cdp::CdpError::Undelivered { .. }
                        | cdp::CdpError::Timeout { .. }
                ) | EngineError::TargetBusy { .. }
                    | EngineError::Timeout { .. }
                    | EngineError::ExtensionUnavailable(_)
            )
    }

    /// What else the engine knows of the failure (what the page said, which method).
    pub fn details(&self) -> Value {
        match self {
            EngineError::Page { details, .. } => details.clone(),
            EngineError::TargetBusy { tab, held_by } => json!({ "tab": tab, "held_by": held_by }),
            EngineError::Cdp(cdp::CdpError::Refused {
                status,
                body,
                retry_after,
                ..
            }) => json!({ "http_status": status, "farm_said": body, "retry_after_s": retry_after }),
            EngineError::Cdp(cdp::CdpError::Queued { waited, .. }) => {
                json!({ "queued_s": waited.as_secs_f64() })
            }
            EngineError::Cdp(
                cdp::CdpError::Lost { method }
                | cdp::CdpError::Undelivered { method }
                | cdp::CdpError::Unreadable { method, .. }
                | cdp::CdpError::Timeout { method, .. },
            ) => json!({ "method": method }),
            _ => Value::Null,
        }
    }
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;

/// The HTTP statuses with which a farm says it has no browser for us now: over its limit
/// with its queue full (429), or unavailable for a while (503).
fn farm_is_full(status: u16) -> bool {
    status == 429 || status == 503
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_farm_is_busy_and_retryable_and_a_refusing_one_is_unreachable() {
        let refused = |status| {
            EngineError::Cdp(cdp::CdpError::Refused {
                endpoint: "ws://farm/chromium?…".into(),
                status,
                reason: String::new(),
                body: "Too many requests".into(),
                retry_after: Some(3),
            })
        };
        let full = refused(429);
        assert_eq!(full.code(), ErrorCode::BrowserBusy);
        assert!(full.retryable());
        assert_eq!(full.details()["retry_after_s"], 3);
        assert_eq!(full.details()["farm_said"], "Too many requests");
        assert_eq!(full.delivery(), Delivery::Undelivered);
        let wrong_token = refused(401);
        assert_eq!(wrong_token.code(), ErrorCode::BrowserUnreachable);
        assert!(!wrong_token.retryable());
    }

    #[test]
    fn every_code_has_a_distinct_name_that_parses_back() {
        let mut names = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert!(names.insert(code.as_str()), "{code} named twice");
            assert_eq!(ErrorCode::parse(code.as_str()), Some(*code));
        }
        for input in Input::ALL {
            assert_eq!(Input::parse(input.as_str()), Some(*input));
        }
    }

    #[test]
    fn a_stored_error_read_again_keeps_its_code_verdict_and_delivery() {
        let stored = [
            EngineError::Cdp(cdp::CdpError::Lost {
                method: "Runtime.evaluate".into(),
            }),
            EngineError::TargetBusy {
                tab: "c:1".into(),
                held_by: None,
            },
            EngineError::page(ErrorCode::Obscured, "covered", json!({"by": "div"})).may_have_run(),
            EngineError::invalid(Input::Keys, "no such key"),
        ];
        for error in &stored {
            let again = error.clone();
            assert_eq!(again.code(), error.code(), "{error}");
            assert_eq!(again.retryable(), error.retryable(), "{error}");
            assert_eq!(again.delivery(), error.delivery(), "{error}");
            assert_eq!(again.details(), error.details(), "{error}");
            assert_eq!(again.input(), error.input(), "{error}");
        }
    }
}
