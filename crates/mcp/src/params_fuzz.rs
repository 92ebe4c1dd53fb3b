//! Property test of the parameter layer: for every tool of every face, many generated
//! argument objects (values of the declared kind, of every other kind, at and past the
//! bounds, huge, nested, odd Unicode, unknown names) go through the checks, the tool's
//! own parsing and the face's rendering of the outcome. Whatever comes in, nothing
//! panics, a refusal names a declared parameter, and the rendered reply is the face's
//! own envelope.
//!
//! A CI run covers `TABWIRE_FUZZ_CASES` (default 400) cases per tool, about 20,000 in
//! all, in about a second. A long campaign: `TABWIRE_FUZZ_CASES=200000
//! TABWIRE_FUZZ_SEED=$RANDOM cargo nextest run -p mcp params_fuzz`; a failure prints
//! the seed and case that reproduce it.

use serde_json::{Map, Value, json};

use crate::face::Rendered;
use crate::faces::ALL;
use crate::params::{self, Kind, Param};

/// xorshift64*: small, fast, and the same sequence for the same seed everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const ODD_STRINGS: &[&str] = &[
    "",
    " ",
    "\u{0}",
    "\u{202e}gnp.exe",
    "💥🧨",
    "a\nb\r\nc",
    "../../../../etc/passwd",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "chrome://settings",
    "http://127.0.0.1:9/",
    "#id > .class:nth-child(2n+1)",
    "[[[",
    "managed:1",
    "ext-abc:42",
    "op-0000000000000000-1",
    "null",
    "NaN",
    "-1",
    "1e309",
];

fn any_string(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => ODD_STRINGS[rng.below(ODD_STRINGS.len())].to_owned(),
        1 => "x".repeat(rng.below(70_000)),
        2 => (0..rng.below(40))
            .map(|_| char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('?'))
            .collect(),
        _ => format!("tab-{}", rng.next()),
    }
}

fn any_number(rng: &mut Rng) -> Value {
    match rng.below(8) {
        0 => json!(0),
        1 => json!(-1),
        2 => json!(u64::MAX),
        3 => json!(i64::MIN),
        4 => json!(f64::MAX),
        5 => json!(1e-300),
        6 => json!(rng.below(100) as f64 / 7.0),
        _ => json!(rng.below(10_000)),
    }
}

/// Any JSON value, nested up to `depth`.
fn any_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth == 0 { 4 } else { 6 }) {
        0 => Value::Null,
        1 => json!(rng.chance(50)),
        2 => any_number(rng),
        3 => json!(any_string(rng)),
        4 => Value::Array(
            (0..rng.below(6))
                .map(|_| any_value(rng, depth - 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.below(6))
                .map(|_| (any_string(rng), any_value(rng, depth - 1)))
                .collect(),
        ),
    }
}

/// A value shaped for the kind (often at or just past its bounds).
fn value_of_kind(rng: &mut Rng, kind: Kind) -> Value {
    match kind {
        Kind::Str | Kind::Text | Kind::Strs => json!(any_string(rng)),
        Kind::Bool => json!(rng.chance(50)),
        Kind::Int { min, max } => {
            let edges = [min, max, min.saturating_sub(1), max.saturating_add(1), 0];
            json!(edges[rng.below(edges.len())])
        }
        Kind::Num { min, max } => {
            let edges = [min, max, min - 1.0, max + 1.0, (min + max) / 2.0];
            json!(edges[rng.below(edges.len())])
        }
        Kind::Seconds { max } | Kind::Millis { max } => {
            let edges = [0.0, max, -1.0, max + 1.0, max / 2.0];
            json!(edges[rng.below(edges.len())])
        }
        Kind::Choice(options) if rng.chance(80) => json!(options[rng.below(options.len())]),
        Kind::Choice(_) => json!(any_string(rng)),
        Kind::TabHandle | Kind::TabId | Kind::NativeTabId | Kind::TabIds | Kind::IntList => {
            match rng.below(4) {
                0 => json!(rng.below(50)),
                1 => json!(format!("managed:{}", rng.below(50))),
                2 => json!([rng.below(50), "managed:2"]),
                _ => json!(any_string(rng)),
            }
        }
        Kind::Point => json!({ "x": any_number(rng), "y": any_number(rng) }),
        Kind::NumberMap => json!({ "x": 0, "y": 0, "width": any_number(rng), "height": 1 }),
        Kind::Locator => match rng.below(3) {
            0 => json!(any_string(rng)),
            1 => json!({ "role": "button", "name": any_string(rng) }),
            _ => json!({ "css": "#a", "text": "b", "frame": [any_value(rng, 1)] }),
        },
        Kind::Object | Kind::List | Kind::StrListOrObject | Kind::Any => any_value(rng, 3),
    }
}

/// One argument object for a tool's declaration.
fn arguments(rng: &mut Rng, declared: &[Param]) -> Map<String, Value> {
    let mut args = Map::new();
    for param in declared {
        if rng.chance(if param.required() { 90 } else { 50 }) {
            let value = if rng.chance(75) {
                value_of_kind(rng, param.kind)
            } else {
                any_value(rng, 3)
            };
            args.insert(param.name.to_owned(), value);
        }
    }
    if rng.chance(20) {
        args.insert(any_string(rng), any_value(rng, 2));
    }
    args
}

#[test]
fn whatever_the_arguments_the_parameter_layer_answers_and_never_panics() {
    let cases: usize = std::env::var("TABWIRE_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    let seed: u64 = std::env::var("TABWIRE_FUZZ_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0x7ab_317e);
    let mut rng = Rng(seed | 1);
    let mut accepted = 0;
    let mut refused = 0;
    for face in ALL {
        for tool in face.tools {
            let declared = (tool.params)();
            for case in 0..cases {
                let args = arguments(&mut rng, declared);
                let context = || format!("seed {seed}, {} case {case}: {args:?}", tool.name);
                let checked = params::check(declared, Some(args.clone()));
                // Arguments the schema check lets through must read into the tool's
                // typed parameters: the two are one declaration.
                if let Ok(checked) = &checked
                    && let Err(error) = (tool.parses)(checked)
                {
                    panic!(
                        "passed the schema check but not the typed parse ({error}): {}",
                        context()
                    );
                }
                let outcome = checked;
                let error = match outcome {
                    Ok(checked) => {
                        accepted += 1;
                        assert!(
                            checked
                                .ignored
                                .iter()
                                .all(|n| !declared.iter().any(|p| p.name == n)),
                            "a declared argument was ignored: {}",
                            context()
                        );
                        continue;
                    }
                    Err(error) => error,
                };
                refused += 1;
                if let crate::face::ToolError::Param { name, .. } = &error {
                    assert!(
                        declared.iter().any(|p| p.name == name),
                        "a refusal names '{name}', which {} does not declare: {}",
                        tool.name,
                        context()
                    );
                }
                let rendered = Rendered {
                    called_as: tool.name.to_owned(),
                    elapsed_ms: 0,
                    arguments: args.clone(),
                    ignored: Vec::new(),
                    facts: Default::default(),
                };
                let reply = crate::server::written(
                    face,
                    tool,
                    Err(error),
                    &rendered,
                    crate::face::Replies::Exact,
                );
                assert_eq!(reply.is_error, Some(true), "{}", context());
                assert!(
                    reply.structured_content.is_some() || !reply.content.is_empty(),
                    "{}",
                    context()
                );
            }
        }
    }
    // Both sides were exercised: the generator is not all noise, nor all valid.
    assert!(
        accepted > 0 && refused > 0,
        "accepted {accepted}, refused {refused}"
    );
}
