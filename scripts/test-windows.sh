#!/usr/bin/env bash
# tabwire on Windows, proven on Linux: builds tabwire.exe for x86_64-pc-windows-gnu (with
# Debian's Rust, its standard library built from source, and mingw-w64), then runs it
# under Wine:
#   1. the platform seams' and the engine's unit tests, as Windows executables;
#   2. tests/e2e's windows:: module: tabwire.exe over stdio, driving a Linux Chromium
#      through --cdp-endpoint, two clients through the broker's named pipe, the native
#      host in Wine's registry, confinement on Windows paths, and the desktop pair
#      against a real file dialog (under Xvfb).
# Installs what it needs on Debian/Ubuntu when run as root; otherwise says what to run.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

packages="rustc-web cargo-web rust-web-src gcc-mingw-w64-x86-64 wine64 xvfb xauth"
missing=$(for p in $packages; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing $(echo $missing)…" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  else
    echo "missing packages: $(echo $missing); install them first (sudo apt-get install ...)" >&2
    exit 1
  fi
fi

target=x86_64-pc-windows-gnu
export CARGO_TARGET_DIR="$PWD/target/cross"
# Debian's toolchain (its std sources), apart from the host's own builds. No debug info:
# a Windows test binary is big enough without it.
cross() {
  PATH=/usr/bin:$PATH RUSTC_BOOTSTRAP=1 CARGO_PROFILE_DEV_DEBUG=0 \
    cargo "$1" -Zbuild-std=std,panic_abort --target "$target" "${@:2}"
}

cross build -p tabwire
exe="$CARGO_TARGET_DIR/$target/debug/tabwire.exe"
unit_tests=$(cross test --no-run -p platform -p engine --message-format=json 2>/dev/null \
  | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])')

# The stand-in browser with a file dialog, and Wine's missing ProcessPrng (Windows 10
# and later have it in bcryptprimitives.dll; Wine 8 does not).
helpers="$CARGO_TARGET_DIR/wine-helpers"
mkdir -p "$helpers"
x86_64-w64-mingw32-gcc -O2 -o "$helpers/chrome.exe" tests/windows/file-dialog.c -lcomdlg32
x86_64-w64-mingw32-gcc -O2 -shared -o "$helpers/bcryptprimitives.dll" \
  tests/windows/process-prng.c tests/windows/process-prng.def -lbcrypt

export WINEPREFIX="$CARGO_TARGET_DIR/wineprefix" WINEARCH=win64 WINEDEBUG=-all
export TABWIRE_WINE=/usr/lib/wine/wine64
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  "$TABWIRE_WINE" wineboot -i >/dev/null 2>&1 || true
  /usr/lib/wine/wineserver -w
fi
cp "$helpers/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"

# A Unix symbolic link inside a root, which Wine shows as a plain folder: the confined
# walk must still refuse it (platform::fs's test reads this).
planted="$CARGO_TARGET_DIR/planted-link"
rm -rf "$planted" && mkdir -p "$planted/root" "$planted/outside"
ln -s "$planted/outside" "$planted/root/shots"
export TABWIRE_PLANTED_LINK_ROOT="Z:$(echo "$planted/root" | tr / '\\')"

for unit in $unit_tests; do
  echo "== $(basename "$unit") under Wine"
  "$TABWIRE_WINE" "$unit" --test-threads=2
done
# The unit tests ran without a display. A Wine session they started (wineserver and its
# desktop process) outlives them for a moment and would be joined by the suite below,
# whose file dialog then cannot be shown; the suite starts a session of its own.
/usr/lib/wine/wineserver -k || true

# The e2e suite itself is a Linux program: built where the host's build already is, not
# a second time under the cross folder (a whole second build, and a gigabyte of disk).
TABWIRE_WINE_EXE="$exe" TABWIRE_WINE_DIALOG_EXE="$helpers/chrome.exe" \
  CARGO_TARGET_DIR="$PWD/target" xvfb-run -a cargo nextest run -p tabwire --test e2e --no-fail-fast \
  --run-ignored only -E 'test(/^windows::/)' "$@"
/usr/lib/wine/wineserver -k || true
echo "test-windows.sh: $(( $(date +%s) - started )) s" >&2
