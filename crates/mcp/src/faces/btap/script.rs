//! Scripts and dialogs: running an agent's JavaScript with a receipt, collecting late
//! results, answering dialogs.

use serde_json::{Value, json};

use engine::{DialogAnswer, DialogOutcome, DialogPolicy, ReceiptState, ScriptRequest};

use super::args::named;
use super::tabs::SessionOnly;
use crate::face::{Call, Reply, ToolError};
use crate::params::{self, TabRef};
use crate::tool_params;

tool_params! {
    pub struct ExecuteJs {
        script: String = Str, required, "expression or body; use return or an async IIFE";
        session_id: Option<TabRef> = Session, nullable, "";
        no_monitor: bool = Bool, default(false), "accepted for compatibility";
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
        session_id: Option<TabRef> = Session, nullable, "";
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

pub async fn execute_js(call: Call, p: ExecuteJs) -> Result<Reply, ToolError> {
    let dialog_policy = match p.dialog_policy.as_str() {
        "accept" => DialogPolicy::Accept,
        "manual" => DialogPolicy::Manual,
        _ => DialogPolicy::Dismiss,
    };
    // Every script is monitored here (its navigations and dialogs are always reported).
    let _ = p.no_monitor;
    let request = ScriptRequest {
        script: p.script,
        dialog_policy,
        timeout: params::seconds(p.timeout),
        wait: p.wait,
        cancelled: call.cancelled.clone(),
        stop_at_deadline: false,
    };
    let (tab, mut ran) = call
        .session
        .execute_js(named(&p.session_id, &None).as_deref(), request)
        .await?;
    ran.data = pending_facts(ran.data);
    Ok(Reply::reported(ran).on(tab))
}

pub async fn get_execute_js_result(call: Call, p: GetResult) -> Result<Reply, ToolError> {
    let wait = params::seconds(p.timeout);
    let id = p.operation_id;
    let state = call
        .engine()
        .receipts
        .get(call.session.id, &id, wait)
        .await?;
    let data = match state {
        ReceiptState::Pending { kind, age } => pending_facts(json!({
            "status": "pending", "operation_id": id, "operation_status": "pending", "kind": kind,
            "age_seconds": age.as_secs_f64(), "retry_safe": false, "reservation_held": true,
        })),
        ReceiptState::Done { kind, outcome } => {
            let mut result = engine::outcome_reply(&outcome)?;
            result["operation_id"] = json!(id);
            result["operation_status"] = json!("completed");
            result["kind"] = json!(kind);
            result["replayed"] = json!(false);
            result
        }
    };
    Ok(Reply::data(data))
}

pub async fn handle_dialog(call: Call, p: HandleDialog) -> Result<Reply, ToolError> {
    let answer = match p.action.as_str() {
        "accept" => DialogAnswer::Accept,
        "dismiss" => DialogAnswer::Dismiss,
        _ => DialogAnswer::Report,
    };
    let prompt = Some(p.prompt_text).filter(|t| !t.is_empty());
    let handle = named(&p.session_id, &None);
    let outcome = call
        .session
        .answer_dialog(
            handle.as_deref(),
            answer,
            prompt.as_deref(),
            params::seconds(p.timeout.clamp(0.5, 3.0)),
        )
        .await?;
    let data = match outcome {
        DialogOutcome::Dismissed { dialog } => {
            json!({ "status": "dismissed", "dialog": dialog, "prompt_text": prompt })
        }
        // Only a report was asked for: the dialog is open, which is not a failure.
        DialogOutcome::BlockedByDialog { dialog } => {
            json!({ "status": "dialog_open", "dialog": dialog })
        }
        other => serde_json::to_value(other).unwrap_or_default(),
    };
    Ok(Reply::data(data))
}

pub async fn resolve_leave_dialog(call: Call, p: SessionOnly) -> Result<Reply, ToolError> {
    let handle = p.session_id.map(|t| t.0);
    let data = match call.session.accept_leave_prompt(handle.as_deref()).await? {
        None => json!({ "status": "no_dialog" }),
        Some((dialog, attempts, true)) => json!({
            "status": "resolved", "dialog": dialog, "attempts": attempts, "physical_input": false,
        }),
        Some((dialog, attempts, false)) => {
            let message = "two protocol accepts did not close the prompt; tabwire sends no OS-level keys, so the user must answer it";
            return Ok(Reply::data(json!({
                "status": "requires_user_action", "dialog": dialog, "attempts": attempts,
                "physical_input": false, "message": message,
            }))
            .failed("requires_user_action", message));
        }
    };
    Ok(Reply::data(data))
}
