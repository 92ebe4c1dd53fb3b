#!/usr/bin/env python3
"""Check that English concept queries share no content word with their answer page.

Rule: page text = html.parser text (skip script/style), lowercased, split on
non-alphanumeric chars. A query word (same split, lowercased) with >= 3 chars
that is not an English stopword must not (a) appear in the page word set, nor
(b) share its first 5 letters with any page word (both words >= 5 chars).
"""
import json, re, sys
from html.parser import HTMLParser

import os
PAGES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../target/search-corpus/pages/%s.html")

# English function words (articles, pronouns, auxiliaries, prepositions, conjunctions):
# sharing one of these with a page says nothing about its subject.
STOPWORDS = set("""a an the and or but nor so yet if then else than because as while until
of at by for with about against between into through during before after above below to from
up down in out on off over under again once here there when where why how all any both each
few more most other some such no not only own same too very can will just should now also
i me my we our you your he him his she her it its they them their what which who whom this that
these those am is are was were be been being have has had having do does did doing would could
might must shall may whose whether within without upon onto per via
itself myself yourself himself herself ourselves themselves""".split())

SPLIT = re.compile(r"[^0-9a-z]+")

def words(text):
    return [w for w in SPLIT.split(text.lower()) if w]

class TextExtractor(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.skip = 0
        self.parts = []
    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1
    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)

_cache = {}
def page_words(pid):
    if pid not in _cache:
        p = TextExtractor()
        with open(PAGES % pid, encoding="utf-8", errors="replace") as f:
            p.feed(f.read())
        p.close()
        _cache[pid] = set(words(" ".join(p.parts)))
    return _cache[pid]

def content_words(query):
    return [w for w in words(query) if len(w) >= 3 and w not in STOPWORDS]

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
