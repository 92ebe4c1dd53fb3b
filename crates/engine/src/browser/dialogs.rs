//! JavaScript dialogs (alert, confirm, prompt, beforeunload): each tab's policy for
//! answering them, the ones left open for an agent, and answering those through CDP.
//! Nothing here presses an OS key.

use crate::ids::Deadline;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::tabs::{Dialog, DialogPolicy, Tab};
use super::{Browser, HOUSEKEEPING};
use crate::error::{EngineError, Result};

/// How an agent answers a dialog left open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogAnswer {
    /// Only report it.
    Report,
    Accept,
    Dismiss,
}

/// What became of a request to answer a dialog.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum DialogOutcome {
    NoDialog,
    /// Left open (a report was asked for).
    BlockedByDialog {
        dialog: Dialog,
    },
    Accepted {
        dialog: Dialog,
        prompt_text: Option<String>,
    },
    Dismissed {
        dialog: Dialog,
    },
}

/// Called for every `Page.javascriptDialogOpening`: answers it per the tab's policy, or
/// leaves it open (Manual).
pub(super) fn on_dialog_opening(browser: &Arc<Browser>, session: &str, params: &Value) {
    let Some(target) = browser.target_of_session(session) else {
        return;
    };
    let mut dialog = Dialog::from_event(params);
    let policy = browser
        .tab_by_target(&target)
        .map(|tab| tab.dialog_policy)
        .unwrap_or_default();
    if policy == DialogPolicy::Manual {
        browser.update_tab(&target, |tab| tab.open_dialog = Some(dialog));
        return;
    }
    let accept = policy == DialogPolicy::Accept;
    dialog.action = Some(if accept { "accepted" } else { "dismissed" });
    let mut answer = json!({ "accept": accept });
    if accept && let Some(prompt) = &dialog.default_prompt {
        answer["promptText"] = json!(prompt);
    }
    browser.table.lock().push_answered(&target, dialog);
    let conn = browser.conn.clone();
    let session = session.to_owned();
    tokio::spawn(async move {
        let _ = conn
            .call(
                Some(&session),
                "Page.handleJavaScriptDialog",
                answer,
                HOUSEKEEPING,
            )
            .await;
    });
}

impl Browser {
    /// Reports or answers a dialog left open on a tab, waiting until the deadline for one to
    /// open. Does not reserve the tab: the call that opened the dialog still holds it.
    pub async fn answer_dialog(
        &self,
        tab: &Tab,
        answer: DialogAnswer,
        prompt_text: Option<&str>,
        deadline: Deadline,
    ) -> Result<DialogOutcome> {
        let Some(dialog) = self.wait_for_dialog(tab, deadline.remaining()).await else {
            return Ok(DialogOutcome::NoDialog);
        };
        let accept = match answer {
            DialogAnswer::Report => return Ok(DialogOutcome::BlockedByDialog { dialog }),
            DialogAnswer::Accept => true,
            DialogAnswer::Dismiss => false,
        };
        let session = self.attached_session(tab)?;
        let mut params = json!({ "accept": accept });
        if let Some(text) = prompt_text {
            params["promptText"] = json!(text);
        }
        self.conn
            .call(
                Some(&session),
                "Page.handleJavaScriptDialog",
                params,
                deadline.remaining(),
            )
            .await?;
        self.update_tab(&tab.target_id, |t| {
            t.open_dialog = None;
            if let Some(prior) = t.dialog_left_open.take() {
                t.dialog_policy = prior;
            }
        });
        Ok(if accept {
            DialogOutcome::Accepted {
                dialog,
                prompt_text: prompt_text.map(str::to_owned),
            }
        } else {
            DialogOutcome::Dismissed { dialog }
        })
    }

    /// Answers a leave-page (beforeunload) prompt with protocol accepts only: if it
    /// survives two, the user must act. None when no prompt is open.
    pub async fn accept_leave_prompt(&self, tab: &Tab) -> Result<Option<(Dialog, u32, bool)>> {
        let Some(dialog) = self
            .tab_by_target(&tab.target_id)
            .and_then(|t| t.open_dialog.clone())
        else {
            return Ok(None);
        };
        let session = self.attached_session(tab)?;
        for attempt in 1..=2 {
            let answered = self
                .conn
                .call(
                    Some(&session),
                    "Page.handleJavaScriptDialog",
                    json!({ "accept": true }),
                    HOUSEKEEPING,
                )
                .await;
            if answered.is_ok() {
                self.update_tab(&tab.target_id, |t| t.open_dialog = None);
                return Ok(Some((dialog, attempt, true)));
            }
        }
        Ok(Some((dialog, 2, false)))
    }

    fn attached_session(&self, tab: &Tab) -> Result<String> {
        self.tab_by_target(&tab.target_id)
            .and_then(|t| t.session.clone())
            .ok_or_else(|| EngineError::NoSuchTab(self.handle(tab)))
    }

    /// The dialog open on a tab, waiting up to `timeout` for one to open.
    async fn wait_for_dialog(&self, tab: &Tab, timeout: Duration) -> Option<Dialog> {
        // Subscribe before looking, so a dialog opening in between is not missed.
        let mut events = self.conn.subscribe();
        let current = || {
            self.tab_by_target(&tab.target_id)
                .and_then(|t| t.open_dialog.clone())
        };
        if let Some(dialog) = current() {
            return Some(dialog);
        }
        let session = self.tab_by_target(&tab.target_id)?.session.clone()?;
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let event = match tokio::time::timeout_at(deadline, events.recv()).await {
                Ok(Ok(event)) => event,
                Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => continue,
                _ => return current(),
            };
            if event.method == "Page.javascriptDialogOpening"
                && event.session_id.as_deref() == Some(session.as_str())
            {
                // Read it from the event itself: the tracker may record it a moment later.
                // Only a manual-policy dialog stays open; others are being answered already.
                let manual = self
                    .tab_by_target(&tab.target_id)
                    .is_some_and(|t| t.dialog_policy == DialogPolicy::Manual);
                return current().or_else(|| manual.then(|| Dialog::from_event(&event.params)));
            }
        }
    }
}
