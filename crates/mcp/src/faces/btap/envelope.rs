//! The `btap.result.v1` envelope, exactly as BrowserTap sends it: `ok`,
//! `result_contract`, `version`, `data` (success only), `error` (null or `{code, message,
//! retryable}`), `error_code`, `retryable`, `target`, `diagnostics` (`tool` and the call's
//! delivery facts), `legacy` for failures a tool reports in its own result, and the scalar
//! projections of the payload at the top level. The envelope is the text content and the
//! `structuredContent` (equal as JSON); images follow as image content.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

use engine::{Delivery, EngineError, ErrorCode, Input, TabInfo};

use crate::face::{Answer, Fault, Rendered, Reply, ToolDef, ToolError};

pub const CONTRACT: &str = "btap.result.v1";

/// Keys never copied from a payload to the top level.
const RESERVED: &[&str] = &[
    "ok",
    "data",
    "error",
    "error_code",
    "retryable",
    "target",
    "diagnostics",
    "legacy",
    "result_contract",
    "version",
];

/// A projected string is at most this long.
const PROJECTED_TEXT: usize = 256;

/// Engine error codes BrowserTap reports inside a payload (`ok: false`, the payload as
/// `legacy`) rather than raising: what its extension answered as a status.
const REPORTED_CODES: &[&str] = &[
    "error",
    "failed",
    "failure",
    "timeout",
    "busy",
    "requires_user_action",
    "activation_failed",
    "input_activity_detected",
    "coordinates_off_screen",
    "obscured",
    "outside_viewport",
    "not_found",
    "cancelled",
    "rejected",
    "no_response",
    "navigation_timeout",
    "navigation_failed",
    "dialog_handle_failed",
    "blocked_by_beforeunload",
    "blocked_by_dialog",
    "challenge_stalled",
    "unknown",
    "unsupported",
    "unsupported_frame_transform",
    "partial",
    "bridge_unreachable",
    "stale_bridge",
    "stale_extension",
    "stale_package",
    "not_interactable",
    "focus_failed",
    "ambiguous",
    "invalid_selector",
    "cross_origin_frame",
    "closed_shadow_root",
    "refused",
];

/// Payload keys repeated in `diagnostics` when present.
const DIAGNOSTIC_KEYS: &[&str] = &[
    "delivery_state",
    "switched_session",
    "switched_from",
    "closed",
    "retry_safe",
    "dispatched",
    "may_have_executed",
    "operation_id",
    "poll_with",
    "reservation_held",
    "operation_status",
    "may_have_created",
    "on_screen",
    "ownership",
    "desktop",
    "owner_id",
    "generation",
    "extension_build_verdict",
    "status",
    "code",
    "hint",
    "reason",
    "directory_applied",
    "requested_directory",
    "render_state",
    "content_ready",
    "render",
    "zombie",
    "zombie_detail",
    "input_quiet",
    "input_reachability",
    "screen_bounds",
    "recheck_required",
    "recheck_action",
];

/// Delivery facts of a raised failure that are also copied to the top level.
const DELIVERY_TOP: &[&str] = &[
    "delivery_state",
    "retry_safe",
    "operation_id",
    "reservation_held",
    "poll_with",
    "operation_status",
];

/// Codes a raised failure is retryable with unless its delivery facts forbid it.
const RETRYABLE_CODES: &[&str] = &[
    "bridge_unreachable",
    "extension_not_connected",
    "session_not_connected",
    "session_disconnected",
    "transport_error",
    "target_busy",
    "browser_busy",
];

/// A btap call judged as BrowserTap judges it: a page's own failure is reported in the
/// payload, anything else raised; each with BrowserTap's retry verdict.
pub fn judge(_tool: &ToolDef, outcome: Result<Reply, ToolError>, call: &Rendered) -> Answer {
    match outcome {
        Ok(reply) => reported(reply, call),
        // What the page reports as its own failure is carried in the payload, as
        // BrowserTap's extension reports it.
        Err(ToolError::Engine(error)) if let Some(reply) = as_reported(&error) => {
            reported(reply, call)
        }
        Err(error) => raised(&error, call),
    }
}

/// The envelope of a judged call, as text and structured content; images follow.
pub fn write(_: &ToolDef, answer: Answer, call: &Rendered) -> CallToolResult {
    let Answer {
        fault,
        payload,
        facts,
        target: acted_on,
        images,
        lean: _,
    } = answer;
    let mut envelope = header(fault.is_none());
    envelope["target"] = target(acted_on.as_ref(), &call.arguments, &payload);
    match &fault {
        None => envelope["data"] = payload.clone(),
        Some(fault) => {
            envelope["error"] = json!({
                "code": fault.code, "message": fault.message, "retryable": fault.retryable,
            });
            envelope["error_code"] = json!(fault.code);
            envelope["retryable"] = json!(fault.retryable);
            if fault.reported {
                envelope["legacy"] = payload.clone();
            } else {
                for key in DELIVERY_TOP {
                    if let Some(value) = facts.get(*key) {
                        envelope[*key] = value.clone();
                    }
                }
            }
        }
    }
    envelope["diagnostics"] = Value::Object(facts);
    project(&mut envelope, &payload);
    if envelope["ok"] == false && envelope.get("retry_safe").is_some() {
        envelope["retry_safe"] = envelope["retryable"].clone();
    }
    let mut result = if fault.is_some() {
        CallToolResult::structured_error(envelope)
    } else {
        CallToolResult::structured(envelope)
    };
    result.content.extend(
        images
            .into_iter()
            .map(|(data, mime)| ContentBlock::image(data, mime)),
    );
    result
}

/// A call that answered: a success, or a failure the payload itself reports.
fn reported(reply: Reply, call: &Rendered) -> Answer {
    let payload = reply.data;
    let mut facts = reply.facts;
    let mut diagnostics = diagnostics(call, &mut facts);
    if let Value::Object(data) = &payload {
        for key in DIAGNOSTIC_KEYS {
            if let Some(value) = data.get(*key) {
                diagnostics.entry(*key).or_insert(value.clone());
            }
        }
    }
    let fault = reply.failure.map(|failure| {
        let retryable = verdict(&[&payload], false);
        if diagnostics.contains_key("retry_safe") {
            diagnostics.insert("retry_safe".into(), json!(retryable));
        }
        Fault {
            code: failure.code,
            message: failure.message,
            retryable: Some(retryable),
            reported: true,
        }
    });
    Answer {
        fault,
        payload,
        facts: diagnostics,
        target: reply.target,
        images: reply.images,
        lean: reply.lean,
    }
}

/// A call that raised: no payload; its delivery facts beside it.
fn raised(error: &ToolError, call: &Rendered) -> Answer {
    let failure = Failure::of(error);
    let mut facts = failure.facts;
    let retryable = verdict(
        &[&Value::Object(facts.clone())],
        RETRYABLE_CODES.contains(&failure.code),
    );
    if facts.contains_key("retry_safe") {
        facts.insert("retry_safe".into(), json!(retryable));
    }
    Answer {
        fault: Some(Fault {
            code: failure.code.to_owned(),
            message: failure.message,
            retryable: Some(retryable),
            reported: false,
        }),
        payload: Value::Null,
        facts: diagnostics(call, &mut facts),
        target: None,
        images: Vec::new(),
        lean: None,
    }
}

fn header(ok: bool) -> Value {
    json!({
        "ok": ok,
        "result_contract": CONTRACT,
        "version": 1,
        "error": null,
        "error_code": null,
        "retryable": false,
    })
}

fn diagnostics(call: &Rendered, facts: &mut Map<String, Value>) -> Map<String, Value> {
    let mut diagnostics = Map::new();
    diagnostics.insert("tool".into(), json!(call.called_as));
    diagnostics.append(facts);
    diagnostics.extend(call.facts.clone());
    if !call.ignored.is_empty() {
        diagnostics.insert("ignored_arguments".into(), json!(call.ignored));
    }
    diagnostics.insert("elapsed_ms".into(), json!(call.elapsed_ms));
    diagnostics
}

/// BrowserTap's retry rule: any sign that something was sent, or an explicit "not safe",
/// forbids a retry; an explicit "safe" allows one; else the code decides.
fn verdict(sources: &[&Value], by_default: bool) -> bool {
    let mut explicit = None;
    for source in sources {
        let flag = |key: &str| source.get(key).and_then(Value::as_bool);
        if flag("retry_safe") == Some(false) || flag("retryable") == Some(false) {
            return false;
        }
        for key in ["dispatched", "may_have_executed", "may_have_created"] {
            if flag(key) == Some(true) {
                return false;
            }
        }
        if let Some(state) = source.get("delivery_state").and_then(Value::as_str)
            && state != "undelivered"
        {
            return false;
        }
        if flag("retry_safe") == Some(true) || flag("retryable") == Some(true) {
            explicit = Some(true);
        }
    }
    explicit.unwrap_or(by_default)
}

/// Copies small scalars of the payload to the top level, never over a key already there.
fn project(envelope: &mut Value, payload: &Value) {
    let (Some(envelope), Value::Object(data)) = (envelope.as_object_mut(), payload) else {
        return;
    };
    for (key, value) in data {
        let scalar = match value {
            Value::Null | Value::Bool(_) | Value::Number(_) => true,
            Value::String(s) => s.chars().count() <= PROJECTED_TEXT,
            _ => false,
        };
        if scalar && !RESERVED.contains(&key.as_str()) && !envelope.contains_key(key) {
            envelope.insert(key.clone(), value.clone());
        }
    }
}

/// `{session_id, client_id, tab_id, generation?, browser?, url?}`, by BrowserTap's rule:
/// what the payload names (its `session_id`, else `executed_`/`active_`/
/// `activated_session_id`; `tab_id`, `client_id`, `generation`, and then `browser` and
/// `url`), overlaid with what the caller named in its arguments; null when neither names
/// a tab. The tab the call acted on is the ground both stand on.
fn target(acted_on: Option<&TabInfo>, arguments: &Map<String, Value>, payload: &Value) -> Value {
    let mut target = Map::new();
    if let Some(tab) = acted_on {
        target.insert("session_id".into(), json!(tab.handle));
        target.insert("client_id".into(), json!(tab.client_id));
        target.insert("tab_id".into(), json!(tab.tab_id));
    }
    let empty = Map::new();
    let named = [payload.as_object().unwrap_or(&empty), arguments];
    for source in named {
        if let Some(Value::Object(found)) = named_target(source) {
            target.extend(found);
        }
    }
    if target.is_empty() {
        Value::Null
    } else {
        Value::Object(target)
    }
}

/// The tab an object names, as BrowserTap reads one (`_result_target`); None when it
/// names none.
fn named_target(source: &Map<String, Value>) -> Option<Value> {
    let given = |key: &str| source.get(key).filter(|v| !v.is_null());
    let session = [
        "session_id",
        "executed_session_id",
        "active_session_id",
        "activated_session_id",
    ]
    .iter()
    .find_map(|key| given(key));
    let mut tab = given("executed_tab_id")
        .or_else(|| given("tab_id"))
        .cloned();
    let mut client = given("client_id").cloned();
    let generation = given("generation");
    if session.is_none() && tab.is_none() && client.is_none() && generation.is_none() {
        return None;
    }
    let mut target = Map::new();
    if let Some(session) = session {
        let text = session
            .as_str()
            .map_or_else(|| session.to_string(), str::to_owned);
        if let Some((owner, id)) = text.rsplit_once(':') {
            client.get_or_insert_with(|| json!(owner));
            if let Ok(id) = id.parse::<u64>() {
                tab.get_or_insert_with(|| json!(id));
            }
        }
        target.insert("session_id".into(), json!(text));
    }
    if let Some(client) = client {
        target.insert("client_id".into(), client);
    }
    if let Some(tab) = tab {
        target.insert("tab_id".into(), tab);
    }
    if let Some(generation) = generation {
        let text = generation
            .as_str()
            .map_or_else(|| generation.to_string(), str::to_owned);
        target.insert("generation".into(), json!(text));
    }
    for key in ["browser", "url"] {
        if let Some(value) = given(key) {
            target.insert(key.into(), value.clone());
        }
    }
    Some(Value::Object(target))
}

/// A raised failure in BrowserTap's words.
struct Failure {
    code: &'static str,
    message: String,
    facts: Map<String, Value>,
}

impl Failure {
    fn of(error: &ToolError) -> Failure {
        let mut facts = Map::new();
        match error {
            ToolError::Param { name, message } => {
                facts.insert("param".into(), json!(name));
                Failure {
                    code: "invalid_request",
                    message: format!("{name}: {message}"),
                    facts,
                }
            }
            ToolError::Face {
                code,
                message,
                details,
                may_have_run,
            } => {
                if let Value::Object(details) = details {
                    facts.extend(details.clone());
                }
                if *may_have_run {
                    may_have_run_facts(&mut facts);
                }
                Failure {
                    code,
                    message: message.clone(),
                    facts,
                }
            }
            ToolError::Engine(error) => engine_failure(error),
        }
    }
}

fn may_have_run_facts(facts: &mut Map<String, Value>) {
    facts.insert("delivery_state".into(), json!("sent_unconfirmed"));
    facts.insert("dispatched".into(), json!(true));
    facts.insert("may_have_executed".into(), json!(true));
    facts.insert("retry_safe".into(), json!(false));
}

fn engine_failure(error: &EngineError) -> Failure {
    let mut facts = Map::new();
    let engine_code = error.code();
    let code = btap_code(error);
    if code != engine_code.as_str() && engine_code != ErrorCode::InvalidInput {
        // Ours is more specific; BrowserTap's client keys on the code above.
        facts.insert("reason".into(), json!(engine_code.as_str()));
    }
    let message = match error.input() {
        Some(input) => {
            let name = param_name(input);
            facts.insert("param".into(), json!(name));
            format!("{name}: {}", error.bare_message())
        }
        None => error.to_string(),
    };
    if let Value::Object(details) = error.details() {
        for (key, value) in details {
            facts.entry(key).or_insert(value);
        }
    }
    match error.delivery() {
        Delivery::MayHaveRun => may_have_run_facts(&mut facts),
        Delivery::Undelivered => {
            facts.insert("delivery_state".into(), json!("undelivered"));
            // A browser connection that closed before the command was read: nothing
            // ran, and the same call can be made again as it is.
            if error.code() == ErrorCode::BrowserDisconnected {
                facts.insert("retry_safe".into(), json!(true));
            }
        }
    }
    match error {
        EngineError::TargetBusy { tab, .. } => {
            facts.insert("busy_target".into(), json!(tab));
            facts.insert("retry_safe".into(), json!(true));
        }
        EngineError::NoSuchTab(handle) => {
            facts.insert("stale_session_id".into(), json!(handle));
            // BrowserTap offers tabs of another browser link with the same native id;
            // tabwire's ids are never reused, so there is never one to offer.
            facts.insert("replacement_candidates".into(), json!([]));
            facts.insert("next_action".into(), json!("list_tabs_then_retry"));
            facts.insert("retry_safe".into(), json!(false));
        }
        _ => {}
    }
    Failure {
        code,
        message,
        facts,
    }
}

/// BrowserTap's code for an engine failure, where it has one for the case; ours where
/// it has none.
fn btap_code(error: &EngineError) -> &'static str {
    use ErrorCode as C;
    match error.code() {
        C::InvalidInput | C::PathOutsideOutputDir => "invalid_request",
        C::TabNotFound => "session_not_connected",
        C::BrowserDisconnected => match error.delivery() {
            Delivery::MayHaveRun => "session_disconnected",
            Delivery::Undelivered => "transport_error",
        },
        C::BrowserUnreachable | C::Io | C::FileExists => "transport_error",
        C::ExtensionUnavailable => "extension_not_connected",
        C::ScriptError => "page_execution_failed",
        C::UrlSchemeRefused | C::PathNotAllowed | C::ForeignOperation | C::NotOwned => {
            "permission_denied"
        }
        C::UnknownOperation | C::NoCapture => "not_found",
        C::BackupFailed | C::BrowserLaunchFailed => "internal_error",
        other => other.as_str(),
    }
}

/// The btap parameter an engine input stands for.
pub fn param_name(input: Input) -> &'static str {
    match input {
        Input::Tab => "session_id",
        Input::Locator | Input::Condition => "selector",
        Input::Point => "x",
        Input::Keys => "keys_csv",
        Input::Owner => "owner_id",
        Input::Operation => "operation_id",
        Input::Duration => "duration_seconds",
        Input::OutputPath => "save_path",
        Input::Files => "paths",
        Input::Pattern => "url_pattern",
        Input::ExtraScript => "extra_js",
        Input::DialogAction => "action",
        Input::Bookmark => "bookmark_id",
        Input::Extension => "extension_id",
        Input::Params => "params_json",
        Input::UserAgent => "userAgent",
        Input::Network => "networkConditions",
        Input::CpuRate => "cpuThrottlingRate",
        Input::ColorScheme => "colorScheme",
        Input::Headers => "extraHttpHeaders",
        other => other.as_str(),
    }
}

/// What a page reports as its own failure is a reported failure in BrowserTap: the
/// payload carries the status. `None`: the error is raised.
///
/// BrowserTap's payloads for these say nothing of retrying, so the verdict is
/// `retryable: false`: the same call again meets the same page (an element still
/// missing, still covered). Whether anything reached the page is `input_dispatched`.
fn as_reported(error: &EngineError) -> Option<Reply> {
    let EngineError::Page {
        code,
        message,
        details,
        ..
    } = error
    else {
        return None;
    };
    let status = reported_status(*code)?;
    let mut payload = match details {
        Value::Object(details) => Value::Object(details.clone()),
        _ => json!({}),
    };
    payload["status"] = json!(status);
    payload["message"] = json!(message);
    if error.delivery() == Delivery::MayHaveRun {
        payload["input_dispatched"] = json!(true);
        payload["retry_safe"] = json!(false);
    }
    // BrowserTap names what covers a point as `tag#id`; the element's facts stay beside it.
    if let Some(cover) = payload
        .get("occluded_by")
        .filter(|c| c.is_object())
        .cloned()
    {
        payload["occluded_by"] = json!(css_name(&cover));
        payload["occluded_by_element"] = cover;
        payload["next_action"] = json!(
            "nothing was sent: another element covers the point; close or move it, then click again"
        );
    }
    if status == "invalid_selector" && payload.get("stage").is_none() {
        payload["stage"] = json!("selector");
    }
    Some(Reply::data(payload).failed(status, message.clone()))
}

/// The status word BrowserTap reports a page failure with, if it reports it rather
/// than raising it. A field that takes no typing (read-only, disabled, a `<select>`)
/// is one BrowserTap cannot interact with.
fn reported_status(code: ErrorCode) -> Option<&'static str> {
    match code {
        ErrorCode::ReadOnly | ErrorCode::NotEditable => Some("not_interactable"),
        other => REPORTED_CODES
            .iter()
            .find(|reported| **reported == other.as_str())
            .copied(),
    }
}

/// `div#cover`, `button.primary`, `span`: an element as a CSS-ish name.
fn css_name(element: &Value) -> String {
    let tag = element["tag"].as_str().unwrap_or("element");
    match element["id"].as_str().filter(|id| !id.is_empty()) {
        Some(id) => format!("{tag}#{id}"),
        None => tag.to_owned(),
    }
}

/// A tool's own failure as BrowserTap reports it, with what the tool says on every
/// attempt (`base`: the tab, how input was sent, what was aimed at) under the page's
/// facts; an error BrowserTap raises is passed on as it is.
pub fn reported_with(error: ToolError, base: Value) -> Result<Reply, ToolError> {
    let ToolError::Engine(engine_error) = &error else {
        return Err(error);
    };
    let Some(mut reply) = as_reported(engine_error) else {
        return Err(error);
    };
    if let (Value::Object(mut merged), Value::Object(facts)) = (base, reply.data.take()) {
        merged.extend(facts);
        reply.data = Value::Object(merged);
    }
    Ok(reply)
}

/// The output schema every btap tool declares: an object, as BrowserTap declares it (the
/// envelope's fields are documented once, in the instructions and the README, rather
/// than in every tool of every session's `tools/list`).
pub fn output_schema(_: &ToolDef) -> Option<Map<String, Value>> {
    json!({ "type": "object" }).as_object().cloned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn engine_failures_get_browsertaps_codes() {
        let code = |error: EngineError| btap_code(&error);
        assert_eq!(
            code(EngineError::invalid(Input::Url, "bad")),
            "invalid_request"
        );
        assert_eq!(
            code(EngineError::NoSuchTab("c:1".into())),
            "session_not_connected"
        );
        // A lost connection: what was sent may have run; what was not, did not.
        assert_eq!(
            code(EngineError::Cdp(cdp::CdpError::Lost {
                method: "Page.navigate".into()
            })),
            "session_disconnected"
        );
        assert_eq!(
            code(EngineError::Cdp(cdp::CdpError::Undelivered {
                method: "Page.navigate".into()
            })),
            "transport_error"
        );
        assert_eq!(
            code(EngineError::refused(ErrorCode::UrlSchemeRefused, "no")),
            "permission_denied"
        );
        // A code BrowserTap has no word for is tabwire's own.
        assert_eq!(
            code(EngineError::page(ErrorCode::Obscured, "covered", json!({}))),
            "obscured"
        );
    }

    #[test]
    fn an_undelivered_failure_is_safe_to_retry_and_a_lost_one_is_not() {
        let undelivered = engine_failure(&EngineError::Cdp(cdp::CdpError::Undelivered {
            method: "Input.dispatchKeyEvent".into(),
        }));
        assert_eq!(undelivered.facts["delivery_state"], "undelivered");
        assert_eq!(undelivered.facts["retry_safe"], true);
        let lost = engine_failure(&EngineError::Cdp(cdp::CdpError::Lost {
            method: "Input.dispatchKeyEvent".into(),
        }));
        assert_eq!(lost.facts["delivery_state"], "sent_unconfirmed");
        assert_eq!(lost.facts["may_have_executed"], true);
        assert_eq!(lost.facts["retry_safe"], false);
        // A bad argument names the face's own parameter.
        let invalid = engine_failure(&EngineError::invalid(Input::Keys, "unknown key"));
        assert_eq!(invalid.facts["param"], "keys_csv");
        assert!(
            invalid.message.starts_with("keys_csv: "),
            "{}",
            invalid.message
        );
    }
}
