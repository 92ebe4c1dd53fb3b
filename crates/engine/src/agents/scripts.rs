//! An agent's script run as an operation with a receipt: the call waits up to its
//! deadline; a script still running then keeps its tab reserved and finishes in the
//! background, its outcome stored for the same session to collect (never run again).
//!
//! A script never holds its tab hostage: once its caller has stopped waiting, a
//! navigation of the tab supersedes it (the script is stopped and its receipt says
//! `superseded`); if the caller's call is cancelled, the script is stopped at once and
//! the tab is free (`cancelled`). Either way what was sent may have run, and the receipt
//! says so.

use crate::ids::Deadline;
use std::sync::Arc;

use serde_json::json;

use super::AgentSession;
use super::receipts::ReceiptState;
use crate::browser::{DialogPolicy, Holder, Stop, TabInfo};
use crate::error::{EngineError, ErrorCode, Result};
use crate::page::agent_js::{ScriptRan, run_script};
use crate::page::navigation::wait_event;

pub struct ScriptRequest {
    pub script: String,
    pub dialog_policy: DialogPolicy,
    pub deadline: Deadline,
    /// false: answer at once with the operation id.
    pub wait: bool,
    /// The client's cancellation of the call: the script is stopped if it fires while
    /// the call waits.
    pub cancelled: tokio_util::sync::CancellationToken,
    /// At the deadline, stop the script (its receipt says `timeout`) instead of letting
    /// it finish in the background.
    pub stop_at_deadline: bool,
    /// Watch what the script changes in the page (the reply's `page_changes`).
    pub watch: bool,
}

/// What a call running a script answers.
#[derive(Debug, Clone)]
pub enum ScriptAnswer {
    /// It finished within the call.
    Ran(ScriptRan),
    /// Not in yet: it goes on, its tab reserved, and its outcome is collected later with
    /// `operation_id` (it is never run again).
    Pending {
        operation_id: String,
        why: Unfinished,
    },
}

/// Why a script's result is not in the call's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Unfinished {
    /// The caller asked not to wait.
    NotWaitedFor,
    /// The call's deadline passed first; the message says how long it waited.
    Timeout(String),
    /// A dialog left for the agent to answer paused it.
    BlockedByDialog(String),
}

impl Unfinished {
    /// The status word for it: `in_progress`, `timeout` or `blocked_by_dialog`.
    pub fn status(&self) -> &'static str {
        match self {
            Unfinished::NotWaitedFor => "in_progress",
            Unfinished::Timeout(_) => "timeout",
            Unfinished::BlockedByDialog(_) => "blocked_by_dialog",
        }
    }

    /// What went wrong, when something did (the call waited and did not get it).
    pub fn failure(&self) -> Option<&str> {
        match self {
            Unfinished::NotWaitedFor => None,
            Unfinished::Timeout(message) | Unfinished::BlockedByDialog(message) => Some(message),
        }
    }
}

impl AgentSession {
    /// Runs a script; the result, or a receipt for it, within the request's deadline;
    /// and the tab it ran in.
    pub async fn execute_js(
        &self,
        handle: Option<&str>,
        request: ScriptRequest,
    ) -> Result<(TabInfo, ScriptAnswer)> {
        let page = self.page(handle).await?;
        let tab = page.info();
        let mut events = page.browser.conn.subscribe();
        let session = page.session.clone();
        let completer = self.engine.receipts.create(self.id, "execute_js")?;
        let operation_id = completer.id().to_owned();
        let engine = self.engine.clone();
        let ScriptRequest {
            script,
            dialog_policy,
            deadline,
            wait,
            cancelled,
            stop_at_deadline,
            watch,
        } = request;
        let result_name = operation_id.clone();
        let stop = Arc::new(Stop::linked(&cancelled));
        page.set_holder(Some(Holder {
            operation_id: operation_id.clone(),
            stop: stop.clone(),
        }));
        let stopper = stop.clone();
        let holder_id = operation_id.clone();
        // The script's commands count as this call's (`AgentSession::run_call`).
        tokio::spawn(cdp::Ledger::carry(async move {
            let outcome = tokio::select! {
                outcome = run_script(&page, &script, dialog_policy, &result_name, watch) => outcome,
                why = stopper.asked() => {
                    let terminated = page.terminate_script().await;
                    Err(stopped(why, terminated))
                }
            };
            // The tab is let go before the holder is cleared: a call that finds the tab
            // still locked then sees the holder (asked to stop) and waits the moment it
            // takes, instead of answering target_busy in between the two.
            let release = page.release_holder(&holder_id);
            drop(page); // releases the tab before the result becomes visible
            release();
            engine.receipts.complete(completer, outcome);
        }));
        // If this call is dropped before it answers (the client cancelled it), the
        // script is stopped and the tab let go.
        let mut on_cancel = StopOnDrop(Some(stop.clone()));
        let pending = |why: Unfinished| ScriptAnswer::Pending {
            operation_id: operation_id.clone(),
            why,
        };
        if !wait {
            on_cancel.disarm();
            stop.abandon();
            return Ok((tab, pending(Unfinished::NotWaitedFor)));
        }
        let timeout = deadline.remaining();
        let deadline = deadline.at();
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
        let reply = tokio::select! {
            state = finished => match state? {
                ReceiptState::Done { outcome, .. } => match outcome.as_ref() {
                    Ok(ran) => Ok(ScriptAnswer::Ran(ran.clone())),
                    Err(error) => Err(error.clone()),
                },
                ReceiptState::Pending { .. } if stop_at_deadline => {
                    stop.ask(ErrorCode::Timeout);
                    Err(EngineError::page(
                        ErrorCode::Timeout,
                        format!("the script did not finish within {} s and was stopped", timeout.as_secs_f64()),
                        json!({ "operation_id": operation_id }),
                    )
                    .may_have_run())
                }
                ReceiptState::Pending { .. } => {
                    let message = format!("the script is still running after {} s; collect its result later with its operation id", timeout.as_secs_f64());
                    Ok(pending(Unfinished::Timeout(message)))
                }
            },
            true = manual_dialog => Ok(pending(Unfinished::BlockedByDialog(
                "a dialog is open and the script is paused; answer the dialog, then collect the result with its operation id".into(),
            ))),
        };
        on_cancel.disarm();
        // A result not yet in: its caller has stopped waiting for it.
        stop.abandon();
        reply.map(|reply| (tab, reply))
    }
}

/// What a stopped script's receipt holds. Whatever it had sent may have run; a script
/// awaiting something may still resume in the page (only running code can be stopped),
/// and where the link could not stop it at all, the receipt says so.
fn stopped(why: ErrorCode, terminated: bool) -> EngineError {
    let cause = match why {
        ErrorCode::Superseded => "a navigation of its tab superseded the script",
        ErrorCode::Timeout => "its deadline passed",
        _ => "the call was cancelled",
    };
    let message = if terminated {
        format!("{cause}; tabwire stopped it and let go of the tab")
    } else {
        format!(
            "{cause}; tabwire let go of the tab, but this link may not interrupt page scripts, so code still running synchronously keeps the page busy until it yields"
        )
    };
    EngineError::page(why, message, json!({ "terminated": terminated })).may_have_run()
}

/// Asks a script to stop when dropped, unless disarmed.
struct StopOnDrop(Option<Arc<Stop>>);

impl StopOnDrop {
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        if let Some(stop) = self.0.take() {
            stop.ask(ErrorCode::Cancelled);
        }
    }
}
