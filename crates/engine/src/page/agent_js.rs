//! Running an agent's JavaScript in a page: as a REPL program or a function body, under a
//! dialog policy, noticing a navigation it starts, converting its value to JSON, and
//! writing a large result to a file. The receipt around a long-running script belongs to
//! the agents room.

use crate::ids::Deadline;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::navigation::wait_event;
use super::{Page, page_script};
use crate::browser::{Dialog, DialogPolicy, exception_text};
use crate::error::{EngineError, ErrorCode, Input, Result};
use crate::files;

/// Larger JSON results go to a file instead of the reply.
pub const INLINE_LIMIT: usize = 24 * 1024;
/// A script may run this long in the background after its caller stopped waiting.
pub const BACKGROUND_LIMIT: Duration = Duration::from_secs(600);

/// What an agent's script did, as the engine saw it to its end.
#[derive(Debug, Clone)]
pub struct ScriptRan {
    /// The tab it ran in (named again when the result is collected later).
    pub tab_handle: String,
    pub tab_id: u64,
    /// Its value as JSON: the page's own data. Null when the value went to `spilled` or
    /// was lost to a navigation.
    pub value: Value,
    /// The script's document went away under it, and its value with it.
    pub value_lost: bool,
    /// The page navigated while it ran: where it landed.
    pub landed_url: Option<String>,
    /// Dialogs answered by the policy while it ran, in order.
    pub dialogs: Vec<Dialog>,
    /// What it changed in the page, when watched and the page did not navigate.
    pub page_changes: Option<PageChanges>,
    /// A value larger than [`INLINE_LIMIT`], written to a JSON file instead.
    pub spilled: Option<files::Written>,
}

/// Runs an agent's script to completion: its value (or a file named `result_name`
/// holding it), whether it navigated, the dialogs answered meanwhile, and with `watch`
/// what it changed in the page.
pub async fn run_script(
    page: &Page,
    script: &str,
    policy: DialogPolicy,
    result_name: &str,
    watch: bool,
) -> Result<ScriptRan> {
    let scope = page.dialog_policy_for(policy);
    let mut events = page.browser.conn.subscribe();
    // A page that cannot be watched (no document yet) still runs the script.
    let watching = watch
        && page
            .run(
                &page.top(),
                "watch_start",
                json!({}),
                Deadline::after(crate::browser::HOUSEKEEPING),
            )
            .await
            .is_ok();
    let evaluated = evaluate_agent_js(page, script).await;
    let dialogs = scope.finish();
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
        .and_then(|tab| tab.main_frame.clone())
        .unwrap_or_else(|| page.tab.target_id.clone());
    let navigation = navigation_seen(&mut events, &page.session, &main_frame);
    let tab = page.info();
    let mut ran = ScriptRan {
        tab_handle: tab.handle,
        tab_id: tab.tab_id,
        value: Value::Null,
        value_lost: false,
        landed_url: None,
        dialogs,
        page_changes: None,
        spilled: None,
    };
    match evaluated {
        Ok(value) => ran.value = value,
        Err(error) if context_destroyed(&error) => ran.value_lost = true,
        Err(error) if watching => return Err(with_page_changes(error, page).await),
        Err(error) => return Err(error),
    }
    if navigation.started || ran.value_lost {
        if !navigation.loaded {
            let deadline = Instant::now() + Duration::from_secs(10);
            wait_event(&mut events, deadline, |e| {
                e.session_id.as_deref() == Some(page.session.as_str())
                    && e.method == "Page.loadEventFired"
            })
            .await;
        }
        ran.landed_url = Some(page.current_url().await?.0);
    } else if watching {
        // After a navigation the watched document is gone, and so is what it saw.
        ran.page_changes = Some(page_changes(page).await);
    }
    spill_large_result(page, &mut ran, result_name).await?;
    Ok(ran)
}

/// What the script changed before it threw is still part of its account: the error's
/// details gain `page_changes`.
async fn with_page_changes(error: EngineError, page: &Page) -> EngineError {
    let EngineError::Page {
        code,
        message,
        mut details,
        delivery,
    } = error
    else {
        return error;
    };
    let changes = page_changes(page).await;
    if let Value::Object(facts) = &mut details {
        facts.insert("page_changes".into(), json!(changes));
    }
    EngineError::Page {
        code,
        message,
        details,
        delivery,
    }
}

/// What a script changed in the page while it ran.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct PageChanges {
    /// Whether the page could be watched at all (None of the rest holds otherwise).
    pub available: bool,
    /// Elements added, removed from or changed, counting one inside another once.
    pub changed: u64,
    /// The largest changed element's HTML as it is now (clipped).
    pub largest: Option<String>,
    /// Text that appeared and was gone again by the end.
    pub transients: Vec<String>,
}

async fn page_changes(page: &Page) -> PageChanges {
    let read = page
        .run(
            &page.top(),
            "watch_read",
            json!({}),
            Deadline::after(crate::browser::HOUSEKEEPING),
        )
        .await;
    read.ok()
        .and_then(|value| serde_json::from_value(value).ok())
        .unwrap_or_default()
}

/// Evaluates as a REPL program (top-level await, completion value); a body with a
/// top-level `return` does not compile there, so it is compiled again as an async
/// function body. A script that did not compile never ran, so nothing runs twice; if
/// neither form compiles, the REPL form's error is the one reported.
pub(crate) async fn evaluate_agent_js(page: &Page, script: &str) -> Result<Value> {
    let mut reply = evaluate(page, script, true).await?;
    if did_not_compile(&reply) {
        let wrapped = format!("(async () => {{\n{script}\n}})()");
        let as_body = evaluate(page, &wrapped, false).await?;
        if !did_not_compile(&as_body) {
            reply = as_body;
        }
    }
    // A REPL program's completion value is not awaited when it is itself a promise
    // (an async IIFE, for one); await it here.
    if reply["result"]["subtype"] == "promise" && reply.get("exceptionDetails").is_none() {
        let promise = reply["result"]["objectId"].clone();
        reply = page
            .cdp(
                "Runtime.awaitPromise",
                json!({"promiseObjectId": promise, "returnByValue": false}),
                Deadline::after(BACKGROUND_LIMIT),
            )
            .await?;
    }
    if let Some(details) = reply.get("exceptionDetails") {
        return Err(EngineError::page(
            ErrorCode::ScriptError,
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
        Deadline::after(BACKGROUND_LIMIT),
    )
    .await
}

/// Whether the evaluation failed to compile (so nothing of it ran). CDP names the
/// script of a compile error; an error thrown while running names none.
fn did_not_compile(reply: &Value) -> bool {
    let details = &reply["exceptionDetails"];
    details["exception"]["className"] == "SyntaxError" && details["scriptId"].is_string()
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
        page_script::dispatcher()
    );
    let converted = page
        .cdp(
            "Runtime.callFunctionOn",
            json!({"functionDeclaration": declaration, "objectId": object_id, "returnByValue": true}),
            Deadline::after(Duration::from_secs(30)),
        )
        .await;
    let _ = page
        .cdp(
            "Runtime.releaseObject",
            json!({"objectId": object_id}),
            Deadline::after(Duration::from_secs(5)),
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
    use super::aftermath::{NavigationEvent, navigation_event};
    let mut seen = NavigationSeen::default();
    while let Ok(event) = events.try_recv() {
        match navigation_event(&event, session, main_frame) {
            // The old document may still finish loading after a navigation was asked for;
            // only a load after the new document committed counts.
            Some(NavigationEvent::Loaded) => seen.loaded = seen.committed,
            Some(NavigationEvent::Started(_)) => {
                seen.started = true;
                seen.committed = false;
                seen.loaded = false;
            }
            Some(NavigationEvent::Committed { .. }) => {
                seen.started = true;
                seen.committed = true;
                seen.loaded = false;
            }
            _ => {}
        }
    }
    seen
}

/// The script's document went away under it: it navigated.
fn context_destroyed(error: &EngineError) -> bool {
    matches!(error, EngineError::Cdp(error) if error.is_context_gone())
}

async fn spill_large_result(page: &Page, ran: &mut ScriptRan, name: &str) -> Result<()> {
    let encoded = serde_json::to_vec(&ran.value).unwrap_or_default();
    if encoded.len() <= INLINE_LIMIT {
        return Ok(());
    }
    let target = files::confined_path(
        &page.config.output_dir,
        &format!("results/{name}.json"),
        Input::OutputPath,
    )?;
    ran.spilled = Some(files::write_atomic(target, encoded).await?);
    ran.value = Value::Null;
    Ok(())
}
