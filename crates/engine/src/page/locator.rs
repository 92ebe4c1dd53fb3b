//! What an agent names an element by: a typed [`Locator`], read from tabwire's locator
//! JSON (the one grammar both faces take), and placed by the engine in the document its
//! frame path (or, for a ref, the read that handed it out) leads to.
//!
//! The page script (`locate.js`) finds the element; this module owns the grammar, so a
//! bad locator is refused before anything reaches the page, with the page's own words.

use serde_json::{Map, Value, json};

use super::Page;
use crate::error::{EngineError, ErrorCode, Input, Result};

/// How an element is found in one document.
#[derive(Clone, Debug, PartialEq)]
pub enum Find {
    Css(String),
    XPath(String),
    /// A ref a read handed out, as it was written (`ref_12` or `e12`).
    Ref(String),
    /// An ARIA role, and the accessible name it must have (if any).
    Role {
        role: String,
        name: Option<String>,
    },
    /// Visible text.
    Text(String),
    /// A form control's label (its `<label>`, `aria-label`, `aria-labelledby`, placeholder).
    Label(String),
}

/// An element as an agent names it.
#[derive(Clone, Debug, PartialEq)]
pub struct Locator {
    pub find: Find,
    /// Names and text match whole and case-sensitively, not as a case-insensitive part.
    pub exact: bool,
    /// Open shadow hosts (CSS, outermost first) whose shadow root is searched.
    pub shadow: Vec<String>,
    /// The iframes (outermost first) that lead to the element's document, each named in
    /// the document before it. A frame step has no frame path of its own.
    pub frame: Vec<Locator>,
}

/// A locator as the page script reads it, with the frame path (in the same form) that
/// leads to its document: what the engine sends once a ref has been placed.
#[derive(Clone, Debug)]
pub(crate) struct Placed {
    pub find: Value,
    pub frame: Vec<Value>,
}

/// The keys that say how a locator object finds its element; exactly one is given.
const PRIMARY_KEYS: [&str; 7] = ["css", "selector", "role", "text", "label", "ref", "xpath"];

impl Locator {
    fn of(find: Find) -> Locator {
        Locator {
            find,
            exact: false,
            shadow: Vec::new(),
            frame: Vec::new(),
        }
    }

    pub fn css(selector: impl Into<String>) -> Locator {
        Locator::of(Find::Css(selector.into()))
    }

    pub fn xpath(expression: impl Into<String>) -> Locator {
        Locator::of(Find::XPath(expression.into()))
    }

    pub fn reference(reference: impl Into<String>) -> Locator {
        Locator::of(Find::Ref(reference.into()))
    }

    /// A CSS string, or a ref where a CSS string goes (`"e12"`, `"ref_12"`: no HTML tag is
    /// spelled so).
    pub fn css_or_ref(text: &str) -> Result<Locator> {
        let trimmed = text.trim();
        if ref_number(trimmed).is_some() {
            return Ok(Locator::reference(trimmed));
        }
        if trimmed.is_empty() {
            return Err(invalid("empty CSS selector"));
        }
        Ok(Locator::css(text))
    }

    /// Reads tabwire's locator JSON: a CSS string (or a ref), or an object with exactly
    /// one of css/selector, role (+name), text, label, ref, xpath; options `exact`,
    /// `shadow` (host CSS list) and `frame` (a list of iframe locators, or one CSS string).
    pub fn parse(value: &Value) -> Result<Locator> {
        let mut locator = Locator::parse_step(value)?;
        if let Some(path) = value.get("frame") {
            locator.frame = Locator::parse_frame_path(path)?;
        }
        Ok(locator)
    }

    /// A frame path on its own (a read's `frame` parameter): a non-empty list of iframe
    /// locators, or one CSS string.
    pub fn parse_frame_path(value: &Value) -> Result<Vec<Locator>> {
        let steps = match value {
            Value::String(one) => vec![Value::String(one.clone())],
            Value::Array(steps)
                if !steps.is_empty() && steps.iter().all(|s| s.is_string() || s.is_object()) =>
            {
                steps.clone()
            }
            _ => {
                return Err(EngineError::invalid(
                    Input::Frame,
                    "expected a non-empty list of iframe locators (CSS strings or locator objects)",
                ));
            }
        };
        steps
            .iter()
            .enumerate()
            .map(|(depth, step)| {
                {
                    if step.get("frame").is_some() {
                        return Err(invalid("frame paths are resolved by the engine"));
                    }
                    Locator::parse_step(step)
                }
                .map_err(|error| super::frame_error(error, depth))
            })
            .collect()
    }

    /// One document's part of a locator (its `frame` is read by the caller).
    fn parse_step(value: &Value) -> Result<Locator> {
        let map = match value {
            Value::String(text) => return Locator::css_or_ref(text),
            Value::Object(map) => map,
            _ => return Err(invalid("locator must be a CSS string or an object")),
        };
        let given: Vec<&str> = PRIMARY_KEYS
            .into_iter()
            .filter(|key| map.get(*key).is_some_and(|v| !v.is_null()))
            .collect();
        let key = match given.as_slice() {
            [one] => *one,
            [] => {
                let keys: Vec<&str> = map.keys().map(String::as_str).collect();
                let got = if keys.is_empty() {
                    "nothing".to_owned()
                } else {
                    keys.join(", ")
                };
                return Err(invalid(format!(
                    "locator needs one of css, role, text, label, ref (got {got})"
                )));
            }
            many => {
                return Err(invalid(format!(
                    "locator has more than one primary key ({})",
                    many.join(", ")
                )));
            }
        };
        let text = match map.get(key) {
            Some(Value::String(text)) if !text.trim().is_empty() => text.clone(),
            _ => return Err(invalid(format!("{key} must be a non-empty string"))),
        };
        let name = match map.get("name") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => Some(name.clone()),
            Some(_) => return Err(invalid("name must be a string")),
        };
        let find = match key {
            "css" | "selector" => Find::Css(text),
            "role" => Find::Role { role: text, name },
            "text" => Find::Text(text),
            "label" => Find::Label(text),
            "ref" => Find::Ref(text),
            _ => Find::XPath(text),
        };
        Ok(Locator {
            find,
            exact: map.get("exact") == Some(&Value::Bool(true)),
            shadow: shadow_path(map)?,
            frame: Vec::new(),
        })
    }

    /// The locator as the page script reads it (without its frame path): a plain CSS
    /// string where that says it all, else an object with only what is set.
    pub(crate) fn page_form(&self) -> Value {
        let mut object = Map::new();
        let (key, text) = match &self.find {
            Find::Css(css) => {
                if self.shadow.is_empty() && ref_number(css.trim()).is_none() {
                    return json!(css);
                }
                ("css", css)
            }
            Find::XPath(xpath) => ("xpath", xpath),
            Find::Ref(reference) => ("ref", reference),
            Find::Role { role, name } => {
                if let Some(name) = name {
                    object.insert("name".into(), json!(name));
                }
                ("role", role)
            }
            Find::Text(text) => ("text", text),
            Find::Label(label) => ("label", label),
        };
        object.insert(key.into(), json!(text));
        if self.exact {
            object.insert("exact".into(), json!(true));
        }
        if !self.shadow.is_empty() {
            object.insert("shadow".into(), json!(self.shadow));
        }
        Value::Object(object)
    }

    /// A frame step as a reply writes it (`observation.frame`): always an object.
    pub(crate) fn step_json(&self) -> Value {
        match self.page_form() {
            Value::String(css) => json!({ "css": css }),
            other => other,
        }
    }

    /// The ref this locator is, alone: what the engine places by the read that gave it.
    fn bare_ref(&self) -> Option<&str> {
        match &self.find {
            Find::Ref(reference) if self.frame.is_empty() && self.shadow.is_empty() => {
                Some(reference)
            }
            _ => None,
        }
    }
}

fn shadow_path(map: &Map<String, Value>) -> Result<Vec<String>> {
    match map.get("shadow") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(hosts)) => hosts
            .iter()
            .map(|host| host.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .ok_or_else(|| invalid("shadow must be an array of CSS strings")),
        Some(_) => Err(invalid("shadow must be an array of CSS strings")),
    }
}

/// A locator the page could not read: refused as the page script would refuse it.
fn invalid(message: impl Into<String>) -> EngineError {
    let message = message.into();
    let details = json!({ "status": "invalid_selector", "message": message });
    EngineError::page(ErrorCode::InvalidSelector, message, details)
}

impl Page {
    /// Where a locator's element is, in the page script's terms: a bare ref gets the
    /// frame path of the document whose read handed it out, so a ref acts on the very
    /// element whatever tool passes it on; anything else keeps the path it was given.
    pub(crate) fn place(&self, locator: &Locator) -> Result<Placed> {
        if let Some(reference) = locator.bare_ref() {
            let (find, frame) = self.ref_target(reference)?;
            return Ok(Placed { find, frame });
        }
        Ok(Placed {
            find: locator.page_form(),
            frame: page_frames(&locator.frame),
        })
    }
}

/// A frame path in the page script's terms.
pub(crate) fn page_frames(path: &[Locator]) -> Vec<Value> {
    path.iter().map(Locator::page_form).collect()
}

/// The number of a ref written either way (`ref_12`, or `e12` as a lean reply writes
/// it), the whole string; None for anything else. No HTML tag is spelled so, so a CSS
/// string of this form is taken as the ref (locate.js reads it the same way).
pub fn ref_number(text: &str) -> Option<u64> {
    let digits = text
        .strip_prefix("ref_")
        .or_else(|| text.strip_prefix('e'))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(value: Value) -> Locator {
        Locator::parse(&value).expect("a valid locator")
    }

    fn refused(value: Value) -> String {
        Locator::parse(&value)
            .expect_err("an invalid locator")
            .to_string()
    }

    #[test]
    fn strings_are_css_unless_they_are_refs() {
        assert_eq!(parsed(json!("#save")).find, Find::Css("#save".into()));
        assert_eq!(parsed(json!(" e12 ")).find, Find::Ref("e12".into()));
        assert_eq!(parsed(json!("ref_3")).find, Find::Ref("ref_3".into()));
        assert!(refused(json!("  ")).contains("empty CSS selector"));
    }

    #[test]
    fn objects_take_exactly_one_way_to_find() {
        let role = parsed(json!({ "role": "button", "name": "Save", "exact": true }));
        assert_eq!(
            role.find,
            Find::Role {
                role: "button".into(),
                name: Some("Save".into())
            }
        );
        assert!(role.exact);
        assert_eq!(
            parsed(json!({ "selector": "a" })).find,
            Find::Css("a".into())
        );
        assert_eq!(
            parsed(json!({ "xpath": "//a" })).find,
            Find::XPath("//a".into())
        );
        assert!(
            refused(json!({ "css": "a", "text": "b" }))
                .contains("more than one primary key (css, text)")
        );
        assert!(refused(json!({ "exact": true })).contains("needs one of css"));
        assert!(refused(json!({ "label": "" })).contains("label must be a non-empty string"));
        assert!(refused(json!({ "role": "button", "name": 3 })).contains("name must be a string"));
        assert!(refused(json!({ "css": "a", "shadow": "x" })).contains("shadow must be"));
        assert!(refused(json!(3)).contains("CSS string or an object"));
    }

    #[test]
    fn frame_paths_are_read_step_by_step() {
        let framed = parsed(
            json!({ "css": "#in", "frame": ["#outer", { "role": "document", "name": "x" }] }),
        );
        assert_eq!(framed.frame.len(), 2);
        assert_eq!(framed.frame[0].find, Find::Css("#outer".into()));
        assert_eq!(
            parsed(json!({ "css": "#in", "frame": "#one" })).frame.len(),
            1
        );
        let bad_step = refused(json!({ "css": "#in", "frame": ["#a", { "nothing": 1 }] }));
        assert!(
            bad_step.starts_with("frame path step 1: locator needs one of"),
            "{bad_step}"
        );
        let bad_path = Locator::parse(&json!({ "css": "#in", "frame": [] })).expect_err("empty");
        assert_eq!(bad_path.input(), Some(Input::Frame));
    }

    #[test]
    fn the_page_reads_what_was_given_and_a_frame_step_is_written_as_an_object() {
        assert_eq!(parsed(json!({ "css": "#a" })).page_form(), json!("#a"));
        // A CSS string that reads as a ref stays CSS for the page.
        assert_eq!(Locator::css("e12").page_form(), json!({ "css": "e12" }));
        let label = parsed(json!({ "label": "Email", "shadow": ["my-form"] }));
        assert_eq!(
            label.page_form(),
            json!({ "label": "Email", "shadow": ["my-form"] })
        );
        let framed = parsed(json!({ "css": "#in", "frame": ["#outer"] }));
        assert_eq!(framed.frame[0].step_json(), json!({ "css": "#outer" }));
        assert_eq!(
            parsed(json!("#plain")).step_json(),
            json!({ "css": "#plain" })
        );
    }
}
