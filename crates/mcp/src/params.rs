//! Tool parameters, declared once: the same declaration gives the JSON schema in
//! `tools/list` and checks every call, so a bad argument is named before any browser work.

use serde_json::{Map, Value, json};

use crate::face::ToolError;

#[derive(Debug, Clone, Copy)]
pub enum Kind {
    Str,
    Bool,
    Int {
        min: i64,
        max: i64,
    },
    Num {
        min: f64,
        max: f64,
    },
    /// One of a fixed set of strings.
    Choice(&'static [&'static str]),
    /// A CSS string or a locator object.
    Locator,
    /// A number or a string (tab ids: 3 or "managed:3").
    Id,
    /// A number, a string, or a list of them.
    Ids,
    Object,
    /// A list of strings or locator objects.
    List,
    /// A string or a list of strings.
    Strs,
    /// Any JSON value (checked by the tool).
    Any,
}

#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
    pub doc: &'static str,
}

pub const fn opt(name: &'static str, kind: Kind, doc: &'static str) -> Param {
    Param {
        name,
        kind,
        required: false,
        doc,
    }
}

pub const fn req(name: &'static str, kind: Kind, doc: &'static str) -> Param {
    Param {
        name,
        kind,
        required: true,
        doc,
    }
}

/// The `timeout` every page tool takes, in seconds.
pub const fn timeout(default_doc: &'static str) -> Param {
    opt(
        "timeout",
        Kind::Num {
            min: 0.0,
            max: 1800.0,
        },
        default_doc,
    )
}

pub const SESSION: Param = opt(
    "session_id",
    Kind::Id,
    "tab handle (client:tab) from list_tabs; default: this session's tab",
);

pub fn schema(params: &[Param]) -> Map<String, Value> {
    let mut properties = Map::new();
    for param in params {
        let mut property = match param.kind {
            Kind::Str => json!({"type": "string"}),
            Kind::Bool => json!({"type": "boolean"}),
            Kind::Int { min, max } => json!({"type": "integer", "minimum": min, "maximum": max}),
            Kind::Num { min, max } => json!({"type": "number", "minimum": min, "maximum": max}),
            Kind::Choice(options) => json!({"type": "string", "enum": options}),
            Kind::Locator => json!({"type": ["string", "object"]}),
            Kind::Id => json!({"type": ["string", "integer"]}),
            Kind::Ids => json!({"type": ["string", "integer", "array"]}),
            Kind::Object => json!({"type": "object"}),
            Kind::List => json!({"type": "array"}),
            Kind::Strs => json!({"type": ["string", "array"], "items": {"type": "string"}}),
            Kind::Any => json!({}),
        };
        if !param.doc.is_empty() {
            property["description"] = json!(param.doc);
        }
        properties.insert(param.name.to_owned(), property);
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    let required: Vec<&str> = params
        .iter()
        .filter(|p| p.required)
        .map(|p| p.name)
        .collect();
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    schema.insert("additionalProperties".into(), json!(false));
    schema
}

/// Checked arguments of one call.
pub struct Args {
    values: Map<String, Value>,
}

pub fn check(params: &[Param], arguments: Option<Map<String, Value>>) -> Result<Args, ToolError> {
    let mut values = arguments.unwrap_or_default();
    // Clients send explicit nulls for omitted optionals; treat them as absent.
    values.retain(|_, v| !v.is_null());
    for name in values.keys() {
        if !params.iter().any(|p| p.name == name) {
            let known: Vec<&str> = params.iter().map(|p| p.name).collect();
            return Err(ToolError::param(
                name,
                format!(
                    "unknown parameter; this tool takes: {}",
                    if known.is_empty() {
                        "nothing".into()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        }
    }
    for param in params {
        match values.get(param.name) {
            None if param.required => return Err(ToolError::param(param.name, "is required")),
            None => {}
            Some(value) => check_value(param, value)?,
        }
    }
    Ok(Args { values })
}

fn check_value(param: &Param, value: &Value) -> Result<(), ToolError> {
    let fail = |expected: String| {
        Err(ToolError::param(
            param.name,
            format!("expected {expected}, got {}", short(value)),
        ))
    };
    match param.kind {
        Kind::Str if !value.is_string() => fail("a string".into()),
        Kind::Bool if !value.is_boolean() => fail("true or false".into()),
        Kind::Int { min, max } => match value.as_i64() {
            Some(n) if (min..=max).contains(&n) => Ok(()),
            _ => fail(format!("an integer from {min} to {max}")),
        },
        Kind::Num { min, max } => match value.as_f64() {
            Some(n) if n.is_finite() && (min..=max).contains(&n) => Ok(()),
            _ => fail(format!("a number from {min} to {max}")),
        },
        Kind::Choice(options) => match value.as_str() {
            Some(s) if options.contains(&s) => Ok(()),
            _ => fail(format!("one of {}", options.join(", "))),
        },
        Kind::Locator if !(value.is_string() || value.is_object()) => {
            fail("a CSS selector string or a locator object like {\"role\": \"button\", \"name\": \"Save\"}".into())
        }
        Kind::Id if !(value.is_string() || value.is_u64()) => fail("a tab id (3) or handle (\"managed:3\")".into()),
        Kind::Ids if !(value.is_string() || value.is_u64() || value.is_array()) => fail("a tab id, a handle, or a list of them".into()),
        Kind::Object if !value.is_object() => fail("an object".into()),
        Kind::List if !value.is_array() => fail("a list".into()),
        Kind::Strs if !(value.is_string() || value.as_array().is_some_and(|a| a.iter().all(Value::is_string))) => {
            fail("a string or a list of strings".into())
        }
        _ => Ok(()),
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 60 {
        format!("{}…", &text[..text.floor_char_boundary(60)])
    } else {
        text
    }
}

impl Args {
    pub fn value(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        self.values.get(name).and_then(Value::as_str)
    }

    /// A required string (presence was checked against the declaration).
    pub fn string(&self, name: &str) -> String {
        self.str(name).unwrap_or_default().to_owned()
    }

    pub fn bool_or(&self, name: &str, default: bool) -> bool {
        self.values
            .get(name)
            .and_then(Value::as_bool)
            .unwrap_or(default)
    }

    pub fn f64(&self, name: &str) -> Option<f64> {
        self.values.get(name).and_then(Value::as_f64)
    }

    pub fn f64_or(&self, name: &str, default: f64) -> f64 {
        self.f64(name).unwrap_or(default)
    }

    pub fn i64_or(&self, name: &str, default: i64) -> i64 {
        self.values
            .get(name)
            .and_then(Value::as_i64)
            .unwrap_or(default)
    }

    /// A tab id or handle as a string ("3" or "managed:3").
    pub fn id(&self, name: &str) -> Option<String> {
        match self.values.get(name)? {
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        }
    }

    pub fn ids(&self, name: &str) -> Vec<String> {
        match self.values.get(name) {
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| v.to_string())
                })
                .collect(),
            Some(_) => self.id(name).into_iter().collect(),
            None => Vec::new(),
        }
    }

    pub fn timeout(&self, default: f64) -> std::time::Duration {
        engine::seconds(self.f64_or("timeout", default))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMS: &[Param] = &[
        req("url", Kind::Str, ""),
        opt(
            "timeout",
            Kind::Num {
                min: 0.0,
                max: 60.0,
            },
            "",
        ),
        opt("format", Kind::Choice(&["png", "jpeg"]), ""),
    ];

    fn args(value: Value) -> Result<Args, ToolError> {
        check(PARAMS, value.as_object().cloned())
    }

    #[test]
    fn errors_name_the_parameter() {
        let cases = [
            (json!({}), "url: is required"),
            (json!({"url": 3}), "url: expected a string, got 3"),
            (
                json!({"url": "x", "timeout": "soon"}),
                "timeout: expected a number from 0 to 60",
            ),
            (
                json!({"url": "x", "timeout": 99}),
                "timeout: expected a number from 0 to 60, got 99",
            ),
            (
                json!({"url": "x", "format": "gif"}),
                "format: expected one of png, jpeg",
            ),
            (
                json!({"url": "x", "bogus": 1}),
                "bogus: unknown parameter; this tool takes: url, timeout, format",
            ),
        ];
        for (input, expected) in cases {
            let message = args(input).err().unwrap().to_string();
            assert!(message.starts_with(expected), "{message}");
        }
    }

    #[test]
    fn nulls_count_as_omitted() {
        let checked = args(json!({"url": "x", "timeout": null})).unwrap();
        assert_eq!(checked.f64_or("timeout", 15.0), 15.0);
    }

    #[test]
    fn schema_lists_required_and_forbids_extras() {
        let schema = schema(PARAMS);
        assert_eq!(schema["required"], json!(["url"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(
            schema["properties"]["format"]["enum"],
            json!(["png", "jpeg"])
        );
    }
}
