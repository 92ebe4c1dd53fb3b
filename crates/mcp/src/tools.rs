//! Which tools a session serves (`--tools`): every tool of its faces (the default, a
//! drop-in for the originals), the everyday ones (`core`), or exactly those named. A tool
//! left out is neither listed nor callable. A narrowed list is also declared compactly
//! (no annotation that only repeats MCP's default, no default that is what leaving the
//! argument out means anyway, no `null` in a type, no output schema that only says
//! "object"): an agent that asked for fewer tools asked to read less before its first
//! call.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::face::{Face, ToolDef};

/// The tools a session serves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolSet {
    /// Every tool of the faces, as the originals serve them.
    #[default]
    All,
    /// Exactly these, by name, and each face's everyday tools (`Face::core`) when
    /// `core` is named among them.
    Some { core: bool, names: BTreeSet<String> },
}

impl ToolSet {
    /// `all`, or tool names separated by commas, `core` among them standing for each
    /// face's everyday tools (`core`, `core,get_cookies`); every name must be a tool of
    /// one of `faces`.
    pub fn parse(text: &str, faces: &[&'static Face]) -> Result<ToolSet, String> {
        if matches!(text.trim(), "" | "all") {
            return Ok(ToolSet::All);
        }
        let mut names: BTreeSet<String> = text
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .collect();
        let core = names.remove("core");
        let unknown: Vec<&str> = names
            .iter()
            .filter(|name| {
                !faces
                    .iter()
                    .any(|f| f.tools.iter().any(|t| t.name == *name))
            })
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            let served: Vec<&str> = faces.iter().map(|f| f.name).collect();
            return Err(format!(
                "--tools names {} that the face{} {} do{} not serve (all, core, or tool names; `tabwire tools` lists them)",
                unknown.join(", "),
                if served.len() > 1 { "s" } else { "" },
                served.join(", "),
                if served.len() > 1 { "" } else { "es" },
            ));
        }
        Ok(ToolSet::Some { core, names })
    }

    /// How it is written in `--tools` (and a broker's preamble).
    pub fn spelling(&self) -> String {
        match self {
            ToolSet::All => "all".into(),
            ToolSet::Some { core, names } => {
                let core = core.then(|| "core".to_owned());
                core.into_iter()
                    .chain(names.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(",")
            }
        }
    }

    /// Whether a face's tool is served.
    pub fn serves(&self, face: &Face, tool: &ToolDef) -> bool {
        match self {
            ToolSet::All => true,
            ToolSet::Some { core, names } => {
                (*core && face.core.contains(&tool.name)) || names.contains(tool.name)
            }
        }
    }

    /// Whether tools are declared compactly (any set narrower than all).
    pub fn compact(&self) -> bool {
        *self != ToolSet::All
    }
}

/// A parameter schema without what says nothing: a default of `null`, `""` or `false`
/// (what leaving the argument out means anyway) and `null` among a property's types
/// (leaving it out is how one passes none).
pub fn compact_schema(mut schema: Map<String, Value>) -> Map<String, Value> {
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return schema;
    };
    for property in properties.values_mut() {
        let Value::Object(property) = property else {
            continue;
        };
        let says_nothing = |default: &Value| {
            default.is_null() || *default == Value::Bool(false) || default.as_str() == Some("")
        };
        if property.get("default").is_some_and(says_nothing) {
            property.remove("default");
        }
        if let Some(Value::Array(types)) = property.get_mut("type") {
            types.retain(|t| t != "null");
            if types.len() == 1 {
                let only = types.remove(0);
                property.insert("type".into(), only);
            }
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::faces::ALL;

    #[test]
    fn names_are_checked_against_the_faces_served() {
        let faces: Vec<&'static Face> = ALL.to_vec();
        assert_eq!(ToolSet::parse("all", &faces), Ok(ToolSet::All));
        let core = ToolSet::parse("core", &faces).unwrap();
        assert_eq!(core.spelling(), "core");
        let named = ToolSet::parse("scan_page, chrome_navigate", &faces).unwrap();
        assert_eq!(named.spelling(), "chrome_navigate,scan_page");
        let more = ToolSet::parse("get_cookies,core", &faces).unwrap();
        assert_eq!(more.spelling(), "core,get_cookies");
        let btap_only = crate::faces::by_names("btap").unwrap();
        let error = ToolSet::parse("scan_page,chrome_navigate,nope", &btap_only).unwrap_err();
        assert!(error.contains("chrome_navigate, nope"), "{error}");
        assert!(!error.contains("scan_page"), "{error}");
    }

    #[test]
    fn every_core_tool_is_a_tool_of_its_face() {
        for face in ALL {
            assert!(!face.core.is_empty(), "{}", face.name);
            for name in face.core {
                assert!(
                    face.tools.iter().any(|t| t.name == *name && t.listed),
                    "{name} is not a listed tool of {}",
                    face.name
                );
            }
        }
    }

    #[test]
    fn a_compact_schema_drops_null_defaults_and_null_types_only() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": ["string", "null"], "default": null, "description": "x"},
            "b": {"type": ["string", "object", "null"], "default": null},
            "c": {"type": "number", "default": 15},
            "d": {"type": "boolean", "default": false},
            "e": {"type": "string", "default": ""},
            "f": {"type": "boolean", "default": true},
        }});
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        let compact = Value::Object(compact_schema(schema));
        assert_eq!(
            compact["properties"]["a"],
            json!({"type": "string", "description": "x"})
        );
        assert_eq!(
            compact["properties"]["b"],
            json!({"type": ["string", "object"]})
        );
        assert_eq!(
            compact["properties"]["c"],
            json!({"type": "number", "default": 15})
        );
        assert_eq!(compact["properties"]["d"], json!({"type": "boolean"}));
        assert_eq!(compact["properties"]["e"], json!({"type": "string"}));
        assert_eq!(
            compact["properties"]["f"],
            json!({"type": "boolean", "default": true})
        );
    }
}
