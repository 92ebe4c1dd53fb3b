#!/usr/bin/env bash
# Runs every test: unit tests and the end-to-end suite against a real Chromium, then the
# page-tool tests again over the extension link (a headless Chromium that loads
# extension/ and links through the native host), so both links run one suite.
# Installs Chromium on Debian/Ubuntu when it is missing and we are root; otherwise says
# exactly what to run.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
   && ! command -v google-chrome >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "Chromium is missing; installing Debian's chromium package…" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "Chromium is missing. Install it first, e.g.: sudo apt-get install -y chromium" >&2
    exit 1
  fi
fi

# The suite runs under cargo-nextest (test filters for the extension pass, one process a
# test). Without it nothing is skipped quietly: it is installed, or the run stops.
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "cargo-nextest is missing; installing it (cargo install cargo-nextest --locked)…" >&2
  cargo install cargo-nextest --locked >&2 || {
    echo "ERROR: cargo-nextest could not be installed; the suite needs it (the extension-link pass filters tests)." >&2
    exit 1
  }
fi
started=$(date +%s)

# The fidelity check also runs on six real pages nobody here wrote (Debian documentation,
# fetched with apt-get download). Best effort: without apt package lists or a mirror the
# check runs on tests/pages/corpus alone, and says so.
real_pages="apache-name-vhosts debref-gui git-stash pg-vacuum py-csv sqlite-autoincrement"
fetch_real() { FETCH_IDS="$real_pages" scripts/fetch-search-corpus.sh >/dev/null 2>&1; }
if fetch_real || { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
    && apt-get update -qq >/dev/null 2>&1 && fetch_real; }; then
  mkdir -p target/fidelity-extra
  for page in $real_pages; do cp "target/search-corpus/pages/$page.html" target/fidelity-extra/; done
  export TABWIRE_FIDELITY_EXTRA=target/fidelity-extra
else
  echo "WARNING: the real pages could not be fetched; the fidelity check runs on tests/pages/corpus only" >&2
fi

cargo nextest run --workspace --no-fail-fast "$@"
echo "test.sh: the suite over the managed link took $(( $(date +%s) - started )) s" >&2

# The same page-tool tests over the extension link.
link_suite='test(/^(input|deadline|reading|script|capture|browser_data|tabs|basics|fidelity|chrome|search|emulation|recording|pick|userscript|performance|page_tools|routes)::/)'
TABWIRE_E2E_LINK=extension cargo nextest run -p tabwire --test e2e --no-fail-fast \
  -E "$link_suite" "$@"
echo "test.sh: both passes took $(( $(date +%s) - started )) s" >&2
