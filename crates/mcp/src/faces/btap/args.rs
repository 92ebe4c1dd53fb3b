//! What BrowserTap's shared arguments mean, for every tool that takes them: which tab
//! a call names, and a locator with its frame path.

use serde_json::{Value, json};

use crate::face::ToolError;
use crate::params::TabRef;

/// How every locator parameter is described.
pub const LOCATOR_DOC: &str = "CSS string, or {css|role(+name)|text|label, exact?, frame?: [iframe locators], shadow?: [host CSS]}";

/// The tab a call names: its session_id, else its tab_id (a native id or a handle).
pub fn named(session_id: &Option<TabRef>, tab_id: &Option<TabRef>) -> Option<String> {
    session_id.as_ref().or(tab_id.as_ref()).map(|t| t.0.clone())
}

/// A locator value may carry a `frame` path; the engine walks frames, the page script
/// resolves the rest.
pub fn split_locator(value: Option<&Value>) -> Result<(Value, Vec<Value>), ToolError> {
    let Some(value) = value else {
        return Ok((Value::Null, Vec::new()));
    };
    match value {
        Value::Object(map) if map.contains_key("frame") => {
            let mut rest = map.clone();
            let frame = frame_path(rest.remove("frame").as_ref())?;
            Ok((Value::Object(rest), frame))
        }
        other => Ok((other.clone(), Vec::new())),
    }
}

pub fn frame_path(value: Option<&Value>) -> Result<Vec<Value>, ToolError> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(steps))
            if !steps.is_empty() && steps.iter().all(|s| s.is_string() || s.is_object()) =>
        {
            Ok(steps.clone())
        }
        Some(Value::String(one)) => Ok(vec![json!(one)]),
        Some(_) => Err(ToolError::param(
            "frame",
            "expected a non-empty list of iframe locators (CSS strings or locator objects)",
        )),
    }
}
