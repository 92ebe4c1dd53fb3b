//! The in-memory index of tab contents: chunks with their terms (for BM25) and, once the
//! encoder has read them, their vectors; searched both ways and fused by rank. Pure
//! data: the tabs it holds are put and taken out by `indexer`, and the passages still
//! to embed are handed out by rank (a tab's outline first, then its chunks in order).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::embed::cosine;
use super::text;

/// BM25's term-frequency saturation and length normalisation.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Reciprocal-rank fusion's damping: smaller trusts the top ranks more.
const RRF_K: f64 = 5.0;
/// How much a rank by meaning counts beside a rank by words.
const DENSE_WEIGHT: f64 = 1.0;
/// A tab matches by meaning only when its best passage is at least this near the query
/// (cosine of the centred vectors: unrelated texts sit around 0).
pub const MIN_SIMILARITY: f32 = 0.05;
/// How much a tab's outline decides its nearness beside its nearest passage.
const OUTLINE_SHARE: f32 = 0.5;
/// How many passages' worth of weight the prior has in the index's mean: a handful of
/// tabs is centred mostly on the prior, a full index on itself.
const PRIOR_WEIGHT: f32 = 50.0;
/// How many passages of a tab are embedded: its outline and its first chunks. The rest
/// of a long page is found by its words; reading it all in context would cost minutes
/// of CPU for fifty documentation tabs.
pub const EMBEDDED_PER_TAB: u32 = 4;
/// Vectors kept for passages no tab holds any more (a tab that comes back, a page
/// that changed a little), by content hash.
const CACHE_ENTRIES: usize = 4096;

/// Where a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkSource {
    Title,
    Content,
}

impl ChunkSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkSource::Title => "title",
            ChunkSource::Content => "content",
        }
    }
}

/// A tab as the index knows it. `key` is the tab's handle (`client:id`).
#[derive(Debug, Clone)]
pub struct IndexedTab {
    pub key: String,
    pub tab_id: u64,
    pub url: String,
    pub title: String,
    /// When its content was read (ms since the epoch).
    pub indexed_at_ms: u64,
    /// The page was longer than the chunks kept.
    pub cut_short: bool,
}

struct Chunk {
    /// Stable while the chunk is in the index (positions move when tabs go).
    id: u64,
    tab: usize,
    source: ChunkSource,
    text: String,
    terms: HashMap<String, u32>,
    length: u32,
    /// Embedding order within the tab: 0 is the outline, then the chunks in order.
    rank: u32,
    /// What the encoder reads, when it differs from `title. text` (the outline).
    passage: Option<String>,
    /// The hash of what the encoder reads, the vector cache's key.
    hash: u64,
    /// Bytes of its text, passage and terms (counted once, for the status report).
    text_bytes: usize,
    vector: Option<Arc<[f32]>>,
}

/// How a search ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranking {
    Hybrid,
    Lexical,
    Dense,
}

/// One tab a search found, with its best chunk.
#[derive(Debug, Clone)]
pub struct Hit {
    pub tab: IndexedTab,
    /// The fused score (higher is better).
    pub score: f64,
    /// The best chunk's cosine to the query (0 without the model).
    pub similarity: f32,
    /// The best chunk's BM25 score (0: no query term in the tab).
    pub lexical: f64,
    pub snippet: String,
    pub source: ChunkSource,
}

/// A tab's chunks with their terms, made without the index (off its lock) and then
/// inserted. Vectors come later, from `Index::next_passages` and `Index::store`.
pub struct PreparedTab {
    tab: IndexedTab,
    chunks: Vec<Chunk>,
}

/// A query as the encoder read it, and what passages have in common before any is
/// read (`Model::passage_prior`).
#[derive(Debug, Clone)]
pub struct QueryMeaning {
    pub vector: Vec<f32>,
    pub prior: Vec<f32>,
}

/// A passage to embed: which chunk, and the text the encoder reads.
#[derive(Debug, Clone)]
pub struct Passage {
    pub chunk: u64,
    pub text: String,
}

/// Cuts a tab's text into chunks. The title is a chunk of its own for words; for
/// meaning it stands for the page's `outline` (title, description, headings, opening),
/// the first passage of the tab the encoder reads.
pub fn prepare(tab: IndexedTab, content: &str, outline: &str) -> PreparedTab {
    let (pieces, cut_short) = text::chunks(content);
    let title = tab.title.trim().to_owned();
    let mut chunks = Vec::with_capacity(pieces.len() + 1);
    let outline = text::cut(outline, OUTLINE_CHARS);
    if title.chars().count() > 3 || !outline.is_empty() {
        let passage = if outline.is_empty() {
            title.clone()
        } else {
            outline
        };
        chunks.push(Chunk::new(
            ChunkSource::Title,
            title.clone(),
            0,
            Some(passage),
        ));
    }
    for (n, piece) in pieces.into_iter().enumerate() {
        chunks.push(Chunk::new(ChunkSource::Content, piece, n as u32 + 1, None));
    }
    // A content chunk is read with its page's title: a passage of a long page is about
    // what the page is about.
    for chunk in &mut chunks {
        chunk.hash = hash_of(&chunk.passage_text(&title));
    }
    PreparedTab {
        tab: IndexedTab { cut_short, ..tab },
        chunks,
    }
}

/// The most characters of a page's outline the encoder reads.
const OUTLINE_CHARS: usize = 1000;

fn hash_of(text: &str) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

impl Chunk {
    fn new(source: ChunkSource, text: String, rank: u32, passage: Option<String>) -> Chunk {
        let mut terms: HashMap<String, u32> = HashMap::new();
        let mut length = 0;
        for term in text::terms(&text) {
            *terms.entry(term).or_default() += 1;
            length += 1;
        }
        let text_bytes = text.len()
            + terms.keys().map(|t| t.len() + 32).sum::<usize>()
            + passage.as_ref().map_or(0, String::len);
        Chunk {
            id: 0,
            tab: usize::MAX,
            source,
            rank,
            passage,
            hash: 0,
            text_bytes,
            vector: None,
            text,
            terms,
            length,
        }
    }

    /// What the encoder reads for this chunk.
    fn passage_text(&self, title: &str) -> String {
        match &self.passage {
            Some(passage) => passage.clone(),
            None if title.is_empty() => self.text.clone(),
            None => format!("{title}. {}", self.text),
        }
    }
}

#[derive(Default)]
pub struct Index {
    tabs: Vec<Option<IndexedTab>>,
    chunks: Vec<Chunk>,
    /// How many chunks hold each term.
    document_frequency: HashMap<String, u32>,
    total_length: u64,
    next_chunk_id: u64,
    /// Vectors by the hash of the passage they were made from.
    cache: HashMap<u64, Arc<[f32]>>,
}

impl Index {
    /// Puts a prepared tab in, replacing what the index held for the same key.
    pub fn insert(&mut self, prepared: PreparedTab) {
        self.remove(&prepared.tab.key);
        // A slot a removed tab left is used again, so the table does not grow forever.
        let slot = match self.tabs.iter().position(Option::is_none) {
            Some(free) => {
                self.tabs[free] = Some(prepared.tab);
                free
            }
            None => {
                self.tabs.push(Some(prepared.tab));
                self.tabs.len() - 1
            }
        };
        for mut chunk in prepared.chunks {
            chunk.tab = slot;
            self.next_chunk_id += 1;
            chunk.id = self.next_chunk_id;
            chunk.vector = self.cache.get(&chunk.hash).cloned();
            for term in chunk.terms.keys() {
                *self.document_frequency.entry(term.clone()).or_default() += 1;
            }
            self.total_length += u64::from(chunk.length);
            self.chunks.push(chunk);
        }
    }

    /// Takes a tab out; false when the index did not hold it.
    pub fn remove(&mut self, key: &str) -> bool {
        let Some(slot) = self
            .tabs
            .iter()
            .position(|t| t.as_ref().is_some_and(|t| t.key == key))
        else {
            return false;
        };
        self.tabs[slot] = None;
        let (gone, kept): (Vec<Chunk>, Vec<Chunk>) = std::mem::take(&mut self.chunks)
            .into_iter()
            .partition(|c| c.tab == slot);
        self.chunks = kept;
        for chunk in gone {
            self.total_length -= u64::from(chunk.length);
            for term in chunk.terms.keys() {
                if let Some(n) = self.document_frequency.get_mut(term) {
                    *n -= 1;
                    if *n == 0 {
                        self.document_frequency.remove(term);
                    }
                }
            }
        }
        true
    }

    pub fn tabs(&self) -> impl Iterator<Item = &IndexedTab> {
        self.tabs.iter().flatten()
    }

    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Passages still to embed, best first: every tab's outline, then every tab's first
    /// chunk, and so on (tabs `first` accepts ahead of the others at each rank), until
    /// `budget` (the encoder's pieces, estimated from characters) is spent.
    pub fn next_passages(
        &self,
        first: &dyn Fn(&IndexedTab) -> bool,
        budget: usize,
    ) -> Vec<Passage> {
        let mut waiting: Vec<(bool, u32, usize, &Chunk)> = self
            .chunks
            .iter()
            .enumerate()
            .filter(|(_, c)| c.vector.is_none() && c.rank < EMBEDDED_PER_TAB)
            .filter_map(|(i, c)| {
                let tab = self.tabs[c.tab].as_ref()?;
                Some((!first(tab), c.rank, i, c))
            })
            .collect();
        waiting.sort_by_key(|&(later, rank, i, _)| (later, rank, i));
        let mut spent = 0;
        let mut passages = Vec::new();
        for (_, _, _, chunk) in waiting {
            let Some(tab) = self.tabs[chunk.tab].as_ref() else {
                continue;
            };
            let text = chunk.passage_text(tab.title.trim());
            // About four characters a piece; a passage is read up to the encoder's limit.
            let cost = (text.len() / 4).clamp(8, super::embed::MAX_PASSAGE_PIECES);
            if spent > 0 && spent + cost > budget {
                break;
            }
            spent += cost;
            passages.push(Passage {
                chunk: chunk.id,
                text,
            });
        }
        passages
    }

    /// Puts the vectors of embedded passages in (a chunk gone since is skipped; its
    /// vector is still cached).
    pub fn store(&mut self, done: Vec<(u64, Vec<f32>)>) {
        let by_id: HashMap<u64, Arc<[f32]>> =
            done.into_iter().map(|(id, v)| (id, Arc::from(v))).collect();
        for chunk in &mut self.chunks {
            if let Some(vector) = by_id.get(&chunk.id) {
                chunk.vector = Some(vector.clone());
                self.cache.insert(chunk.hash, vector.clone());
            }
        }
        if self.cache.len() > CACHE_ENTRIES {
            // Keep what the open tabs use; forget the rest.
            let used: std::collections::HashSet<u64> = self
                .chunks
                .iter()
                .filter(|c| c.vector.is_some())
                .map(|c| c.hash)
                .collect();
            self.cache.retain(|hash, _| used.contains(hash));
        }
    }

    /// Passages of the tabs `wanted` accepts that a search by meaning should have and
    /// that are not embedded yet: ranks below `needed` (the outline is rank 0).
    pub fn unembedded(&self, wanted: &dyn Fn(&IndexedTab) -> bool, needed: u32) -> usize {
        self.chunks
            .iter()
            .filter(|c| c.vector.is_none() && c.rank < needed.min(EMBEDDED_PER_TAB))
            .filter(|c| self.tabs[c.tab].as_ref().is_some_and(wanted))
            .count()
    }

    /// Passages with a vector, and passages still to embed (within the per-tab cap).
    pub fn embedded_counts(&self) -> (usize, usize) {
        let embedded = self.chunks.iter().filter(|c| c.vector.is_some()).count();
        let waiting = self
            .chunks
            .iter()
            .filter(|c| c.vector.is_none() && c.rank < EMBEDDED_PER_TAB)
            .count();
        (embedded, waiting)
    }

    /// Bytes the index holds, roughly (text, terms and vectors).
    pub fn approximate_bytes(&self) -> usize {
        self.chunks
            .iter()
            .map(|c| c.text_bytes + c.vector.as_ref().map_or(0, |v| v.len() * 4))
            .sum()
    }

    /// The best tabs for a query, at most `limit`, among the tabs `wanted` accepts.
    /// `query_vector` is the query's embedding (none: words alone).
    pub fn search(
        &self,
        query: &str,
        query_vector: Option<&QueryMeaning>,
        ranking: Ranking,
        limit: usize,
        wanted: &dyn Fn(&IndexedTab) -> bool,
    ) -> Vec<Hit> {
        let words = self.scan_words(query, ranking, wanted);
        self.rank(words, query_vector, ranking, limit, wanted)
    }

    /// The half of a search that needs no model: each tab's best chunk by BM25, and how
    /// much of the query (by weight) that chunk holds. Run while the query is embedded.
    pub fn scan_words(
        &self,
        query: &str,
        ranking: Ranking,
        wanted: &dyn Fn(&IndexedTab) -> bool,
    ) -> WordScan {
        let terms: Vec<String> = {
            let mut seen = Vec::new();
            for term in text::terms(query) {
                if !seen.contains(&term) {
                    seen.push(term);
                }
            }
            seen
        };
        let mut best: HashMap<String, WordMatch> = HashMap::new();
        if ranking == Ranking::Dense || terms.is_empty() {
            return WordScan { terms, best };
        }
        let weights: Vec<f64> = terms.iter().map(|t| self.idf(t)).collect();
        let total_weight: f64 = weights.iter().sum();
        let average = self.total_length as f64 / self.chunks.len().max(1) as f64;
        for chunk in &self.chunks {
            let Some(tab) = self.tabs[chunk.tab].as_ref().filter(|t| wanted(t)) else {
                continue;
            };
            let score = self.bm25(chunk, &terms, &weights, average);
            if score <= 0.0 {
                continue;
            }
            let entry = best.entry(tab.key.clone()).or_default();
            if score > entry.score {
                let held: f64 = terms
                    .iter()
                    .zip(&weights)
                    .filter(|(t, _)| chunk.terms.contains_key(*t))
                    .map(|(_, w)| w)
                    .sum();
                *entry = WordMatch {
                    score,
                    chunk: chunk.id,
                    coverage: held / total_weight.max(f64::MIN_POSITIVE),
                };
            }
        }
        WordScan { terms, best }
    }

    /// The other half: each tab's nearest passage to `query_vector`, and the two
    /// rankings fused. Reciprocal-rank fusion, with a tab's rank by words counting in
    /// proportion to how much of the query its best chunk holds: a query that shares a
    /// rare identifier with one page is decided by words, one that shares only common
    /// words with every page (said in other words, or in another language) by meaning.
    pub fn rank(
        &self,
        words: WordScan,
        query_vector: Option<&QueryMeaning>,
        ranking: Ranking,
        limit: usize,
        wanted: &dyn Fn(&IndexedTab) -> bool,
    ) -> Vec<Hit> {
        let query_vector = query_vector.filter(|_| ranking != Ranking::Lexical);
        let mut meaning: HashMap<String, (f32, u64)> = HashMap::new();
        if let Some(query) = query_vector {
            // Cosines of the passages less what they have in common (the index's mean),
            // so that what a page is about decides, not what every page shares.
            let center = self.center(&query.prior);
            let q = &query.vector;
            let (q_center, center_norm) = (cosine(q, &center), cosine(&center, &center));
            let near = |v: &[f32]| {
                let length = (1.0 - 2.0 * cosine(v, &center) + center_norm)
                    .max(1e-6)
                    .sqrt();
                (cosine(q, v) - q_center) / length
            };
            // Each tab's nearest passage, and its outline's nearness apart.
            let mut outline: HashMap<&str, f32> = HashMap::new();
            for chunk in &self.chunks {
                let (Some(v), Some(tab)) = (&chunk.vector, self.tabs[chunk.tab].as_ref()) else {
                    continue;
                };
                if !wanted(tab) {
                    continue;
                }
                let similarity = near(v);
                if chunk.rank == 0 {
                    outline.insert(&tab.key, similarity);
                }
                let entry = meaning.entry(tab.key.clone()).or_insert((f32::MIN, 0));
                if similarity > entry.0 {
                    *entry = (similarity, chunk.id);
                }
            }
            // A tab is as near as its nearest passage, drawn halfway to its outline's
            // nearness: one passage that happens to echo the query counts for less
            // than a page that is about it.
            for (key, (similarity, _)) in meaning.iter_mut() {
                if let Some(whole) = outline.get(key.as_str()) {
                    *similarity = OUTLINE_SHARE * whole + (1.0 - OUTLINE_SHARE) * *similarity;
                }
            }
            meaning.retain(|_, (similarity, _)| *similarity >= MIN_SIMILARITY);
        }
        let rank_of = |scores: Vec<(&String, f64)>| -> HashMap<String, usize> {
            let mut order = scores;
            order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
            order
                .into_iter()
                .enumerate()
                .map(|(rank, (key, _))| (key.clone(), rank))
                .collect()
        };
        let word_rank = rank_of(words.best.iter().map(|(k, m)| (k, m.score)).collect());
        let meaning_rank = rank_of(meaning.iter().map(|(k, m)| (k, f64::from(m.0))).collect());
        let reciprocal =
            |rank: Option<&usize>| rank.map_or(0.0, |&r| 1.0 / (RRF_K + r as f64 + 1.0));
        let mut keys: Vec<&String> = words.best.keys().chain(meaning.keys()).collect();
        keys.sort();
        keys.dedup();
        // Meaning counts for less the more of the query some tab holds in words: an
        // identifier found verbatim is the answer, a description shared with no page
        // is meaning's to place.
        let best_coverage = words.best.values().map(|m| m.coverage).fold(0.0, f64::max);
        let meaning_weight = DENSE_WEIGHT * (1.0 - best_coverage / 2.0);
        let mut ranked: Vec<(&String, f64, f32)> = keys
            .into_iter()
            .map(|key| {
                let by_words = words.best.get(key).map_or(0.0, |m| {
                    // Words alone: the BM25 order as it is.
                    // Squared: half the query's weight in common earns a quarter.
                    let trust = if query_vector.is_some() {
                        m.coverage * m.coverage
                    } else {
                        1.0
                    };
                    trust * reciprocal(word_rank.get(key))
                });
                let by_meaning = meaning_weight * reciprocal(meaning_rank.get(key));
                let similarity = meaning.get(key).map_or(0.0, |m| m.0);
                (key, by_words + by_meaning, similarity)
            })
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then(b.2.total_cmp(&a.2))
                .then(a.0.cmp(b.0))
        });
        ranked.truncate(limit);
        // Snippets only for the tabs answered: the passage that matched the words, else
        // the nearest.
        ranked
            .into_iter()
            .filter_map(|(key, score, similarity)| {
                let by_words = words.best.get(key);
                let chunk_id = by_words
                    .map(|m| m.chunk)
                    .or(meaning.get(key).map(|m| m.1))?;
                let chunk = self.chunks.iter().find(|c| c.id == chunk_id)?;
                let tab = self.tabs[chunk.tab].clone()?;
                Some(Hit {
                    tab,
                    score,
                    similarity: similarity.max(0.0),
                    lexical: by_words.map_or(0.0, |m| m.score),
                    snippet: text::snippet(&chunk.text, &words.terms),
                    source: chunk.source,
                })
            })
            .collect()
    }

    /// The mean of the embedded passages, drawn toward `prior` while there are few.
    fn center(&self, prior: &[f32]) -> Vec<f32> {
        let mut sum: Vec<f32> = prior.iter().map(|p| p * PRIOR_WEIGHT).collect();
        let mut weight = if prior.is_empty() { 0.0 } else { PRIOR_WEIGHT };
        for v in self.chunks.iter().filter_map(|c| c.vector.as_ref()) {
            if sum.len() < v.len() {
                sum.resize(v.len(), 0.0);
            }
            sum.iter_mut().zip(v.iter()).for_each(|(s, x)| *s += x);
            weight += 1.0;
        }
        sum.iter_mut().for_each(|s| *s /= weight.max(1.0));
        sum
    }

    /// How rare a term is among the chunks (BM25's idf; a term no chunk holds weighs most).
    fn idf(&self, term: &str) -> f64 {
        let n = self.chunks.len() as f64;
        let df = f64::from(self.document_frequency.get(term).copied().unwrap_or(0));
        ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
    }

    fn bm25(&self, chunk: &Chunk, terms: &[String], weights: &[f64], average: f64) -> f64 {
        let mut score = 0.0;
        for (term, idf) in terms.iter().zip(weights) {
            let Some(&tf) = chunk.terms.get(term) else {
                continue;
            };
            let tf = f64::from(tf);
            score += idf * tf * (K1 + 1.0)
                / (tf + K1 * (1.0 - B + B * f64::from(chunk.length) / average.max(1.0)));
        }
        score
    }
}

/// A tab's best chunk by words.
#[derive(Debug, Clone, Default)]
pub struct WordMatch {
    score: f64,
    chunk: u64,
    /// The share of the query's weight (idf) the chunk holds, 0 to 1.
    coverage: f64,
}

/// Each tab's best chunk by words (by tab key), and the query's terms.
#[derive(Debug, Default)]
pub struct WordScan {
    terms: Vec<String>,
    best: HashMap<String, WordMatch>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(key: &str, title: &str) -> IndexedTab {
        IndexedTab {
            key: key.into(),
            tab_id: 1,
            url: format!("http://x/{key}"),
            title: title.into(),
            indexed_at_ms: 0,
            cut_short: false,
        }
    }

    #[test]
    fn an_identifier_finds_its_tab_and_a_removed_tab_is_gone() {
        let mut index = Index::default();
        index.insert(prepare(
            tab("a", "Orders"),
            "Order ORD-48213 was refunded on 5 March.",
            "",
        ));
        index.insert(prepare(
            tab("b", "Weather"),
            "Sunny with a light breeze all afternoon.",
            "",
        ));
        let all = |_: &IndexedTab| true;
        let hits = index.search("ORD-48213", None, Ranking::Hybrid, 10, &all);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].tab.key, "a");
        assert!(hits[0].snippet.contains("ORD-48213"));
        assert!(index.remove("a"));
        assert!(
            index
                .search("ORD-48213", None, Ranking::Hybrid, 10, &all)
                .is_empty()
        );
        assert_eq!(index.tabs().count(), 1);
    }

    #[test]
    fn putting_a_tab_again_replaces_its_content() {
        let mut index = Index::default();
        index.insert(prepare(
            tab("a", "Page"),
            "The old text about penguins.",
            "",
        ));
        index.insert(prepare(
            tab("a", "Page"),
            "The new text about giraffes.",
            "",
        ));
        let all = |_: &IndexedTab| true;
        assert!(
            index
                .search("penguins", None, Ranking::Lexical, 10, &all)
                .is_empty()
        );
        assert_eq!(
            index
                .search("giraffes", None, Ranking::Lexical, 10, &all)
                .len(),
            1
        );
    }

    #[test]
    fn outlines_are_embedded_first_and_a_tab_read_again_reuses_its_vectors() {
        let mut index = Index::default();
        let long = "A sentence about one thing. ".repeat(60);
        index.insert(prepare(tab("a", "Alpha page"), &long, "Alpha outline"));
        index.insert(prepare(tab("b", "Beta page"), &long, "Beta outline"));
        let all = |_: &IndexedTab| true;
        let first = index.next_passages(&all, 20);
        assert_eq!(first.len(), 2, "the two outlines, within the budget");
        assert!(first.iter().all(|p| p.text.ends_with("outline")));
        let only_b = |t: &IndexedTab| t.key == "b";
        assert!(index.next_passages(&only_b, 10)[0].text.starts_with("Beta"));
        assert_eq!(index.unembedded(&all, 1), 2);
        index.store(first.iter().map(|p| (p.chunk, vec![1.0, 0.0])).collect());
        assert_eq!(index.unembedded(&all, 1), 0);
        assert!(index.unembedded(&all, 2) > 0, "first chunks still wait");
        let next = index.next_passages(&all, 1000);
        assert!(
            next[0].text.starts_with("Alpha page. "),
            "then each tab's first chunk"
        );
        // The same content again: its outline's vector comes from the cache.
        index.insert(prepare(tab("a", "Alpha page"), &long, "Alpha outline"));
        assert_eq!(index.unembedded(&all, 1), 0);
    }
}
