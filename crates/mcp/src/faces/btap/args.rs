//! What BrowserTap's shared arguments mean, for every tool that takes them: which tab
//! a call names, and a locator with its frame path.

use serde_json::{Value, json};

use engine::{EngineError, Locator, Page};

use crate::face::{Call, ToolError};
use crate::params::TabRef;
use crate::tool_params;

/// How every locator parameter is described.
pub const LOCATOR_DOC: &str = "CSS string, a ref from a read (\"e12\", \"ref_12\"), or {css|ref|role(+name)|text|label, exact?, frame?: [iframe locators], shadow?: [host CSS]}";

/// A locator with a `ref` given beside it (BrowserTap declares no `ref`; tabwire takes
/// it, unlisted, because a model that has just read `e29` passes it so): the ref as the
/// locator `{"ref": ...}`. Null is no locator. A ref and a different locator both given
/// are refused, saying where a ref goes.
pub fn with_ref(locator: Value, reference: Option<&str>) -> Result<Value, ToolError> {
    let Some(reference) = reference.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(locator);
    };
    let as_locator = json!({ "ref": reference });
    if locator.is_null() || locator == as_locator || locator.as_str() == Some(reference) {
        return Ok(as_locator);
    }
    Err(ToolError::param(
        "ref",
        format!(
            "give the ref as the selector, {{\"selector\": \"{reference}\"}}, or a selector alone, not both"
        ),
    ))
}

/// The tab a call names: its session_id, else its tab_id (a native id or a handle).
pub fn named(session_id: &Option<TabRef>, tab_id: &Option<TabRef>) -> Option<String> {
    session_id.as_ref().or(tab_id.as_ref()).map(|t| t.0.clone())
}

/// The tab a call with BrowserTap's `tab_id` names: that native tab in the browser the
/// session_id (or this session's tab) is in, or the session_id's tab when no tab_id.
pub fn with_tab_id(session_id: &Option<TabRef>, tab_id: &Option<TabRef>) -> Option<String> {
    match (session_id, tab_id) {
        (Some(session), Some(tab)) if !tab.0.contains(':') => {
            Some(match session.0.rsplit_once(':') {
                Some((client, _)) => format!("{client}:{}", tab.0),
                None => tab.0.clone(),
            })
        }
        _ => named(session_id, tab_id),
    }
}

/// Reserves the tab a call names with BrowserTap's `tab_id`; a tab_id the browser has
/// no tab for fails as the browser's tab API fails it there.
pub async fn page_by_tab_id(
    call: &Call,
    session_id: &Option<TabRef>,
    tab_id: &Option<TabRef>,
) -> Result<Page, ToolError> {
    match call
        .session
        .page(with_tab_id(session_id, tab_id).as_deref())
        .await
    {
        Err(EngineError::NoSuchTab(_)) if let Some(tab) = tab_id => Err(ToolError::Face {
            code: "page_execution_failed",
            message: format!("no tab with id {}", tab.0),
            details: json!({ "retry_safe": false }),
            may_have_run: false,
        }),
        other => Ok(other?),
    }
}

/// A frame path argument (a read's `frame`): the iframes, outermost first.
pub fn frame_path(value: Option<&Value>) -> Result<Vec<Locator>, ToolError> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(path) => Ok(Locator::parse_frame_path(path)?),
    }
}

/// A frame path as BrowserTap spells it back: each step a locator object (a CSS string
/// becomes `{css}`), so a target's locator, an inner frame's path and an echoed selector
/// are written the same way whatever the caller wrote.
pub fn frame_steps(path: Vec<Value>) -> Vec<Value> {
    path.into_iter()
        .map(|step| match step {
            Value::String(css) => json!({ "css": css }),
            other => other,
        })
        .collect()
}

// The arguments of a tool that takes only the tab it acts on.
tool_params! {
    pub struct SessionOnly {
        session_id: Option<TabRef> = TabHandle, nullable, "tab handle (client:tab) from list_tabs; default: this session's tab";
    }
}
