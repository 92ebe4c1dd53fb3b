//! The static text-embedding model: a vector per vocabulary piece, distilled from
//! multilingual-e5-small by `scripts/distill-embeddings.sh` (how, and how well, is in
//! `models/embed/PROVENANCE.md`; the file layout in `models/embed/FORMAT.md`).
//!
//! A text's embedding is the mean of its pieces' vectors, L2-normalised: no network, no
//! inference engine, microseconds per chunk. The pieces come from a SentencePiece-style
//! unigram tokenizer reduced to rules `scripts/embed/unigram.py` states and this file
//! follows exactly (a unit test checks the two agree on `models/embed/check.json`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::config::EmbedModel;

/// The model shipped inside the binary.
const VECTORS: &[u8] = include_bytes!("../../../../models/embed/vectors.bin");
const VOCAB: &str = include_str!("../../../../models/embed/vocab.tsv");
const NORMALIZE: &str = include_str!("../../../../models/embed/normalize.tsv");

const MAGIC: &[u8; 6] = b"TWEMB1";
const HEADER_LEN: usize = 24;
const KIND_I8: u32 = 2;
/// Id 0 is the unknown piece; its vector is zero and it is left out of every mean.
const UNK: u32 = 0;
/// SentencePiece's word-start marker.
const META: char = '\u{2581}';
/// Words longer than this (a URL, a hash) are embedded by their first characters only.
const MAX_WORD_CHARS: usize = 128;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("the embedding model is turned off (--embed-model off)")]
    Off,
    #[error("the embedding model's {file} cannot be read: {why}")]
    Unreadable { file: String, why: String },
    #[error("the embedding model's {file} is malformed: {why}")]
    Malformed { file: &'static str, why: String },
}

/// A loaded static model.
pub struct Model {
    dims: usize,
    /// One scale per row, and the int8 rows (row = scale × q), borrowed from the binary
    /// for the shipped model.
    scales: Vec<f32>,
    rows: Cow<'static, [u8]>,
    pieces: HashMap<String, u32>,
    scores: Vec<f64>,
    unknown_score: f64,
    max_piece_chars: usize,
    normalize: HashMap<char, String>,
}

/// The model `which` names, loaded (the shipped one is parsed once per process).
pub fn load(which: &EmbedModel) -> Result<Arc<Model>, ModelError> {
    static SHIPPED: OnceLock<Result<Arc<Model>, String>> = OnceLock::new();
    match which {
        EmbedModel::Off => Err(ModelError::Off),
        EmbedModel::Dir(dir) => Model::from_dir(dir).map(Arc::new),
        EmbedModel::Shipped => SHIPPED
            .get_or_init(|| {
                Model::parse(Cow::Borrowed(VECTORS), VOCAB, NORMALIZE)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .clone()
            .map_err(|why| ModelError::Malformed {
                file: "shipped model",
                why,
            }),
    }
}

/// Bytes the shipped model adds to the binary.
pub fn shipped_bytes() -> usize {
    VECTORS.len() + VOCAB.len() + NORMALIZE.len()
}

impl Model {
    pub fn from_dir(dir: &std::path::Path) -> Result<Model, ModelError> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| ModelError::Unreadable {
                file: dir.join(name).display().to_string(),
                why: e.to_string(),
            })
        };
        let text = |name: &str| {
            String::from_utf8(read(name)?).map_err(|_| ModelError::Unreadable {
                file: name.to_owned(),
                why: "not UTF-8".into(),
            })
        };
        let vectors = read("vectors.bin")?;
        let vocab = text("vocab.tsv")?;
        let normalize = text("normalize.tsv")?;
        Model::parse(Cow::Owned(vectors), &vocab, &normalize)
    }

    pub fn parse(
        vectors: Cow<'static, [u8]>,
        vocab: &str,
        normalize: &str,
    ) -> Result<Model, ModelError> {
        let bad = |why: &str| ModelError::Malformed {
            file: "vectors.bin",
            why: why.to_owned(),
        };
        if vectors.len() < HEADER_LEN || &vectors[..6] != MAGIC {
            return Err(bad("no TWEMB1 header"));
        }
        let word = |at: usize| {
            u32::from_le_bytes([
                vectors[at],
                vectors[at + 1],
                vectors[at + 2],
                vectors[at + 3],
            ])
        };
        let (count, dims, kind) = (word(8) as usize, word(12) as usize, word(16));
        if kind != KIND_I8 {
            return Err(bad("only int8 rows are supported"));
        }
        if dims == 0 || vectors.len() != HEADER_LEN + count * 4 + count * dims {
            return Err(bad("its length does not match its header"));
        }
        let body = &vectors[HEADER_LEN..];
        let scales = body[..count * 4]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let rows = match vectors {
            Cow::Borrowed(all) => Cow::Borrowed(&all[HEADER_LEN + count * 4..]),
            Cow::Owned(mut all) => {
                all.drain(..HEADER_LEN + count * 4);
                Cow::Owned(all)
            }
        };

        let mut pieces = HashMap::new();
        let mut scores = Vec::with_capacity(count);
        for (id, line) in vocab.lines().enumerate() {
            let (piece, score) = line.split_once('\t').ok_or(ModelError::Malformed {
                file: "vocab.tsv",
                why: format!("line {} has no tab", id + 1),
            })?;
            let score: f64 = score.parse().map_err(|_| ModelError::Malformed {
                file: "vocab.tsv",
                why: format!("line {} has no score", id + 1),
            })?;
            if id as u32 != UNK && !piece.is_empty() {
                pieces.entry(piece.to_owned()).or_insert(id as u32);
            }
            scores.push(score);
        }
        if scores.len() != count {
            return Err(ModelError::Malformed {
                file: "vocab.tsv",
                why: format!("{} pieces for {count} vectors", scores.len()),
            });
        }
        let unknown_score = pieces
            .values()
            .map(|&id| scores[id as usize])
            .fold(f64::INFINITY, f64::min)
            - 10.0;
        let max_piece_chars = pieces.keys().map(|p| p.chars().count()).max().unwrap_or(1);
        Ok(Model {
            dims,
            scales,
            rows,
            pieces,
            scores,
            unknown_score,
            max_piece_chars,
            normalize: parse_normalize(normalize)?,
        })
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The piece ids of a text (unknown pieces as id 0).
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        let mut normal = String::with_capacity(text.len());
        for c in text.chars() {
            match self.normalize.get(&c) {
                Some(replacement) => normal.push_str(replacement),
                None => normal.push(c),
            }
        }
        let mut ids = Vec::new();
        for word in normal.split(' ').filter(|w| !w.is_empty()) {
            self.segment(word, &mut ids);
        }
        ids
    }

    /// Viterbi over the pieces: the segmentation of `▁word` with the greatest sum of
    /// piece scores. Ties: positions left to right, shorter pieces first, a later
    /// candidate wins only when strictly better, the unknown step last.
    fn segment(&self, word: &str, ids: &mut Vec<u32>) {
        let mut text = String::with_capacity(word.len() + 3);
        text.push(META);
        text.extend(word.chars().take(MAX_WORD_CHARS));
        let starts: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        let n = starts.len() - 1;
        let mut best = vec![f64::NEG_INFINITY; n + 1];
        let mut back = vec![(UNK, 0usize); n + 1];
        best[0] = 0.0;
        for i in 0..n {
            if best[i] == f64::NEG_INFINITY {
                continue;
            }
            for e in i + 1..=n.min(i + self.max_piece_chars) {
                if let Some(&id) = self.pieces.get(&text[starts[i]..starts[e]]) {
                    let score = best[i] + self.scores[id as usize];
                    if score > best[e] {
                        best[e] = score;
                        back[e] = (id, i);
                    }
                }
            }
            let score = best[i] + self.unknown_score;
            if score > best[i + 1] {
                best[i + 1] = score;
                back[i + 1] = (UNK, i);
            }
        }
        let first = ids.len();
        let mut e = n;
        while e > 0 {
            let (id, from) = back[e];
            ids.push(id);
            e = from;
        }
        ids[first..].reverse();
    }

    /// The text's embedding: the mean of its known pieces' vectors, unit length (all
    /// zeros when no piece is known).
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0f64; self.dims];
        let mut known = 0usize;
        for id in self.tokenize(text) {
            if id == UNK {
                continue;
            }
            let row = id as usize;
            let scale = f64::from(self.scales[row]);
            for (s, &q) in sum
                .iter_mut()
                .zip(&self.rows[row * self.dims..(row + 1) * self.dims])
            {
                *s += scale * f64::from(q as i8);
            }
            known += 1;
        }
        let norm = sum.iter().map(|x| x * x).sum::<f64>().sqrt();
        if known == 0 || norm == 0.0 {
            return vec![0.0; self.dims];
        }
        sum.iter().map(|x| (x / norm) as f32).collect()
    }
}

/// `normalize.tsv`: a codepoint (hex), a tab, its replacement (hex codepoints, spaced;
/// empty: removed).
fn parse_normalize(text: &str) -> Result<HashMap<char, String>, ModelError> {
    let bad = |line: usize| ModelError::Malformed {
        file: "normalize.tsv",
        why: format!("line {line} is not `codepoint<TAB>replacement`"),
    };
    let char_of = |hex: &str| u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
    let mut map = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let (from, to) = line.split_once('\t').ok_or_else(|| bad(n + 1))?;
        let from = char_of(from).ok_or_else(|| bad(n + 1))?;
        let to = to
            .split_whitespace()
            .map(|hex| char_of(hex).ok_or_else(|| bad(n + 1)))
            .collect::<Result<String, _>>()?;
        map.insert(from, to);
    }
    Ok(map)
}

/// Cosine of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Rust tokenizer and embedding agree with the Python reference the model was
    /// built with, on the texts `check.json` records (several scripts, an identifier).
    #[test]
    fn agrees_with_the_reference_on_check_json() {
        let check: serde_json::Value =
            serde_json::from_str(include_str!("../../../../models/embed/check.json"))
                .expect("check.json parses");
        let model = Model::parse(Cow::Borrowed(VECTORS), VOCAB, NORMALIZE)
            .expect("the shipped model loads");
        let tolerance = check["tolerance"].as_f64().unwrap_or(1e-4) as f32;
        for case in check["texts"].as_array().expect("texts") {
            let text = case["text"].as_str().expect("text");
            let want: Vec<u32> = case["token_ids"]
                .as_array()
                .expect("token_ids")
                .iter()
                .map(|v| v.as_u64().expect("id") as u32)
                .collect();
            assert_eq!(model.tokenize(text), want, "pieces of {text:?}");
            let got = model.embed(text);
            for (i, w) in case["embedding_first8"]
                .as_array()
                .expect("embedding")
                .iter()
                .enumerate()
            {
                let w = w.as_f64().expect("number") as f32;
                assert!(
                    (got[i] - w).abs() <= tolerance,
                    "{text:?} dim {i}: {} vs {w}",
                    got[i]
                );
            }
        }
    }

    #[test]
    fn a_paraphrase_is_nearer_than_an_unrelated_text() {
        let model = Model::parse(Cow::Borrowed(VECTORS), VOCAB, NORMALIZE)
            .expect("the shipped model loads");
        let query = model.embed("how do I get my money back for an order");
        let near = model.embed("Refunds: return the item within 30 days to be reimbursed.");
        let far = model.embed("The volcano erupted, covering the island in ash.");
        assert!(cosine(&query, &near) > cosine(&query, &far));
    }

    #[test]
    fn a_malformed_file_is_an_error_not_a_panic() {
        let shipped = || Cow::Borrowed(VECTORS);
        assert!(Model::parse(Cow::Borrowed(b"nonsense"), VOCAB, NORMALIZE).is_err());
        let mut short = VECTORS.to_vec();
        short.truncate(VECTORS.len() - 1);
        assert!(Model::parse(Cow::Owned(short), VOCAB, NORMALIZE).is_err());
        assert!(Model::parse(shipped(), "a\tb\n", NORMALIZE).is_err());
        assert!(Model::parse(shipped(), VOCAB, "zz\n").is_err());
    }
}
