//! The one registry every capture of a tab lives in (a network or console recording, a
//! GIF, a trace): at most one of a kind per tab, owned by the agent session that started
//! it. One rule refuses another session's capture (`capture_busy`) and says when there is
//! none (`no_capture`), and a session's end takes its own away.

use std::collections::HashMap;

use parking_lot::Mutex;

use super::Owner;
use crate::error::{EngineError, ErrorCode, Result};

/// Captures of one kind, by the tab's target id.
pub(super) struct PerTab<T> {
    /// What a capture is doing to its tab, for messages ("tracing", "recording network on").
    doing: &'static str,
    entries: Mutex<HashMap<String, Owned<T>>>,
}

struct Owned<T> {
    owner: Owner,
    capture: T,
}

impl<T> PerTab<T> {
    pub(super) fn new(doing: &'static str) -> PerTab<T> {
        PerTab {
            doing,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Refuses a second capture of the tab, this session's or another's.
    pub(super) fn vacant(&self, target: &str, owner: Owner) -> Result<()> {
        match self.entries.lock().get(target) {
            None => Ok(()),
            Some(held) => {
                let whose = if held.owner == owner {
                    "this"
                } else {
                    "another"
                };
                Err(EngineError::refused(
                    ErrorCode::CaptureBusy,
                    format!(
                        "{whose} agent session is already {} this tab; stop or clear that first",
                        self.doing
                    ),
                ))
            }
        }
    }

    /// Keeps `owner`'s capture of the tab (replacing none: check `vacant` first).
    pub(super) fn insert(&self, target: &str, owner: Owner, capture: T) {
        self.entries
            .lock()
            .insert(target.to_owned(), Owned { owner, capture });
    }

    /// `read` of `owner`'s capture of the tab; None when the tab has none, refused when
    /// another session's runs there.
    pub(super) fn with_own<R>(
        &self,
        target: &str,
        owner: Owner,
        read: impl FnOnce(&mut T) -> R,
    ) -> Result<Option<R>> {
        match self.entries.lock().get_mut(target) {
            None => Ok(None),
            Some(held) if held.owner != owner => Err(self.busy()),
            Some(held) => Ok(Some(read(&mut held.capture))),
        }
    }

    /// The same, a missing capture being an error (`no_capture`).
    pub(super) fn own<R>(
        &self,
        target: &str,
        owner: Owner,
        read: impl FnOnce(&mut T) -> R,
    ) -> Result<R> {
        self.with_own(target, owner, read)?
            .ok_or_else(|| self.none())
    }

    /// Takes `owner`'s capture of the tab out of the registry (to stop it).
    pub(super) fn take_own(&self, target: &str, owner: Owner) -> Result<T> {
        let mut entries = self.entries.lock();
        match entries.get(target) {
            None => Err(self.none()),
            Some(held) if held.owner != owner => Err(self.busy()),
            Some(_) => entries
                .remove(target)
                .map(|held| held.capture)
                .ok_or_else(|| self.none()),
        }
    }

    /// Takes every capture of `owner` out (its session ended).
    pub(super) fn take_all(&self, owner: Owner) -> Vec<T> {
        let mut entries = self.entries.lock();
        let targets: Vec<String> = entries
            .iter()
            .filter(|(_, held)| held.owner == owner)
            .map(|(target, _)| target.clone())
            .collect();
        targets
            .iter()
            .filter_map(|target| entries.remove(target))
            .map(|held| held.capture)
            .collect()
    }

    /// Drops the captures `keep` says no to (their tab or browser went away).
    pub(super) fn retain(&self, mut keep: impl FnMut(&T) -> bool) {
        self.entries.lock().retain(|_, held| keep(&held.capture));
    }

    /// The first capture (any session's) `pick` answers for, with its tab's target id.
    pub(super) fn find_map<R>(
        &self,
        mut pick: impl FnMut(&str, Owner, &T) -> Option<R>,
    ) -> Option<R> {
        self.entries
            .lock()
            .iter()
            .find_map(|(target, held)| pick(target, held.owner, &held.capture))
    }

    /// `change` of the tab's capture, whoever owns it (the engine's own bookkeeping).
    pub(super) fn with_any<R>(&self, target: &str, change: impl FnOnce(&mut T) -> R) -> Option<R> {
        self.entries
            .lock()
            .get_mut(target)
            .map(|held| change(&mut held.capture))
    }

    fn busy(&self) -> EngineError {
        EngineError::refused(
            ErrorCode::CaptureBusy,
            format!(
                "another agent session is {} this tab; only it can stop or clear it",
                self.doing
            ),
        )
    }

    fn none(&self) -> EngineError {
        EngineError::refused(
            ErrorCode::NoCapture,
            format!("nothing is {} this tab; start that first", self.doing),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::PerTab;
    use crate::error::ErrorCode;

    #[test]
    fn a_capture_is_its_sessions_alone() {
        let traces: PerTab<&str> = PerTab::new("tracing");
        traces.vacant("t1", 1).unwrap();
        traces.insert("t1", 1, "trace");
        // A second start is refused, for this session and another.
        assert_eq!(
            traces.vacant("t1", 1).unwrap_err().code(),
            ErrorCode::CaptureBusy
        );
        assert_eq!(
            traces.vacant("t1", 2).unwrap_err().code(),
            ErrorCode::CaptureBusy
        );
        // Only its owner reads or stops it.
        assert_eq!(traces.own("t1", 1, |c| c.len()).unwrap(), 5);
        assert_eq!(
            traces.own("t1", 2, |c| c.len()).unwrap_err().code(),
            ErrorCode::CaptureBusy
        );
        assert_eq!(
            traces.take_own("t1", 2).unwrap_err().code(),
            ErrorCode::CaptureBusy
        );
        assert_eq!(traces.with_own("t2", 1, |_| ()).unwrap(), None);
        assert_eq!(
            traces.own("t2", 1, |_| ()).unwrap_err().code(),
            ErrorCode::NoCapture
        );
        assert_eq!(traces.take_own("t1", 1).unwrap(), "trace");
        traces.vacant("t1", 2).unwrap();
    }

    #[test]
    fn a_sessions_end_takes_only_its_own() {
        let gifs: PerTab<u32> = PerTab::new("recording");
        gifs.insert("a", 1, 10);
        gifs.insert("b", 2, 20);
        gifs.insert("c", 1, 30);
        let mut taken = gifs.take_all(1);
        taken.sort();
        assert_eq!(taken, [10, 30]);
        assert_eq!(gifs.own("b", 2, |c| *c).unwrap(), 20);
        gifs.retain(|c| *c != 20);
        assert_eq!(gifs.find_map(|_, _, c| Some(*c)), None);
    }
}
