//! Running an agent's JavaScript in a page: one end-to-end deadline, receipts for late
//! results, dialog policies, navigation detection and the value conversion.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use crate::browser::DialogPolicy;
use crate::engine::AgentSession;
use crate::error::{EngineError, Result};
use crate::files;
use crate::page::{Page, exception_text, wait_event};
use crate::receipts::ReceiptState;
use crate::script;

/// Larger JSON results go to a file instead of the reply.
pub const INLINE_LIMIT: usize = 24 * 1024;
/// A script may run this long in the background after its caller stopped waiting.
const BACKGROUND_LIMIT: Duration = Duration::from_secs(600);

pub struct ScriptRequest {
    pub script: String,
    pub dialog_policy: DialogPolicy,
    pub timeout: Duration,
    pub wait: bool,
}

impl AgentSession {
    /// Runs a script; the result, or a receipt for it, within `timeout`.
    pub async fn execute_js(&self, handle: Option<&str>, request: ScriptRequest) -> Result<Value> {
        let page = self.page(handle).await?;
        let target = page.handle();
        let mut events = page.browser.conn.subscribe();
        let session = page.session.clone();
        let completer = self.engine.receipts.create(self.id, "execute_js");
        let operation_id = completer.id().to_owned();
        let engine = self.engine.clone();
        let ScriptRequest {
            script,
            dialog_policy,
            timeout,
            wait,
        } = request;
        let result_name = operation_id.clone();
        tokio::spawn(async move {
            let outcome = run_script(&page, &script, dialog_policy, &result_name).await;
            drop(page); // releases the tab before the result becomes visible
            engine.receipts.complete(completer, outcome);
        });
        let pending = |status: &str, extra: Value| {
            let mut reply = json!({
                "status": status,
                "operation_id": operation_id,
                "target": target,
                "retry_safe": false,
                "may_have_executed": true,
                "reservation_held": true,
            });
            merge(&mut reply, extra);
            reply
        };
        if !wait {
            return Ok(pending("in_progress", Value::Null));
        }
        let deadline = Instant::now() + timeout;
        let receipts = &self.engine.receipts;
        let finished = receipts.get(self.id, &operation_id, timeout);
        let manual_dialog = async {
            if dialog_policy != DialogPolicy::Manual {
                return std::future::pending().await;
            }
            wait_event(&mut events, deadline, |e| {
                e.method == "Page.javascriptDialogOpening"
                    && e.session_id.as_deref() == Some(&session)
            })
            .await
        };
        tokio::select! {
            state = finished => match state? {
                ReceiptState::Done { outcome, .. } => match outcome.as_ref() {
                    Ok(value) => {
                        let mut value = value.clone();
                        value["target"] = json!(target);
                        Ok(value)
                    }
                    Err(error) => Err(clone_error(error)),
                },
                ReceiptState::Pending { .. } => Ok(pending("timeout", json!({
                    "message": format!("the script is still running after {} s; collect its result with get_execute_js_result", timeout.as_secs_f64()),
                }))),
            },
            true = manual_dialog => Ok(pending("blocked_by_dialog", json!({
                "message": "a dialog is open and the script is paused; answer it with handle_dialog, then collect the result with get_execute_js_result",
            }))),
        }
    }
}

async fn run_script(
    page: &Page,
    script: &str,
    policy: DialogPolicy,
    operation_id: &str,
) -> Result<Value> {
    page.set_dialog_policy(policy);
    let mut events = page.browser.conn.subscribe();
    let evaluated = evaluate_user_script(page, script).await;
    let dialogs = page.set_dialog_policy(DialogPolicy::Dismiss);
    // A navigation the script started is announced by events sent before its reply;
    // make sure they have arrived before looking (the extension relay can reorder).
    let _ = page
        .browser
        .conn
        .settle_events(&page.session, Duration::from_secs(2))
        .await;
    let main_frame = page
        .browser
        .tab_by_target(&page.tab.target_id)
        .and_then(|tab| tab.main_frame)
        .unwrap_or_else(|| page.tab.target_id.clone());
    let navigation = navigation_seen(&mut events, &page.session, &main_frame);
    let mut reply = match evaluated {
        Ok(value) => json!({ "status": "success", "js_return": value }),
        Err(error) if context_destroyed(&error) => {
            json!({ "status": "navigated", "js_return": null, "value_lost": true })
        }
        Err(error) => return Err(error),
    };
    if navigation.started || reply["status"] == "navigated" {
        reply["status"] = json!("navigated");
        if !navigation.loaded {
            let deadline = Instant::now() + Duration::from_secs(10);
            wait_event(&mut events, deadline, |e| {
                e.session_id.as_deref() == Some(page.session.as_str())
                    && e.method == "Page.loadEventFired"
            })
            .await;
        }
        reply["landed_url"] = json!(page.current_url().await?.0);
    }
    if !dialogs.is_empty() {
        reply["dialogs"] = json!(dialogs);
    }
    spill_large_result(page, &mut reply, operation_id)?;
    Ok(reply)
}

/// Evaluates as a REPL program (top-level await, completion value); a body with a
/// top-level `return` is a syntax error there, so it is re-run as an async function
/// body. A syntax error means nothing ran, so this never executes the script twice.
async fn evaluate_user_script(page: &Page, script: &str) -> Result<Value> {
    let mut reply = evaluate(page, script, true).await?;
    if is_illegal_return(&reply) {
        let wrapped = format!("(async () => {{\n{script}\n}})()");
        reply = evaluate(page, &wrapped, false).await?;
    }
    // A REPL program's completion value is not awaited when it is itself a promise
    // (an async IIFE, for one); await it here.
    if reply["result"]["subtype"] == "promise" && reply.get("exceptionDetails").is_none() {
        let promise = reply["result"]["objectId"].clone();
        reply = page
            .cdp(
                "Runtime.awaitPromise",
                json!({"promiseObjectId": promise, "returnByValue": false}),
                BACKGROUND_LIMIT,
            )
            .await?;
    }
    if let Some(details) = reply.get("exceptionDetails") {
        return Err(EngineError::page(
            "script_error",
            exception_text(details),
            json!({
                "line": details["lineNumber"], "column": details["columnNumber"],
            }),
        ));
    }
    convert(page, &reply["result"]).await
}

async fn evaluate(page: &Page, expression: &str, repl: bool) -> Result<Value> {
    page.cdp(
        "Runtime.evaluate",
        json!({
            "expression": expression,
            "replMode": repl,
            "awaitPromise": true,
            "returnByValue": false,
            "userGesture": true,
            "generatePreview": false,
        }),
        BACKGROUND_LIMIT,
    )
    .await
}

fn is_illegal_return(reply: &Value) -> bool {
    let details = &reply["exceptionDetails"];
    details["exception"]["className"] == "SyntaxError"
        && details["exception"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("Illegal return"))
}

/// Turns a remote object into JSON with the page script's conversion rules.
async fn convert(page: &Page, object: &Value) -> Result<Value> {
    let Some(object_id) = object["objectId"].as_str() else {
        return Ok(match object["unserializableValue"].as_str() {
            Some(big) if big.ends_with('n') => json!(big),
            Some(_) => Value::Null, // NaN, Infinity, -0 and friends
            None => object.get("value").cloned().unwrap_or(Value::Null),
        });
    };
    let declaration = format!(
        "function () {{ return ({})('convert', this); }}",
        script::dispatcher()
    );
    let converted = page
        .cdp(
            "Runtime.callFunctionOn",
            json!({"functionDeclaration": declaration, "objectId": object_id, "returnByValue": true}),
            Duration::from_secs(30),
        )
        .await;
    let _ = page
        .cdp(
            "Runtime.releaseObject",
            json!({"objectId": object_id}),
            Duration::from_secs(5),
        )
        .await;
    Ok(converted?["result"]["value"].clone())
}

/// What the events received so far say of the main frame: whether a cross-document
/// navigation started, and whether the document it committed has loaded.
#[derive(Default)]
struct NavigationSeen {
    started: bool,
    committed: bool,
    loaded: bool,
}

fn navigation_seen(
    events: &mut tokio::sync::broadcast::Receiver<std::sync::Arc<cdp::Event>>,
    session: &str,
    main_frame: &str,
) -> NavigationSeen {
    let mut seen = NavigationSeen::default();
    while let Ok(event) = events.try_recv() {
        if event.session_id.as_deref() != Some(session) {
            continue;
        }
        let main =
            event.params["frameId"] == main_frame || event.params["frame"]["id"] == main_frame;
        let same_document = event.params["navigationType"] == "sameDocument"
            || event.params["navigationType"] == "historySameDocument";
        match event.method.as_str() {
            // The old document may still finish loading after a navigation was asked for;
            // only a load after the new document committed counts.
            "Page.loadEventFired" => seen.loaded = seen.committed,
            "Page.frameRequestedNavigation" | "Page.frameStartedNavigating"
                if main && !same_document =>
            {
                seen.started = true;
                seen.committed = false;
                seen.loaded = false;
            }
            "Page.frameNavigated" if main => {
                seen.started = true;
                seen.committed = true;
                seen.loaded = false;
            }
            _ => {}
        }
    }
    seen
}

fn context_destroyed(error: &EngineError) -> bool {
    error.to_string().contains("context was destroyed")
        || error.to_string().contains("Inspected target navigated")
}

fn spill_large_result(page: &Page, reply: &mut Value, operation_id: &str) -> Result<()> {
    let encoded = serde_json::to_vec(&reply["js_return"]).unwrap_or_default();
    if encoded.len() <= INLINE_LIMIT {
        return Ok(());
    }
    let path = page
        .engine
        .config
        .output_dir
        .join("results")
        .join(format!("{operation_id}.json"));
    let (path, sha) = files::write_atomic(&path, &encoded)?;
    reply["js_return"] = Value::Null;
    reply["result_file"] = json!(path);
    reply["result_bytes"] = json!(encoded.len());
    reply["result_sha256"] = json!(sha);
    reply["result_format"] = json!("json");
    Ok(())
}

/// Turns a receipt outcome back into a call result for whoever reads it.
pub fn outcome_reply(outcome: &crate::receipts::Outcome) -> Result<Value> {
    match outcome {
        Ok(value) => Ok(value.clone()),
        Err(error) => Err(clone_error(error)),
    }
}

/// Receipts share one outcome among readers; errors are rebuilt with the same code.
fn clone_error(error: &EngineError) -> EngineError {
    EngineError::page(error.code(), error.to_string(), error.details())
}

fn merge(target: &mut Value, extra: Value) {
    if let (Some(target), Value::Object(extra)) = (target.as_object_mut(), extra) {
        target.extend(extra);
    }
}
