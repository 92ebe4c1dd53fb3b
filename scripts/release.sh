#!/usr/bin/env bash
# Release binaries from a clean checkout: Linux (x86_64, the host's toolchain) and
# Windows (x86_64-pc-windows-gnu, cross-built as scripts/test-windows.sh does). Prints
# each file's size and sha256. macOS binaries need Apple's SDK: build them on a Mac
# with `cargo build --release`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "$(git status --porcelain)" ]; then
  echo "release.sh: the checkout has uncommitted changes; commit or stash them first" >&2
  exit 1
fi
out=target/release-artifacts
rm -rf "$out" && mkdir -p "$out"
cargo build --release -p tabwire
cp target/release/tabwire "$out/tabwire-linux-x86_64"
CARGO_TARGET_DIR="$PWD/target/cross" PATH=/usr/bin:$PATH RUSTC_BOOTSTRAP=1 \
  cargo build --release -Zbuild-std=std,panic_abort --target x86_64-pc-windows-gnu -p tabwire
cp target/cross/x86_64-pc-windows-gnu/release/tabwire.exe "$out/tabwire-windows-x86_64.exe"
x86_64-w64-mingw32-strip "$out/tabwire-windows-x86_64.exe"
echo "commit $(git rev-parse --short HEAD)"
for file in "$out"/*; do
  printf '%-40s %10s bytes  sha256 %s\n' "$(basename "$file")" "$(stat -c %s "$file")" \
    "$(sha256sum "$file" | cut -d' ' -f1)"
done
