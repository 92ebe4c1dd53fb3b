//! Recordings: network and console captures, performance traces (`trace`, read into
//! insights by `insights`) and GIF recordings (`gif`). Each fills a bounded ring from CDP events
//! in a background task, belongs to the agent session that started it (another gets
//! `capture_busy`), reports events it lost if the event stream lagged, and is freed when
//! stopped or when its tab or browser goes away.
//!
//! May import the page and browser rooms and the base modules.

mod console;
mod font;
pub mod gif;
pub mod insights;
mod network;
mod per_tab;
pub mod trace;

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::browser::{Browser, Tab};
use crate::error::Result;
use crate::page::Page;
use per_tab::PerTab;

pub use console::{ConsoleKind, ConsolePage, ConsoleRead, ConsoleRecord, ConsoleStopped};
pub use network::{NetworkBody, NetworkFilter, NetworkOptions, NetworkRecord, NetworkStopped};

/// Who started a recording: an agent session's id.
pub type Owner = u64;

struct Capture<R> {
    session: String,
    browser: std::sync::Weak<Browser>,
    target: String,
    ring: Arc<Mutex<Ring<R>>>,
    task: tokio::task::JoinHandle<()>,
}

impl<R> Capture<R> {
    /// Whether its tab is still there to record.
    fn alive(&self) -> bool {
        self.browser
            .upgrade()
            .is_some_and(|b| !b.connection().is_closed() && b.tab_by_target(&self.target).is_some())
    }
}

impl<R> Drop for Capture<R> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A capture's bounded buffer of records (the oldest go first when it is full).
struct Ring<R> {
    records: VecDeque<R>,
    /// Network records still being filled in, by request id.
    open: HashMap<String, usize>,
    max: usize,
    dropped: u64,
    lagged: u64,
    /// Console: which execution contexts are pages' main worlds.
    main_contexts: std::collections::HashSet<i64>,
    first_seq: u64,
    /// Why the recording stopped by itself (its time was up, the page went quiet).
    ended: Option<&'static str>,
    /// When it started (ms since the epoch).
    started_ms: u64,
    /// A network capture's body options.
    bodies: Option<BodyOptions>,
}

/// What a capture holds and lost, and what it was started with.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CaptureSummary {
    /// When it started (ms since the epoch).
    pub started_ms: u64,
    /// How many records it holds.
    pub records: usize,
    /// Records pushed out because the buffer was full.
    pub dropped: u64,
    /// Events the browser sent that the capture could not keep up with.
    pub events_lost: u64,
    pub max_entries: usize,
    /// A network capture's body options (None for the console).
    pub bodies: Option<BodyOptions>,
}

/// Whether a network capture reads response bodies, and up to how many bytes.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct BodyOptions {
    pub include: bool,
    pub max_bytes: usize,
}

/// What starting a capture did.
#[derive(Debug, Clone)]
pub struct CaptureStarted {
    pub summary: CaptureSummary,
    /// This session ran one on the tab already: it goes on as it was started.
    pub already_running: bool,
}

impl<R> Ring<R> {
    fn new(max: usize) -> Arc<Mutex<Ring<R>>> {
        Arc::new(Mutex::new(Ring {
            records: VecDeque::new(),
            open: HashMap::new(),
            max,
            dropped: 0,
            lagged: 0,
            main_contexts: std::collections::HashSet::new(),
            first_seq: 0,
            ended: None,
            started_ms: crate::ids::now_ms(),
            bodies: None,
        }))
    }

    fn push(&mut self, record: R) -> u64 {
        if self.records.len() == self.max {
            self.records.pop_front();
            self.first_seq += 1;
            self.dropped += 1;
            // Positions shift; forget in-flight requests that fell out.
            self.open.retain(|_, at| {
                let keep = *at > 0;
                *at = at.saturating_sub(1);
                keep
            });
        }
        self.records.push_back(record);
        self.first_seq + self.records.len() as u64 - 1
    }

    /// The recording as a report gives it: when it started, what it holds and lost, and
    /// what it was started with.
    fn summary(&self) -> CaptureSummary {
        CaptureSummary {
            started_ms: self.started_ms,
            records: self.records.len(),
            dropped: self.dropped,
            events_lost: self.lagged,
            max_entries: self.max,
            bodies: self.bodies,
        }
    }

    fn find(&mut self, request_id: &str) -> Option<&mut R> {
        let at = *self.open.get(request_id)?;
        self.records.get_mut(at)
    }
}

/// Every running recording of one engine.
pub struct Recordings {
    network: PerTab<Capture<NetworkRecord>>,
    console: PerTab<Capture<ConsoleRecord>>,
    /// Performance traces, and each session's last one.
    pub traces: trace::Traces,
    /// GIF recordings of tabs.
    pub gifs: gif::Gifs,
}

impl Default for Recordings {
    fn default() -> Recordings {
        Recordings {
            network: PerTab::new("recording the network of"),
            console: PerTab::new("recording the console of"),
            traces: trace::Traces::default(),
            gifs: gif::Gifs::default(),
        }
    }
}

impl Recordings {
    /// The summary of the recording `owner` already runs on the tab (None: none runs);
    /// refuses when another session's runs. Recordings whose tab or browser went away
    /// are freed first.
    fn check_owner<R>(
        captures: &PerTab<Capture<R>>,
        target: &str,
        owner: Owner,
    ) -> Result<Option<CaptureSummary>> {
        captures.retain(Capture::alive);
        captures.with_own(target, owner, |capture| capture.ring.lock().summary())
    }

    /// Records a running capture as `owner`'s.
    fn register<R>(
        captures: &PerTab<Capture<R>>,
        page: &Page,
        owner: Owner,
        ring: Arc<Mutex<Ring<R>>>,
        task: tokio::task::JoinHandle<()>,
    ) {
        let capture = Capture {
            session: page.session.clone(),
            browser: Arc::downgrade(&page.browser),
            target: page.tab.target_id.clone(),
            ring,
            task,
        };
        captures.insert(&page.tab.target_id, owner, capture);
    }

    /// The recording's CDP session and ring, if `owner` runs one on the tab.
    fn owned<R>(
        captures: &PerTab<Capture<R>>,
        tab: &Tab,
        owner: Owner,
    ) -> Result<(String, Arc<Mutex<Ring<R>>>)> {
        captures.retain(Capture::alive);
        captures.own(&tab.target_id, owner, |capture| {
            (capture.session.clone(), capture.ring.clone())
        })
    }

    /// Takes `owner`'s recording of the tab out (to stop it): its CDP session.
    fn remove<R>(captures: &PerTab<Capture<R>>, tab: &Tab, owner: Owner) -> Option<String> {
        let capture = captures.take_own(&tab.target_id, owner).ok()?;
        Some(capture.session.clone())
    }

    /// Drops every capture of `owner` (its session ended): its recordings stop
    /// listening, a trace is ended in its browser, a GIF's frames are deleted, and its
    /// last trace report is forgotten.
    pub fn forget(&self, owner: Owner) {
        drop(self.network.take_all(owner));
        drop(self.console.take_all(owner));
        self.traces.forget(owner);
        self.gifs.forget(owner);
    }
}

/// The next event of one CDP session, counting lost events in the ring; None when the
/// stream has ended.
async fn next_event<R>(
    events: &mut tokio::sync::broadcast::Receiver<Arc<cdp::Event>>,
    session: &str,
    ring: &Mutex<Ring<R>>,
) -> Option<Arc<cdp::Event>> {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        match events.recv().await {
            Ok(event) if event.session_id.as_deref() == Some(session) => return Some(event),
            Ok(_) => {}
            Err(RecvError::Lagged(n)) => ring.lock().lagged += n,
            Err(RecvError::Closed) => return None,
        }
    }
}
