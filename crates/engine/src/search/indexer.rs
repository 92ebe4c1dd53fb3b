//! `TabSearch`: keeps the index of every open http(s) tab current and answers searches.
//!
//! A background task wakes on every tab change the browsers report (the tab registry's
//! change signal), lets a burst settle, and reads the tabs whose document, URL or title
//! changed since they were read, without reserving them (`Page::observe`), so no agent's
//! call ever finds a tab busy because of it. Chunking runs on the blocking pool, off the
//! async workers that serve page tools; embedding runs on the encoder's own thread at low
//! priority (`embedder`), started with the model at the first search (so a server nobody
//! searches with never loads it). A search first reads the tabs still out of date, then
//! waits a bounded time for the outlines of the tabs it searches to be embedded, then
//! ranks, and says what it waited for and what it could not.

use crate::ids::Deadline;
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::task::JoinSet;

use super::embed::{self, Model};
use super::embedder::Embedder;
use super::index::{Hit, Index, IndexedTab, Ranking};
use crate::browser::{Browser, Browsers, Tab};
use crate::config::EngineConfig;
use crate::error::{EngineError, ErrorCode, Input, Result};
use crate::page::Page;

/// A burst of tab events is read once it has been quiet this long…
const SETTLE: Duration = Duration::from_millis(300);
/// …or at the latest this long after it began.
const SETTLE_AT_MOST: Duration = Duration::from_secs(2);
/// A tab still loading when read is read again this long after.
const LOADING_RETRY: Duration = Duration::from_millis(500);
/// How long one tab's read may take (a page whose script never yields holds a search
/// this long at most).
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a search waits for a loading tab to finish before indexing what it has.
const SEARCH_WAITS_FOR_LOAD: Duration = Duration::from_secs(3);
/// How many reads in a row a tab gets before it waits for a change to be tried again.
const READ_TRIES: u32 = 3;
/// Tabs read at once.
const READ_AT_ONCE: usize = 4;
/// How long a search waits for the passages it needs to be embedded (a first search
/// over many fresh tabs; later ones find them done).
const SEARCH_WAITS_FOR_VECTORS: Duration = Duration::from_secs(10);
/// The passages of each searched tab a search waits for: its outline (rank 0).
const NEEDED_RANKS: u32 = 1;
/// Queries longer than this are refused: nobody means a page-long query.
pub const MAX_QUERY_CHARS: usize = 2000;
/// The most tabs a search answers.
pub const MAX_RESULTS: usize = 50;

/// What a tab looked like when it was read: a change to any part means read it again.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fingerprint {
    document_seq: u64,
    url: String,
    title: String,
}

impl Fingerprint {
    fn of(tab: &Tab) -> Fingerprint {
        Fingerprint {
            document_seq: tab.document_seq,
            url: tab.url.clone(),
            title: tab.title.clone(),
        }
    }
}

#[derive(Default)]
struct State {
    /// Tab key → what it looked like when read (and whether it had finished loading).
    read: HashMap<String, (Fingerprint, bool)>,
    /// Keys of tabs that could not be read, with why and how many times in a row (shown
    /// in the status report).
    failures: HashMap<String, (String, u32)>,
    indexing_time: Duration,
    tabs_read: u64,
}

/// A search's question.
#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    pub query: String,
    pub max_results: usize,
    /// Only these tabs (ids), when given.
    pub tab_ids: Option<Vec<u64>>,
    /// Only tabs in these windows, when given.
    pub window_ids: Option<Vec<u64>>,
    pub ranking: Option<Ranking>,
}

/// A search's answer.
#[derive(Debug, Clone)]
pub struct SearchReport {
    pub hits: Vec<Hit>,
    /// Open http(s) tabs the search looked at (after the filters).
    pub tabs_searched: usize,
    /// Tabs whose content had changed and that the search read before ranking.
    pub waited_for: usize,
    /// Passages of the searched tabs the search needed by meaning (their outlines) and
    /// could not wait for: those tabs were ranked by words and what was embedded.
    pub not_embedded: usize,
    pub stats: IndexStats,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct IndexStats {
    /// Whether tab search is on at all (`--no-tab-search` turns it off).
    pub enabled: bool,
    pub chunks: usize,
    pub tabs: usize,
    /// Why vector search is off, when it is.
    pub vector_search_off: Option<String>,
    pub model_dims: usize,
    pub model_bytes: usize,
    /// Whether the encoder is loaded (it loads at the first search).
    pub model_loaded: bool,
    /// Passages read in context so far, and passages still waiting for the encoder.
    pub passages_embedded: usize,
    pub passages_waiting: usize,
    pub index_bytes: usize,
    pub tabs_read: u64,
    pub indexing_ms: u64,
    /// Tabs that could not be read, with why.
    pub unreadable: Vec<String>,
    /// Tabs whose text went past what is kept of one page.
    pub cut_short: usize,
}

pub struct TabSearch {
    browsers: Arc<Browsers>,
    config: Arc<EngineConfig>,
    /// Loaded on first use (off the async workers); Err says why vector search is off.
    model: OnceLock<std::result::Result<Arc<Model>, String>>,
    /// Started with the model.
    embedder: OnceLock<Arc<Embedder>>,
    /// Shared with the encoder's thread. Where both are held, `state` is taken first.
    index: Arc<Mutex<Index>>,
    state: Mutex<State>,
    /// One refresh at a time (the background task or a search).
    refreshing: tokio::sync::Mutex<()>,
}

impl TabSearch {
    /// The service, its background task started (it stops when the service is dropped).
    pub fn start(browsers: Arc<Browsers>, config: Arc<EngineConfig>) -> Arc<TabSearch> {
        let search = Arc::new(TabSearch {
            browsers,
            config,
            model: OnceLock::new(),
            embedder: OnceLock::new(),
            index: Arc::new(Mutex::new(Index::default())),
            state: Mutex::new(State::default()),
            refreshing: tokio::sync::Mutex::new(()),
        });
        if search.config.tab_search && tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(keep_current(Arc::downgrade(&search)));
        }
        search
    }

    /// The model, loading it first if this is its first use.
    async fn model_ready(&self) -> Option<Arc<Model>> {
        if self.model.get().is_none() {
            let which = self.config.embed_model.clone();
            let loaded =
                tokio::task::spawn_blocking(move || embed::load(&which).map_err(|e| e.to_string()))
                    .await
                    .unwrap_or_else(|e| Err(e.to_string()));
            let loaded = loaded.and_then(|model| {
                let embedder = Embedder::start(self.index.clone(), model.clone())
                    .map_err(|e| format!("the encoder's thread did not start: {e}"))?;
                let _ = self.embedder.set(embedder);
                Ok(model)
            });
            if let Err(why) = &loaded {
                tracing::warn!(%why, "tab search is lexical only");
            }
            let _ = self.model.set(loaded);
        }
        self.model.get().and_then(|m| m.as_ref().ok().cloned())
    }

    /// What the index holds and whether vector search is on (loading the model if it
    /// has not been yet, so the answer is not a guess).
    pub async fn stats(&self) -> IndexStats {
        // With tab search off the model is never needed, so it is not loaded for this.
        if self.config.tab_search {
            self.model_ready().await;
        }
        self.snapshot()
    }

    /// What the index holds now, the model left as it is.
    fn snapshot(&self) -> IndexStats {
        let model = self.model.get().and_then(|m| m.as_ref().ok());
        let vector_search_off = match self.model.get() {
            Some(Err(why)) => Some(why.clone()),
            _ => None,
        };
        // Always the state before the index (as a refresh takes them): the other order
        // deadlocks against a read being put in.
        let state = self.state.lock();
        let index = self.index.lock();
        let (passages_embedded, passages_waiting) = index.embedded_counts();
        IndexStats {
            enabled: self.config.tab_search,
            chunks: index.chunk_count(),
            tabs: index.tabs().count(),
            vector_search_off,
            model_dims: model.as_ref().map_or(0, |m| m.dims()),
            model_bytes: embed::shipped_bytes(),
            model_loaded: model.is_some(),
            passages_embedded,
            passages_waiting,
            index_bytes: index.approximate_bytes(),
            tabs_read: state.tabs_read,
            indexing_ms: state.indexing_time.as_millis() as u64,
            unreadable: state
                .failures
                .iter()
                .map(|(k, (why, _))| format!("{k}: {why}"))
                .collect(),
            cut_short: index.tabs().filter(|t| t.cut_short).count(),
        }
    }

    pub async fn search(&self, request: &SearchRequest) -> Result<SearchReport> {
        if !self.config.tab_search {
            return Err(EngineError::refused(
                ErrorCode::Unsupported,
                "tab search is turned off (--no-tab-search): no tab is read for it",
            ));
        }
        let query = request.query.trim();
        if query.is_empty() {
            return Err(EngineError::invalid(Input::Query, "the query is empty"));
        }
        if query.chars().count() > MAX_QUERY_CHARS {
            return Err(EngineError::invalid(
                Input::Query,
                format!(
                    "the query is {} characters; at most {MAX_QUERY_CHARS} are searched",
                    query.chars().count()
                ),
            ));
        }
        let waited_for = self.refresh(Some(SEARCH_WAITS_FOR_LOAD)).await;
        let open = self.open_tabs();
        let windows = match &request.window_ids {
            Some(wanted) => Some(self.tabs_in_windows(&open, wanted).await),
            None => None,
        };
        let allowed: HashSet<String> = open
            .iter()
            .filter(|(_, tab)| {
                request
                    .tab_ids
                    .as_ref()
                    .is_none_or(|ids| ids.contains(&tab.tab_id))
            })
            .map(|(browser, tab)| browser.handle(tab))
            .filter(|key| windows.as_ref().is_none_or(|w| w.contains(key)))
            .collect();
        // Words alone need no model: a search by words never loads it.
        let model = match request.ranking {
            Some(Ranking::Lexical) => None,
            _ => self.model_ready().await,
        };
        let ranking = match (request.ranking, &model) {
            (_, None) => Ranking::Lexical,
            (Some(r), Some(_)) => r,
            (None, Some(_)) => Ranking::Hybrid,
        };
        let wanted = |t: &IndexedTab| allowed.contains(&t.key);
        let limit = request.max_results.clamp(1, MAX_RESULTS);
        let mut not_embedded = 0;
        let mut query_vector = None;
        let words = match (
            model.filter(|_| ranking != Ranking::Lexical),
            self.embedder.get(),
        ) {
            (Some(model), Some(embedder)) => {
                // The query is embedded while the search waits for the outlines it needs
                // and scans the words.
                let text = query.to_owned();
                let embedding = tokio::task::spawn_blocking(move || super::index::QueryMeaning {
                    vector: model.embed_query(&text),
                    prior: model.passage_prior(),
                });
                let needed = || self.index.lock().unembedded(&wanted, NEEDED_RANKS) == 0;
                // Within the call's deadline, less a moment to rank and answer.
                let patience = crate::ids::Deadline::of_call()
                    .map_or(SEARCH_WAITS_FOR_VECTORS, |call| {
                        call.for_waiting().min(SEARCH_WAITS_FOR_VECTORS)
                    });
                embedder.wait_for(allowed.clone(), patience, needed).await;
                let words = self.index.lock().scan_words(query, ranking, &wanted);
                query_vector = embedding.await.ok();
                not_embedded = self.index.lock().unembedded(&wanted, NEEDED_RANKS);
                words
            }
            _ => self.index.lock().scan_words(query, ranking, &wanted),
        };
        let hits = self
            .index
            .lock()
            .rank(words, query_vector.as_ref(), ranking, limit, &wanted);
        Ok(SearchReport {
            hits,
            tabs_searched: allowed.len(),
            waited_for,
            not_embedded,
            stats: self.snapshot(),
        })
    }

    /// Keys of the open tabs that sit in the given windows.
    async fn tabs_in_windows(
        &self,
        open: &[(Arc<Browser>, Tab)],
        wanted: &[u64],
    ) -> HashSet<String> {
        let mut keys = HashSet::new();
        for (browser, tab) in open {
            if let Ok((window, _)) = browser.window_of(tab).await
                && wanted.contains(&window)
            {
                keys.insert(browser.handle(tab));
            }
        }
        keys
    }

    /// Every open http(s) tab of every connected browser.
    fn open_tabs(&self) -> Vec<(Arc<Browser>, Tab)> {
        self.browsers
            .connected_now()
            .into_iter()
            .flat_map(|browser| {
                browser
                    .tabs()
                    .into_iter()
                    .filter(|t| is_indexable(&t.url))
                    .map(move |t| (browser.clone(), t))
            })
            .collect()
    }

    /// Reads every tab that changed since it was read and forgets the tabs that closed.
    /// With `wait_for_load`, a tab still loading is given that long to finish. Returns
    /// how many tabs it read.
    async fn refresh(&self, wait_for_load: Option<Duration>) -> usize {
        let _one_at_a_time = self.refreshing.lock().await;
        let open = self.open_tabs();
        let stale: Vec<(Arc<Browser>, Tab)> = {
            let mut state = self.state.lock();
            let keys: HashSet<String> = open.iter().map(|(b, t)| b.handle(t)).collect();
            let closed: Vec<String> = state
                .read
                .keys()
                .filter(|k| !keys.contains(*k))
                .cloned()
                .collect();
            let mut index = self.index.lock();
            for key in closed {
                state.read.remove(&key);
                state.failures.remove(&key);
                index.remove(&key);
            }
            // A tab showing a dialog cannot run script until it is answered; it is read
            // when the dialog closes (that is a change too).
            open.into_iter()
                .filter(|(_, t)| t.open_dialog.is_none())
                .filter(|(b, t)| {
                    state
                        .read
                        .get(&b.handle(t))
                        .is_none_or(|(seen, loaded)| !loaded || *seen != Fingerprint::of(t))
                })
                .collect()
        };
        let count = stale.len();
        let mut reads = JoinSet::new();
        for (browser, tab) in stale {
            if reads.len() >= READ_AT_ONCE {
                self.take_read(reads.join_next().await);
            }
            let config = self.config.clone();
            reads.spawn(read_tab(browser, tab, config, wait_for_load));
        }
        while let Some(done) = reads.join_next().await {
            self.take_read(Some(done));
        }
        if let Some(embedder) = self.embedder.get() {
            embedder.poke();
        }
        count
    }

    fn take_read(&self, done: Option<std::result::Result<TabRead, tokio::task::JoinError>>) {
        let Some(Ok(read)) = done else {
            return;
        };
        let mut state = self.state.lock();
        state.tabs_read += 1;
        state.indexing_time += read.took;
        match read.outcome {
            Ok((prepared, loaded)) => {
                state.failures.remove(&read.key);
                state.read.insert(read.key, (read.seen, loaded));
                self.index.lock().insert(prepared);
            }
            Err(why) => {
                // A read that failed is tried again (the document may have been
                // replaced under it, or the machine was busy), a few times; then not
                // until the tab changes, so a page that never answers is not tried
                // forever.
                let same_tab_as_before = state
                    .read
                    .get(&read.key)
                    .is_some_and(|(seen, _)| *seen == read.seen);
                let before = state.failures.get(&read.key).map_or(0, |(_, n)| *n);
                let tries = if same_tab_as_before { before + 1 } else { 1 };
                tracing::debug!(tab = %read.key, %why, tries, "tab search could not read a tab");
                state.failures.insert(read.key.clone(), (why, tries));
                state
                    .read
                    .insert(read.key, (read.seen, tries >= READ_TRIES));
            }
        }
    }

    /// Whether some tab read so far had not finished loading.
    fn any_loading(&self) -> bool {
        self.state.lock().read.values().any(|(_, loaded)| !loaded)
    }
}

/// Only web pages are indexed (not about:, chrome:, data: or extension pages).
fn is_indexable(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

struct TabRead {
    key: String,
    seen: Fingerprint,
    took: Duration,
    outcome: std::result::Result<(super::index::PreparedTab, bool), String>,
}

/// Reads one tab's main content and prepares its chunks (off the async workers).
async fn read_tab(
    browser: Arc<Browser>,
    tab: Tab,
    config: Arc<EngineConfig>,
    wait_for_load: Option<Duration>,
) -> TabRead {
    let started = Instant::now();
    let key = browser.handle(&tab);
    let seen = Fingerprint::of(&tab);
    let outcome = async {
        let page = Page::observe(browser.clone(), tab.clone(), config)
            .await
            .map_err(|e| e.to_string())?;
        let read = || async {
            page.main_text_with_frames(Deadline::after(READ_TIMEOUT))
                .await
                .map_err(|e| e.to_string())
        };
        let mut content = read().await?;
        let mut loaded = content.ready_state == "complete";
        // A search gives a page still loading a moment to finish, then reads it again.
        if !loaded && let Some(patience) = wait_for_load {
            loaded = page.wait_ready(patience).await;
            if loaded {
                content = read().await?;
            }
        }
        let indexed = IndexedTab {
            key: key.clone(),
            tab_id: tab.tab_id,
            url: content.url.clone(),
            title: if content.title.is_empty() {
                tab.title.clone()
            } else {
                content.title.clone()
            },
            indexed_at_ms: now_ms(),
            cut_short: false,
        };
        let outline = outline_of(&content);
        let text = content.text;
        let prepared =
            tokio::task::spawn_blocking(move || super::index::prepare(indexed, &text, &outline))
                .await
                .map_err(|e| e.to_string())?;
        Ok((prepared, loaded))
    }
    .await;
    TabRead {
        key,
        seen,
        took: started.elapsed(),
        outcome,
    }
}

/// What a page is about, in a few lines: its title, its description, its section
/// headings and its opening. The encoder reads it first, as the page's own passage.
fn outline_of(content: &crate::page::content::MainContent) -> String {
    let article = content.article.clone().unwrap_or_default();
    let description = content
        .metadata
        .as_ref()
        .map(|m| m.description.clone())
        .unwrap_or_default();
    let mut parts: Vec<String> = Vec::new();
    for part in [
        content.title.as_str(),
        article.title.as_str(),
        description.as_str(),
    ] {
        let part = part.trim();
        if !part.is_empty() && !parts.iter().any(|p| p == part) {
            parts.push(part.to_owned());
        }
    }
    let headings: Vec<&str> = content
        .headings
        .iter()
        .map(|h| h.trim())
        .filter(|h| !parts.iter().any(|p| p == h))
        .collect();
    if !headings.is_empty() {
        parts.push(headings.join("; "));
    }
    if !article.excerpt.trim().is_empty() && article.excerpt.trim() != description.trim() {
        parts.push(article.excerpt.trim().to_owned());
    }
    parts.join(". ")
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Drop for TabSearch {
    fn drop(&mut self) {
        if let Some(embedder) = self.embedder.get() {
            embedder.stop();
        }
    }
}

/// The background task: on every tab change, once the burst settles, read what changed.
async fn keep_current(search: Weak<TabSearch>) {
    let Some(strong) = search.upgrade() else {
        return;
    };
    let mut changes = strong.browsers.registry().watch_changes();
    drop(strong);
    loop {
        let retry_loading = search.upgrade().is_some_and(|s| s.any_loading());
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            () = tokio::time::sleep(LOADING_RETRY), if retry_loading => {}
        }
        settle(&mut changes).await;
        let Some(search) = search.upgrade() else {
            return;
        };
        search.refresh(None).await;
    }
}

/// Waits until the tabs have been quiet for [`SETTLE`] (at most [`SETTLE_AT_MOST`]).
async fn settle(changes: &mut tokio::sync::watch::Receiver<u64>) {
    let deadline = tokio::time::Instant::now() + SETTLE_AT_MOST;
    loop {
        changes.mark_unchanged();
        let quiet = tokio::time::timeout(SETTLE, changes.changed())
            .await
            .is_err();
        if quiet || tokio::time::Instant::now() >= deadline {
            return;
        }
    }
}
