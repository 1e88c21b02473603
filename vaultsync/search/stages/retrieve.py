"""Retrieve: BM25 and every dense leg in parallel, at chunk and at note level, within the allowed notes.

The legs run on threads the process keeps (onnxruntime, numpy, SQLite and LanceDB release the GIL;
ADR-0108). Lifecycle exclusions and the type/tag/scope filters apply to every leg before anything is ranked.
Note level: BM25 over whole notes (notes found only by chunk BM25, e.g. by a short
term such as "CI", after them); a dense leg scores a note by its best chunk or name vector.
A query in Traditional Chinese is embedded in Simplified characters (:mod:`vaultsync.search.chinese`).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace

import numpy as np

from vaultsync.search.bm25 import Candidate, bm25_candidates, bm25_notes
from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.chinese import embedding_text
from vaultsync.search.dense import DenseLeg
from vaultsync.search.rows import chunk_paths
from vaultsync.search.weights import common_terms, leg_weights

LEG_WORKERS = 8  # threads kept for the legs: a search uses 1 + its dense legs; the rest serve concurrent searches
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _leg_pool() -> ThreadPoolExecutor:
    """The process's threads for retrieval legs, started once: a pool per search started 3 threads a
    query, and each start waits for the new thread to take the GIL (~4 ms a search at 10,000 notes)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(LEG_WORKERS, thread_name_prefix="retrieve-leg")
        return _pool


def _forget_pool() -> None:
    """In a forked child: the parent's pool came without its threads; the child starts its own."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def retrieve(ctx: Context, cands: Candidates) -> Candidates:
    """Fill ``query_vectors`` (unless given: a second pass reuses them), ``chunk_legs``, ``note_legs``
    and ``weights``. Each dense leg (embedding, chunk search, name search) runs in its own thread
    while BM25 runs: with an ANN leg the searches cost about as much as BM25."""
    opts, legs, use_bm25 = ctx.opts, ctx.legs, "bm25" in ctx.opts.legs
    deep = opts.candidates * 4  # deep: many notes get a best-chunk score; deeper names cannot reach fusion
    text = embedding_text(ctx.index.db, ctx.query) if len(cands.query_vectors) < len(legs) else ctx.query.text
    pool = _leg_pool()
    dense_futs = {name: pool.submit(_dense, ctx, leg, text, cands.query_vectors.get(name), deep)
                  for name, leg in legs}
    notes_fut = pool.submit(_bm25_notes, ctx, common_terms(ctx.index.db, ctx.query)) if use_bm25 else None
    try:
        bm25_chunks = _bm25_chunks(ctx, common_terms(ctx.index.db, ctx.query, "chunks")) if use_bm25 else []
        bm25_note_list = notes_fut.result() if notes_fut is not None else []
        weights = leg_weights(ctx.index.db, ctx.query, opts.fusion, [name for name, _ in legs], opts) if use_bm25 \
            else {name: 1.0 for name, _ in legs}
        dense = {name: f.result() for name, f in dense_futs.items()}
    except BaseException:
        wait([*dense_futs.values(), *([notes_fut] if notes_fut else [])])  # a failed search leaves no leg running
        raise
    qvecs = {**cands.query_vectors, **{name: qvec for name, (qvec, _, _) in dense.items()}}
    chunk_legs = {"bm25": bm25_chunks, **{name: found for name, (_, found, _) in dense.items()}}
    for name, found in chunk_legs.items():
        for c in found:
            cands.traced(c.rowid)[name] = {"rank": c.rank + 1, "score": round(c.score, 4)}
    paths = chunk_paths(ctx.index.db, [c.rowid for found in chunk_legs.values() for c in found])
    bm25_note_scores = dict(bm25_note_list)
    floor = min(bm25_note_scores.values(), default=0.0)
    for c in bm25_chunks:
        bm25_note_scores.setdefault(paths[c.rowid], floor)
    note_legs = {"bm25": bm25_note_scores} | {
        name: leg.best_notes(chunk_legs[name], paths, dense[name][2], opts.name_weight) for name, leg in legs}
    return replace(cands, query_vectors=qvecs, chunk_legs=chunk_legs, note_legs=note_legs, weights=weights)


def _dense(ctx: Context, leg: DenseLeg, text: str, query_vector: np.ndarray | None,
           deep: int) -> tuple[np.ndarray, list[Candidate], list[tuple[str, float]]]:
    """One dense leg: the embedding of ``text`` (float32 [dim]; unless ``query_vector`` is given), its
    ``deep`` nearest chunks and, with ``title_vectors``, nearest note names, within the allowed notes."""
    if query_vector is None:
        query_vector = np.asarray(leg.embedder.embed_queries([text])[0], dtype=np.float32)
    found = leg.top_chunks(query_vector, deep, ctx.allowed)
    names = leg.top_names(query_vector, deep, ctx.allowed, ctx.opts.scope) if ctx.opts.title_vectors else []
    return query_vector, found, names


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
