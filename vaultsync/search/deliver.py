"""Deliver the best blocks of the hits, not the whole chunks (ADR-0116).

A chunk of ~100 tokens holds a few blocks (paragraphs, lists, fences, a conversation's turns), and
often one of them answers. Every block of the hits gets a score::

    cos(query vector, block vector) + W_WORDS × share of the query's words (4+ letters) it holds
                                    − W_RANK × its hit's rank (0-based)

from the block vectors a sync stores (late chunking, :mod:`vaultsync.index.block_vectors`), and the
best ``MAX_BLOCKS`` are delivered, the 4th and 5th only within ``MARGIN`` of the best. A hit keeps
its chosen blocks in their order in the note (text, tokens and block ids narrowed to them; ``left_out``
counts the others, and ``…`` stands between blocks that were not adjacent). A hit with none chosen
keeps its place with no text: the note matched, and its identity, relevance and links cost the
agent a line, not a chunk (dropping it would lose LoCoMo's note recall@5 of the delivered hits, 0.88
→ 0.84). The weights were read on every 4th LoCoMo question and checked on the other three quarters
(docs/eval.md, "Blocks delivered, not whole chunks"): the same turn recall@5 in ~55 % of the tokens.

Hits without block rows (an index without the primary embedder) are delivered whole and take no place.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Collection
from dataclasses import replace

import numpy as np

from vaultsync.index.block_vectors import read
from vaultsync.index.format import fold
from vaultsync.search.results import ELISION, Hit

W_RANK, W_WORDS = 0.03, 0.1
MAX_BLOCKS, ALWAYS, MARGIN = 5, 3, 0.12
_WORD = re.compile(r"\w{4,}")


def deliver(db: sqlite3.Connection, hits: list[Hit], query_vector: np.ndarray | None, query: str,
            whole: Collection[str] = ()) -> list[Hit]:
    """The hits narrowed to their best blocks for ``query`` (``query_vector``: the primary embedder's,
    float32 ``[dim]``; None, or no block rows: the hits unchanged). Keeps every hit, in its place; the
    hits of the notes in ``whole`` (paths: the notes a query names) stay whole and take no place."""
    if query_vector is None or not hits:
        return hits
    rows = read(db, [h.chunk_id for h in hits if h.path not in whole], len(query_vector))
    words = set(_WORD.findall(fold(query)))
    scored: list[tuple[float, int, int]] = []  # (score, hit, block)
    for rank, h in enumerate(hits):
        if h.chunk_id not in rows:
            continue
        spans, vectors = rows[h.chunk_id]
        cosine = vectors @ np.asarray(query_vector, np.float32)
        for b, (start, end, *_) in enumerate(spans):
            held = len(words & set(_WORD.findall(fold(h.text[start:end])))) / len(words) if words else 0.0
            scored.append((float(cosine[b]) + W_WORDS * held - W_RANK * rank, rank, b))
    if not scored:
        return hits
    scored.sort(key=lambda s: -s[0])
    best = scored[0][0]
    chosen: dict[int, list[int]] = {}
    for k, (score, rank, b) in enumerate(scored[:MAX_BLOCKS]):
        if k < ALWAYS or score >= best - MARGIN:
            chosen.setdefault(rank, []).append(b)
    return [_narrowed(h, rows[h.chunk_id][0], sorted(chosen.get(rank, []))) if h.chunk_id in rows else h
            for rank, h in enumerate(hits)]


def _narrowed(hit: Hit, spans: list[list], chosen: list[int]) -> Hit:  # type: ignore[type-arg]
    """``hit`` holding only its blocks ``chosen`` (indices into ``spans``, ascending; none: no text)."""
    if len(chosen) == len(spans):
        return hit
    parts: list[str] = []
    for i, b in enumerate(chosen):
        if i:
            parts.append("\n\n" if b == chosen[i - 1] + 1 else ELISION)
        parts.append(hit.text[spans[b][0]:spans[b][1]])
    gaps = parts.count(ELISION)
    ids = list(dict.fromkeys(block_id for b in chosen for block_id in spans[b][3]))
    return replace(hit, text="".join(parts), tokens=sum(int(spans[b][2]) for b in chosen) + gaps, blocks=ids,
                   left_out=len(spans) - len(chosen))
