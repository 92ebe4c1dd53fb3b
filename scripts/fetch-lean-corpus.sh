#!/usr/bin/env bash
# The pages `bench lean` measures replies on, none written here:
#   - MiniWoB++ task pages (small forms and widgets), from the `miniwob` package on PyPI;
#   - Python's documentation contents page (a thousand-link page of long prose), from
#     Debian's python3.x-doc package.
# Into target/lean-corpus/{miniwob,docs}. Needs pip and apt-get download (any user).
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/lean-corpus
mkdir -p "$out/download"
if [ ! -d "$out/miniwob/miniwob" ]; then
  pip download --quiet --no-deps --dest "$out/download" miniwob==1.1.0
  python3 - "$out" <<'PY'
import sys, zipfile, glob
out = sys.argv[1]
wheel = glob.glob(f"{out}/download/miniwob-1.1.0-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith("miniwob/html/"):
            z.extract(name, f"{out}/miniwob")
PY
fi
if [ ! -f "$out/docs/python-contents.html" ]; then
  mkdir -p "$out/docs"
  package=$(apt-cache search --names-only '^python3\.[0-9]+-doc$' | sort -V | tail -1 | cut -d' ' -f1)
  [ -n "$package" ] || { echo "no python3.x-doc package in the apt lists (apt-get update?)" >&2; exit 1; }
  (cd "$out/download" && apt-get download "$package" >/dev/null)
  rm -rf "$out/download/x" && dpkg -x "$out/download/$package"_*.deb "$out/download/x"
  cp "$(find "$out/download/x" -name contents.html | head -1)" "$out/docs/python-contents.html"
fi
echo "$out"
