//! The desktop pair: native file dialogs of the browser. Only a Windows standard file
//! dialog can be owned by the browser this way; elsewhere both tools answer, after the
//! opt-in check, that the capability is unsupported here.

use serde_json::{Value, json};

use crate::face::{Call, Reply, ToolError};
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

pub async fn inspect_native_file_dialog(_: Call, p: Inspect) -> Result<Reply, ToolError> {
    Ok(Reply::data(refusal("inspect", p.desktop_opt_in)))
}

pub async fn cancel_native_file_dialog(_: Call, p: Cancel) -> Result<Reply, ToolError> {
    let mut reply = refusal("cancel", p.desktop_opt_in);
    reply["ticket"] = json!(p.ticket);
    Ok(Reply::data(reply))
}

/// What both tools answer: refused without the opt-in, else unsupported on this OS.
fn refusal(action: &str, opted_in: bool) -> Value {
    let mut reply = json!({
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
            "platform": std::env::consts::OS,
            "input_method": "targeted_window_message",
        },
    });
    if !opted_in {
        reply["status"] = json!("refused");
        reply["code"] = json!("desktop_opt_in_required");
        reply["message"] = json!("Explicit desktop_opt_in=true is required.");
    } else {
        reply["status"] = json!("unsupported");
        reply["code"] = json!("native_dialog_unsupported");
        reply["message"] = json!(format!(
            "Native file dialogs are supported only on Windows; this server runs on {}, where the browser owns no such dialog tabwire could reach.",
            std::env::consts::OS
        ));
    }
    reply
}
