"""Reference tokenizer for models/embed (see models/embed/FORMAT.md).

It is a SentencePiece-style unigram tokenizer reduced to rules that are easy
to reproduce exactly in another language:

1. map every codepoint through the normalisation table (missing = unchanged);
2. split the result on U+0020 and drop empty words;
3. prefix each word with U+2581 and segment it by Viterbi over the pieces,
   maximising the sum of piece scores (f64), with an "unknown" step of one
   codepoint that costs (lowest piece score - 10);
4. emit the piece ids word by word; unknown steps emit the unknown id.

Ties are broken deterministically: positions are visited left to right,
candidate pieces shortest first, and a candidate replaces the best path to a
position only if its score is strictly greater. The unknown step is tried
after all pieces starting at the same position.
"""

from __future__ import annotations

META = "\u2581"


class UnigramTokenizer:
    def __init__(self, pieces, scores, norm_map, unk_id, skip_ids=()):
        """pieces/scores: parallel lists; ids are list positions.
        norm_map: {codepoint: tuple of replacement codepoints}.
        skip_ids: ids never used for matching (control tokens, unknown)."""
        self.pieces = list(pieces)
        self.scores = [float(s) for s in scores]
        self.norm_map = {int(k): tuple(v) for k, v in norm_map.items()}
        self.unk_id = unk_id
        self.lookup: dict[str, int] = {}
        for i, p in enumerate(self.pieces):
            if i in skip_ids or p == "":
                continue
            # first occurrence wins (pieces are unique in practice)
            self.lookup.setdefault(p, i)
        usable = [self.scores[i] for i in self.lookup.values()]
        self.unk_score = min(usable) - 10.0
        self.max_len = max(len(p) for p in self.lookup)

    def normalize(self, text: str) -> str:
        out = []
        nm = self.norm_map
        for ch in text:
            rep = nm.get(ord(ch))
            if rep is None:
                out.append(ch)
            else:
                out.extend(chr(c) for c in rep)
        return "".join(out)

    def words(self, text: str) -> list[str]:
        return [w for w in self.normalize(text).split(" ") if w]

    def encode_word(self, word: str) -> list[int]:
        s = META + word
        n = len(s)
        neg = float("-inf")
        best = [neg] * (n + 1)
        back_id = [0] * (n + 1)
        back_from = [0] * (n + 1)
        best[0] = 0.0
        lookup, scores, max_len = self.lookup, self.scores, self.max_len
        for i in range(n):
            if best[i] == neg:
                continue
            base = best[i]
            for e in range(i + 1, min(n, i + max_len) + 1):
                pid = lookup.get(s[i:e])
                if pid is None:
                    continue
                sc = base + scores[pid]
                if sc > best[e]:
                    best[e], back_id[e], back_from[e] = sc, pid, i
            sc = base + self.unk_score
            if sc > best[i + 1]:
                best[i + 1], back_id[i + 1], back_from[i + 1] = sc, self.unk_id, i
        ids = []
        e = n
        while e > 0:
            ids.append(back_id[e])
            e = back_from[e]
        ids.reverse()
        return ids

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        for w in self.words(text):
            ids.extend(self.encode_word(w))
        return ids
