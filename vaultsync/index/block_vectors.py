"""Block vectors: one embedding per block of each chunk, kept beside the chunk (ADR-0116).

A block is a paragraph, a list, a fence or a conversation's turn (:attr:`Chunk.spans`). Its vector
comes from the primary embedder's pass over the whole chunk (late chunking,
:meth:`vaultsync.models.embedder.Embedder.embed_with_blocks`), so a sync that embeds a chunk gets its
block vectors at no further encoder cost.
Search scores them to deliver a hit's best blocks rather than all of it
(:mod:`vaultsync.search.deliver`). A chunk whose vector came from a cache takes its block row from the
block row cache beside the embedding cache where it is there (ADR-0121), else it is encoded once more.

Rows (table ``blocks``, written in the sync's one transaction by :meth:`SqliteStore.apply`): ``id`` (the chunk's), ``path``,
``hash`` (the chunk's content hash), ``spans`` (JSON ``[[start, end, tokens, [block ids]], ...]``:
character offsets in the chunk's text and the embedder tokenizer's count) and ``vectors``: per block
one float32 scale then ``dim`` int8 codes (value ≈ code × scale; ``dim + 4`` bytes per block).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from vaultsync.index.chunking import Chunk, block_key

Row = tuple[str, bytes]  # (spans JSON, vectors blob)
Key = tuple[str, tuple[tuple[int, int, tuple[str, ...]], ...]]  # (content hash, spans with block ids): block_key


class BlockEmbedder(Protocol):
    """What block vectors need from the primary embedder."""

    def embed_with_blocks(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]],
                          ) -> tuple[np.ndarray, list[np.ndarray]]: ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]: ...


class RowCache(Protocol):
    """Block rows by :func:`cache_key` (:class:`vaultsync.index.embedding_cache.BlockRowCache`)."""

    def get(self, keys: Sequence[str]) -> dict[str, Row]: ...


CACHE_ERRORS = (ImportError, OSError, RuntimeError, ValueError)  # no LanceDB, or a damaged or unwritable one: no cache


def cache_key(model_id: str, key: Key) -> str:
    """``model id | content hash | digest of the spans and their block ids``: one block row's cache key."""
    spans = json.dumps([[s, e, list(ids)] for s, e, ids in key[1]], ensure_ascii=False)
    return f"{model_id}|{key[0]}|{hashlib.blake2b(spans.encode(), digest_size=12).hexdigest()}"


def embed_spans(chunk: Chunk) -> list[tuple[int, int]]:
    """The chunk's block spans as offsets in its ``embed_text`` (its title and heading come first)."""
    if not chunk.spans or not chunk.embed_text.endswith(chunk.text):
        return []
    shift = len(chunk.embed_text) - len(chunk.text)
    return [(shift + start, shift + end) for start, end, _ in chunk.spans]


def encode(vectors: np.ndarray) -> bytes:
    """float32 ``[n, dim]`` → bytes: per row a float32 scale and ``dim`` int8 codes."""
    scales = np.maximum(np.abs(vectors).max(axis=1, initial=0.0), 1e-12) / 127.0
    codes = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
    rows = np.zeros((len(vectors), 4 + vectors.shape[1]), np.uint8)
    rows[:, :4] = scales.astype("<f4").view(np.uint8).reshape(-1, 4)
    rows[:, 4:] = codes.view(np.uint8)
    return rows.tobytes()


def decode(blob: bytes, dim: int) -> np.ndarray:
    """Inverse of :func:`encode` → float32 ``[n, dim]``. Raises ``ValueError`` on a blob of another width."""
    if len(blob) % (dim + 4):
        raise ValueError(f"block vectors of {len(blob)} bytes are not rows of {dim + 4}")
    rows = np.frombuffer(blob, np.uint8).reshape(-1, dim + 4)
    scales = rows[:, :4].copy().view("<f4").reshape(-1)
    return rows[:, 4:].view(np.int8).astype(np.float32) * scales[:, None]


def rows_for(chunks: Sequence[Chunk], db: sqlite3.Connection, embedder: BlockEmbedder,
             fresh: dict[str, tuple[list[tuple[int, int]], np.ndarray]],
             open_cache: Callable[[], RowCache | None] | None = None,
             lookup_min: int = 0) -> tuple[dict[Key, Row], dict[str, Row]]:
    """The block row of every chunk with blocks, by :func:`key`: kept in the index (same hash, spans and
    block ids), else from the pass that embedded the chunk in this sync (``fresh``: hash → (the spans
    it pooled, in ``embed_text``; the vectors)), else from the row cache (``open_cache``, opened only when
    ``lookup_min`` or more rows would be encoded: importing LanceDB costs more than encoding a few),
    else encoded now.

    Returns (the rows by key, the rows made here by :func:`cache_key`): the caller merges the latter into
    the row cache once the index has committed them, so a small change is searchable before LanceDB is
    imported (ADR-0006); a row cache that cannot be opened is left out."""
    todo = {block_key(c): c for c in chunks if embed_spans(c)}
    rows: dict[Key, Row] = {}
    hashes = sorted({h for h, _ in todo})
    for start in range(0, len(hashes), 500):
        part = hashes[start:start + 500]
        for h, stored, blob in db.execute(
                f"SELECT hash, spans, vectors FROM blocks WHERE hash IN ({','.join('?' * len(part))})", part):
            found = (h, tuple((s, e, tuple(ids)) for s, e, _, ids in json.loads(stored)))
            if found in todo:
                rows.setdefault(found, (stored, blob))
    made = [k for k in todo if k not in rows]
    vectors = {k: fresh[k[0]][1] for k in made if k[0] in fresh and fresh[k[0]][0] == embed_spans(todo[k])}
    model_id = str(getattr(embedder, "model_id", ""))
    missing = [k for k in made if k not in vectors]
    if missing and len(missing) >= lookup_min and open_cache is not None and model_id:
        try:
            if (cache := open_cache()) is not None:
                keyed = {cache_key(model_id, k): k for k in missing}
                rows.update((keyed[ck], row) for ck, row in cache.get(list(keyed)).items())
                made = [k for k in made if k not in rows]
        except CACHE_ERRORS:
            pass
    if missing := [k for k in made if k not in vectors]:
        _, more = embedder.embed_with_blocks([todo[k].embed_text for k in missing],
                                             [embed_spans(todo[k]) for k in missing])
        vectors.update(zip(missing, more, strict=True))
    counts = iter(embedder.count_tokens([todo[k].text[s:e] for k in made for s, e, _ in todo[k].spans]))
    for k in made:
        meta = [[s, e, next(counts), list(ids)] for s, e, ids in todo[k].spans]
        rows[k] = (json.dumps(meta, ensure_ascii=False), encode(vectors[k]))
    return rows, {cache_key(model_id, k): rows[k] for k in made} if model_id else {}


def read(db: sqlite3.Connection, ids: Sequence[str], dim: int) -> dict[str, tuple[list[Any], np.ndarray]]:
    """Chunk id → (spans ``[[start, end, tokens, [block ids]], ...]``, float32 ``[n, dim]`` vectors) for the
    chunks of ``ids`` that have block rows of width ``dim``."""
    out: dict[str, tuple[list[Any], np.ndarray]] = {}
    if not ids:
        return out
    try:
        found = db.execute(f"SELECT id, spans, vectors FROM blocks WHERE id IN ({','.join('?' * len(ids))})",
                           list(ids)).fetchall()
    except sqlite3.OperationalError:  # an index of an older schema, read while the sync replaces it
        return out
    for cid, spans, blob in found:
        try:
            parsed, vectors = json.loads(spans), decode(blob, dim)
        except (ValueError, TypeError):
            continue
        if _well_formed(parsed, len(vectors)):
            out[cid] = (parsed, vectors)
    return out


def _well_formed(spans: Any, rows: int) -> bool:
    """Spans as :func:`rows_for` writes them, one per vector row: ``[start, end, tokens, [ids]]`` with
    ``0 <= start <= end`` and whole numbers. An index pulled from a team's storage is written by whoever
    can publish there: a row of another shape is skipped (its hit comes whole), never a traceback."""
    return isinstance(spans, list) and len(spans) == rows and all(
        isinstance(s, list) and len(s) == 4 and all(type(v) is int for v in s[:3]) and 0 <= s[0] <= s[1]
        and s[2] >= 0 and isinstance(s[3], list) and all(isinstance(i, str) for i in s[3]) for s in spans)
