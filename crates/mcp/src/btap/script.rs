use serde_json::json;

use engine::{DialogAnswer, DialogOutcome, DialogPolicy, ReceiptState, ScriptRequest};

use crate::envelope::Reply;
use crate::face::{Call, ToolError};

pub async fn execute_js(call: Call) -> Result<Reply, ToolError> {
    let dialog_policy = match call.args.str("dialog_policy") {
        Some("accept") => DialogPolicy::Accept,
        Some("manual") => DialogPolicy::Manual,
        _ => DialogPolicy::Dismiss,
    };
    let request = ScriptRequest {
        script: call.args.string("script"),
        dialog_policy,
        timeout: call.args.timeout(15.0),
        wait: call.args.bool_or("wait", true),
    };
    let data = call
        .session
        .execute_js(call.tab().as_deref(), request)
        .await?;
    let target = data["target"].as_str().map(str::to_owned);
    let mut reply = Reply::data(data);
    reply.target = target.or_else(|| call.tab());
    Ok(reply)
}

pub async fn get_execute_js_result(call: Call) -> Result<Reply, ToolError> {
    let id = call.args.string("operation_id");
    let wait = engine::seconds(call.args.f64_or("timeout", 0.0));
    let state = call
        .engine()
        .receipts
        .get(call.session.id, &id, wait)
        .await?;
    let data = match state {
        ReceiptState::Pending { kind, age } => json!({
            "status": "pending", "operation_id": id, "kind": kind,
            "age_seconds": age.as_secs_f64(), "retry_safe": false,
        }),
        ReceiptState::Done { kind, outcome } => {
            let mut result = engine::outcome_reply(&outcome)?;
            result["operation_id"] = json!(id);
            result["kind"] = json!(kind);
            result["replayed"] = json!(false);
            result
        }
    };
    Ok(Reply::data(data))
}

pub async fn handle_dialog(call: Call) -> Result<Reply, ToolError> {
    let answer = match call.args.str("action") {
        Some("accept") => DialogAnswer::Accept,
        Some("dismiss") => DialogAnswer::Dismiss,
        _ => DialogAnswer::Report,
    };
    let outcome = call
        .session
        .answer_dialog(
            call.tab().as_deref(),
            answer,
            call.args.str("prompt_text"),
            engine::seconds(call.args.f64_or("timeout", 3.0).min(3.0)),
        )
        .await?;
    let data = match outcome {
        DialogOutcome::Dismissed { dialog } => {
            json!({ "status": "dismissed", "dialog": dialog, "prompt_text": call.args.str("prompt_text") })
        }
        other => serde_json::to_value(other).unwrap_or_default(),
    };
    Ok(Reply::data(data))
}
