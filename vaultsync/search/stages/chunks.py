"""Chunks: each candidate note's best chunks, ranked by the note's score.

A note's best chunk carries the note's fused score and its second-best one
``second_chunk`` of it; a note's chunks are ordered by fused chunk evidence, else by
cosine with the query's primary embedding. A successor standing in for a superseded note
(:mod:`.supersede`) shows the chunks that replaced the passage the query found: those under
the old best chunk's heading first (its Decision for the old Decision), then by cosine with
the query plus with that chunk, not by its own incidental evidence. A note a query of nothing but
``memory_id`` names (:mod:`vaultsync.search.named`), or its successor, shows its chunks from its start, or from
the heading a ``[[note#heading]]`` of the query names. The top
:attr:`Context.shortlist` chunks go on.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.rows import chunk_rows
from vaultsync.vault.resolve import id_key


def chunks(ctx: Context, cands: Candidates) -> Candidates:
    """Fill ``ranked`` and ``rows``; trace each chunk's note rank, weights, graph hop and supersession."""
    qvec = cands.query_vectors.get("dense")
    from_start = cands.named_first() if cands.names_only else {}
    ranked: list[tuple[int, float]] = []
    for rank, (path, score) in enumerate(sorted(cands.notes.items(), key=lambda kv: -kv[1])):
        best = _from_heading(ctx, path, cands.named_headings.get(path)) if path in from_start else (
            _replacing_chunks(ctx, path, cands, qvec) or _best_chunks(ctx, path, cands.chunk_scores, qvec))
        for i, rowid in enumerate(best if path in from_start else best[:2]):  # a named note comes whole
            ranked.append((rowid, score * (1.0 if i == 0 else ctx.opts.second_chunk)))
            entry = cands.traced(rowid)
            entry["fusion"] = {"note_rank": rank + 1, "score": round(score, 5),
                               **{f"w_{k}": round(v, 3) for k, v in cands.weights.items()}}
            if path in cands.graph_added:
                entry["graph"] = cands.graph_added[path]
            if path in cands.replaced:
                entry["supersedes"] = {"replaces": cands.replaced[path]}
    ranked.sort(key=lambda kv: -kv[1])
    ranked = ranked[:ctx.shortlist]
    return replace(cands, ranked=ranked, rows=chunk_rows(ctx.index.db, [r for r, _ in ranked]))


def _from_heading(ctx: Context, path: str, heading: str | None) -> list[int]:
    """A named note's chunks in document order, from the first under ``heading`` (case-folded: a
    ``[[note#heading]]`` of the query) when one is, else from its start."""
    rowids = ctx.index.note_chunks(path)
    if not heading:
        return rowids
    rows = chunk_rows(ctx.index.db, rowids)
    at = next((i for i, r in enumerate(rowids)
               if heading in (id_key(h) for h in rows[r]["heading"].split(" > "))), 0)
    return rowids[at:] + rowids[:at]


def _replacing_chunks(ctx: Context, path: str, cands: Candidates, qvec: np.ndarray | None) -> list[int]:
    """A successor's chunks, those under the heading of the superseded note's best chunk first (an ADR's
    Decision for the old Decision: templates share headings), then by cosine with the query plus with
    that chunk; [] when ``path`` replaces no note here or a vector is missing."""
    old, vectors = cands.replaced.get(path), ctx.index.vectors
    if old is None or qvec is None or vectors is None:
        return []
    old_best = cands.best_chunk(ctx.index.note_chunks(old))
    old_vector = None if old_best is None else vectors.vector(old_best)
    if old_best is None or old_vector is None:
        return []
    rowids = ctx.index.note_chunks(path)
    rows = chunk_rows(ctx.index.db, [old_best, *rowids])
    heading = rows[old_best]["heading"].casefold()
    sims = vectors.similarity(np.asarray(qvec, np.float32) + old_vector, rowids, exact=False)
    return sorted(rowids, key=lambda r: (rows[r]["heading"].casefold() != heading, -sims.get(r, -1e9)))


def _best_chunks(ctx: Context, path: str, chunk_scores: dict[int, float], qvec: np.ndarray | None) -> list[int]:
    """A note's chunks, best first: by fused chunk evidence, else by similarity to the query."""
    rowids = ctx.index.note_chunks(path)
    scored = [r for r in rowids if r in chunk_scores]
    scored.sort(key=lambda r: -chunk_scores[r])
    if len(scored) >= 2 or not rowids:
        return scored
    rest = [r for r in rowids if r not in chunk_scores]
    vectors = ctx.index.vectors
    if qvec is not None and vectors is not None:
        sims = vectors.similarity(qvec, rest, exact=False)
        rest.sort(key=lambda r: -sims.get(r, -1.0))
    return scored + rest
