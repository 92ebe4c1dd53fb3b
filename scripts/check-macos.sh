#!/usr/bin/env bash
# tabwire on macOS, as far as this Linux machine can show it: the binary and every
# library's unit tests type-check for aarch64-apple-darwin and x86_64-apple-darwin (with
# Debian's Rust, its standard library built from source). Linking needs Apple's SDK and
# linker, which no Linux package provides, so nothing here runs on macOS; the
# end-to-end suite (Linux-only: Debian's Chromium, pidfds) is not checked.
set -euo pipefail
cd "$(dirname "$0")/.."
packages="rustc-web cargo-web rust-web-src"
missing=$(for p in $packages; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  else
    echo "missing packages: $(echo $missing)" >&2
    exit 1
  fi
fi
export CARGO_TARGET_DIR="$PWD/target/cross"
for target in aarch64-apple-darwin x86_64-apple-darwin; do
  echo "== cargo check for $target"
  for what in "-p tabwire --bins" "-p platform -p cdp -p engine -p mcp --tests"; do
    # shellcheck disable=SC2086
    PATH=/usr/bin:$PATH RUSTC_BOOTSTRAP=1 cargo check -Zbuild-std=std,panic_abort \
      --target "$target" $what
  done
done
