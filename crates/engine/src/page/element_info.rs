//! An element as the page script describes it to an agent: what it is and how to find it
//! again, never a field's content (`describe` and `redacted` in the page script).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ElementInfo {
    /// Its tag name, lower case (`input`, `button`).
    pub tag: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Its accessible name, clipped (for a form field described as focused: its `name`
    /// attribute; the accessible name is then `label`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its role, computed as assistive technology would.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// An input's type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub input_type: Option<String>,
    /// Its text, clipped, when that says more than its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A focused field's accessible name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// A selector that names it alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// The shadow hosts it sits in, outermost first, each by a unique selector.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shadow: Vec<String>,
    /// A focused element: whether it takes typed text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub editable: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_editable: Option<bool>,
    /// A focused element's attributes as written (`name`, `type`, `role`, `aria-label`,
    /// `class`, `placeholder`), where present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<BTreeMap<String, String>>,
}

impl ElementInfo {
    /// The page script's description, when it gave one.
    pub(crate) fn read(described: &serde_json::Value) -> Option<ElementInfo> {
        serde_json::from_value(described.clone()).ok()
    }

    /// A password field, whose value is never shown.
    pub fn is_password(&self) -> bool {
        self.input_type.as_deref() == Some("password")
    }

    /// An attribute as written, or "".
    pub fn attribute(&self, name: &str) -> &str {
        self.attributes
            .as_ref()
            .and_then(|all| all.get(name))
            .map_or("", String::as_str)
    }
}
