#!/usr/bin/env python3
"""Validate no-shared-words.json and check that its English queries share no
content word with their answer page.

File checks: every entry has query/lang/kind/answer/group, kind is "noshare",
every answer id is in corpus.json, every group has exactly one query in each
of en, zh, de, es with one answer, every page has exactly one group, groups
are 0..N-1 in corpus order, English queries have 6-16 words.

Hard rule (English queries only): page text = html.parser text (script/style
skipped), lowercased, split on non-alphanumerics. A content word of the query
(same split, >= 3 chars, not a stopword of ../pagewords.py) must not
occur as a token of the page. Only exact tokens count; unlike
../check-concept.py a shared 5-letter prefix is allowed.

Pages are read from target/search-corpus/pages/ID.html (as
scripts/fetch-search-corpus.sh lays them out), or --pages DIR.

  python3 check-noshare.py                      # check the file
  python3 check-noshare.py --try ID "a query"   # test one candidate query

Exit status 1 on any validation error or shared word.
"""
import argparse
import json
import os
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from pagewords import content_words, page_words, words  # noqa: E402

LANGS = ("en", "zh", "de", "es")
DEFAULT_PAGES = os.path.join(HERE, "..", "..", "..", "target", "search-corpus", "pages")

def shared(query, pw):
    return sorted({w for w in content_words(query) if w in pw})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", default=DEFAULT_PAGES, help="directory with ID.html per page")
    ap.add_argument("--file", default=os.path.join(HERE, "no-shared-words.json"))
    ap.add_argument("--try", dest="try_", nargs=2, metavar=("ID", "QUERY"),
                    help="only report the words QUERY shares with page ID")
    args = ap.parse_args()

    if args.try_:
        pid, query = args.try_
        bad = shared(query, page_words(os.path.join(args.pages, pid + ".html")))
        print(f"{len(words(query))}w shared: {bad}" if bad else f"{len(words(query))}w ok")
        return 1 if bad else 0

    corpus = json.load(open(os.path.join(HERE, "corpus.json"), encoding="utf-8"))
    order = [p["id"] for p in corpus]
    ids = set(order)
    entries = json.load(open(args.file, encoding="utf-8"))
    errors = []

    groups = defaultdict(list)
    for i, q in enumerate(entries):
        for k in ("query", "lang", "kind", "answer"):
            if not isinstance(q.get(k), str) or not q.get(k).strip():
                errors.append(f"entry {i}: missing or empty {k!r}")
        if not isinstance(q.get("group"), int):
            errors.append(f"entry {i}: group must be an integer")
            continue
        if q.get("answer") not in ids:
            errors.append(f"entry {i}: answer {q.get('answer')!r} not in corpus.json")
        if q.get("lang") not in LANGS:
            errors.append(f"entry {i}: lang {q.get('lang')!r} not one of {LANGS}")
        if q.get("kind") != "noshare":
            errors.append(f"entry {i}: kind {q.get('kind')!r} is not 'noshare'")
        groups[q["group"]].append(q)

    per_page = defaultdict(list)
    for g, qs in sorted(groups.items()):
        langs = sorted(q.get("lang", "") for q in qs)
        if langs != sorted(LANGS):
            errors.append(f"group {g}: languages {langs}, want one each of {list(LANGS)}")
        answers = {q.get("answer") for q in qs}
        if len(answers) != 1:
            errors.append(f"group {g}: answers differ across languages: {sorted(map(str, answers))}")
        for a in answers:
            per_page[a].append(g)
    for n, pid in enumerate(order):
        if per_page.get(pid) != [n]:
            errors.append(f"page {pid}: groups {per_page.get(pid, [])}, want exactly [{n}] (corpus order)")
    if sorted(groups) != list(range(len(order))):
        errors.append(f"groups are {sorted(groups)}, want 0..{len(order) - 1}")

    en = sorted((q for q in entries if q.get("lang") == "en" and isinstance(q.get("group"), int)),
                key=lambda q: q["group"])
    for q in en:
        n = len(words(q["query"]))
        if not 6 <= n <= 16:
            errors.append(f"group {q['group']}: English query has {n} words, want 6-16")

    print(f"{args.file}: {len(entries)} entries, {len(groups)} groups, {len(en)} English")
    for e in errors:
        print("ERROR", e)
    print("validation:", "FAILED" if errors else "ok")

    fails = 0
    for q in en:
        path = os.path.join(args.pages, q["answer"] + ".html")
        if not os.path.isfile(path):
            print(f"MISSING g{q['group']:<2} [{q['answer']}] page not found: {path}")
            fails += 1
            continue
        bad = shared(q["query"], page_words(path))
        fails += bool(bad)
        status = "FAIL" if bad else "OK  "
        print(f"{status} g{q['group']:<2} [{q['answer']}] ({len(words(q['query']))}w) {q['query']}"
              + (f"  -> shared: {bad}" if bad else ""))
    print(f"\n{len(en) - fails}/{len(en)} English queries share no content word with their page")
    return 1 if errors or fails else 0


if __name__ == "__main__":
    sys.exit(main())
