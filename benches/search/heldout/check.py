#!/usr/bin/env python3
"""Validate the held-out concept-query set and measure its word overlap.

Checks corpus.json and queries.json beside this file:
  * corpus: fields id/package/version/path/title/topic, unique ids, relative
    paths, no page (id or package+path) shared with ../corpus.json;
  * queries: fields query/lang/kind/answer/group, every answer id in the
    corpus, every group has exactly one query in each of en, zh, de, es with
    one answer, every page has exactly 2 groups, English queries 6-20 words.

Then, if the page HTML is at hand, prints for each English query the
fraction of its content words (>= 3 chars, not an English stopword; text
lowercased and split on non-alphanumerics, as in ../check-concept.py) that
occur in its answer page's text (html.parser, script/style skipped), and the
mean of that fraction. It also lists content words shared with the page title.

Page HTML comes from one of:
  --pages DIR   DIR/ID.html for every id (as scripts/fetch-search-corpus.sh lays out)
  --root DIR    packages unpacked with dpkg-deb -x into DIR (paths from corpus.json)
  --fetch DIR   apt-get download each package=version (falling back to the
                candidate version) into DIR/debs, unpack into DIR/root, use it
Without any of them the overlap report is skipped.

Exit status 1 if a validation check fails.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from pagewords import content_words, page_text, words  # noqa: E402

LANGS = ("en", "zh", "de", "es")
GROUPS_PER_PAGE = 2

def fetch(corpus, dest):
    """apt-get download + dpkg-deb -x every package of the corpus into dest/root."""
    debs = os.path.join(dest, "debs")
    root = os.path.join(dest, "root")
    os.makedirs(debs, exist_ok=True)
    os.makedirs(root, exist_ok=True)
    os.chmod(dest, 0o755)
    os.chmod(debs, 0o777)  # apt-get download as root drops to _apt
    for pkg, ver in sorted({(p["package"], p["version"]) for p in corpus}):
        before = set(os.listdir(debs))
        r = subprocess.run(["apt-get", "download", "-q", f"{pkg}={ver}"], cwd=debs)
        if r.returncode != 0:
            print(f"check: {pkg}={ver} not on the mirror, using the candidate version", file=sys.stderr)
            subprocess.run(["apt-get", "download", "-q", pkg], cwd=debs, check=True)
        new = sorted(set(os.listdir(debs)) - before) or sorted(glob.glob(os.path.join(debs, f"{pkg}_*.deb")))
        for deb in new:
            subprocess.run(["dpkg-deb", "-x", os.path.join(debs, os.path.basename(deb)), root], check=True)
    return root


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--pages", help="directory with ID.html per page")
    src.add_argument("--root", help="directory the packages were unpacked into")
    src.add_argument("--fetch", help="download and unpack the packages into this directory")
    ap.add_argument("-q", "--quiet", action="store_true", help="print only the summary")
    args = ap.parse_args()

    errors = []
    corpus = json.load(open(os.path.join(HERE, "corpus.json"), encoding="utf-8"))
    queries = json.load(open(os.path.join(HERE, "queries.json"), encoding="utf-8"))

    # --- corpus ---
    ids = {}
    for p in corpus:
        for k in ("id", "package", "version", "path", "title", "topic"):
            if not isinstance(p.get(k), str) or not p.get(k):
                errors.append(f"corpus: page {p.get('id')!r}: missing or empty {k!r}")
        pid = p.get("id", "")
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", pid) or pid in ids:
            errors.append(f"corpus: bad or duplicate id {pid!r}")
        if p.get("path", "").startswith("/") or ".." in p.get("path", "").split("/"):
            errors.append(f"corpus: page {pid}: path must be relative to the package root")
        ids[pid] = p
    main_corpus = os.path.join(HERE, "..", "corpus.json")
    if os.path.exists(main_corpus):
        old = json.load(open(main_corpus, encoding="utf-8"))
        old_ids = {o["id"] for o in old}
        old_paths = {(o["package"], o["path"]) for o in old}
        for p in corpus:
            if p["id"] in old_ids or (p["package"], p["path"]) in old_paths:
                errors.append(f"corpus: page {p['id']} is also in ../corpus.json")

    # --- queries ---
    groups = defaultdict(list)
    for i, q in enumerate(queries):
        for k in ("query", "lang", "kind", "answer"):
            if not isinstance(q.get(k), str) or not q.get(k):
                errors.append(f"queries[{i}]: missing or empty {k!r}")
        if not isinstance(q.get("group"), int):
            errors.append(f"queries[{i}]: group must be an integer")
            continue
        if q.get("answer") not in ids:
            errors.append(f"queries[{i}]: answer {q.get('answer')!r} not in corpus")
        if q.get("lang") not in LANGS:
            errors.append(f"queries[{i}]: lang {q.get('lang')!r} not one of {LANGS}")
        if q.get("kind") != "concept":
            errors.append(f"queries[{i}]: kind {q.get('kind')!r} is not 'concept'")
        groups[q["group"]].append(q)
    per_page = defaultdict(list)
    for g, qs in sorted(groups.items()):
        langs = sorted(q["lang"] for q in qs)
        if langs != sorted(LANGS):
            errors.append(f"group {g}: languages {langs}, want one each of {list(LANGS)}")
        answers = {q["answer"] for q in qs}
        if len(answers) != 1:
            errors.append(f"group {g}: answers differ across languages: {sorted(answers)}")
        per_page[next(iter(answers))].append(g)
    for pid in ids:
        if len(per_page.get(pid, [])) != GROUPS_PER_PAGE:
            errors.append(f"page {pid}: {len(per_page.get(pid, []))} groups, want {GROUPS_PER_PAGE}")
    en = [q for q in queries if q.get("lang") == "en"]
    for q in en:
        n = len(words(q["query"]))
        if not 6 <= n <= 20:
            errors.append(f"group {q['group']}: English query has {n} words, want 6-20")

    print(f"corpus: {len(corpus)} pages from {len({p['package'] for p in corpus})} packages; "
          f"queries: {len(queries)} ({len(groups)} groups, {len(en)} English)")
    for e in errors:
        print("ERROR", e)
    print("validation:", "FAILED" if errors else "ok")

    # --- overlap with the page text ---
    root = None
    if args.fetch:
        root = fetch(corpus, os.path.abspath(args.fetch))
    elif args.root:
        root = args.root

    def html_path(pid):
        if args.pages:
            return os.path.join(args.pages, pid + ".html")
        return os.path.join(root, ids[pid]["path"]) if root else None

    if not (args.pages or root):
        print("overlap: skipped (give --pages, --root or --fetch)")
        return 1 if errors else 0
    missing = [pid for pid in ids if not os.path.isfile(html_path(pid))]
    if missing:
        print("overlap: skipped, pages not found:", " ".join(missing))
        return 1

    page_words = {pid: set(words(page_text(html_path(pid)))) for pid in ids}
    fracs = []
    title_hits = 0
    for q in sorted(en, key=lambda q: q["group"]):
        cw = content_words(q["query"])
        found = [w for w in cw if w in page_words[q["answer"]]]
        frac = len(found) / len(cw) if cw else 0.0
        fracs.append(frac)
        title = set(content_words(ids[q["answer"]]["title"]))
        in_title = sorted({w for w in cw if w in title})
        title_hits += bool(in_title)
        if not args.quiet:
            extra = f"  title words: {in_title}" if in_title else ""
            print(f"{frac:4.2f} ({len(found)}/{len(cw)}) g{q['group']:<2} [{q['answer']}] {q['query']}{extra}")
    mean = sum(fracs) / len(fracs) if fracs else 0.0
    print(f"\nmean fraction of English content words found in the answer page: {mean:.3f} "
          f"over {len(fracs)} queries (min {min(fracs):.2f}, max {max(fracs):.2f})")
    print(f"English queries sharing a content word with their page title: {title_hits}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
