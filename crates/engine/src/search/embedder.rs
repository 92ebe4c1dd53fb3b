//! The background encoder: one thread at low priority that embeds the passages the
//! index hands out (`Index::next_passages`: outlines first, then first chunks), a batch
//! at a time, and stores their vectors. A search that needs vectors names its tabs (they
//! go first) and waits on the progress signal for at most a bounded time; while it
//! waits, a batch is split over two threads.
//!
//! The thread owns no state of its own: it reads and writes the index under its lock,
//! never across a forward pass.

use parking_lot::{Condvar, Mutex};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use super::embed::Model;
use super::index::{Index, IndexedTab, Passage};

/// Encoder pieces embedded between two looks at the index (about half a second of one
/// core): small enough that a waiting search sees progress, large enough to pack.
const BATCH_PIECES: usize = 640;

#[derive(Default)]
struct Signal {
    /// New passages may be waiting.
    work: bool,
    stop: bool,
}

pub struct Embedder {
    signal: Mutex<Signal>,
    wake: Condvar,
    /// Tabs a waiting search asked for; their passages go first.
    wanted: Mutex<Option<HashSet<String>>>,
    /// Bumped after every batch stored.
    progress: tokio::sync::watch::Sender<u64>,
}

impl Embedder {
    /// Starts the thread; it runs until [`Embedder::stop`].
    pub fn start(index: Arc<Mutex<Index>>, model: Arc<Model>) -> std::io::Result<Arc<Embedder>> {
        let embedder = Arc::new(Embedder {
            signal: Mutex::new(Signal {
                work: true,
                stop: false,
            }),
            wake: Condvar::new(),
            wanted: Mutex::new(None),
            progress: tokio::sync::watch::Sender::new(0),
        });
        let worker = embedder.clone();
        std::thread::Builder::new()
            .name("tab-search-embed".into())
            .spawn(move || worker.run(&index, &model))?;
        Ok(embedder)
    }

    /// Says the index may hold new passages to embed.
    pub fn poke(&self) {
        self.signal.lock().work = true;
        self.wake.notify_one();
    }

    pub fn stop(&self) {
        self.signal.lock().stop = true;
        self.wake.notify_one();
    }

    /// Waits until `done` holds, the tabs `keys` names going first, for at most
    /// `patience`. True when it holds.
    pub async fn wait_for(
        &self,
        keys: HashSet<String>,
        patience: Duration,
        done: impl Fn() -> bool,
    ) -> bool {
        let mut progress = self.progress.subscribe();
        *self.wanted.lock() = Some(keys);
        self.poke();
        let deadline = tokio::time::Instant::now() + patience;
        let held = loop {
            if done() {
                break true;
            }
            if tokio::time::timeout_at(deadline, progress.changed())
                .await
                .is_err()
            {
                break done();
            }
        };
        *self.wanted.lock() = None;
        held
    }

    fn run(&self, index: &Mutex<Index>, model: &Model) {
        if let Err(e) = platform::priority::lower_this_thread() {
            tracing::debug!(%e, "the tab search encoder runs at normal priority");
        }
        loop {
            {
                let mut signal = self.signal.lock();
                while !signal.work && !signal.stop {
                    self.wake.wait(&mut signal);
                }
                if signal.stop {
                    return;
                }
                signal.work = false;
            }
            loop {
                let wanted = self.wanted.lock().clone();
                let first =
                    |tab: &IndexedTab| wanted.as_ref().is_some_and(|w| w.contains(&tab.key));
                let passages = index.lock().next_passages(&first, BATCH_PIECES);
                if passages.is_empty() || self.signal.lock().stop {
                    break;
                }
                let vectors = embed(model, &passages, wanted.is_some());
                index
                    .lock()
                    .store(passages.iter().map(|p| p.chunk).zip(vectors).collect());
                self.progress.send_modify(|n| *n += 1);
            }
        }
    }
}

/// The passages' vectors; split over two threads when a search waits for them.
fn embed(model: &Model, passages: &[Passage], hurry: bool) -> Vec<Vec<f32>> {
    let texts: Vec<&str> = passages.iter().map(|p| p.text.as_str()).collect();
    if !hurry || texts.len() < 2 {
        return model.embed_passages(&texts);
    }
    let (front, back) = texts.split_at(texts.len() / 2);
    std::thread::scope(|scope| {
        let helper = scope.spawn(|| model.embed_passages(back));
        let mut vectors = model.embed_passages(front);
        match helper.join() {
            Ok(rest) => vectors.extend(rest),
            // The helper cannot fail short of a bug in the encoder; embed its half here.
            Err(_) => vectors.extend(model.embed_passages(back)),
        }
        vectors
    })
}
