#!/usr/bin/env python3
"""Check that English concept queries share no content word with their answer page.

Rule: page text = html.parser text (skip script/style), lowercased, split on
non-alphanumeric chars. A query word (same split, lowercased) with >= 3 chars
that is not an English stopword must not (a) appear in the page word set, nor
(b) share its first 5 letters with any page word (both words >= 5 chars).
"""
import json, os, sys

from pagewords import content_words, page_words as words_of_page, words

PAGES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../target/search-corpus/pages/%s.html")

_cache = {}
def page_words(pid):
    if pid not in _cache:
        _cache[pid] = words_of_page(PAGES % pid)
    return _cache[pid]

def violations(query, pid):
    pw = page_words(pid)
    prefixes = {}
    for w in pw:
        if len(w) >= 5:
            prefixes.setdefault(w[:5], w)
    bad = []
    for w in content_words(query):
        if w in pw:
            bad.append((w, "exact"))
        elif len(w) >= 5 and w[:5] in prefixes:
            bad.append((w, "prefix~" + prefixes[w[:5]]))
    return bad

def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "concept-queries.json")
    data = json.load(open(path, encoding="utf-8"))
    en = [q for q in data if q.get("lang", "en") == "en"]
    fails = 0
    for q in en:
        bad = violations(q["query"], q["answer"])
        n = len(words(q["query"]))
        status = "OK  " if not bad else "FAIL"
        if bad:
            fails += 1
        print(f"{status} [{q['answer']}] ({n}w) {q['query']}" + (f"  -> {bad}" if bad else ""))
    print(f"\n{len(en) - fails}/{len(en)} English queries pass; "
          f"{len({q['answer'] for q in en})} distinct pages")
    return 1 if fails else 0

if __name__ == "__main__":
    sys.exit(main())
