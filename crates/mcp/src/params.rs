//! Tool parameters, declared once: a `tool_params!` struct is both the JSON schema a tool
//! shows in `tools/list` and the typed value its adapter receives. Arguments are checked
//! against the declaration before any browser work, so a bad one is named; an adapter can
//! only read fields its struct declares (anything else does not compile).

use serde_json::{Map, Value, json};

use crate::error::ToolError;

/// What a parameter accepts.
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
    /// The call's time limit in seconds, from 0 to `max` (a number in the schema). The
    /// server makes the call's deadline from it (`Call::deadline`).
    Seconds {
        max: f64,
    },
    /// The call's time limit in milliseconds, as the Chrome MCP Server counts it.
    Millis {
        max: f64,
    },
    /// One of a fixed set of strings.
    Choice(&'static [&'static str]),
    /// A CSS string or a locator object.
    Locator,
    /// A tab handle ("managed:3"; BrowserTap calls it a session id); a bare id (3) is
    /// taken too.
    TabHandle,
    /// A tab: a native id (3) or a handle ("managed:3").
    TabId,
    /// The browser's tab id (3); a handle ("managed:3") is taken too.
    NativeTabId,
    /// A tab id, a handle, or a list of them.
    TabIds,
    /// A list of tab or window ids (integers).
    IntList,
    Object,
    /// An object of numbers (`{x, y, width, height, scale?}`).
    NumberMap,
    /// `{x, y}` in CSS pixels.
    Point,
    /// A list of strings or locator objects.
    List,
    /// A string or a list of strings.
    Strs,
    /// A string, a list or an object (checked by the tool).
    StrListOrObject,
    /// Text; a non-string is taken too (the tool encodes it as JSON).
    Text,
    /// Any JSON value (checked by the tool).
    Any,
}

/// Whether a parameter must be given, and what it is when it is not.
#[derive(Debug, Clone)]
pub enum Presence {
    Required,
    /// May be omitted; the schema says nothing of a default.
    Optional,
    /// May be omitted or null; null is its default.
    Nullable,
    /// May be omitted (or null); this is its value then.
    Default(Value),
    /// Taken when given, but not shown in the schema: an argument a model passes by habit
    /// where the face's original declares none (btap's `ref` beside `selector`).
    Unlisted,
}

#[derive(Debug, Clone)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub presence: Presence,
    pub doc: &'static str,
}

impl Param {
    pub fn required(&self) -> bool {
        matches!(self.presence, Presence::Required)
    }

    pub fn unlisted(&self) -> bool {
        matches!(self.presence, Presence::Unlisted)
    }

    fn default(&self) -> Option<&Value> {
        match &self.presence {
            Presence::Default(value) => Some(value),
            _ => None,
        }
    }
}

/// A tool's parameters as one typed value.
pub trait Params: Sized + Send + 'static {
    fn params() -> &'static [Param];
    fn parse(args: &Args) -> Result<Self, ToolError>;
}

/// No parameters.
pub struct NoParams;

impl Params for NoParams {
    fn params() -> &'static [Param] {
        &[]
    }
    fn parse(_: &Args) -> Result<Self, ToolError> {
        Ok(NoParams)
    }
}

/// Declares a parameter struct (`tool_params!`). Each field is `name: Type = Kind, presence, "doc";`
/// where presence is `required`, `optional`, `nullable`, `default(json value)` or
/// `unlisted` (taken, not in the schema). A field named with `r#` (`r#ref`) is the
/// parameter without it.
#[macro_export]
macro_rules! tool_params {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_meta:meta])* $field:ident : $ty:ty = $kind:expr , $presence:ident $(($default:expr))? , $doc:expr ;)*
        }
    ) => {
        $(#[$meta])*
        #[allow(non_snake_case)]
        $vis struct $name {
            $($(#[$field_meta])* pub $field: $ty,)*
        }

        impl $crate::params::Params for $name {
            fn params() -> &'static [$crate::params::Param] {
                static PARAMS: std::sync::OnceLock<Vec<$crate::params::Param>> =
                    std::sync::OnceLock::new();
                PARAMS.get_or_init(|| {
                    #[allow(unused_imports)]
                    use $crate::params::Kind::*;
                    vec![$($crate::params::Param {
                        name: $crate::params::field_name(stringify!($field)),
                        kind: $kind,
                        presence: $crate::presence!($presence $(($default))?),
                        doc: $doc,
                    },)*]
                })
            }

            #[allow(unused_variables)]
            fn parse(args: &$crate::params::Args) -> Result<Self, $crate::face::ToolError> {
                let params = <Self as $crate::params::Params>::params();
                Ok($name {
                    $($field: args.field(params, $crate::params::field_name(stringify!($field)))?,)*
                })
            }
        }
    };
}

#[macro_export]
macro_rules! presence {
    (required) => {
        $crate::params::Presence::Required
    };
    (optional) => {
        $crate::params::Presence::Optional
    };
    (nullable) => {
        $crate::params::Presence::Nullable
    };
    (unlisted) => {
        $crate::params::Presence::Unlisted
    };
    (default($value:expr)) => {
        $crate::params::Presence::Default(serde_json::json!($value))
    };
}

/// `r#ref` → `ref`.
pub fn field_name(field: &'static str) -> &'static str {
    field.strip_prefix("r#").unwrap_or(field)
}

fn base_schema(kind: Kind) -> Value {
    match kind {
        Kind::Str => json!({"type": "string"}),
        Kind::Bool => json!({"type": "boolean"}),
        Kind::Int { min, max } => bounded("integer", min as f64, max as f64),
        Kind::Num { min, max } => bounded("number", min, max),
        Kind::Seconds { max } | Kind::Millis { max } => bounded("number", 0.0, max),
        Kind::Choice(options) => json!({"type": "string", "enum": options}),
        Kind::Locator => json!({"type": ["string", "object"]}),
        Kind::TabHandle => json!({"type": "string"}),
        Kind::TabId => json!({"type": ["integer", "string"]}),
        Kind::NativeTabId => json!({"type": "integer"}),
        Kind::TabIds => json!({
            "type": ["integer", "string", "array"],
            "items": {"type": ["integer", "string"]},
        }),
        Kind::IntList => json!({"type": "array", "items": {"type": "integer"}}),
        Kind::Object => json!({"type": "object"}),
        Kind::NumberMap => json!({"type": "object", "additionalProperties": {"type": "number"}}),
        Kind::Point => json!({
            "type": "object",
            "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            "required": ["x", "y"],
        }),
        Kind::List => json!({"type": "array"}),
        Kind::Strs => json!({"type": ["string", "array"], "items": {"type": "string"}}),
        Kind::StrListOrObject => json!({"type": ["string", "array", "object"]}),
        Kind::Text => json!({"type": "string"}),
        Kind::Any => json!({}),
    }
}

/// A number's schema. Every call is checked against both bounds; the schema shows only
/// those that tell a caller something: a floor above zero, a ceiling a real call could
/// meet (not a sanity cap like 86,400 s or 2^63). Every tool's schema is read by every
/// session before its first call, so each byte here is paid many times.
fn bounded(kind: &str, min: f64, max: f64) -> Value {
    let mut schema = json!({ "type": kind });
    if min > 0.0 {
        schema["minimum"] = number(min);
    }
    if max <= 10_000.0 {
        schema["maximum"] = number(max);
    }
    schema
}

/// 30 rather than 30.0: the same number, shorter.
pub(crate) fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        json!(value as i64)
    } else {
        json!(value)
    }
}

/// `{"type": "string"}` → `{"type": ["string", "null"]}` (and null among an enum's).
fn with_null(mut schema: Value) -> Value {
    match schema.get("type").cloned() {
        Some(Value::String(one)) => schema["type"] = json!([one, "null"]),
        Some(Value::Array(mut many)) => {
            many.push(json!("null"));
            schema["type"] = Value::Array(many);
        }
        _ => {}
    }
    if let Some(options) = schema.get_mut("enum").and_then(Value::as_array_mut) {
        options.push(Value::Null);
    }
    schema
}

/// The JSON schema of a parameter list: properties, required, defaults. Unknown
/// arguments are allowed (they are ignored, and said so).
pub fn schema(params: &[Param]) -> Map<String, Value> {
    let mut properties = Map::new();
    for param in params.iter().filter(|p| !p.unlisted()) {
        let mut property = base_schema(param.kind);
        match &param.presence {
            Presence::Nullable => {
                property = with_null(property);
                property["default"] = Value::Null;
            }
            Presence::Default(value) => {
                property["default"] = match value.as_f64() {
                    Some(n) if value.is_f64() => number(n),
                    _ => value.clone(),
                }
            }
            Presence::Required | Presence::Optional | Presence::Unlisted => {}
        }
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
        .filter(|p| p.required())
        .map(|p| p.name)
        .collect();
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    schema
}

/// Checked arguments of one call, and the names it ignored.
#[derive(Clone)]
pub struct Args {
    values: Map<String, Value>,
    pub ignored: Vec<String>,
}

/// Checks arguments against a declaration. Unknown arguments are set aside (named in
/// `ignored`); a known one of the wrong type or out of range is refused with its name.
pub fn check(params: &[Param], arguments: Option<Map<String, Value>>) -> Result<Args, ToolError> {
    let mut values = arguments.unwrap_or_default();
    // Clients send explicit nulls for omitted optionals; treat them as absent.
    values.retain(|_, v| !v.is_null());
    let ignored = undeclared(params, &values);
    for name in &ignored {
        values.remove(name);
    }
    for param in params {
        match values.get(param.name) {
            None if param.required() => {
                return Err(ToolError::param(param.name, missing(param, &ignored)));
            }
            None => {}
            Some(value) => check_value(param, value)?,
        }
    }
    Ok(Args { values, ignored })
}

/// The arguments of a call that the tool does not declare, in name order.
pub fn undeclared(params: &[Param], arguments: &Map<String, Value>) -> Vec<String> {
    // A null is an argument left out (see `check`).
    let mut names: Vec<String> = arguments
        .iter()
        .filter(|(name, value)| !value.is_null() && !params.iter().any(|p| p.name == name.as_str()))
        .map(|(name, _)| name.clone())
        .collect();
    names.sort();
    names
}

/// Why a required argument is refused: it is missing; when the call gave a `ref` this
/// tool does not take beside its selector, where the ref goes instead; when it gave
/// other names, that those are not this tool's (a peer's spelling, say).
fn missing(param: &Param, ignored: &[String]) -> String {
    if param.name == "selector" && ignored.iter().any(|name| name == "ref") {
        "is required: a ref from a read goes here, e.g. \"selector\": \"e12\"".into()
    } else if ignored.is_empty() {
        "is required".into()
    } else {
        format!(
            "is required (the call gave {} instead, which this tool does not take)",
            ignored.join(", ")
        )
    }
}

fn check_value(param: &Param, value: &Value) -> Result<(), ToolError> {
    let fail = |expected: String| {
        Err(ToolError::param(
            param.name,
            format!("expected {expected}, got {}", short(value)),
        ))
    };
    let is_id = |v: &Value| v.is_string() || v.is_u64();
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
        Kind::Seconds { max } | Kind::Millis { max } => match value.as_f64() {
            Some(n) if n.is_finite() && (0.0..=max).contains(&n) => Ok(()),
            _ => fail(format!("a number from 0 to {max}")),
        },
        Kind::Choice(options) => match value.as_str() {
            Some(s) if options.contains(&s) => Ok(()),
            _ => fail(format!("one of {}", options.join(", "))),
        },
        Kind::Locator if !(value.is_string() || value.is_object()) => fail(
            "a CSS selector string or a locator object like {\"role\": \"button\", \"name\": \"Save\"}"
                .into(),
        ),
        Kind::TabId | Kind::NativeTabId | Kind::TabHandle if !is_id(value) => {
            fail("a tab id (3) or handle (\"managed:3\")".into())
        }
        Kind::TabIds
            if !(is_id(value) || value.as_array().is_some_and(|a| a.iter().all(is_id))) =>
        {
            fail("a tab id, a handle, or a list of them".into())
        }
        Kind::IntList if !value.as_array().is_some_and(|a| a.iter().all(Value::is_u64)) => {
            fail("a list of ids (integers)".into())
        }
        Kind::Object if !value.is_object() => fail("an object".into()),
        Kind::NumberMap
            if !value
                .as_object()
                .is_some_and(|o| o.values().all(Value::is_number)) =>
        {
            fail("an object of numbers".into())
        }
        Kind::Point
            if !(value["x"].as_f64().is_some_and(f64::is_finite)
                && value["y"].as_f64().is_some_and(f64::is_finite)) =>
        {
            fail("{\"x\": number, \"y\": number}".into())
        }
        Kind::List if !value.is_array() => fail("a list".into()),
        Kind::Strs
            if !(value.is_string()
                || value.as_array().is_some_and(|a| a.iter().all(Value::is_string))) =>
        {
            fail("a string or a list of strings".into())
        }
        Kind::StrListOrObject if !(value.is_string() || value.is_array() || value.is_object()) => {
            fail("a string, a list or an object".into())
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
    /// The argument, or its declared default.
    fn get<'a>(&'a self, params: &'a [Param], name: &str) -> Option<&'a Value> {
        self.values.get(name).or_else(|| {
            params
                .iter()
                .find(|p| p.name == name)
                .and_then(Param::default)
        })
    }

    /// A field of a `tool_params!` struct: the argument or its declared default, converted to
    /// the field's type.
    pub fn field<T: FromArg>(&self, params: &[Param], name: &str) -> Result<T, ToolError> {
        T::from_arg(name, self.get(params, name))
    }

    pub fn raw(&self) -> &Map<String, Value> {
        &self.values
    }
}

/// Turns one checked argument (None: not given) into a field's type.
pub trait FromArg: Sized {
    fn from_arg(name: &str, value: Option<&Value>) -> Result<Self, ToolError>;
}

fn wrong(name: &str, what: &str) -> ToolError {
    ToolError::param(name, format!("expected {what}"))
}

fn required(name: &str) -> ToolError {
    ToolError::param(name, "is required")
}

impl FromArg for String {
    fn from_arg(name: &str, value: Option<&Value>) -> Result<Self, ToolError> {
        match value {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(wrong(name, "a string")),
            None => Err(required(name)),
        }
    }
}

impl FromArg for bool {
    fn from_arg(name: &str, value: Option<&Value>) -> Result<Self, ToolError> {
        value
            .ok_or_else(|| required(name))?
            .as_bool()
            .ok_or_else(|| wrong(name, "true or false"))
    }
}

impl FromArg for f64 {
    fn from_arg(name: &str, value: Option<&Value>) -> Result<Self, ToolError> {
        value
            .ok_or_else(|| required(name))?
            .as_f64()
            .ok_or_else(|| wrong(name, "a number"))
    }
}

impl FromArg for i64 {
    fn from_arg(name: &str, value: Option<&Value>) -> Result<Self, ToolError> {
        value
            .ok_or_else(|| required(name))?
            .as_i64()
            .ok_or_else(|| wrong(name, "an integer"))
    }
}

impl FromArg for Value {
    fn from_arg(name: &str, value: Option<&Value>) -> Result<Self, ToolError> {
        value.cloned().ok_or_else(|| required(name))
    }
}

/// A tab id or handle as text ("3" or "managed:3").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabRef(pub String);

impl FromArg for TabRef {
    fn from_arg(name: &str, value: Option<&Value>) -> Result<Self, ToolError> {
        match value.ok_or_else(|| required(name))? {
            Value::String(s) => Ok(TabRef(s.clone())),
            Value::Number(n) => Ok(TabRef(n.to_string())),
            _ => Err(wrong(name, "a tab id or handle")),
        }
    }
}

/// One or many tab ids or handles, as text.
impl FromArg for Vec<TabRef> {
    fn from_arg(name: &str, value: Option<&Value>) -> Result<Self, ToolError> {
        match value.ok_or_else(|| required(name))? {
            Value::Array(items) => items
                .iter()
                .map(|item| TabRef::from_arg(name, Some(item)))
                .collect(),
            one => Ok(vec![TabRef::from_arg(name, Some(one))?]),
        }
    }
}

/// A string or a list of strings.
impl FromArg for Vec<String> {
    fn from_arg(name: &str, value: Option<&Value>) -> Result<Self, ToolError> {
        match value.ok_or_else(|| required(name))? {
            Value::String(one) => Ok(vec![one.clone()]),
            Value::Array(items) => items
                .iter()
                .map(|item| String::from_arg(name, Some(item)))
                .collect(),
            _ => Err(wrong(name, "a string or a list of strings")),
        }
    }
}

/// A list of integer ids.
impl FromArg for Vec<u64> {
    fn from_arg(name: &str, value: Option<&Value>) -> Result<Self, ToolError> {
        value
            .ok_or_else(|| required(name))?
            .as_array()
            .ok_or_else(|| wrong(name, "a list of ids"))?
            .iter()
            .map(|v| v.as_u64().ok_or_else(|| wrong(name, "a list of ids")))
            .collect()
    }
}

impl<T: FromArg> FromArg for Option<T> {
    fn from_arg(name: &str, value: Option<&Value>) -> Result<Self, ToolError> {
        match value {
            None | Some(Value::Null) => Ok(None),
            some => T::from_arg(name, some).map(Some),
        }
    }
}

/// The seconds of a `timeout` argument as a deadline.
pub fn seconds(value: f64) -> std::time::Duration {
    engine::seconds(value)
}

/// A time limit given in milliseconds (the chrome face's `timeout`, `timeoutMs`).
pub fn millis(value: f64) -> std::time::Duration {
    seconds(value / 1000.0)
}

/// The time limit a call's checked arguments give it, if its tool declares one (a
/// `Seconds` or `Millis` parameter; its default when the client gave none).
pub fn time_limit(params: &[Param], args: &Args) -> Option<std::time::Duration> {
    params.iter().find_map(|param| {
        let value = args
            .values
            .get(param.name)
            .or(param.default())
            .and_then(Value::as_f64);
        match param.kind {
            Kind::Seconds { .. } => Some(engine::seconds(value?)),
            Kind::Millis { .. } => Some(engine::seconds(value? / 1000.0)),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::tool_params! {
        struct Example {
            url: String = Str, required, "";
            timeout: f64 = Num { min: 0.0, max: 60.0 }, default(15.0), "";
            format: Option<String> = Choice(&["png", "jpeg"]), nullable, "";
            r#ref: Option<String> = Str, optional, "";
        }
    }

    fn args(value: Value) -> Result<Example, ToolError> {
        let checked = check(Example::params(), value.as_object().cloned())?;
        Example::parse(&checked)
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
        ];
        for (input, expected) in cases {
            let message = args(input).err().unwrap().to_string();
            assert!(message.starts_with(expected), "{message}");
        }
    }

    #[test]
    fn defaults_apply_and_unknown_arguments_are_set_aside() {
        let checked = check(
            Example::params(),
            json!({"url": "x", "timeout": null, "bogus": 1, "ref": "ref_3"})
                .as_object()
                .cloned(),
        )
        .unwrap();
        assert_eq!(checked.ignored, ["bogus"]);
        let example = Example::parse(&checked).unwrap();
        assert_eq!(example.url, "x");
        assert_eq!(example.timeout, 15.0);
        assert_eq!(example.format, None);
        assert_eq!(example.r#ref.as_deref(), Some("ref_3"));
    }

    #[test]
    fn the_schema_carries_types_defaults_and_nulls() {
        let schema = schema(Example::params());
        assert_eq!(schema["required"], json!(["url"]));
        assert!(schema.get("additionalProperties").is_none());
        let properties = &schema["properties"];
        // A whole number is declared without a needless `.0`.
        assert_eq!(properties["timeout"]["default"], json!(15));
        assert_eq!(properties["format"]["type"], json!(["string", "null"]));
        assert_eq!(properties["format"]["enum"], json!(["png", "jpeg", null]));
        assert_eq!(properties["format"]["default"], Value::Null);
        assert!(properties["ref"].get("default").is_none());
    }

    crate::tool_params! {
        struct Aliased {
            selector: Option<Value> = Locator, nullable, "";
            r#ref: Option<String> = Str, unlisted, "";
        }
    }

    #[test]
    fn an_unlisted_parameter_is_taken_but_not_shown() {
        let params = Aliased::params();
        let checked = check(params, json!({"ref": "e3"}).as_object().cloned()).unwrap();
        assert!(checked.ignored.is_empty());
        let aliased = Aliased::parse(&checked).unwrap();
        assert_eq!(aliased.r#ref.as_deref(), Some("e3"));
        assert_eq!(aliased.selector, None);
        let listed = schema(params);
        assert!(listed["properties"].get("ref").is_none(), "{listed:?}");
        assert!(listed["properties"].get("selector").is_some());
    }

    crate::tool_params! {
        #[allow(dead_code)] // only its declaration is used here
        struct InMillis {
            timeoutMs: f64 = Millis { max: 600_000.0 }, default(30_000.0), "";
        }
    }

    #[test]
    fn a_time_limit_is_read_in_its_own_unit() {
        use std::time::Duration;
        let limit = |params: &[Param], value: Value| {
            time_limit(params, &check(params, value.as_object().cloned()).unwrap())
        };
        let millis = InMillis::params();
        assert_eq!(limit(millis, json!({})), Some(Duration::from_secs(30)));
        assert_eq!(
            limit(millis, json!({"timeoutMs": 1500})),
            Some(Duration::from_millis(1500))
        );
        let seconds = [Param {
            name: "timeout",
            kind: Kind::Seconds { max: 86_400.0 },
            presence: Presence::Default(json!(15.0)),
            doc: "",
        }];
        assert_eq!(
            limit(&seconds, json!({"timeout": 2})),
            Some(Duration::from_secs(2))
        );
        assert_eq!(limit(&seconds, json!({})), Some(Duration::from_secs(15)));
        // A day is the longest, as the schemas say.
        assert_eq!(
            limit(&seconds, json!({"timeout": 86_400})),
            Some(Duration::from_secs(86_400))
        );
        assert_eq!(limit(Example::params(), json!({"url": "x"})), None);
    }
}
