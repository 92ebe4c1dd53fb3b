//! Scripts and dialogs: running an agent's JavaScript with a receipt, collecting late
//! results, answering dialogs.

use serde_json::{Value, json};

use engine::{
    Dialog, DialogAnswer, DialogOutcome, DialogPolicy, EngineError, ErrorCode, PageChanges,
    ReceiptState, ScriptAnswer, ScriptRan, ScriptRequest, TabInfo, Unfinished,
};

use super::args::SessionOnly;
use super::args::named;
use crate::face::{Call, Reply, ToolError};
use crate::params::{self, TabRef};
use crate::tool_params;

tool_params! {
    pub struct ExecuteJs {
        script: String = Str, required, "expression or body; use return or an async IIFE";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        no_monitor: bool = Bool, default(false), "skip watching what the script changes (no diff, transients)";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "end-to-end deadline, seconds";
        dialog_policy: String = Choice(&["dismiss", "accept", "manual"]), default("dismiss"), "";
        wait: bool = Bool, default(true), "false: return an operation_id at once";
    }
}

tool_params! {
    pub struct GetResult {
        operation_id: String = Str, required, "";
        timeout: f64 = Seconds { max: 120.0 }, default(0.0), "seconds to wait for a pending result";
    }
}

tool_params! {
    pub struct HandleDialog {
        action: String = Choice(&["manual", "accept", "dismiss"]), required, "manual only reports";
        prompt_text: String = Str, default(""), "text for an accepted prompt";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        timeout: f64 = Seconds { max: 86_400.0 }, default(3.0), "seconds to wait for a dialog (0.5 to 3)";
    }
}

/// How a result not yet in is collected, in BrowserTap's words.
fn how_to_collect(data: &mut Value, delivered: bool) {
    data["poll_with"] = json!("get_execute_js_result");
    data["delivery_state"] = json!(if delivered {
        "delivered_no_result"
    } else {
        "sent_unconfirmed"
    });
}

/// A dialog as BrowserTap reports it (camelCase, the policy that answered it, when it
/// opened); tabwire's `action` (what was done) beside.
pub fn btap_dialog(dialog: &Dialog) -> Value {
    let policy = answered_by(dialog);
    let opened_at = dialog.opened_at_ms;
    let kind = &dialog.kind;
    json!({
        "type": kind,
        "message": dialog.message,
        "defaultPrompt": dialog.default_prompt.as_deref().unwrap_or(""),
        "openedAt": opened_at,
        "policy": policy,
        "token": format!("{opened_at}-{kind}"),
        "action": dialog.action,
    })
}

/// The policy that answered a dialog, in BrowserTap's words (`manual`: none did).
fn answered_by(dialog: &Dialog) -> &'static str {
    match dialog.action {
        Some("accepted") => "accept",
        Some("dismissed") => "dismiss",
        _ => "manual",
    }
}

/// A script still running, in BrowserTap's words: its receipt and the tab it holds.
fn pending_json(operation_id: &str, why: &Unfinished, tab: &TabInfo) -> Value {
    let mut data = json!({
        "status": why.status(),
        "operation_id": operation_id,
        "retry_safe": false,
        "may_have_executed": true,
        "reservation_held": true,
        "tab_id": tab.tab_id,
    });
    how_to_collect(&mut data, *why == Unfinished::NotWaitedFor);
    match why.failure() {
        // Not waited for: sent, and not watched (BrowserTap's `monitoring: false`).
        None => {
            data["executed_tab_id"] = json!(tab.tab_id);
            data["session_id"] = json!(tab.handle);
            data["monitoring"] = json!(false);
        }
        Some(message) => {
            data["message"] = json!(message);
            data["manual_blocked"] = json!(matches!(why, Unfinished::BlockedByDialog(_)));
        }
    }
    data
}

/// A finished script in BrowserTap's words: its value, the tab it ran in, its dialogs,
/// and what it changed in the page (`diff`, `transients`, a `suggestion` when nothing).
fn ran_json(ran: &ScriptRan) -> Value {
    let status = match (&ran.landed_url, ran.dialogs.is_empty()) {
        (Some(_), _) => "navigated",
        // BrowserTap says `ok` rather than `success` when dialogs were answered.
        (None, false) => "ok",
        (None, true) => "success",
    };
    let mut data = json!({
        "status": status,
        "js_return": ran.value,
        "tab_id": ran.tab_id,
        "manual_blocked": false,
    });
    if ran.value_lost {
        data["value_lost"] = json!(true);
    }
    if !ran.dialogs.is_empty() {
        let dialogs: Vec<Value> = ran.dialogs.iter().map(btap_dialog).collect();
        data["dialog"] = dialogs.last().cloned().unwrap_or_default();
        data["dialogs"] = json!(dialogs);
    }
    if let Some(changes) = &ran.page_changes {
        describe_changes(&mut data, changes);
    }
    // After a navigation the document the script started in is gone, and with it what
    // could be compared.
    if let Some(url) = &ran.landed_url {
        data["landed_url"] = json!(url);
        data["transients_available"] = json!(false);
        data["transients"] = json!([]);
        data["diff"] = json!("The page navigated while the script ran; nothing was compared.");
    }
    if let Some(file) = &ran.spilled {
        data["result_file"] = json!(file.path);
        data["result_bytes"] = json!(file.bytes);
        data["result_sha256"] = json!(file.sha256);
        data["result_externalized"] = json!(true);
        data["result_file_scope"] = json!("js-value");
        data["result_format"] = json!("utf-8-json");
        data["result_inline_limit_bytes"] = json!(engine::INLINE_LIMIT);
    }
    data
}

fn describe_changes(data: &mut Value, changes: &PageChanges) {
    data["transients_available"] = json!(changes.available);
    data["transients"] = json!(changes.transients);
    if !changes.available {
        data["diff"] = json!("Page changes could not be watched on this page.");
        return;
    }
    data["diff"] = json!(changes_line(changes));
    if changes.changed == 0 && changes.transients.is_empty() {
        data["suggestion"] = json!("No visible page changes were detected.");
    }
}

/// BrowserTap's `diff`: how many elements changed, and the largest change.
fn changes_line(changes: &PageChanges) -> String {
    let mut diff = format!("DOM changes: {}", changes.changed);
    if let Some(largest) = &changes.largest {
        diff.push_str(&format!("\nMost significant change:\n{largest}"));
    }
    if changes.changed == 0 && changes.transients.is_empty() {
        diff.push_str(" (no page changes)");
    }
    diff
}

pub async fn execute_js(call: Call, p: ExecuteJs) -> Result<Reply, ToolError> {
    let dialog_policy = match p.dialog_policy.as_str() {
        "accept" => DialogPolicy::Accept,
        "manual" => DialogPolicy::Manual,
        _ => DialogPolicy::Dismiss,
    };
    let request = ScriptRequest {
        script: p.script,
        dialog_policy,
        deadline: call.deadline,
        wait: p.wait,
        cancelled: call.cancelled.clone(),
        stop_at_deadline: false,
        // A script nobody waits for is not watched (BrowserTap's `monitoring: false`):
        // nothing would read what it changed, and it is sent without a round trip first.
        watch: p.wait && !p.no_monitor,
    };
    let handle = named(&p.session_id, &None);
    let (tab, answer) = match call.session.execute_js(handle.as_deref(), request).await {
        Ok(answer) => answer,
        Err(error) if error.code() == ErrorCode::ScriptError => {
            return script_failed(&call, handle.as_deref(), error).await;
        }
        Err(error) => return Err(error.into()),
    };
    let reply = match &answer {
        ScriptAnswer::Ran(ran) => Reply::data(ran_json(ran)),
        ScriptAnswer::Pending { operation_id, why } => {
            let reply = Reply::data(pending_json(operation_id, why, &tab));
            match why.failure() {
                Some(message) => reply.failed(why.status(), message),
                None => reply,
            }
        }
    };
    Ok(reply.on(tab).lean(script_lean(&answer)))
}

/// A script's reply, leanly: its value as JSON (nulls and empty objects are data here,
/// kept), then what it changed, the dialogs it met and where it navigated.
fn script_lean(answer: &ScriptAnswer) -> String {
    let ran = match answer {
        ScriptAnswer::Ran(ran) => ran,
        ScriptAnswer::Pending { operation_id, why } => {
            return format!(
                "status {}; operation {operation_id}: collect it with get_execute_js_result",
                why.status()
            );
        }
    };
    let mut lean = match (&ran.landed_url, &ran.spilled) {
        (Some(url), _) => format!("the page navigated to {url} (the script's value is lost)"),
        (None, Some(file)) => format!(
            "returned {} bytes of JSON, written to {}",
            file.bytes,
            file.path.display()
        ),
        (None, None) => format!("returned {}", compact(&ran.value)),
    };
    if let Some(changes) = ran.page_changes.as_ref().filter(|c| c.available) {
        if changes.changed > 0 || !changes.transients.is_empty() {
            lean.push_str(&format!("\n{}", changes_line(changes)));
        }
        if !changes.transients.is_empty() {
            lean.push_str(&format!(
                "\nshown and gone meanwhile: {}",
                compact(&json!(changes.transients))
            ));
        }
    }
    for dialog in &ran.dialogs {
        lean.push_str(&format!(
            "\na {} dialog was answered ({}): {}",
            dialog.kind,
            answered_by(dialog),
            json!(dialog.message)
        ));
    }
    lean
}

/// A value as compact JSON; a string as its text in quotes, unescaped (a model reads it
/// as it is, not through a second layer of quoting).
fn compact(value: &Value) -> String {
    match value {
        Value::String(text) => format!("\"{text}\""),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// A script that threw: BrowserTap reports it in the payload (`status: failed`), with the
/// page's error and nothing to retry.
async fn script_failed(
    call: &Call,
    handle: Option<&str>,
    error: EngineError,
) -> Result<Reply, ToolError> {
    let (browser, tab) = call.session.resolve_tab(handle).await?;
    let tab = browser.info(&tab, None);
    let mut data = json!({
        "status": "failed",
        "js_return": null,
        "tab_id": tab.tab_id,
        "error_code": "page_execution_failed",
        "error": error.bare_message(),
        "retryable": false,
        "retry_safe": false,
        "diagnostics": { "retry_safe": false },
        "transients_available": false,
        "transients": [],
    });
    if let Value::Object(mut details) = error.details() {
        let changes = details.remove("page_changes");
        if let Some(changes) = changes.and_then(|c| serde_json::from_value(c).ok()) {
            describe_changes(&mut data, &changes);
        }
        for (key, value) in details {
            data[key] = value;
        }
    }
    let message = error.bare_message();
    Ok(Reply::data(data)
        .failed("page_execution_failed", message)
        .on(tab))
}

pub async fn get_execute_js_result(call: Call, p: GetResult) -> Result<Reply, ToolError> {
    let wait = params::seconds(p.timeout);
    let id = p.operation_id;
    let state = match call.engine().receipts.get(call.session.id, &id, wait).await {
        Ok(state) => state,
        Err(error) if error.code() == ErrorCode::UnknownOperation => {
            return Err(ToolError::Face {
                code: "operation_not_found",
                message: error.bare_message(),
                details: json!({
                    "operation_id": id, "delivery_state": "undelivered", "retry_safe": false,
                }),
                may_have_run: false,
            });
        }
        Err(error) => return Err(error.into()),
    };
    let (data, ran_in) = match state {
        ReceiptState::Pending { kind, age } => {
            let mut data = json!({
                "status": "pending", "operation_id": id, "operation_status": "pending", "kind": kind,
                "age_seconds": age.as_secs_f64(), "retry_safe": false, "reservation_held": true,
            });
            how_to_collect(&mut data, false);
            (data, None)
        }
        ReceiptState::Done { kind, outcome } => {
            let ran = outcome.as_ref().as_ref().map_err(|error| error.clone())?;
            let mut result = ran_json(ran);
            result["session_id"] = json!(ran.tab_handle);
            result["operation_id"] = json!(id);
            result["operation_status"] = json!("completed");
            result["kind"] = json!(kind);
            result["replayed"] = json!(false);
            result["acknowledged"] = json!(true);
            result["reservation_held"] = json!(false);
            // The tab the script ran in, if it is still open.
            let ran_in = call.session.resolve_tab(Some(&ran.tab_handle)).await.ok();
            (result, ran_in)
        }
    };
    let reply = Reply::data(data);
    Ok(match ran_in {
        Some((browser, tab)) => reply.on(browser.info(&tab, None)),
        None => reply,
    })
}

pub async fn handle_dialog(call: Call, p: HandleDialog) -> Result<Reply, ToolError> {
    let answer = match p.action.as_str() {
        "accept" => DialogAnswer::Accept,
        "dismiss" => DialogAnswer::Dismiss,
        _ => DialogAnswer::Report,
    };
    let prompt = Some(p.prompt_text).filter(|t| !t.is_empty());
    let handle = named(&p.session_id, &None);
    let (browser, tab) = call.session.resolve_tab(handle.as_deref()).await?;
    let tab = browser.info(&tab, None);
    let outcome = call
        .session
        .answer_dialog(
            Some(&tab.handle),
            answer,
            prompt.as_deref(),
            call.deadline
                .within(params::seconds(p.timeout.clamp(0.5, 3.0))),
        )
        .await?;
    let mut data = json!({ "active_session_id": tab.handle });
    let reply = match outcome {
        // Asked to answer a dialog that is not there: BrowserTap's extension fails the
        // call, and nothing was answered.
        DialogOutcome::NoDialog if answer != DialogAnswer::Report => {
            return Err(ToolError::Face {
                code: "page_execution_failed",
                message: "no dialog is showing in this tab".into(),
                details: json!({ "retry_safe": false }),
                may_have_run: false,
            });
        }
        DialogOutcome::NoDialog => {
            data["status"] = json!("no_dialog");
            data["handled"] = json!(false);
            data["dialog"] = Value::Null;
            data["url"] = json!(tab.url);
            Reply::data(data)
        }
        // Only a report was asked for: the dialog is still open, and the tab is blocked.
        DialogOutcome::BlockedByDialog { dialog } => {
            data["status"] = json!("blocked_by_dialog");
            data["handled"] = json!(false);
            data["dialog"] = btap_dialog(&dialog);
            data["hint"] = json!(
                "the dialog is still open: answer it with handle_dialog accept or dismiss (resolve_leave_dialog for a leave prompt)"
            );
            Reply::data(data).failed("blocked_by_dialog", "a dialog is open in this tab")
        }
        DialogOutcome::Accepted {
            dialog,
            prompt_text,
        } => {
            data["status"] = json!("ok");
            data["handled"] = json!(true);
            data["dialog"] = btap_dialog(&dialog);
            data["prompt_text"] = json!(prompt_text);
            Reply::data(data)
        }
        DialogOutcome::Dismissed { dialog } => {
            data["status"] = json!("ok");
            data["handled"] = json!(true);
            data["dialog"] = btap_dialog(&dialog);
            Reply::data(data)
        }
    };
    Ok(reply.on(tab))
}

pub async fn resolve_leave_dialog(call: Call, p: SessionOnly) -> Result<Reply, ToolError> {
    let handle = p.session_id.map(|t| t.0);
    let (browser, tab) = call.session.resolve_tab(handle.as_deref()).await?;
    let tab = browser.info(&tab, None);
    let reply = match call.session.accept_leave_prompt(Some(&tab.handle)).await? {
        // BrowserTap reports the accept it tried and the browser's refusal of it.
        None => {
            let message = "no dialog is showing in this tab";
            let attempt = json!({
                "status": "no_dialog", "error": message, "handled": false, "dialog": null,
            });
            let mut data = attempt.clone();
            data["resolution"] = json!("none");
            data["session_id"] = json!(tab.handle);
            data["attempts"] = json!([attempt]);
            Reply::data(data).failed("operation_failed", message)
        }
        Some((dialog, attempts, true)) => Reply::data(json!({
            "status": "ok", "resolution": "protocol", "session_id": tab.handle,
            "dialog": btap_dialog(&dialog), "protocol_attempts": attempts,
            "attempts": [{ "status": "ok", "handled": true }],
            "physical_input": false,
        })),
        Some((dialog, attempts, false)) => {
            let message = "two protocol accepts did not close the prompt; tabwire sends no OS-level keys, so the user must answer it";
            Reply::data(json!({
                "status": "requires_user_action", "session_id": tab.handle,
                "dialog": btap_dialog(&dialog), "protocol_attempts": attempts,
                "attempts": [], "physical_input": false, "hint": message,
            }))
            .failed("requires_user_action", message)
        }
    };
    Ok(reply.on(tab))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(value: Value) -> ScriptRan {
        ScriptRan {
            tab_handle: "c:4".into(),
            tab_id: 4,
            value,
            value_lost: false,
            landed_url: None,
            dialogs: Vec::new(),
            page_changes: None,
            spilled: None,
        }
    }

    fn dialog(action: Option<&'static str>) -> Dialog {
        Dialog {
            kind: "confirm".into(),
            message: "Sure?".into(),
            default_prompt: None,
            action,
            opened_at_ms: 7,
        }
    }

    #[test]
    fn a_finished_script_reads_as_browsertaps_payload() {
        let plain = ran_json(&ran(json!({"n": 1})));
        assert_eq!(plain["status"], "success");
        assert_eq!(plain["js_return"], json!({"n": 1}));
        assert_eq!(plain["tab_id"], 4);
        assert_eq!(plain["manual_blocked"], false);
        assert!(plain.get("value_lost").is_none() && plain.get("dialogs").is_none());
        // Dialogs answered: `ok`, each in BrowserTap's words, the last as `dialog`.
        let answered = ran_json(&ScriptRan {
            dialogs: vec![dialog(Some("dismissed")), dialog(Some("accepted"))],
            ..ran(json!(null))
        });
        assert_eq!(answered["status"], "ok");
        assert_eq!(answered["dialogs"][0]["policy"], "dismiss");
        assert_eq!(answered["dialog"]["policy"], "accept");
        assert_eq!(answered["dialog"]["token"], "7-confirm");
        // A navigation: where it landed, and nothing compared.
        let navigated = ran_json(&ScriptRan {
            landed_url: Some("http://127.0.0.1/next".into()),
            value_lost: true,
            ..ran(json!(null))
        });
        assert_eq!(navigated["status"], "navigated");
        assert_eq!(navigated["value_lost"], true);
        assert_eq!(navigated["landed_url"], "http://127.0.0.1/next");
        assert_eq!(navigated["transients_available"], false);
    }

    #[test]
    fn what_a_script_changed_is_said_as_a_diff() {
        let changes = PageChanges {
            available: true,
            changed: 0,
            largest: None,
            transients: Vec::new(),
        };
        let quiet = ran_json(&ScriptRan {
            page_changes: Some(changes.clone()),
            ..ran(json!(1))
        });
        assert_eq!(quiet["diff"], "DOM changes: 0 (no page changes)");
        assert!(quiet["suggestion"].is_string());
        let busy = ran_json(&ScriptRan {
            page_changes: Some(PageChanges {
                changed: 3,
                largest: Some("<p>hi</p>".into()),
                transients: vec!["Saved".into()],
                ..changes
            }),
            ..ran(json!(1))
        });
        assert_eq!(
            busy["diff"],
            "DOM changes: 3\nMost significant change:\n<p>hi</p>"
        );
        assert_eq!(busy["transients"], json!(["Saved"]));
        assert!(busy.get("suggestion").is_none());
    }

    #[test]
    fn a_script_not_in_yet_says_how_to_collect_it() {
        let tab = TabInfo {
            handle: "c:4".into(),
            client_id: "c".into(),
            tab_id: 4,
            url: "http://127.0.0.1/".into(),
            title: String::new(),
            generation: 1,
            owner_id: None,
            default: true,
            browser: "chrome",
            identity: "T4".into(),
        };
        let sent = pending_json("op-1", &Unfinished::NotWaitedFor, &tab);
        assert_eq!(sent["status"], "in_progress");
        assert_eq!(sent["delivery_state"], "delivered_no_result");
        assert_eq!(sent["session_id"], "c:4");
        assert_eq!(sent["monitoring"], false);
        let late = pending_json("op-1", &Unfinished::Timeout("15 s".into()), &tab);
        assert_eq!(late["status"], "timeout");
        assert_eq!(late["delivery_state"], "sent_unconfirmed");
        assert_eq!(late["poll_with"], "get_execute_js_result");
        assert_eq!(late["manual_blocked"], false);
        let paused = pending_json(
            "op-1",
            &Unfinished::BlockedByDialog("a dialog".into()),
            &tab,
        );
        assert_eq!(paused["manual_blocked"], true);
        assert_eq!(paused["message"], "a dialog");
    }
}
