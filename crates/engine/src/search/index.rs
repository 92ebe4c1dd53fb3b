//! The in-memory index of tab contents: chunks with their terms (for BM25) and their
//! embeddings, searched both ways and fused by rank. Pure data: the tabs it holds are
//! put and taken out by `indexer`.

use std::collections::HashMap;

use super::embed::{Model, cosine};
use super::text;

/// BM25's term-frequency saturation and length normalisation.
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Reciprocal-rank fusion's damping: smaller trusts the top ranks more.
const RRF_K: f64 = 5.0;
/// How much a rank by meaning counts beside a rank by words. The static model is much
/// weaker than BM25 on long technical pages (`bench search`: recall@1 0.50 against 0.83),
/// so it mostly reorders close calls and finds the pages no query word is in; the
/// weight and damping are the best of a grid on that benchmark.
const DENSE_WEIGHT: f64 = 0.25;
/// A tab matches by meaning only when its best chunk is at least this near the query
/// (unit vectors; the static model's unrelated texts sit well below it).
pub const MIN_SIMILARITY: f32 = 0.45;

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
    tab: usize,
    source: ChunkSource,
    text: String,
    terms: HashMap<String, u32>,
    length: u32,
    vector: Option<Vec<f32>>,
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

/// A tab's chunks with their terms and vectors, made without the index (the costly
/// part, done off the index's lock) and then inserted.
pub struct PreparedTab {
    tab: IndexedTab,
    chunks: Vec<Chunk>,
}

/// Cuts a tab's text into chunks (its title one of them) and embeds each.
pub fn prepare(tab: IndexedTab, content: &str, model: Option<&Model>) -> PreparedTab {
    let (pieces, cut_short) = text::chunks(content);
    let title = tab.title.trim().to_owned();
    let mut chunks = Vec::with_capacity(pieces.len() + 1);
    for piece in pieces {
        // The title goes into each chunk's embedding: a passage of a long page is about
        // what the page is about.
        let context = format!("{title}. {piece}");
        chunks.push(Chunk::new(ChunkSource::Content, piece, &context, model));
    }
    if title.chars().count() > 3 {
        chunks.push(Chunk::new(ChunkSource::Title, title.clone(), &title, model));
    }
    PreparedTab {
        tab: IndexedTab { cut_short, ..tab },
        chunks,
    }
}

impl Chunk {
    /// A chunk of `text`, its embedding made from `embedded`.
    fn new(source: ChunkSource, text: String, embedded: &str, model: Option<&Model>) -> Chunk {
        let mut terms: HashMap<String, u32> = HashMap::new();
        let mut length = 0;
        for term in text::terms(&text) {
            *terms.entry(term).or_default() += 1;
            length += 1;
        }
        Chunk {
            tab: usize::MAX,
            source,
            vector: model.map(|m| m.embed(embedded)),
            text,
            terms,
            length,
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

    /// Bytes the index holds, roughly (text, terms and vectors).
    pub fn approximate_bytes(&self) -> usize {
        self.chunks
            .iter()
            .map(|c| {
                c.text.len()
                    + c.terms.keys().map(|t| t.len() + 32).sum::<usize>()
                    + c.vector.as_ref().map_or(0, |v| v.len() * 4)
            })
            .sum()
    }

    /// The best tabs for a query, at most `limit`, among the tabs `wanted` accepts.
    pub fn search(
        &self,
        query: &str,
        model: Option<&Model>,
        ranking: Ranking,
        limit: usize,
        wanted: &dyn Fn(&IndexedTab) -> bool,
    ) -> Vec<Hit> {
        let query_terms = text::terms(query);
        let query_vector = model
            .filter(|_| ranking != Ranking::Lexical)
            .map(|m| m.embed(query));
        let use_lexical = ranking != Ranking::Dense;

        // The best chunk of each tab, both ways.
        let mut best: HashMap<usize, TabBest> = HashMap::new();
        let average = self.total_length as f64 / self.chunks.len().max(1) as f64;
        for (i, chunk) in self.chunks.iter().enumerate() {
            let Some(tab) = self.tabs[chunk.tab].as_ref() else {
                continue;
            };
            if !wanted(tab) {
                continue;
            }
            let lexical = if use_lexical {
                self.bm25(chunk, &query_terms, average)
            } else {
                0.0
            };
            let similarity = match (&query_vector, &chunk.vector) {
                (Some(q), Some(v)) => cosine(q, v),
                _ => 0.0,
            };
            let entry = best.entry(chunk.tab).or_default();
            if lexical > entry.lexical {
                entry.lexical = lexical;
                entry.lexical_chunk = Some(i);
            }
            if similarity > entry.similarity {
                entry.similarity = similarity;
                entry.dense_chunk = Some(i);
            }
        }
        best.retain(|_, b| b.lexical > 0.0 || b.similarity >= MIN_SIMILARITY);

        // Ranks each way, fused.
        let rank_by = |key: fn(&TabBest) -> f64| {
            let mut order: Vec<(usize, f64)> = best
                .iter()
                .map(|(&t, b)| (t, key(b)))
                .filter(|&(_, v)| v > 0.0)
                .collect();
            order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            order
                .into_iter()
                .enumerate()
                .map(|(rank, (t, _))| (t, rank))
                .collect::<HashMap<usize, usize>>()
        };
        let lexical_rank = rank_by(|b| b.lexical);
        let dense_rank = rank_by(|b| f64::from(b.similarity));
        let fused = |t: usize| {
            let part = |ranks: &HashMap<usize, usize>| {
                ranks
                    .get(&t)
                    .map_or(0.0, |&r| 1.0 / (RRF_K + r as f64 + 1.0))
            };
            part(&lexical_rank) + DENSE_WEIGHT * part(&dense_rank)
        };
        let mut ranked: Vec<(usize, f64, &TabBest)> =
            best.iter().map(|(&t, b)| (t, fused(t), b)).collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then(b.2.similarity.total_cmp(&a.2.similarity))
                .then(a.0.cmp(&b.0))
        });
        ranked.truncate(limit);
        // Snippets only for the tabs answered: the passage that matched the words, else
        // the nearest.
        ranked
            .into_iter()
            .filter_map(|(t, score, b)| {
                let tab = self.tabs[t].clone()?;
                let chunk = &self.chunks[b.lexical_chunk.or(b.dense_chunk)?];
                Some(Hit {
                    tab,
                    score,
                    similarity: b.similarity,
                    lexical: b.lexical,
                    snippet: text::snippet(&chunk.text, &query_terms),
                    source: chunk.source,
                })
            })
            .collect()
    }

    fn bm25(&self, chunk: &Chunk, query_terms: &[String], average: f64) -> f64 {
        let n = self.chunks.len() as f64;
        let mut score = 0.0;
        let mut seen: Vec<&str> = Vec::new();
        for term in query_terms {
            if seen.contains(&term.as_str()) {
                continue;
            }
            seen.push(term);
            let Some(&tf) = chunk.terms.get(term) else {
                continue;
            };
            let df = f64::from(self.document_frequency.get(term).copied().unwrap_or(0));
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            let tf = f64::from(tf);
            score += idf * tf * (K1 + 1.0)
                / (tf + K1 * (1.0 - B + B * f64::from(chunk.length) / average.max(1.0)));
        }
        score
    }
}

#[derive(Default)]
struct TabBest {
    lexical: f64,
    lexical_chunk: Option<usize>,
    similarity: f32,
    dense_chunk: Option<usize>,
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
            None,
        ));
        index.insert(prepare(
            tab("b", "Weather"),
            "Sunny with a light breeze all afternoon.",
            None,
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
            None,
        ));
        index.insert(prepare(
            tab("a", "Page"),
            "The new text about giraffes.",
            None,
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
}
