//! The btap face against BrowserTap's own declarations: every tool, every parameter's
//! type, required set and default, every annotation at least as conservative, and the
//! envelope's output schema. `fixtures/btap-tools.json` and `fixtures/btap-annotations.json`
//! are BrowserTap's declarations as read from its public source.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::support::Tabwire;

fn fixture(name: &str) -> Map<String, Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/e2e/fixtures")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("fixture JSON")
}

/// "integer|string|array<integer|string>" → {"array<integer|string>", "integer", "string"}.
fn declared_types(text: &str) -> BTreeSet<String> {
    let mut types = BTreeSet::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '|' if depth == 0 => {
                types.insert(canonical(&current));
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    types.insert(canonical(&current));
    types
}

/// Sorts the item types of `array<…>` so that orders do not matter.
fn canonical(one: &str) -> String {
    match one.split_once('<') {
        Some((outer, inner)) => {
            let mut items: Vec<&str> = inner.trim_end_matches('>').split('|').collect();
            items.sort();
            format!("{outer}<{}>", items.join("|"))
        }
        None => one.to_owned(),
    }
}

/// Our schema property, in the same notation.
fn schema_types(property: &Value) -> BTreeSet<String> {
    let names: Vec<String> = match &property["type"] {
        Value::String(one) => vec![one.clone()],
        Value::Array(many) => many
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    names
        .into_iter()
        .map(|name| match name.as_str() {
            "array" => match &property["items"]["type"] {
                Value::Null => "array".to_owned(),
                items => canonical(&format!("array<{}>", declared(items).join("|"))),
            },
            "object" => match property["additionalProperties"]["type"].as_str() {
                Some(inner) => format!("object<{inner}>"),
                None => "object".to_owned(),
            },
            _ => name,
        })
        .collect()
}

fn declared(types: &Value) -> Vec<String> {
    match types {
        Value::String(one) => vec![one.clone()],
        Value::Array(many) => many
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// 15 and 15.0 are one default.
fn same_default(ours: Option<&Value>, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Some(a), b) if a.is_number() && b.is_number() => a.as_f64() == b.as_f64(),
        (Some(a), b) => a == b,
        (None, _) => false,
    }
}

#[tokio::test]
async fn every_browsertap_tool_has_its_parameters_defaults_and_annotations() {
    let tools_json = fixture("btap-tools.json");
    let annotations_json = fixture("btap-annotations.json");
    let tw = Tabwire::managed("contract").await;
    let tools = tw.client.list_all_tools().await.expect("tools/list");
    let listed: BTreeSet<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let theirs: BTreeSet<&str> = tools_json.keys().map(String::as_str).collect();
    assert_eq!(theirs.len(), 51);
    let missing: Vec<&&str> = theirs.difference(&listed).collect();
    assert!(missing.is_empty(), "BrowserTap tools missing: {missing:?}");
    let mut problems = Vec::new();
    for (name, params) in &tools_json {
        let tool = tools.iter().find(|t| t.name == name.as_str()).unwrap();
        let schema = &tool.input_schema;
        let properties = &schema["properties"];
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (param, declared) in params.as_object().unwrap() {
            let Some(property) = properties.get(param.as_str()) else {
                problems.push(format!("{name}.{param}: missing"));
                continue;
            };
            let want = declared_types(declared["type"].as_str().unwrap());
            let got = schema_types(property);
            if want != got {
                problems.push(format!("{name}.{param}: type {got:?}, BrowserTap {want:?}"));
            }
            let is_required = declared["required"] == true;
            if required.contains(param.as_str()) != is_required {
                problems.push(format!("{name}.{param}: required differs"));
            }
            if !is_required {
                let theirs = declared.get("default").unwrap_or(&Value::Null);
                if !same_default(property.get("default"), theirs) {
                    problems.push(format!(
                        "{name}.{param}: default {:?}, BrowserTap {theirs}",
                        property.get("default")
                    ));
                }
            }
        }
        // Parameters of our own are additive: never required.
        for extra in required
            .iter()
            .filter(|p| !params.as_object().unwrap().contains_key(**p))
        {
            problems.push(format!(
                "{name}.{extra}: a required parameter BrowserTap lacks"
            ));
        }
        // Every optional parameter carries a default.
        for (param, property) in properties.as_object().unwrap() {
            if !required.contains(param.as_str()) && property.get("default").is_none() {
                problems.push(format!("{name}.{param}: no default"));
            }
        }
        let theirs = &annotations_json[name.as_str()];
        let ours = tool.annotations.clone().expect("annotations");
        let flag = |key: &str| theirs[key].as_bool().unwrap();
        if ours.read_only_hint == Some(true) && !flag("readOnlyHint") {
            problems.push(format!("{name}: read-only where BrowserTap is not"));
        }
        if flag("destructiveHint") && ours.destructive_hint != Some(true) {
            problems.push(format!("{name}: not destructive where BrowserTap is"));
        }
        if flag("openWorldHint") && ours.open_world_hint != Some(true) {
            problems.push(format!("{name}: not open-world where BrowserTap is"));
        }
        if ours.idempotent_hint == Some(true) && !flag("idempotentHint") {
            problems.push(format!("{name}: idempotent where BrowserTap is not"));
        }
        match &tool.output_schema {
            Some(schema) if schema["type"] == "object" => {}
            _ => problems.push(format!("{name}: no object outputSchema")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_type_notation_reads_as_meant() {
    assert_eq!(
        declared_types("integer|string|array<string|integer>"),
        ["array<integer|string>", "integer", "string"]
            .map(String::from)
            .into()
    );
    let property =
        serde_json::json!({"type": ["object", "null"], "additionalProperties": {"type": "number"}});
    assert_eq!(
        schema_types(&property),
        ["null", "object<number>"].map(String::from).into()
    );
}
