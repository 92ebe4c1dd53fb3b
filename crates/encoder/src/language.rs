//! Which language a short text (a query) is in, among the languages the encoder's
//! language offsets are known for (`models/encoder/means.tsv`): by script first (Han,
//! kana, Hangul, Cyrillic), then for Latin script by the commonest short words of each
//! language. A text with too little to go on is `None`.

/// The most frequent function words of each Latin-script language the offsets cover.
const LATIN: &[(&str, &[&str])] = &[
    (
        "en",
        &[
            "the", "and", "of", "to", "is", "in", "how", "what", "for", "with", "my", "do", "can",
            "i", "it", "a", "on", "from", "that", "without",
        ],
    ),
    (
        "de",
        &[
            "der", "die", "das", "und", "ist", "nicht", "ich", "wie", "mit", "ein", "eine", "zu",
            "auf", "für", "den", "dem", "mein", "meine", "was", "wenn", "sich", "von", "im",
        ],
    ),
    (
        "fr",
        &[
            "le", "la", "les", "et", "est", "des", "une", "un", "pour", "comment", "dans", "avec",
            "mes", "mon", "je", "du", "sur", "pas", "que", "qui", "au",
        ],
    ),
    (
        "es",
        &[
            "el", "la", "los", "las", "y", "es", "cómo", "como", "para", "con", "una", "un", "mi",
            "mis", "que", "del", "por", "en", "sin", "se", "lo", "al",
        ],
    ),
    (
        "pt",
        &[
            "o", "os", "as", "e", "é", "um", "uma", "para", "com", "não", "meu", "minha", "como",
            "do", "da", "dos", "das", "em", "que", "no", "na",
        ],
    ),
    (
        "it",
        &[
            "il", "lo", "gli", "le", "e", "è", "di", "che", "per", "con", "una", "un", "come",
            "mio", "mia", "del", "della", "non", "nel", "si",
        ],
    ),
    (
        "nl",
        &[
            "de", "het", "een", "en", "is", "van", "ik", "hoe", "met", "voor", "niet", "mijn",
            "op", "te", "dat", "wat", "zijn", "naar",
        ],
    ),
    (
        "pl",
        &[
            "i", "w", "z", "na", "się", "jak", "nie", "do", "jest", "to", "że", "co", "mój",
            "moja", "dla", "od", "po", "czy",
        ],
    ),
];

pub fn detect(text: &str) -> Option<&'static str> {
    let (mut han, mut kana, mut hangul, mut cyrillic, mut latin) = (0, 0, 0, 0, 0);
    for c in text.chars() {
        match c as u32 {
            0x3040..=0x30ff => kana += 1,
            0x4e00..=0x9fff | 0x3400..=0x4dbf => han += 1,
            0xac00..=0xd7af => hangul += 1,
            0x0400..=0x04ff => cyrillic += 1,
            _ if c.is_alphabetic() => latin += 1,
            _ => {}
        }
    }
    if kana > 0 {
        return Some("ja");
    }
    if hangul > 0 && hangul >= han {
        return Some("ko");
    }
    if han > 0 && han * 2 >= latin / 3 {
        return Some("zh");
    }
    if cyrillic > latin {
        return Some("ru");
    }
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut best: Option<(&'static str, usize)> = None;
    for (language, common) in LATIN {
        let hits = words
            .iter()
            .filter(|w| common.contains(&w.as_str()))
            .count();
        if hits > 0 && best.is_none_or(|(_, most)| hits > most) {
            best = Some((language, hits));
        }
    }
    best.map(|(language, _)| language)
}

#[cfg(test)]
mod tests {
    use super::detect;

    #[test]
    fn scripts_and_common_words_name_the_language() {
        assert_eq!(detect("如何退款"), Some("zh"));
        assert_eq!(detect("SQLite でキーワード検索"), Some("ja"));
        assert_eq!(detect("Как вернуть деньги"), Some("ru"));
        assert_eq!(detect("how do I get my money back"), Some("en"));
        assert_eq!(detect("wie bekomme ich mein Geld zurück"), Some("de"));
        assert_eq!(detect("cómo recupero mi dinero"), Some("es"));
        assert_eq!(detect("comment récupérer mon argent"), Some("fr"));
        assert_eq!(detect("ORD-48213"), None);
    }
}
