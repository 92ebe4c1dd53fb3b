//! Text for the index: a page cut into overlapping chunks, and the terms the lexical
//! index counts.

/// A chunk holds at most this many words (a CJK character counts as half a word)…
const CHUNK_WORDS: f64 = 80.0;
/// …and at most this many characters, whatever the script.
const CHUNK_CHARS: usize = 600;
/// A page gives at most this many chunks (beyond: the rest of a very long document is
/// not searched, and the index says so).
pub const MAX_CHUNKS: usize = 200;
/// Shorter chunks carry too little to match on.
const MIN_CHUNK_CHARS: usize = 20;
/// Snippets are cut to this many characters.
pub const SNIPPET_CHARS: usize = 200;

/// Sentences of a text: cut after `.`, `!`, `?` followed by white space, after their CJK
/// forms, and at line breaks.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let end = match c {
            '\n' => Some(i),
            '。' | '！' | '？' | '；' => Some(i + c.len_utf8()),
            '.' | '!' | '?' if next.is_none_or(char::is_whitespace) => Some(i + 1),
            _ => None,
        };
        if let Some(end) = end {
            push_trimmed(&mut out, &text[start..end]);
            start = if c == '\n' { i + 1 } else { end };
        }
    }
    push_trimmed(&mut out, &text[start..]);
    out
}

fn push_trimmed<'a>(out: &mut Vec<&'a str>, sentence: &'a str) {
    let sentence = sentence.trim();
    if !sentence.is_empty() {
        out.push(sentence);
    }
}

/// How long a text is in words, a CJK character counting half.
fn words(text: &str) -> f64 {
    let cjk = text.chars().filter(|&c| is_cjk(c)).count() as f64;
    text.split_whitespace().count() as f64 + cjk / 2.0
}

/// The page's text in chunks of whole sentences, each but the first starting with the
/// last sentence of the one before (so a passage across a boundary is found whole). A
/// sentence longer than a chunk is cut into pieces on word (or character) boundaries.
/// Returns the chunks and whether the text went past [`MAX_CHUNKS`].
pub fn chunks(text: &str) -> (Vec<String>, bool) {
    let mut pieces = Vec::new();
    for sentence in sentences(text) {
        split_long(sentence, &mut pieces);
    }
    let mut out: Vec<String> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for piece in &pieces {
        let grown = current.iter().map(|s| s.len() + 1).sum::<usize>() + piece.len();
        let grown_words = current.iter().map(|s| words(s)).sum::<f64>() + words(piece);
        if !current.is_empty() && (grown > CHUNK_CHARS || grown_words > CHUNK_WORDS) {
            out.push(current.join(" "));
            if out.len() == MAX_CHUNKS {
                return (keep_long_enough(out), true);
            }
            let last = current.last().copied();
            current.clear();
            // One sentence of overlap, unless it alone would fill the chunk.
            if let Some(last) = last.filter(|l| l.len() + piece.len() < CHUNK_CHARS) {
                current.push(last);
            }
        }
        current.push(piece);
    }
    if !current.is_empty() {
        out.push(current.join(" "));
    }
    (keep_long_enough(out), false)
}

fn keep_long_enough(chunks: Vec<String>) -> Vec<String> {
    chunks
        .into_iter()
        .filter(|c| c.chars().count() >= MIN_CHUNK_CHARS)
        .collect()
}

/// Cuts a sentence longer than a chunk at word boundaries (character boundaries for
/// text without spaces).
fn split_long<'a>(sentence: &'a str, out: &mut Vec<&'a str>) {
    let mut rest = sentence;
    while rest.len() > CHUNK_CHARS || words(rest) > CHUNK_WORDS {
        let mut cut = 0;
        let mut count = 0.0;
        for (i, c) in rest.char_indices() {
            if i > CHUNK_CHARS / 2 && (count >= CHUNK_WORDS / 2.0 || i >= CHUNK_CHARS / 2) {
                break;
            }
            if c.is_whitespace() {
                count += 1.0;
                cut = i;
            } else if is_cjk(c) {
                count += 0.5;
                cut = i + c.len_utf8();
            }
        }
        if cut == 0 {
            cut = rest
                .char_indices()
                .map(|(i, _)| i)
                .find(|&i| i >= CHUNK_CHARS / 2)
                .unwrap_or(rest.len());
        }
        out.push(rest[..cut].trim());
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() {
        out.push(rest);
    }
}

/// Han, kana and Hangul: scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF
        | 0xAC00..=0xD7AF | 0x20000..=0x2FA1F)
}

/// The terms the lexical index counts: lower-cased words (an English plural or verb
/// ending folded away), every CJK character and each pair of neighbours, and whole
/// identifiers (`ORD-48213`, `ERR_CONNECTION_RESET`, `v2.3.1`) beside their parts.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut compound = String::new();
    let mut compound_parts = 0;
    let mut previous_cjk: Option<char> = None;
    let flush_word = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() && !is_stopword(word) {
            out.push(fold(word));
        }
        word.clear();
    };
    let flush_compound = |compound: &mut String, parts: &mut usize, out: &mut Vec<String>| {
        let trimmed = compound.trim_end_matches(|c: char| !c.is_alphanumeric());
        if *parts > 1 {
            out.push(trimmed.to_owned());
        }
        compound.clear();
        *parts = 0;
    };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if is_cjk(c) {
            flush_word(&mut word, &mut out);
            flush_compound(&mut compound, &mut compound_parts, &mut out);
            if !CJK_STOP.contains(&c) {
                out.push(c.to_string());
            }
            if let Some(p) = previous_cjk {
                out.push(format!("{p}{c}"));
            }
            previous_cjk = Some(c);
            continue;
        }
        previous_cjk = None;
        if c.is_alphanumeric() {
            if word.is_empty() {
                compound_parts += 1;
            }
            word.extend(c.to_lowercase());
            compound.extend(c.to_lowercase());
        } else if "-_./:#".contains(c)
            && !word.is_empty()
            && chars.peek().is_some_and(|n| n.is_alphanumeric())
        {
            flush_word(&mut word, &mut out);
            compound.push(c);
        } else {
            flush_word(&mut word, &mut out);
            flush_compound(&mut compound, &mut compound_parts, &mut out);
        }
    }
    flush_word(&mut word, &mut out);
    flush_compound(&mut compound, &mut compound_parts, &mut out);
    out
}

/// Words that say nothing of what a page is about, in the languages most pages are in;
/// they are not counted (a query's "at" must not make a page match). Identifiers keep
/// them (`out-of-band` stays whole).
const STOPWORDS: &[&str] = &[
    // English
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "because",
    "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have",
    "he", "her", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not",
    "of", "on", "or", "our", "she", "so", "some", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "to", "up", "us", "was", "we", "were", "what", "when",
    "where", "which", "who", "why", "will", "with", "would", "you", "your", // German
    "aber", "als", "am", "an", "auch", "auf", "aus", "bei", "bin", "bis", "das", "dass", "dem",
    "den", "der", "des", "die", "du", "ein", "eine", "einem", "einen", "einer", "er", "es", "für",
    "hat", "ich", "ihr", "im", "ist", "man", "mit", "nach", "nicht", "oder", "sich", "sie", "sind",
    "so", "um", "und", "von", "vom", "wie", "wir", "wird", "zu", "zum", "zur",
    // French, Spanish, Italian, Portuguese
    "au", "aux", "ce", "comment", "dans", "de", "del", "des", "du", "el", "en", "est", "et", "il",
    "je", "la", "las", "le", "les", "lo", "los", "mon", "ne", "nous", "o", "para", "pas", "por",
    "pour", "que", "qui", "se", "sur", "un", "una", "une", "y", "il", "di", "che", "per", "con",
    "da", "do", "em", "um", "uma",
];

/// CJK characters as common as stopwords.
const CJK_STOP: &[char] = &[
    '的', '是', '了', '在', '和', '有', '我', '你', '他', '这', '那', '也', '就', '都', '与', '及',
    '或', '吗', '呢', '么', 'の', 'は', 'が', 'を', 'に', 'で', 'と',
];

fn is_stopword(term: &str) -> bool {
    static SET: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
        std::sync::OnceLock::new();
    SET.get_or_init(|| STOPWORDS.iter().copied().collect())
        .contains(term)
}

/// A light English suffix fold, so `refunds`, `refunded` and `refunding` meet `refund`.
/// Words of other languages pass through but for a final `s` on long words.
fn fold(word: &str) -> String {
    if !word.is_ascii() || word.len() <= 4 || word.bytes().any(|b| b.is_ascii_digit()) {
        return word.to_owned();
    }
    for suffix in ["ing", "ed", "es", "s"] {
        if let Some(stem) = word.strip_suffix(suffix)
            && stem.len() >= 4
            && !stem.ends_with('s')
        {
            return stem.to_owned();
        }
    }
    word.to_owned()
}

/// A snippet of a chunk for the query: the sentence sharing the most terms with it, then
/// those after it, cut to [`SNIPPET_CHARS`] at a word boundary.
pub fn snippet(chunk: &str, query_terms: &[String]) -> String {
    let all = sentences(chunk);
    let score = |s: &str| {
        let have = terms(s);
        query_terms.iter().filter(|t| have.contains(t)).count()
    };
    let start = (0..all.len())
        .max_by_key(|&i| (score(all[i]), std::cmp::Reverse(i)))
        .unwrap_or(0);
    let text = all.get(start..).map(|s| s.join(" ")).unwrap_or_default();
    cut(&text, SNIPPET_CHARS)
}

/// `text` cut to at most `max` characters, at a word boundary when there is one.
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let end = text.char_indices().nth(max).map_or(text.len(), |(i, _)| i);
    let head = &text[..end];
    let at_word = head
        .rfind(char::is_whitespace)
        .filter(|&i| i > end / 2)
        .unwrap_or(end);
    format!("{}…", head[..at_word].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_stay_whole_beside_their_parts() {
        let t = terms("Order ORD-48213 failed: ERR_CONNECTION_RESET (see v2.3.1).");
        for want in [
            "order",
            "ord-48213",
            "ord",
            "48213",
            "err_connection_reset",
            "v2.3.1",
            "fail",
        ] {
            assert!(t.contains(&want.to_owned()), "{want} in {t:?}");
        }
    }

    #[test]
    fn stopwords_are_not_terms() {
        assert_eq!(terms("How do I get to the station?"), ["get", "station"]);
        assert_eq!(terms("Wie komme ich zum Bahnhof"), ["komme", "bahnhof"]);
    }

    #[test]
    fn cjk_text_gives_characters_and_pairs() {
        let t = terms("北京是首都");
        assert!(t.contains(&"北京".to_owned()) && t.contains(&"首".to_owned()));
    }

    #[test]
    fn chunks_overlap_by_a_sentence_and_cover_the_text() {
        let text: String = (0..60)
            .map(|i| format!("Sentence number {i} says a few words more. "))
            .collect();
        let (chunks, cut_short) = chunks(&text);
        assert!(!cut_short && chunks.len() > 3);
        for pair in chunks.windows(2) {
            let last_of_first = sentences(&pair[0]).last().copied().unwrap_or_default();
            assert!(pair[1].starts_with(last_of_first), "{pair:?}");
        }
        assert!(chunks.last().is_some_and(|c| c.contains("number 59")));
        assert!(chunks.iter().all(|c| c.len() <= CHUNK_CHARS));
    }

    #[test]
    fn text_without_spaces_is_cut_too() {
        let text = "字".repeat(2000);
        let (chunks, _) = chunks(&text);
        assert!(chunks.len() > 3 && chunks.iter().all(|c| c.len() <= CHUNK_CHARS * 2));
    }

    #[test]
    fn snippets_are_short_and_start_at_the_matching_sentence() {
        let s = snippet(
            "Shipping is free. Refunds are paid within 5 days. Contact us any time.",
            &terms("refund"),
        );
        assert!(s.starts_with("Refunds are paid"), "{s}");
        let long = cut(&"word ".repeat(100), SNIPPET_CHARS);
        assert!(long.chars().count() <= SNIPPET_CHARS + 1 && long.ends_with('…'));
    }
}
