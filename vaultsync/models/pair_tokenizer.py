"""(query, passage) pairs tokenized for a cross-encoder: ``tokenizers``, or the compact Unigram
tokenizer where it was shown to agree.

``tokenizers``' Unigram model costs ~80 MB of RSS for the shipped reranker's 96,000 pieces; the
compact one (:mod:`vaultsync.models.compact_tokenizer`) a third of that. It is used only for an
XLM-R-style ``tokenizer.json`` (Unigram, ``<s> A </s></s> B </s>`` pairs, all segment ids 0) and
only after it was checked once, against ``tokenizers`` itself, on the check sample and on pairs.
The check's result lives in the model cache (``<cache>/models/pair-tokenizers/<tokenizer.json
sha256[:12]>/``: ``unigram.npz`` and ``pairs.json`` with the pad id, the length limit and the
special-token count), written into a staging folder and renamed, so a later process never loads
``tokenizers``' model. Every other tokenizer (BERT WordPiece, a template of another shape) runs on
``tokenizers``, as before.

Truncation (both back ends): the query keeps at most ``q_budget`` tokens, the passage the rest of
``max_length``, cut at its end; then the template adds the special tokens.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from tokenizers import Encoding, Tokenizer

from vaultsync.models import cache
from vaultsync.models.compact_tokenizer import CompactTokenizer, mismatches, write_unigram_data
from vaultsync.models.file_array import crc32_file, regular_file
from vaultsync.models.manifest import sha256_file
from vaultsync.settings import cache_root

_FORMAT = 1
_CHECK_PAIRS = (("how do we rotate keys?", "Rotate the signing keys every 90 days."),
                ("Wie verhindern wir doppelte Abbuchungen?", "Idempotency keys stop double charges."),
                ("データベース", "The <s> database </s> credentials."), ("x", ""))


class PairTokenizer(Protocol):
    """Token and segment ids of (query, passage) pairs; ``pad_id``, ``specials`` (tokens a pair adds)
    and ``max_length`` (the tokenizer's own truncation limit, or None)."""

    pad_id: int
    specials: int
    max_length: int | None

    def pairs(self, query: str, passages: Sequence[str], q_budget: int,
              max_length: int) -> list[tuple[list[int], list[int]]]: ...


class RustPairs:
    """Pairs through ``tokenizers``: its template (``post_process``) and its segment ids."""

    def __init__(self, tok: Tokenizer) -> None:
        self._tok = tok
        self.max_length = int((tok.truncation or {}).get("max_length") or 0) or None
        self.pad_id = _pad_id(tok)
        tok.no_truncation()
        tok.no_padding()
        self.specials = tok.num_special_tokens_to_add(True)

    def pairs(self, query: str, passages: Sequence[str], q_budget: int,
              max_length: int) -> list[tuple[list[int], list[int]]]:
        q = self._tok.encode(query, add_special_tokens=False)
        _truncate(q, q_budget)
        p_budget = max(1, max_length - self.specials - len(q.ids))
        rows = []
        for enc in self._tok.encode_batch(list(passages), add_special_tokens=False):
            _truncate(enc, p_budget)
            pair = self._tok.post_process(q, enc, add_special_tokens=True)
            rows.append((list(pair.ids), list(pair.type_ids)))
        return rows


class CompactPairs:
    """Pairs through :class:`CompactTokenizer` with the XLM-R template ``<s> A </s></s> B </s>``."""

    specials = 4

    def __init__(self, tok: CompactTokenizer, pad_id: int, max_length: int | None) -> None:
        self._tok, self.pad_id, self.max_length = tok, pad_id, max_length

    def pairs(self, query: str, passages: Sequence[str], q_budget: int,
              max_length: int) -> list[tuple[list[int], list[int]]]:
        bos, eos = self._tok.bos_id, self._tok.eos_id
        q = self._tok.encode(query, add_special_tokens=False)[:q_budget]
        p_budget = max(1, max_length - self.specials - len(q))
        rows = []
        for p in self._tok.encode_batch(passages, add_special_tokens=False):
            ids = [bos, *q, eos, eos, *p[:p_budget], eos]
            rows.append((ids, [0] * len(ids)))
        return rows


def load(tokenizer_json: Path, cache_dir: str | os.PathLike[str] | None = None) -> PairTokenizer:
    """The pair tokenizer of a cross-encoder's ``tokenizer.json``: the compact one when a check
    (now, or cached from an earlier process) showed it agrees with ``tokenizers``, else ``tokenizers``.

    Raises:
        Exception: whatever ``tokenizers`` raises for an unreadable ``tokenizer.json``.
    """
    folder = cache_root(cache_dir) / "models" / "pair-tokenizers" / sha256_file(tokenizer_json)[:12]
    try:
        return _open(folder)
    except Exception:  # noqa: BLE001 - missing or damaged: check again
        pass
    tok = Tokenizer.from_file(str(tokenizer_json))
    rust = RustPairs(tok)  # (turns the tokenizer's own truncation off: the check compares whole texts)
    try:
        with cache.build_lock(folder), cache.staging(folder) as tmp:
            write_unigram_data(tokenizer_json, tmp / "unigram.npz")
            compact = CompactPairs(CompactTokenizer(tmp / "unigram.npz"), rust.pad_id, rust.max_length)
            if rust.specials != CompactPairs.specials or mismatches(compact._tok, tok) or any(
                    rust.pairs(q, [p], budget, limit) != compact.pairs(q, [p], budget, limit)
                    for q, p in _CHECK_PAIRS for budget, limit in ((3, 9), (8, 32), (512, 512))):
                raise ValueError("the compact tokenizer does not agree")
            (tmp / "pairs.json").write_text(json.dumps({
                "format": _FORMAT, "pad_id": rust.pad_id, "max_length": rust.max_length,
                "crc32": crc32_file(tmp / "unigram.npz")}), encoding="utf-8")
        return _open(folder)
    except Exception:  # noqa: BLE001 - no agreement, or an unwritable cache: tokenizers
        return rust


def _open(folder: Path) -> CompactPairs:
    """The checked compact pair tokenizer of ``folder``. Raises (``ValueError`` and others) when a
    file is missing, damaged (its CRC-32 differs from the one written with it) or malformed."""
    meta: dict[str, Any] = json.loads(regular_file(folder / "pairs.json").read_text(encoding="utf-8"))
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise ValueError("unknown layout")
    pad_id, limit = meta["pad_id"], meta["max_length"]
    if type(pad_id) is not int or not (limit is None or (type(limit) is int and limit > 0)):
        raise ValueError("malformed pad id or length limit")
    if crc32_file(folder / "unigram.npz") != meta["crc32"]:
        raise ValueError("unigram.npz changed after it was checked")
    return CompactPairs(CompactTokenizer(folder / "unigram.npz"), pad_id, limit)


def _truncate(enc: Encoding, n: int) -> None:
    if len(enc.ids) > n:
        enc.truncate(n)


def _pad_id(tok: Tokenizer) -> int:
    padding = tok.padding or {}
    if "pad_id" in padding:
        return int(padding["pad_id"])
    for name in ("<pad>", "[PAD]", "<|pad|>"):
        idx = tok.token_to_id(name)
        if idx is not None:
            return idx
    return 0
