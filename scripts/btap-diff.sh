#!/usr/bin/env bash
# The differential suite: the same calls to the real BrowserTap 0.5.4 and to tabwire's btap
# face, every reply compared (tests/btap-diff/). Installs the pinned BrowserTap and the MCP
# Python SDK into target/btap-diff/venv the first time, builds tabwire if it is missing,
# and fails when a reply differs in a way docs/btap-divergences.md does not list.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/btap-diff/venv
# BrowserTap is pinned: the suite compares against exactly this release.
pins=(browsertap-mcp==0.5.4 mcp==1.30.0)
if ! "$venv/bin/python" -c 'import browsertap_mcp, mcp' >/dev/null 2>&1; then
  echo "btap-diff: installing ${pins[*]} into $venv…" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
fi
[ -x target/debug/tabwire ] || cargo build -p tabwire
"$venv/bin/python" tests/btap-diff/run.py --venv "$venv" --tabwire target/debug/tabwire "$@"
