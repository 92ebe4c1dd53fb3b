//! The desktop pair: native file dialogs of the browser. Only a Windows standard file
//! dialog can be owned by the browser this way; elsewhere both tools answer, after the
//! opt-in check, that the capability is unsupported here. The tickets and checks are the
//! engine's (`engine::agents::desktop`); this maps them to BrowserTap's payloads.

use engine::agents::desktop::{Cancelled, DialogRefusal, Identity, Inspected};
use serde_json::{Value, json};

use crate::face::{Call, Profile, Reply, ToolError};
use crate::tool_params;

tool_params! {
    pub struct Inspect {
        desktop_opt_in: bool = Bool, default(false), "must be true: this acts outside the page";
    }
}

tool_params! {
    pub struct Cancel {
        ticket: String = Str, required, "the ticket inspect_native_file_dialog returned";
        desktop_opt_in: bool = Bool, default(false), "must be true: this acts outside the page";
    }
}

pub async fn inspect_native_file_dialog(call: Call, p: Inspect) -> Result<Reply, ToolError> {
    if !p.desktop_opt_in {
        return Ok(opt_in_required("inspect"));
    }
    let engine = call.engine();
    Ok(
        match engine.dialogs.inspect(engine.browser_processes()).await {
            Ok(inspected) => Reply::data(inspected_payload(&inspected)),
            Err(refusal) => refused("inspect", &refusal),
        },
    )
}

pub async fn cancel_native_file_dialog(call: Call, p: Cancel) -> Result<Reply, ToolError> {
    if !p.desktop_opt_in {
        let mut reply = opt_in_required("cancel");
        reply.data["ticket"] = json!(p.ticket);
        return Ok(reply);
    }
    let engine = call.engine();
    if !engine::agents::desktop::supported() {
        return Ok(refused("cancel", &DialogRefusal::Unsupported));
    }
    // Every opted-in attempt uses its ticket up, refusals included.
    let identity = match engine.dialogs.take(&p.ticket) {
        Ok(identity) => identity,
        Err(refusal) => return Ok(refused("cancel", &refusal)),
    };
    if call.settings.profile() == Profile::Safe {
        // The safe profile sends no physical-style input without the user's approval,
        // and tabwire asks for none (no elicitation): the user must act.
        let mut reply = fail(
            base("cancel", true),
            "refused",
            "requires_user_action",
            "The safe profile needs the user's approval to cancel a native dialog; cancel it yourself, or use the lab profile.",
        );
        reply.data["reason"] = json!("elicitation_unsupported");
        reply.data["desktop"]["ticket_consumed"] = json!(true);
        return Ok(reply);
    }
    Ok(
        match engine
            .dialogs
            .cancel(identity, engine.browser_processes())
            .await
        {
            Ok(cancelled) => Reply::data(cancelled_payload(&cancelled)),
            Err(refusal) => {
                let mut reply = refused("cancel", &refusal);
                reply.data["desktop"]["ticket_consumed"] = json!(true);
                reply
            }
        },
    )
}

/// BrowserTap's name for the platform (Python's `sys.platform`).
fn platform_name() -> &'static str {
    match std::env::consts::OS {
        "windows" => "win32",
        "macos" => "darwin",
        other => other,
    }
}

/// What every payload of the pair starts from.
fn base(action: &str, opted_in: bool) -> Value {
    json!({
        "ok": false,
        "on_screen": null,
        "dispatched": false,
        "delivery_state": "undelivered",
        "retry_safe": false,
        "input_quiet": { "checked": false, "enforced": false, "observed": [] },
        "desktop": {
            "capability": "native_file_dialog",
            "action": action,
            "explicit_opt_in": opted_in,
            "platform": platform_name(),
            "input_method": "targeted_window_message",
        },
    })
}

/// A payload that reports the pair's refusal (`ok: false`, a status, a code).
fn fail(mut payload: Value, status: &str, code: &str, message: &str) -> Reply {
    payload["status"] = json!(status);
    payload["code"] = json!(code);
    payload["message"] = json!(message);
    Reply::data(payload).failed(code, message)
}

fn opt_in_required(action: &str) -> Reply {
    fail(
        base(action, false),
        "refused",
        "desktop_opt_in_required",
        "Explicit desktop_opt_in=true is required.",
    )
}

fn refused(action: &str, refusal: &DialogRefusal) -> Reply {
    let status = match refusal {
        DialogRefusal::Unsupported => "unsupported",
        r if r.dispatched() => "unknown",
        _ => "refused",
    };
    let mut reply = fail(
        base(action, true),
        status,
        refusal.code(),
        &refusal.message(),
    );
    if refusal.dispatched() {
        reply.data["dispatched"] = json!(true);
        reply.data["may_have_executed"] = json!(true);
        reply.data["delivery_state"] = json!("acknowledged");
        reply.data["desktop"]["closed_observed"] = json!(false);
    }
    reply
}

fn hex(hwnd: usize) -> String {
    format!("{hwnd:#x}")
}

fn identity_fields(reply: &mut Value, identity: &Identity, browser: &str) {
    let desktop = &mut reply["desktop"];
    desktop["browser"] = json!(browser);
    desktop["dialog_hwnd"] = json!(hex(identity.hwnd));
    desktop["cancel_hwnd"] = json!(hex(identity.cancel_hwnd));
    desktop["owner_chain"] = json!(
        identity
            .owner_chain
            .iter()
            .map(|&h| hex(h))
            .collect::<Vec<_>>()
    );
    desktop["process_id"] = json!(identity.process_id);
    desktop["process_created"] = json!(identity.process_created);
    desktop["recognition"] = json!("windows_shell_file_dialog");
    desktop["identity_source"] = json!("win32_owner_process_and_window_class");
}

fn inspected_payload(inspected: &Inspected) -> Value {
    let mut reply = base("inspect", true);
    let dialog = &inspected.dialog;
    reply["ok"] = json!(true);
    reply["status"] = json!("inspected");
    reply["ticket"] = json!(inspected.ticket);
    reply["expires_in_seconds"] = json!(inspected.expires_in.as_secs_f64());
    reply["on_screen"] = json!(dialog.foreground);
    identity_fields(&mut reply, &dialog.identity, &inspected.browser);
    reply["dialog"] = json!({
        "title": dialog.title,
        "folder": dialog.folder,
        "file_name": dialog.file_name,
        "buttons": dialog.buttons.iter().map(|b| json!({ "id": b.id, "text": b.text })).collect::<Vec<_>>(),
    });
    reply
}

fn cancelled_payload(cancelled: &Cancelled) -> Value {
    let mut reply = base("cancel", true);
    reply["ok"] = json!(true);
    reply["status"] = json!("success");
    reply["cancelled"] = json!(true);
    reply["dispatched"] = json!(true);
    reply["may_have_executed"] = json!(true);
    reply["delivery_state"] = json!("acknowledged");
    reply["on_screen"] = json!(true);
    let browser =
        engine::agents::desktop::browser_name(&cancelled.identity.image).unwrap_or("browser");
    identity_fields(&mut reply, &cancelled.identity, browser);
    reply["desktop"]["ticket_consumed"] = json!(true);
    reply["desktop"]["closed_observed"] = json!(true);
    let observed: Vec<&str> = cancelled
        .input
        .idle_ms
        .map(|_| "os_last_input_time")
        .into_iter()
        .collect();
    reply["input_quiet"] = json!({
        "checked": true,
        "enforced": !observed.is_empty(),
        "observed": observed,
        "held_input_checked": true,
        "input_held": false,
    });
    reply
}
