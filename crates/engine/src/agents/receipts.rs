//! Operation receipts: a call that outlives its deadline hands back an `operation_id`;
//! the work goes on, and its result can be collected later by the same agent session.
//! A result is stored once and read any number of times; nothing is ever replayed.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::error::{EngineError, ErrorCode, Result};
use tokio::sync::watch;

use crate::page::agent_js::ScriptRan;

/// Completed results are kept this long…
pub const RETENTION: Duration = Duration::from_secs(600);
/// …and at most this many, oldest evicted first.
pub const MAX_COMPLETED: usize = 512;
/// Operations still running, at most: each holds a tab and runs up to its own limit.
pub const MAX_PENDING: usize = 256;

/// A finished operation: what the call would have returned (only scripts outlive their
/// calls today).
pub type Outcome = std::result::Result<ScriptRan, EngineError>;

struct Entry {
    session: u64,
    kind: &'static str,
    started: Instant,
    finished: Option<Instant>,
    result: watch::Receiver<Option<std::sync::Arc<Outcome>>>,
}

#[derive(Default)]
pub struct Receipts {
    entries: Mutex<HashMap<String, Entry>>,
}

/// Handed to the task doing the work; completing it stores the outcome.
pub struct Completer {
    id: String,
    sender: watch::Sender<Option<std::sync::Arc<Outcome>>>,
}

impl Completer {
    pub fn id(&self) -> &str {
        &self.id
    }
}

pub enum ReceiptState {
    Pending {
        kind: &'static str,
        age: Duration,
    },
    Done {
        kind: &'static str,
        outcome: std::sync::Arc<Outcome>,
    },
}

impl Receipts {
    /// A receipt for work about to start; refused while MAX_PENDING are still running.
    pub fn create(&self, session: u64, kind: &'static str) -> Result<Completer> {
        let id = crate::ids::unique("op");
        let (sender, result) = watch::channel(None);
        let mut entries = self.entries.lock();
        let pending = entries.values().filter(|e| e.finished.is_none()).count();
        if pending >= MAX_PENDING {
            return Err(EngineError::refused(
                ErrorCode::TooManyOperations,
                format!(
                    "{pending} operations are still running (at most {MAX_PENDING}); collect or wait for some before starting more"
                ),
            ));
        }
        entries.insert(
            id.clone(),
            Entry {
                session,
                kind,
                started: Instant::now(),
                finished: None,
                result,
            },
        );
        Ok(Completer { id, sender })
    }

    pub fn complete(&self, completer: Completer, outcome: Outcome) {
        let mut entries = self.entries.lock();
        if let Some(entry) = entries.get_mut(&completer.id) {
            entry.finished = Some(Instant::now());
        }
        completer
            .sender
            .send_replace(Some(std::sync::Arc::new(outcome)));
        evict(&mut entries);
    }

    /// Reads a receipt, waiting up to `wait` for a pending one to finish.
    pub async fn get(&self, session: u64, id: &str, wait: Duration) -> Result<ReceiptState> {
        let (kind, started, mut result) = {
            let mut entries = self.entries.lock();
            evict(&mut entries);
            let entry = entries.get(id).ok_or_else(|| {
                EngineError::refused(
                    ErrorCode::UnknownOperation,
                    format!(
                        "operation '{id}' is unknown or expired (results are kept {} s, at most {MAX_COMPLETED}); a missing result does not prove the operation never ran",
                        RETENTION.as_secs()
                    ),
                )
            })?;
            if entry.session != session {
                return Err(EngineError::refused(
                    ErrorCode::ForeignOperation,
                    format!("operation '{id}' belongs to another agent session"),
                ));
            }
            (entry.kind, entry.started, entry.result.clone())
        };
        let _ = tokio::time::timeout(wait, result.wait_for(Option::is_some)).await;
        let current = result.borrow().clone();
        match current {
            Some(outcome) => Ok(ReceiptState::Done { kind, outcome }),
            None => Ok(ReceiptState::Pending {
                kind,
                age: started.elapsed(),
            }),
        }
    }
}

fn evict(entries: &mut HashMap<String, Entry>) {
    entries.retain(|_, e| e.finished.is_none_or(|at| at.elapsed() < RETENTION));
    let mut finished: Vec<(Instant, String)> = entries
        .iter()
        .filter_map(|(id, e)| e.finished.map(|at| (at, id.clone())))
        .collect();
    if finished.len() > MAX_COMPLETED {
        finished.sort();
        for (_, id) in finished.iter().take(finished.len() - MAX_COMPLETED) {
            entries.remove(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A script that returned `value` in tab 1.
    fn returned(value: Value) -> ScriptRan {
        ScriptRan {
            tab_handle: "t:1".into(),
            tab_id: 1,
            value,
            value_lost: false,
            landed_url: None,
            dialogs: Vec::new(),
            page_changes: None,
            spilled: None,
        }
    }

    #[tokio::test]
    async fn a_result_is_read_by_its_session_only() {
        let receipts = Receipts::default();
        let completer = receipts.create(1, "execute_js").unwrap();
        let id = completer.id().to_owned();
        assert!(matches!(
            receipts.get(1, &id, Duration::ZERO).await.unwrap(),
            ReceiptState::Pending { .. }
        ));
        receipts.complete(completer, Ok(returned(json!(42))));
        for _ in 0..2 {
            let ReceiptState::Done { outcome, .. } =
                receipts.get(1, &id, Duration::ZERO).await.unwrap()
            else {
                panic!("expected done");
            };
            assert_eq!(outcome.as_ref().as_ref().unwrap().value, json!(42));
        }
        let foreign = receipts.get(2, &id, Duration::ZERO).await.err().unwrap();
        assert_eq!(foreign.code(), ErrorCode::ForeignOperation);
        let unknown = receipts
            .get(1, "op-nope", Duration::ZERO)
            .await
            .err()
            .unwrap();
        assert_eq!(unknown.code(), ErrorCode::UnknownOperation);
    }

    #[tokio::test]
    async fn completed_results_are_bounded_in_count() {
        let receipts = Receipts::default();
        let first = receipts.create(1, "x").unwrap();
        let first_id = first.id().to_owned();
        receipts.complete(first, Ok(returned(json!(0))));
        for _ in 0..MAX_COMPLETED {
            let c = receipts.create(1, "x").unwrap();
            receipts.complete(c, Ok(returned(json!(1))));
        }
        assert_eq!(
            receipts
                .get(1, &first_id, Duration::ZERO)
                .await
                .err()
                .unwrap()
                .code(),
            ErrorCode::UnknownOperation
        );
    }

    #[test]
    fn running_operations_are_bounded_in_count() {
        let receipts = Receipts::default();
        let running: Vec<Completer> = (0..MAX_PENDING)
            .map(|_| receipts.create(1, "x").unwrap())
            .collect();
        let refused = receipts.create(1, "x").err().unwrap();
        assert_eq!(refused.code(), ErrorCode::TooManyOperations);
        // One finishing makes room for one more.
        let mut running = running.into_iter();
        receipts.complete(running.next().unwrap(), Ok(returned(json!(1))));
        assert!(receipts.create(1, "x").is_ok());
    }
}
