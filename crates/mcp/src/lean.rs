//! Lean replies (`--replies lean`): the same facts as a face's exact reply, written for a
//! model to read rather than for a parser. A face judges each call once (success or
//! failure, its code, retry verdict and delivery facts: an [`Answer`]); its exact writer
//! and this one both write from that judgement, and this one is the same for every face:
//!
//! - a success is the reply's own lean text (an outline, what an input did) or its
//!   payload as indented `key: value` lines, with nothing null, empty or merely "ok";
//! - a failure is one line: `error <code> (retryable|not retryable): <message>`, then the
//!   facts an agent decides by (what covered the point, whether it may have run, the
//!   receipt to collect) on the same line;
//! - images stay image content; nothing is repeated as structured content.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use crate::face::{Answer, Fault, QuietKeys};
use engine::{Dialog, ElementInfo};

/// Facts beside a success worth a lean line (the rest is bookkeeping).
const SAID_FACTS: &[&str] = &[
    "ignored_arguments",
    "switched_session",
    "switched_from",
    "browser_lost",
    "superseded_operation_id",
    "reason",
];

/// Facts beside a reported failure that decide the next call: the parameter at fault,
/// arguments set aside, tabwire's more specific reason, what to do next.
const FAILURE_FACTS: &[&str] = &[
    "param",
    "ignored_arguments",
    "reason",
    "next_action",
    "stale_session_id",
    "switched_session",
    "browser_lost",
];

/// Facts of a raised failure that are bookkeeping, not news.
const BOOKKEEPING: &[&str] = &["tool", "elapsed_ms"];

/// Writes a judged call for a model: the same for every face, from the answer alone.
/// A judged call as a lean reply; `quiet` are the face's keys that carry no news.
pub fn write(answer: Answer, quiet: &QuietKeys) -> CallToolResult {
    let text = match &answer.fault {
        Some(fault) => fault_line(fault, &answer, quiet),
        None => success_text(&answer, quiet),
    };
    let mut content = vec![ContentBlock::text(text.trim_end())];
    content.extend(
        answer
            .images
            .into_iter()
            .map(|(data, mime)| ContentBlock::image(data, mime)),
    );
    if answer.fault.is_some() {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

/// A success: the reply's own lean text or its payload, then the facts beside it that
/// say something (an argument set aside, a tab switched from).
fn success_text(answer: &Answer, quiet: &QuietKeys) -> String {
    let mut out = answer
        .lean
        .clone()
        .unwrap_or_else(|| encode(&answer.payload, quiet));
    for key in SAID_FACTS {
        if let Some(value) = answer.facts.get(*key).filter(|v| !is_empty(v)) {
            out.push_str(&format!("\n{}: {}", key.replace('_', " "), inline(value)));
        }
    }
    out
}

/// A failure as one line: its code, verdict and message, then the facts an agent
/// decides by. A reported failure's are its payload's, and the few facts beside it that
/// decide the next call; a raised failure's are the facts themselves.
fn fault_line(fault: &Fault, answer: &Answer, quiet: &QuietKeys) -> String {
    if !fault.reported {
        let facts: Map<String, Value> = answer
            .facts
            .iter()
            .filter(|(key, _)| !BOOKKEEPING.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        return failure_line(fault, &Value::Object(facts), quiet);
    }
    let mut line = failure_line(fault, &answer.payload, quiet);
    for key in FAILURE_FACTS {
        let said = answer.payload.get(*key).is_some();
        if let Some(value) = answer.facts.get(*key).filter(|v| !is_empty(v) && !said) {
            line.push_str(&format!("; {}: {}", key.replace('_', " "), inline(value)));
        }
    }
    line
}

/// `error obscured (retryable): another element covers the point; occluded_by=…`.
fn failure_line(fault: &Fault, facts: &Value, quiet: &QuietKeys) -> String {
    let mut line = format!("error {}", fault.code);
    match fault.retryable {
        Some(true) => line.push_str(" (retryable)"),
        Some(false) => line.push_str(" (not retryable)"),
        None => {}
    }
    if !fault.message.is_empty() {
        line.push_str(": ");
        line.push_str(&fault.message);
    }
    if let Value::Object(map) = facts {
        let said = [
            "message",
            "error",
            "code",
            "status",
            "retryable",
            "error_code",
        ];
        let rest: Vec<String> = map
            .iter()
            .filter(|(k, v)| {
                let key = k.as_str();
                !(said.contains(&key) || quiet.hides(key, v) || is_empty(v))
            })
            .map(|(k, v)| format!("{k}={}", inline(v)))
            .collect();
        if !rest.is_empty() {
            line.push_str("; ");
            line.push_str(&rest.join(", "));
        }
    }
    line
}

/// A payload as indented `key: value` lines, leaving out what says nothing (null, empty,
/// `success: true`). A short object or list of scalars stays on its key's line.
pub fn encode(value: &Value, quiet: &QuietKeys) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) => object_lines(map, 0, quiet, &mut out),
        Value::Array(items) => array_lines(items, 0, &mut out),
        other => out.push_str(&scalar(other)),
    }
    out
}

fn object_lines(map: &Map<String, Value>, depth: usize, quiet: &QuietKeys, out: &mut String) {
    for (key, value) in map {
        if is_empty(value) || quiet.never.contains(&key.as_str()) {
            continue;
        }
        let indent = " ".repeat(depth);
        match value {
            Value::Object(inner) if inline(value).len() > 80 => {
                out.push_str(&format!("{indent}{key}:\n"));
                object_lines(inner, depth + 1, quiet, out);
            }
            Value::Array(items) if inline(value).len() > 80 => {
                out.push_str(&format!("{indent}{key}:\n"));
                array_lines(items, depth + 1, out);
            }
            Value::String(text) if text.contains('\n') => {
                out.push_str(&format!("{indent}{key}:\n"));
                for line in text.lines() {
                    out.push_str(&format!("{indent} {line}\n"));
                }
            }
            _ => out.push_str(&format!("{indent}{key}: {}\n", inline(value))),
        }
    }
}

fn array_lines(items: &[Value], depth: usize, out: &mut String) {
    let indent = " ".repeat(depth);
    for item in items {
        out.push_str(&format!("{indent}- {}\n", inline(item)));
    }
}

/// One value on one line: `{a: 1, b: x}`, `[1, 2]`, a string as it is.
fn inline(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .filter(|(_, v)| !is_empty(v))
                .map(|(k, v)| format!("{k}: {}", inline(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", parts.join(", "))
        }
        other => scalar(other),
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        // A list of nothing says nothing (BrowserTap's `{}` per input event).
        Value::Array(a) => a.iter().all(is_empty),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// How an element is named in a lean line: `button "Save"`, else its tag and id.
pub fn element(element: &ElementInfo) -> String {
    let role = element.role.as_deref().unwrap_or(&element.tag);
    let role = if role.is_empty() { "element" } else { role };
    let name = [&element.label, &element.name, &element.text]
        .into_iter()
        .find_map(|name| name.as_deref().filter(|n| !n.is_empty()));
    match (name, element.id.as_deref().filter(|id| !id.is_empty())) {
        (Some(name), _) => format!("{role} {}", quote(name)),
        (None, Some(id)) => format!("{role}#{id}"),
        (None, None) => role.to_owned(),
    }
}

/// A click, leanly: what was hit (or the point), and what it set off.
pub fn clicked(
    element: Option<&ElementInfo>,
    point: Option<(f64, f64)>,
    hit_verified: bool,
    dialogs: &[Dialog],
) -> String {
    let mut line = match (element, point) {
        (Some(element), _) => format!("clicked {}", self::element(element)),
        (None, Some((x, y))) => format!("clicked at ({}, {})", x.round(), y.round()),
        (None, None) => "clicked".to_owned(),
    };
    if !hit_verified {
        line.push_str(" (the hit could not be verified)");
    }
    for dialog in dialogs {
        line.push_str(&format!(
            "; a dialog opened and was answered: {}",
            inline(&serde_json::json!(dialog))
        ));
    }
    line
}

/// `"text"` as outlines quote names.
fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The first line of a lean read: the page's title, its URL and the tab. A title that
/// only repeats the URL (an untitled page) is left out, and a long `data:` URL is named
/// by its start and length rather than spelt out.
pub fn header(title: &str, url: &str, tab: &str) -> String {
    const DATA_URL_SHOWN: usize = 40;
    let shown = if url.starts_with("data:") && url.chars().count() > DATA_URL_SHOWN {
        let start: String = url.chars().take(DATA_URL_SHOWN).collect();
        format!("{start}… ({} chars)", url.chars().count())
    } else {
        url.to_owned()
    };
    if title.is_empty() || title == url {
        format!("{shown} · {tab}\n")
    } else {
        format!("{title} · {shown} · {tab}\n")
    }
}

/// A lean read: a header line, the outline, and where to read on.
pub fn outline(snapshot: &engine::Snapshot, tab: &str, offscreen: Option<u64>) -> String {
    let mut out = header(&snapshot.title, &snapshot.url, tab);
    if let Some(state) = &snapshot.unready {
        out.push_str(&format!(
            "[not rendered yet (render_state: {state}): wait, then read again]\n"
        ));
    }
    out.push_str(&snapshot.text);
    if let Some(next) = snapshot.next_line {
        out.push_str(&format!(
            "[cut: {} more lines; read on with cursor \"{next}\"]\n",
            snapshot.lines - next
        ));
    }
    if let Some(count) = offscreen {
        out.push_str(&format!(
            "[{count} more controls outside the viewport: scroll, or viewportOnly: false]\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const QUIET: QuietKeys = QuietKeys {
        never: &["success"],
        unless_true: &["dispatched"],
    };

    #[test]
    fn a_payload_keeps_its_facts_and_drops_what_says_nothing() {
        let text = encode(
            &json!({
                "success": true, "tabId": 3, "url": "http://x/", "note": null, "list": [],
                "checked": false, "element": {"tag": "input", "id": "q"},
            }),
            &QUIET,
        );
        assert_eq!(
            text,
            "checked: false\nelement: {id: q, tag: input}\ntabId: 3\nurl: http://x/\n"
        );
    }

    #[test]
    fn a_failure_is_one_line_with_its_code_verdict_and_facts() {
        let fault = Fault {
            code: "obscured".into(),
            message: "another element covers the point".into(),
            retryable: Some(true),
            reported: true,
        };
        let line = failure_line(
            &fault,
            &json!({"message": "another element covers the point", "status": "obscured",
                    "occluded_by": {"tag": "div", "id": "cover"}, "retry_safe": true,
                    "dispatched": false, "success": false}),
            &QUIET,
        );
        assert_eq!(
            line,
            "error obscured (retryable): another element covers the point; occluded_by={id: cover, tag: div}, retry_safe=true"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn long_values_go_on_lines_of_their_own() {
        let long = "x".repeat(90);
        let text = encode(
            &json!({"outer": {"a": long, "b": 2}, "body": "one\ntwo"}),
            &QUIET,
        );
        assert!(text.contains("outer:\n a: xxx"), "{text}");
        assert!(text.contains("body:\n one\n two\n"), "{text}");
    }
}
