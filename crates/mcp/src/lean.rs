//! Lean replies (`--replies lean`): the same facts as a face's exact reply, written for a
//! model to read rather than for a parser. Every face's exact reply is made first (so
//! success, failure, retry verdicts and delivery facts are decided in one place, the
//! face's own), then written again here:
//!
//! - a success is the reply's own lean text (an outline, what an input did) or its
//!   payload as indented `key: value` lines, with nothing null, empty or merely "ok";
//! - a failure is one line: `error <code> (retryable|not retryable): <message>`, then the
//!   facts an agent decides by (what covered the point, whether it may have run, the
//!   receipt to collect) on the same line;
//! - images stay image content; nothing is repeated as structured content.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use crate::face::{Face, Rendered};

/// Keys that carry no news in a lean reply: the envelope's furniture and flags that only
/// say "it worked".
const SILENT: &[&str] = &[
    "result_contract",
    "version",
    "target",
    "diagnostics",
    "legacy",
    "error",
    "error_code",
    "retryable",
    "data",
    "ok",
    "success",
    "input_mode",
    "foreground_changed",
    // BrowserTap's account of every input: which tab (the header says), the CDP replies,
    // the bot-check bookkeeping.
    "session_id",
    "active_session_id",
    "result",
    "input_commands_dispatched",
    "challenge_check",
    "attempts",
];

/// Flags that are news only when they are set.
const SAID_WHEN_TRUE: &[&str] = &["challenge_detected", "input_dispatched", "manual_blocked"];

/// Diagnostics worth a lean line (the rest is bookkeeping).
const SAID_DIAGNOSTICS: &[&str] = &[
    "ignored_arguments",
    "switched_session",
    "switched_from",
    "superseded_operation_id",
    "reason",
];

/// Writes `exact` (the face's exact result) as a lean one; `lean` is the reply's own
/// lean text, if it wrote one.
pub fn rewrite(
    face: &Face,
    exact: CallToolResult,
    lean: Option<String>,
    call: &Rendered,
) -> CallToolResult {
    let failed = exact.is_error == Some(true);
    let mut images = Vec::new();
    let mut text = String::new();
    for block in exact.content {
        match block {
            ContentBlock::Text(t) => text = t.text.clone(),
            other => images.push(other),
        }
    }
    // btap's envelope (as text and structured content alike) or the chrome face's
    // payload; a chrome error is already a plain line.
    let parsed: Option<Value> = exact
        .structured_content
        .or_else(|| serde_json::from_str(&text).ok());
    let written = match (face.name, parsed) {
        ("btap", Some(envelope)) => envelope_text(&envelope, lean),
        (_, Some(payload)) if !failed => lean.unwrap_or_else(|| encode(&payload)),
        (_, Some(payload)) => failure_line(None, None, &payload),
        (_, None) if failed => format!("error: {text}"),
        (_, None) => lean.unwrap_or(text),
    };
    let mut written = written.trim_end().to_owned();
    if face.name != "btap" && !call.ignored.is_empty() {
        written.push_str(&format!("\nignored arguments: {}", call.ignored.join(", ")));
    }
    let mut content = vec![ContentBlock::text(written)];
    content.extend(images);
    if failed {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

/// A btap envelope, leanly: its data (or the reply's lean text) and the diagnostics that
/// say something; a failure as one line.
fn envelope_text(envelope: &Value, lean: Option<String>) -> String {
    if envelope["ok"] != true {
        let code = envelope["error_code"].as_str();
        let retryable = envelope["retryable"].as_bool();
        // A failure the tool reported carries its payload; a raised one its delivery
        // facts at the envelope's top.
        let facts = envelope.get("legacy").unwrap_or(envelope);
        let mut line = failure_line(code, retryable, facts);
        // What the diagnostics add that decides the next call: the parameter at fault,
        // arguments set aside, tabwire's more specific reason.
        let diagnostics = &envelope["diagnostics"];
        for key in [
            "param",
            "ignored_arguments",
            "reason",
            "next_action",
            "stale_session_id",
        ] {
            let said = facts.get(key).is_some();
            if let Some(value) = diagnostics.get(key).filter(|v| !is_empty(v) && !said) {
                line.push_str(&format!("; {}: {}", key.replace('_', " "), inline(value)));
            }
        }
        return line;
    }
    let mut out = lean.unwrap_or_else(|| encode(&envelope["data"]));
    let diagnostics = &envelope["diagnostics"];
    for key in SAID_DIAGNOSTICS {
        if let Some(value) = diagnostics.get(*key).filter(|v| !is_empty(v)) {
            out.push_str(&format!("\n{}: {}", key.replace('_', " "), inline(value)));
        }
    }
    out
}

/// `error obscured (retryable): another element covers the point; occluded by: …`.
fn failure_line(code: Option<&str>, retryable: Option<bool>, facts: &Value) -> String {
    let code = code
        .or_else(|| facts["code"].as_str())
        .or_else(|| facts["status"].as_str())
        .unwrap_or("failed");
    let message = facts["message"]
        .as_str()
        .or_else(|| facts["error"].as_str())
        .or_else(|| facts["error"]["message"].as_str())
        .unwrap_or_default();
    let mut line = format!("error {code}");
    match retryable {
        Some(true) => line.push_str(" (retryable)"),
        Some(false) => line.push_str(" (not retryable)"),
        None => {}
    }
    if !message.is_empty() {
        line.push_str(": ");
        line.push_str(message);
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
                let quiet_flag = SAID_WHEN_TRUE.contains(&key) && **v == Value::Bool(false);
                !(said.contains(&key) || SILENT.contains(&key) || is_empty(v) || quiet_flag)
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
pub fn encode(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) => object_lines(map, 0, &mut out),
        Value::Array(items) => array_lines(items, 0, &mut out),
        other => out.push_str(&scalar(other)),
    }
    out
}

fn object_lines(map: &Map<String, Value>, depth: usize, out: &mut String) {
    for (key, value) in map {
        if is_empty(value) || SILENT.contains(&key.as_str()) {
            continue;
        }
        let indent = " ".repeat(depth);
        match value {
            Value::Object(inner) if inline(value).len() > 80 => {
                out.push_str(&format!("{indent}{key}:\n"));
                object_lines(inner, depth + 1, out);
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
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// How an element is named in a lean line: `button "Save"`, else its tag and id.
pub fn element(element: &Value) -> String {
    let role = element["role"]
        .as_str()
        .or_else(|| element["tag"].as_str())
        .or_else(|| element["tagName"].as_str())
        .unwrap_or("element");
    let name = ["label", "name", "text"]
        .iter()
        .find_map(|key| element[*key].as_str().filter(|n| !n.is_empty()));
    match (name, element["id"].as_str().filter(|id| !id.is_empty())) {
        (Some(name), _) => format!("{role} {}", quote(name)),
        (None, Some(id)) => format!("{role}#{id}"),
        (None, None) => role.to_owned(),
    }
}

/// A click, leanly: what was hit (or the point), and what it set off.
pub fn clicked(
    element: &Value,
    point: Option<(f64, f64)>,
    hit_verified: bool,
    dialogs: &Value,
) -> String {
    let mut line = match (element.is_object(), point) {
        (true, _) => format!("clicked {}", self::element(element)),
        (false, Some((x, y))) => format!("clicked at ({}, {})", x.round(), y.round()),
        (false, None) => "clicked".to_owned(),
    };
    if !hit_verified {
        line.push_str(" (the hit could not be verified)");
    }
    for dialog in dialogs.as_array().into_iter().flatten() {
        line.push_str(&format!(
            "; a dialog opened and was answered: {}",
            inline(dialog)
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

    #[test]
    fn a_payload_keeps_its_facts_and_drops_what_says_nothing() {
        let text = encode(&json!({
            "success": true, "tabId": 3, "url": "http://x/", "note": null, "list": [],
            "checked": false, "element": {"tag": "input", "id": "q"},
        }));
        assert_eq!(
            text,
            "checked: false\nelement: {id: q, tag: input}\ntabId: 3\nurl: http://x/\n"
        );
    }

    #[test]
    fn a_failure_is_one_line_with_its_code_verdict_and_facts() {
        let line = failure_line(
            Some("obscured"),
            Some(true),
            &json!({"message": "another element covers the point", "status": "obscured",
                    "occluded_by": {"tag": "div", "id": "cover"}, "retry_safe": true}),
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
        let text = encode(&json!({"outer": {"a": long, "b": 2}, "body": "one\ntwo"}));
        assert!(text.contains("outer:\n a: xxx"), "{text}");
        assert!(text.contains("body:\n one\n two\n"), "{text}");
    }
}
