#!/usr/bin/env bash
# Fetch the retrieval benchmark corpus for search_tabs_content.
#
# Reads benches/search/corpus.json (id, package, version, path per page; CORPUS=FILE
# reads another list of the same shape, e.g. benches/search/heldout/corpus.json),
# downloads each Debian documentation package named there with
# `apt-get download PKG=VERSION` (no root needed) into a scratch directory,
# unpacks it with `dpkg-deb -x`, and copies each chosen page to
# TARGET/pages/ID.html (flat; a .html.gz page is gunzipped). Only the HTML
# text is kept: no CSS or images.
#
# If a pinned version is no longer on the mirror (Debian drops superseded
# point/security releases), the package's candidate version is used instead
# and a warning is printed; a page missing from that version is an error.
#
# Idempotent: when TARGET/pages/ID.html exists for every id, nothing is
# downloaded; otherwise only the packages of the missing pages are fetched.
#
# Usage: scripts/fetch-search-corpus.sh [TARGET]   (default target/search-corpus
#        in this repository). Needs apt-get, apt-cache, dpkg-deb, gzip, python3
#        and apt package lists (`apt-get update` once, as root, if apt-get
#        download finds nothing). FETCH_IDS="id id …" fetches only those pages
#        (the test suite's fidelity check takes six).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CORPUS="${CORPUS:-$REPO/benches/search/corpus.json}"
TARGET="${1:-$REPO/target/search-corpus}"
PAGES="$TARGET/pages"

for tool in apt-get apt-cache dpkg-deb gzip python3; do
  command -v "$tool" >/dev/null || { echo "fetch-search-corpus: needs $tool" >&2; exit 1; }
done
[ -f "$CORPUS" ] || { echo "fetch-search-corpus: $CORPUS not found" >&2; exit 1; }

# One tab-separated line per page: id, package, version, path.
ROWS="$(python3 - "$CORPUS" "${FETCH_IDS:-}" <<'EOF'
import json, re, sys
pages = json.load(open(sys.argv[1], encoding="utf-8"))
only = set(sys.argv[2].split())
unknown = only - {p.get("id") for p in pages}
if unknown:
    sys.exit(f"FETCH_IDS: not in corpus.json: {' '.join(sorted(unknown))}")
seen = set()
for p in pages:
    if only and p.get("id") not in only:
        continue
    for k in ("id", "package", "version", "path"):
        v = p.get(k)
        if not isinstance(v, str) or not v or "\t" in v or "\n" in v:
            sys.exit(f"corpus.json: page {p.get('id')!r}: bad {k!r}")
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", p["id"]) or p["id"] in seen:
        sys.exit(f"corpus.json: bad or duplicate id {p['id']!r}")
    if p["path"].startswith("/") or ".." in p["path"].split("/"):
        sys.exit(f"corpus.json: page {p['id']}: path must be relative to the package root")
    seen.add(p["id"])
    print("\t".join((p["id"], p["package"], p["version"], p["path"])))
EOF
)"
TOTAL="$(printf '%s\n' "$ROWS" | wc -l)"

mkdir -p "$PAGES"
MISSING="$(printf '%s\n' "$ROWS" | while IFS=$'\t' read -r id pkg ver path; do
  [ -s "$PAGES/$id.html" ] || printf '%s\t%s\t%s\t%s\n' "$id" "$pkg" "$ver" "$path"
done)"
if [ -z "$MISSING" ]; then
  echo "fetch-search-corpus: all $TOTAL pages already in $PAGES; nothing to do"
  exit 0
fi
NMISSING="$(printf '%s\n' "$MISSING" | wc -l)"
echo "fetch-search-corpus: $NMISSING of $TOTAL pages missing in $PAGES"

SCRATCH="$(mktemp -d /tmp/tabwire-search-corpus.XXXXXX)"
trap 'rm -rf "$SCRATCH"' EXIT
# apt-get download, run as root, drops to user _apt, which must be able to
# enter the scratch directory and write the download directory; otherwise it
# downloads unsandboxed with a warning. Keep it sandboxed and quiet.
chmod 755 "$SCRATCH"

# Each distinct package=version among the missing pages, once.
printf '%s\n' "$MISSING" | cut -f2,3 | sort -u | while IFS=$'\t' read -r pkg ver; do
  dl="$SCRATCH/dl/$pkg"
  mkdir -p "$dl"
  chmod 755 "$SCRATCH/dl" "$dl"
  if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$dl"; fi
  used="$ver"
  if ! (cd "$dl" && apt-get download -q "$pkg=$ver" >/dev/null 2>"$dl.err"); then
    cand="$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2; exit}')"
    if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then
      echo "fetch-search-corpus: cannot download $pkg=$ver and apt knows no candidate for $pkg" >&2
      sed 's/^/  /' "$dl.err" >&2
      echo "  (are the apt package lists present? run 'apt-get update' as root)" >&2
      exit 1
    fi
    echo "fetch-search-corpus: WARNING: $pkg=$ver is not available; using candidate $cand instead" >&2
    (cd "$dl" && apt-get download -q "$pkg=$cand" >/dev/null)
    used="$cand"
  fi
  deb="$(find "$dl" -maxdepth 1 -name '*.deb' | head -n 1)"
  [ -n "$deb" ] || { echo "fetch-search-corpus: no .deb for $pkg after download" >&2; exit 1; }
  mkdir -p "$SCRATCH/x/$pkg"
  dpkg-deb -x "$deb" "$SCRATCH/x/$pkg"
  echo "fetch-search-corpus: $pkg $used: downloaded $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB), unpacked"

  printf '%s\n' "$MISSING" | awk -F'\t' -v p="$pkg" '$2 == p' | while IFS=$'\t' read -r id _ _ path; do
    src="$SCRATCH/x/$pkg/$path"
    out="$PAGES/$id.html"
    if [ -f "$src" ]; then
      case "$src" in
        *.gz) gzip -dc "$src" >"$out.partial" ;;
        *) cp -L "$src" "$out.partial" ;;
      esac
    elif [ -f "$src.gz" ]; then
      gzip -dc "$src.gz" >"$out.partial"
    else
      echo "fetch-search-corpus: $id: $path is not in $pkg $used" >&2
      exit 1
    fi
    mv "$out.partial" "$out"
    echo "  $id.html  <- $path ($(wc -c <"$out") bytes)"
  done
done

# Final check: every page there and not trivially small.
printf '%s\n' "$ROWS" | while IFS=$'\t' read -r id _ _ _; do
  f="$PAGES/$id.html"
  [ -s "$f" ] || { echo "fetch-search-corpus: $f missing after fetch" >&2; exit 1; }
  [ "$(wc -c <"$f")" -ge 2048 ] || echo "fetch-search-corpus: WARNING: $f is under 2 KB" >&2
done
echo "fetch-search-corpus: $TOTAL pages in $PAGES ($(du -sk "$PAGES" | cut -f1) KiB of HTML)"
