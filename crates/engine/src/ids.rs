//! The one source of unique ids (operation ids, owner ids, lease ids, scratch names): a
//! random per-process prefix and a counter, so two ids made in the same instant differ
//! and ids of two processes never collide or can be guessed from the clock.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(1);

/// `prefix-<16 hex of this process>-<counter>`, unique for this process's life and
/// across processes.
pub fn unique(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{:016x}-{n:x}", process_nonce())
}

/// 64 random bits, read once per process.
fn process_nonce() -> u64 {
    static NONCE: OnceLock<u64> = OnceLock::new();
    *NONCE.get_or_init(|| {
        let mut bytes = [0u8; 8];
        if platform::random::fill(&mut bytes).is_ok() {
            return u64::from_ne_bytes(bytes);
        }
        // No system randomness: the clock and the pid, which is still unique per
        // process, only guessable.
        let clock = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default();
        clock ^ u64::from(std::process::id()).rotate_left(40)
    })
}

/// Wall-clock milliseconds since the Unix epoch, as records and reports give times.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

/// Now as `2026-12-01T10-15-30-123Z`: UTC, sortable, and safe in a file name.
pub fn utc_stamp() -> String {
    stamp_of(jiff::Timestamp::now())
}

fn stamp_of(instant: jiff::Timestamp) -> String {
    instant.strftime("%Y-%m-%dT%H-%M-%S-%3fZ").to_string()
}

/// What a call keeps of its time, after a wait for what it set off, to read the page
/// once more and write its answer (a round trip or two through the extension relay).
pub const TIME_TO_ANSWER: std::time::Duration = std::time::Duration::from_millis(500);

/// How long a call may take, counted from when it began: the one limit its operations
/// work within, and what its progress reports count toward.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    started: tokio::time::Instant,
    budget: std::time::Duration,
}

tokio::task_local! {
    /// The deadline of the agent call this task runs, when it runs one.
    static CALL_DEADLINE: Deadline;
}

impl Deadline {
    /// Runs a call's work with its deadline known to all it awaits (a connection that
    /// waits in a farm's queue waits as long as the call may).
    pub async fn scope<F: std::future::Future>(self, work: F) -> F::Output {
        CALL_DEADLINE.scope(self, work).await
    }

    /// The deadline of the call this task runs, if it runs one.
    pub fn of_call() -> Option<Deadline> {
        CALL_DEADLINE.try_with(|deadline| *deadline).ok()
    }

    /// A deadline `budget` from now.
    pub fn after(budget: std::time::Duration) -> Deadline {
        Deadline {
            started: tokio::time::Instant::now(),
            budget,
        }
    }

    /// The whole time the call was given.
    pub fn budget(&self) -> std::time::Duration {
        self.budget
    }

    /// When it ends.
    pub fn at(&self) -> tokio::time::Instant {
        self.started + self.budget
    }

    /// This deadline, or one `cap` from now if that comes first: a step that may take
    /// at most `cap` of what is left.
    pub fn within(&self, cap: std::time::Duration) -> Deadline {
        if cap < self.remaining() {
            Deadline::after(cap)
        } else {
            *self
        }
    }

    /// What is left of it for a wait that ends the call (what an input set off, a
    /// download to start): what is left less `TIME_TO_ANSWER`, or less a quarter of it
    /// when that is less, so the call still answers by its deadline and a short limit
    /// still waits most of its time.
    pub fn for_waiting(&self) -> std::time::Duration {
        let left = self.remaining();
        left - TIME_TO_ANSWER.min(left / 4)
    }

    /// What is left of it now.
    pub fn remaining(&self) -> std::time::Duration {
        self.budget.saturating_sub(self.started.elapsed())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_stamp_is_utc_to_the_millisecond() {
        let instant = jiff::Timestamp::from_millisecond(1_764_590_400_007).unwrap();
        assert_eq!(super::stamp_of(instant), "2025-12-01T12-00-00-007Z");
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_keeps_time_to_answer_and_a_step_gets_no_more_than_is_left() {
        use std::time::Duration;
        let long = super::Deadline::after(Duration::from_secs(10));
        assert_eq!(long.for_waiting(), Duration::from_millis(9500));
        // A short limit keeps a quarter, and still waits most of its time.
        let short = super::Deadline::after(Duration::from_millis(400));
        assert_eq!(short.for_waiting(), Duration::from_millis(300));
        assert_eq!(
            long.within(Duration::from_secs(3)).remaining(),
            Duration::from_secs(3)
        );
        assert_eq!(short.within(Duration::from_secs(3)).at(), short.at());
        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(long.remaining(), Duration::ZERO);
        assert_eq!(long.for_waiting(), Duration::ZERO);
    }

    #[test]
    fn ids_made_at_once_differ() {
        let ids: std::collections::HashSet<String> =
            (0..1000).map(|_| super::unique("lease")).collect();
        assert_eq!(ids.len(), 1000);
        assert!(ids.iter().all(|id| id.starts_with("lease-")));
    }
}
