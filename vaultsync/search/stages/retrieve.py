"""Retrieve: BM25 and every dense leg in parallel, at chunk and at note level, within the allowed notes.

The legs run in threads (onnxruntime, numpy and SQLite release the GIL). Lifecycle
exclusions and the type/tag/scope filters apply to every leg before anything is ranked.
Note level: BM25 over whole notes (notes found only by chunk BM25, e.g. by a short
term such as "CI", after them); a dense leg scores a note by its best chunk or name vector.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from vaultsync.search.bm25 import Candidate, bm25_candidates, bm25_notes
from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.rows import chunk_paths
from vaultsync.search.weights import common_terms, leg_weights


def retrieve(ctx: Context, cands: Candidates) -> Candidates:
    """Fill ``query_vectors`` (unless given: a second pass reuses them), ``chunk_legs``, ``note_legs``
    and ``weights``."""
    opts, legs, use_bm25 = ctx.opts, ctx.legs, "bm25" in ctx.opts.legs
    with ThreadPoolExecutor(max_workers=3) as pool:
        qfuts = {name: pool.submit(leg.embedder.embed_queries, [ctx.query.text])
                 for name, leg in legs if name not in cands.query_vectors}
        notes_fut = pool.submit(_bm25_notes, ctx, common_terms(ctx.index.db, ctx.query)) if use_bm25 else None
        bm25_chunks = _bm25_chunks(ctx, common_terms(ctx.index.db, ctx.query, "chunks")) if use_bm25 else []
        bm25_note_list = notes_fut.result() if notes_fut is not None else []
        weights = leg_weights(ctx.index.db, ctx.query, opts.fusion, [name for name, _ in legs], opts) if use_bm25 \
            else {name: 1.0 for name, _ in legs}
        qvecs = {**cands.query_vectors, **{name: np.asarray(f.result()[0], dtype=np.float32)
                                           for name, f in qfuts.items()}}
    deep = opts.candidates * 4  # deep: many notes get a best-chunk score; deeper names cannot reach fusion
    dense_chunks = {name: leg.top_chunks(qvecs[name], deep, ctx.allowed) for name, leg in legs}
    chunk_legs = {"bm25": bm25_chunks, **dense_chunks}
    for name, found in chunk_legs.items():
        for c in found:
            cands.traced(c.rowid)[name] = {"rank": c.rank + 1, "score": round(c.score, 4)}
    paths = chunk_paths(ctx.index.db, [c.rowid for found in chunk_legs.values() for c in found])
    bm25_note_scores = dict(bm25_note_list)
    floor = min(bm25_note_scores.values(), default=0.0)
    for c in bm25_chunks:
        bm25_note_scores.setdefault(paths[c.rowid], floor)
    note_legs = {"bm25": bm25_note_scores} | {
        name: leg.best_notes(qvecs[name], dense_chunks[name], paths, ctx.allowed, opts.scope, opts.title_vectors, deep,
                             opts.name_weight)
        for name, leg in legs}
    return replace(cands, query_vectors=qvecs, chunk_legs=chunk_legs, note_legs=note_legs, weights=weights)


def _bm25_chunks(ctx: Context, skip: frozenset[str]) -> list[Candidate]:
    """Chunk BM25 in the scope, then the allowed notes only (fetched deeper when filtered), re-ranked."""
    opts, allowed = ctx.opts, ctx.allowed
    restrict, params = "", ()
    if opts.scope:
        restrict, params = "substr(c.path, 1, ?) = ?", (len(opts.scope), opts.scope)
    raw = bm25_candidates(ctx.index.db, ctx.query, opts.candidates * 3 if allowed is not None else opts.candidates,
                          restrict, params, skip)
    if allowed is not None:
        paths = chunk_paths(ctx.index.db, [c.rowid for c in raw])
        raw = [c for c in raw if paths.get(c.rowid) in allowed]
    return [Candidate(c.rowid, c.score, rank) for rank, c in enumerate(raw[:opts.candidates])]


def _bm25_notes(ctx: Context, skip: frozenset[str]) -> list[tuple[str, float]]:
    """Whole-note BM25 (on its own connection) in the scope and the allowed notes."""
    opts, allowed = ctx.opts, ctx.allowed
    raw = bm25_notes(ctx.index.notes_db, ctx.query,
                     opts.candidates * 3 if (allowed is not None or opts.scope) else opts.candidates, skip)
    if opts.scope:
        raw = [(p, s) for p, s in raw if p.startswith(opts.scope)]
    if allowed is not None:
        raw = [(p, s) for p, s in raw if p in allowed]
    return raw[:opts.candidates]
