//! Scripts and dialogs: running an agent's JavaScript with a receipt, collecting late
//! results, answering dialogs.

use serde_json::{Value, json};

use engine::{
    DialogAnswer, DialogOutcome, DialogPolicy, EngineError, ErrorCode, PageChanges, ReceiptState,
    ScriptRequest, TabInfo,
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

/// What a result not yet in says of how to get it.
fn pending_facts(mut data: Value) -> Value {
    let still_running = matches!(
        data["status"].as_str(),
        Some("in_progress" | "timeout" | "blocked_by_dialog" | "pending")
    );
    if still_running {
        data["poll_with"] = json!("get_execute_js_result");
        data["delivery_state"] = json!(if data["status"] == "in_progress" {
            "delivered_no_result"
        } else {
            "sent_unconfirmed"
        });
    }
    data
}

/// A dialog as BrowserTap reports it (camelCase, the policy that answered it, when it
/// opened); tabwire's `action` (what was done) beside.
pub fn btap_dialog(dialog: &Value) -> Value {
    let policy = match dialog["action"].as_str() {
        Some("accepted") => "accept",
        Some("dismissed") => "dismiss",
        _ => "manual",
    };
    let opened_at = dialog["opened_at_ms"].as_u64().unwrap_or_default();
    let kind = dialog["type"].as_str().unwrap_or("alert");
    json!({
        "type": kind,
        "message": dialog["message"],
        "defaultPrompt": dialog["default_prompt"].as_str().unwrap_or(""),
        "openedAt": opened_at,
        "policy": policy,
        "token": format!("{opened_at}-{kind}"),
        "action": dialog["action"],
    })
}

/// An execute_js payload in BrowserTap's words: the tab it ran in, its dialogs, and
/// what it changed in the page (`diff`, `transients`, a `suggestion` when nothing).
fn script_facts(mut data: Value, tab: &TabInfo) -> Value {
    let blocked = data["status"] == "blocked_by_dialog";
    let Some(fields) = data.as_object_mut() else {
        return data;
    };
    fields.remove("tab_handle");
    fields.insert("tab_id".into(), json!(tab.tab_id));
    if fields.get("status").and_then(Value::as_str) == Some("in_progress") {
        fields.insert("executed_tab_id".into(), json!(tab.tab_id));
        fields.insert("session_id".into(), json!(tab.handle));
        fields.insert("monitoring".into(), json!(false));
        return data;
    }
    fields.insert("manual_blocked".into(), json!(blocked));
    if let Some(dialogs) = data["dialogs"].as_array().filter(|d| !d.is_empty()) {
        let dialogs: Vec<Value> = dialogs.iter().map(btap_dialog).collect();
        data["dialog"] = dialogs.last().cloned().unwrap_or_default();
        data["dialogs"] = json!(dialogs);
        // BrowserTap says `ok` rather than `success` when dialogs were answered.
        if data["status"] == "success" {
            data["status"] = json!("ok");
        }
    }
    if let Some(changes) = data.as_object_mut().and_then(|f| f.remove("page_changes")) {
        describe_changes(&mut data, changes);
    }
    // After a navigation the document the script started in is gone, and with it what
    // could be compared.
    if data["status"] == "navigated" {
        data["transients_available"] = json!(false);
        data["transients"] = json!([]);
        data["diff"] = json!("The page navigated while the script ran; nothing was compared.");
    }
    if data.get("result_file").is_some() {
        data["result_externalized"] = json!(true);
        data["result_file_scope"] = json!("js-value");
        data["result_format"] = json!("utf-8-json");
        data["result_inline_limit_bytes"] = json!(engine::INLINE_LIMIT);
    }
    data
}

fn describe_changes(data: &mut Value, changes: Value) {
    let Ok(changes) = serde_json::from_value::<PageChanges>(changes) else {
        return;
    };
    data["transients_available"] = json!(changes.available);
    data["transients"] = json!(changes.transients);
    if !changes.available {
        data["diff"] = json!("Page changes could not be watched on this page.");
        return;
    }
    let mut diff = format!("DOM changes: {}", changes.changed);
    if let Some(largest) = &changes.largest {
        diff.push_str(&format!("\nMost significant change:\n{largest}"));
    }
    if changes.changed == 0 && changes.transients.is_empty() {
        diff.push_str(" (no page changes)");
        data["suggestion"] = json!("No visible page changes were detected.");
    }
    data["diff"] = json!(diff);
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
    let (tab, mut ran) = match call.session.execute_js(handle.as_deref(), request).await {
        Ok(ran) => ran,
        Err(error) if error.code() == ErrorCode::ScriptError => {
            return script_failed(&call, handle.as_deref(), error).await;
        }
        Err(error) => return Err(error.into()),
    };
    ran.data = script_facts(pending_facts(ran.data), &tab);
    let lean = script_lean(&ran.data);
    Ok(Reply::reported(ran).on(tab).lean(lean))
}

/// A script's reply, leanly: its value as JSON (nulls and empty objects are data here,
/// kept), then what it changed, the dialogs it met and where it navigated.
fn script_lean(data: &Value) -> String {
    let status = data["status"].as_str().unwrap_or_default();
    let mut lean = match status {
        "success" | "ok" if data.get("result_file").is_some() => format!(
            "returned {} bytes of JSON, written to {}",
            data["result_bytes"],
            data["result_file"].as_str().unwrap_or_default()
        ),
        "success" | "ok" => format!("returned {}", compact(&data["js_return"])),
        "navigated" => format!(
            "the page navigated to {} (the script's value is lost)",
            data["landed_url"].as_str().unwrap_or("another page")
        ),
        other => {
            let mut line = format!("status {other}");
            if let Some(id) = data["operation_id"].as_str() {
                line.push_str(&format!(
                    "; operation {id}: collect it with get_execute_js_result"
                ));
            }
            line
        }
    };
    if let Some(diff) = data["diff"]
        .as_str()
        .filter(|d| !d.starts_with("DOM changes: 0"))
    {
        lean.push_str(&format!("\n{diff}"));
    }
    if let Some(transients) = data["transients"].as_array().filter(|t| !t.is_empty()) {
        lean.push_str(&format!(
            "\nshown and gone meanwhile: {}",
            compact(&json!(transients))
        ));
    }
    for dialog in data["dialogs"].as_array().into_iter().flatten() {
        lean.push_str(&format!(
            "\na {} dialog was answered ({}): {}",
            dialog["type"].as_str().unwrap_or("JavaScript"),
            dialog["policy"].as_str().unwrap_or_default(),
            dialog["message"]
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
        if let Some(changes) = details.remove("page_changes") {
            describe_changes(&mut data, changes);
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
    let data = match state {
        ReceiptState::Pending { kind, age } => pending_facts(json!({
            "status": "pending", "operation_id": id, "operation_status": "pending", "kind": kind,
            "age_seconds": age.as_secs_f64(), "retry_safe": false, "reservation_held": true,
        })),
        ReceiptState::Done { kind, outcome } => {
            let mut result = engine::outcome_reply(&outcome)?;
            result["session_id"] = result["tab_handle"].take();
            if let Some(fields) = result.as_object_mut() {
                fields.remove("tab_handle");
            }
            result["operation_id"] = json!(id);
            result["operation_status"] = json!("completed");
            result["kind"] = json!(kind);
            result["replayed"] = json!(false);
            result["acknowledged"] = json!(true);
            result["reservation_held"] = json!(false);
            result["manual_blocked"] = json!(false);
            result
        }
    };
    // The tab the script ran in, if it is still open.
    let ran_in = match data["session_id"].as_str() {
        Some(handle) => call.session.resolve_tab(Some(handle)).await.ok(),
        None => None,
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
            data["dialog"] = btap_dialog(&json!(dialog));
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
            data["dialog"] = btap_dialog(&json!(dialog));
            data["prompt_text"] = json!(prompt_text);
            Reply::data(data)
        }
        DialogOutcome::Dismissed { dialog } => {
            data["status"] = json!("ok");
            data["handled"] = json!(true);
            data["dialog"] = btap_dialog(&json!(dialog));
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
            "dialog": btap_dialog(&json!(dialog)), "protocol_attempts": attempts,
            "attempts": [{ "status": "ok", "handled": true }],
            "physical_input": false,
        })),
        Some((dialog, attempts, false)) => {
            let message = "two protocol accepts did not close the prompt; tabwire sends no OS-level keys, so the user must answer it";
            Reply::data(json!({
                "status": "requires_user_action", "session_id": tab.handle,
                "dialog": btap_dialog(&json!(dialog)), "protocol_attempts": attempts,
                "attempts": [], "physical_input": false, "hint": message,
            }))
            .failed("requires_user_action", message)
        }
    };
    Ok(reply.on(tab))
}
