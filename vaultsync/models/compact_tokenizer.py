"""A low-memory XLM-R tokenizer: the ``tokenizers`` pipeline with the Unigram step in Python.

``tokenizers``' Unigram model keeps its 250k pieces in a per-character trie
that costs ~280 MB of RSS. Here the pieces sit in one ``dict`` (~80 MB) and
the Viterbi search runs in Python, while normalisation and pre-tokenization
still use the ``tokenizers`` objects (``Precompiled`` + ``Replace``,
``Metaspace``), which are small. Output equals
``tokenizers.Tokenizer.encode(text).ids`` for the same ``tokenizer.json``:

1. special tokens written literally in the text (``<s>``, ``</s>``,
   ``<pad>``, ``<unk>``, ``<mask>``) are split out first, as
   ``tokenizers``' added vocabulary does for non-normalised tokens;
2. each other segment is normalised and split into ``▁``-words;
3. per word, the Viterbi of ``tokenizers``' ``encode_optimized`` (itself
   SentencePiece's, Kudo 2018): starts in order, pieces by increasing length,
   a candidate replaces a node only when strictly better; a start with no
   one-character piece gets an ``<unk>`` edge scored ``min_score - 10``;
   consecutive ``<unk>`` are fused.

Segmentations of the last 50,000 distinct words are cached (the Rust
tokenizer caches too). Cold, it is ~4x slower than the Rust tokenizer (≈4 ms
for a 1,500-character passage, against ~35 ms to embed it); on running text
the cache brings it close. The build writes its data as ``unigram.npz`` next
to ``tokenizer.json``.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tokenizers import Regex, Tokenizer, normalizers, pre_tokenizers

from vaultsync.models.file_array import NPY_HEADERS

_UNK_PENALTY = 10.0
_CACHE_WORDS = 50_000  # words are Zipf-distributed: a small cache of segmentations saves most Viterbi runs


def write_unigram_data(tokenizer_json: Path, out: Path) -> None:
    """Extract pieces, scores and the normaliser table of an XLM-R ``tokenizer.json`` into ``out`` (npz)."""
    import base64

    tj = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    model = tj["model"]
    if model.get("type") != "Unigram" or model.get("byte_fallback"):
        raise ValueError("only a Unigram model without byte fallback is supported")
    norm = tj["normalizer"]["normalizers"]
    if [n["type"] for n in norm] != ["Precompiled", "Replace"]:
        raise ValueError("unexpected normaliser pipeline")
    pieces = [p for p, _ in model["vocab"]]
    encoded = [p.encode("utf-8") for p in pieces]
    offsets = np.zeros(len(encoded) + 1, np.uint64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    meta = {
        "unk_id": model["unk_id"],
        "specials": {t["content"]: t["id"] for t in tj["added_tokens"] if t.get("special")},
        "bos": tj["post_processor"]["special_tokens"]["<s>"]["ids"][0],
        "eos": tj["post_processor"]["special_tokens"]["</s>"]["ids"][0],
    }
    np.savez(
        out,
        blob=np.frombuffer(b"".join(encoded), np.uint8),
        offsets=offsets,
        scores=np.array([s for _, s in model["vocab"]], np.float64),
        charsmap=np.frombuffer(base64.b64decode(norm[0]["precompiled_charsmap"]), np.uint8),
        meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
    )


def split_pieces(blob: np.ndarray, offsets: np.ndarray) -> list[str]:
    """The UTF-8 pieces in ``blob`` (uint8) cut at ``offsets`` (``len(pieces) + 1`` byte offsets).

    One decode and one split with a NUL between pieces (~30 ms for 250k pieces, against ~115 ms
    for a decode per piece, which stays as the fallback when a piece holds a NUL byte).
    """
    count = len(offsets) - 1
    if count > 0 and not (blob == 0).any():
        pieces = np.insert(blob, offsets[1:-1].astype(np.intp), 0).tobytes().decode("utf-8").split("\x00")
        if len(pieces) == count:
            return pieces
    raw, cut = blob.tobytes(), offsets.tolist()
    return [raw[cut[i] : cut[i + 1]].decode("utf-8") for i in range(count)]


class CompactTokenizer:
    """XLM-R tokenization with ~80 MB of pieces instead of ~280 MB (module docstring).

    Attributes:
        bos_id, eos_id, unk_id, pad_id: special ids; special_ids: all special token ids.
    """

    def __init__(self, path: Path) -> None:
        with NPY_HEADERS, np.load(path) as data:
            pieces = split_pieces(data["blob"], data["offsets"])
            self._scores = array("d", data["scores"].astype("<f8").tobytes())  # 2 MB; a list of floats is 8 MB
            charsmap = data["charsmap"].tobytes()
            meta = json.loads(data["meta"].tobytes())
        self._pieces: dict[str, int] = dict(zip(pieces, range(len(pieces))))
        self._max_len = max(map(len, pieces))
        del pieces
        self.unk_id: int = meta["unk_id"]
        self._unk_score = min(self._scores) - _UNK_PENALTY
        self._specials: dict[str, int] = meta["specials"]
        self.special_ids = set(self._specials.values())
        self.bos_id: int = meta["bos"]
        self.eos_id: int = meta["eos"]
        self.pad_id: int = self._specials.get("<pad>", 1)
        self._split = re.compile(
            "(" + "|".join(re.escape(s) for s in sorted(self._specials, key=len, reverse=True)) + ")"
        )
        self._normalizer = normalizers.Sequence(
            [normalizers.Precompiled(charsmap), normalizers.Replace(Regex(" {2,}"), " ")]
        )
        self._pre = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
        self._cache: dict[str, tuple[int, ...]] = {}

    def token_to_id(self, token: str) -> int | None:
        """Id of a piece, or None."""
        return self._pieces.get(token)

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """Token ids of ``text`` (``<s> … </s>`` around them when ``add_special_tokens``)."""
        ids: list[int] = [self.bos_id] if add_special_tokens else []
        for segment in self._split.split(text):
            if not segment:
                continue
            special = self._specials.get(segment)
            if special is not None:
                ids.append(special)
                continue
            cache = self._cache
            for word, _ in self._pre.pre_tokenize_str(self._normalizer.normalize_str(segment)):
                hit = cache.get(word)
                if hit is None:
                    hit = tuple(self._viterbi(word))
                    if len(cache) >= _CACHE_WORDS:
                        cache.clear()
                    cache[word] = hit
                ids.extend(hit)
        if add_special_tokens:
            ids.append(self.eos_id)
        return ids

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = True) -> list[list[int]]:
        """:meth:`encode` for each text."""
        return [self.encode(t, add_special_tokens) for t in texts]

    def _viterbi(self, word: str) -> list[int]:
        n = len(word)
        best: list[float | None] = [0.0] + [None] * n
        back = [0] * (n + 1)
        ids = [0] * (n + 1)
        get = self._pieces.get
        scores = self._scores
        unk, unk_score, max_len = self.unk_id, self._unk_score, self._max_len
        for s in range(n):
            base = best[s]
            assert base is not None  # every position is reachable (unk edges)
            single = False
            for e in range(s + 1, min(n, s + max_len) + 1):
                i = get(word[s:e])
                if i is not None:
                    cand = base + scores[i]
                    cur = best[e]
                    if cur is None or cand > cur:
                        best[e], back[e], ids[e] = cand, s, i
                    if e == s + 1:
                        single = True
            if not single:
                cand = base + unk_score
                cur = best[s + 1]
                if cur is None or cand > cur:
                    best[s + 1], back[s + 1], ids[s + 1] = cand, s, unk
        out: list[int] = []
        e = n
        while e > 0:
            i = ids[e]
            if not (i == unk and out and out[-1] == unk):  # fuse consecutive unknowns
                out.append(i)
            e = back[e]
        out.reverse()
        return out


CHECK_SAMPLE = (
    "query: How do I rotate the DB credentials?",
    "データベースの認証情報をローテーションする方法",
    "数据库凭据轮换，请参阅运行手册。 데이터베이스 자격 증명 교체",
    "Die Zugangsdaten werden rotiert — Straße, Größe; « guillemets » œuvre; Учётные данные; ¿Cómo? ¡Ñandú!",
    "emoji 👍🏽 🧑‍💻 ❤️ 🇯🇵 a     b\t\tc\n\nd ﬁ ｶﾞ ① ㈱ ℃ ＡＢＣ e\u0301 ㄱㅏ \u1100\u1161 Ａ\u0301",
    "<s> literal </s> <mask> x<pad>y ＜s＞ \u200b\u00a0\u3000 \x07 C++ -> x:=y; `code` ~/.config",
    "",
    "   ",
)


def mismatches(tokenizer: CompactTokenizer, reference: Tokenizer, texts: Sequence[str] = CHECK_SAMPLE) -> list[str]:
    """Texts whose ids differ from ``reference`` (``tokenizers``) — empty when the two agree."""
    return [t for t in texts if tokenizer.encode(t) != reference.encode(t).ids]
