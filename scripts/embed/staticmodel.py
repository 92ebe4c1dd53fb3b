"""Write and read the shipped static model (models/embed) and embed text with
it. This is the Python reference that check.json is computed from; the layout
is described in models/embed/FORMAT.md."""

from __future__ import annotations

import os
import struct

import numpy as np

from unigram import UnigramTokenizer

MAGIC = b"TWEMB1"
KIND_F32, KIND_F16, KIND_I8 = 0, 1, 2
# magic (6 bytes), 2 zero bytes, u32 vocab_size, u32 dims, u32 kind, u32 reserved = 24 bytes
HEADER = struct.Struct("<6s2xIIII")


def quantize_rows_i8(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-row int8: row ~= scale * q, q in [-127, 127]."""
    amax = np.abs(mat).max(axis=1)
    scale = np.where(amax > 0, amax / 127.0, 0.0).astype(np.float32)
    safe = np.where(scale > 0, scale, 1.0)
    q = np.clip(np.rint(mat / safe[:, None]), -127, 127).astype(np.int8)
    return q, scale


def write_vectors(path: str, mat: np.ndarray, kind: int = KIND_I8) -> None:
    n, d = mat.shape
    with open(path, "wb") as f:
        f.write(HEADER.pack(MAGIC, n, d, kind, 0))
        if kind == KIND_I8:
            q, scale = quantize_rows_i8(mat)
            f.write(scale.astype("<f4").tobytes())  # all row scales first
            f.write(q.tobytes())                    # then the int8 rows
        elif kind == KIND_F16:
            f.write(mat.astype("<f2").tobytes())
        elif kind == KIND_F32:
            f.write(mat.astype("<f4").tobytes())
        else:
            raise ValueError(kind)


def read_vectors(path: str) -> np.ndarray:
    raw = open(path, "rb").read()
    magic, n, d, kind, _reserved = HEADER.unpack_from(raw, 0)
    if magic != MAGIC:
        raise ValueError("bad magic")
    body = raw[HEADER.size :]
    if kind == KIND_I8:
        scale = np.frombuffer(body, "<f4", n)
        q = np.frombuffer(body, "i1", n * d, offset=4 * n).reshape(n, d)
        return q.astype(np.float32) * scale[:, None]
    if kind == KIND_F16:
        return np.frombuffer(body, "<f2", n * d).reshape(n, d).astype(np.float32)
    if kind == KIND_F32:
        return np.frombuffer(body, "<f4", n * d).reshape(n, d).copy()
    raise ValueError(f"unknown kind {kind}")


def write_vocab(path: str, pieces: list[str], scores: list[float]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for p, s in zip(pieces, scores):
            assert "\t" not in p and "\n" not in p and "\r" not in p, repr(p)
            f.write(f"{p}\t{s:.6f}\n")


def read_vocab(path: str) -> tuple[list[str], list[float]]:
    pieces, scores = [], []
    with open(path, encoding="utf-8", newline="\n") as f:
        for line in f:
            p, s = line.rstrip("\n").split("\t")
            pieces.append(p)
            scores.append(float(s))
    return pieces, scores


def write_norm(path: str, norm_map: dict[int, tuple[int, ...]]) -> None:
    with open(path, "w", encoding="ascii", newline="\n") as f:
        for cp in sorted(norm_map):
            rep = " ".join(f"{c:04X}" for c in norm_map[cp])
            f.write(f"{cp:04X}\t{rep}\n")


def read_norm(path: str) -> dict[int, tuple[int, ...]]:
    out = {}
    with open(path, encoding="ascii", newline="\n") as f:
        for line in f:
            cp, rep = line.rstrip("\n").split("\t")
            out[int(cp, 16)] = tuple(int(c, 16) for c in rep.split()) if rep else ()
    return out


UNK_ID = 0


class StaticModel:
    def __init__(self, vectors: np.ndarray, pieces: list[str], scores: list[float],
                 norm_map: dict[int, tuple[int, ...]]):
        assert len(pieces) == vectors.shape[0]
        self.vectors = vectors
        self.pieces = pieces
        self.tokenizer = UnigramTokenizer(pieces, scores, norm_map, unk_id=UNK_ID,
                                          skip_ids={UNK_ID})

    @classmethod
    def load(cls, directory: str) -> "StaticModel":
        vec = read_vectors(os.path.join(directory, "vectors.bin"))
        pieces, scores = read_vocab(os.path.join(directory, "vocab.tsv"))
        norm = read_norm(os.path.join(directory, "normalize.tsv"))
        return cls(vec, pieces, scores, norm)

    def tokenize(self, text: str) -> list[int]:
        return self.tokenizer.encode(text)

    def embed_ids(self, ids: list[int]) -> np.ndarray:
        ids = [i for i in ids if i != UNK_ID]
        if not ids:
            return np.zeros(self.vectors.shape[1], np.float32)
        v = self.vectors[ids].astype(np.float64).mean(axis=0)
        n = np.linalg.norm(v)
        return (v / n if n > 0 else v).astype(np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.embed_ids(self.tokenize(t)) for t in texts])
