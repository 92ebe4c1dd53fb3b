//! The encoder's tokenizer: SentencePiece-style unigram segmentation reduced to rules
//! `scripts/encoder/unigram.py` states and this file follows exactly (a unit test in
//! `embed` checks both give the same pieces on `models/encoder/check.json`).

use std::collections::HashMap;

use crate::ModelError;

/// SentencePiece's word-start marker.
const META: char = '\u{2581}';
/// Words longer than this (a URL, a hash) are segmented by their first characters only.
const MAX_WORD_CHARS: usize = 128;

pub struct Tokenizer {
    pieces: HashMap<String, u32>,
    scores: Vec<f64>,
    unknown: u32,
    unknown_score: f64,
    max_piece_chars: usize,
    normalize: HashMap<char, String>,
}

impl Tokenizer {
    /// `vocab`: one `piece<TAB>score` line a row (an empty piece is never produced from
    /// text); `normalize`: `codepoint<TAB>replacement` lines (hex).
    pub fn parse(vocab: &str, normalize: &str, unknown: u32) -> Result<Tokenizer, ModelError> {
        let mut pieces = HashMap::new();
        let mut scores = Vec::new();
        for (id, line) in vocab.lines().enumerate() {
            let bad = |why: &str| ModelError::Malformed {
                file: "vocab.tsv",
                why: format!("line {}: {why}", id + 1),
            };
            let (piece, score) = line.split_once('\t').ok_or_else(|| bad("no tab"))?;
            let score: f64 = score.parse().map_err(|_| bad("no score"))?;
            if !piece.is_empty() {
                pieces.entry(piece.to_owned()).or_insert(id as u32);
            }
            scores.push(score);
        }
        let unknown_score = pieces
            .values()
            .map(|&id| scores[id as usize])
            .fold(f64::INFINITY, f64::min)
            - 10.0;
        let max_piece_chars = pieces.keys().map(|p| p.chars().count()).max().unwrap_or(1);
        Ok(Tokenizer {
            pieces,
            scores,
            unknown,
            unknown_score,
            max_piece_chars,
            normalize: parse_normalize(normalize)?,
        })
    }

    /// How many rows the vocabulary has.
    pub fn rows(&self) -> usize {
        self.scores.len()
    }

    /// The piece ids of a text, at most `limit` of them.
    pub fn tokenize(&self, text: &str, limit: usize) -> Vec<u32> {
        let mut normal = String::with_capacity(text.len());
        for c in text.chars() {
            match self.normalize.get(&c) {
                Some(replacement) => normal.push_str(replacement),
                None => normal.push(c),
            }
        }
        let mut ids = Vec::new();
        for word in normal.split(' ').filter(|w| !w.is_empty()) {
            if ids.len() >= limit {
                break;
            }
            self.segment(word, &mut ids);
        }
        ids.truncate(limit);
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
        let mut back = vec![(self.unknown, 0usize); n + 1];
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
                back[i + 1] = (self.unknown, i);
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
