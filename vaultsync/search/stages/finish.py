"""Finish: importance/recency blend, at most ``per_note`` chunks per note, the top k within the budget,
then the relevance floor and adaptive cut over those (the floor judges the hits an agent would get),
then the best blocks of what is left (:mod:`vaultsync.search.deliver`, unless ``blocks`` is off).
A note the query names by ``memory_id`` (:mod:`vaultsync.search.named`), or its successor, leads, whole.

The blend is :func:`vaultsync.search.scoring.blend` over the ranked chunks' relevance
(``rank_by: relevance``, when no reranker ran) or their stage scores; a chunk holding only its
note's name goes below the chunks with content that are more relevant; the
floor and the budget cut are :func:`vaultsync.search.floor.answer` (the chunks' token counts were
counted at index time).
A hit's links leave out notes the lifecycle filters hide.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from vaultsync.search import scoring
from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.deliver import deliver
from vaultsync.search.floor import answer
from vaultsync.search.results import Hit
from vaultsync.search.rows import note_links
from vaultsync.search.stages.relevance import name_only


def finish(ctx: Context, cands: Candidates) -> Candidates:
    """Fill ``hits`` from ``ranked``; trace each hit's final rank and score."""
    opts, rows = ctx.opts, cands.rows
    today = opts.today or dt.datetime.now(dt.timezone.utc).date()
    ids = [r for r, _ in cands.ranked]
    by_relevance = opts.rank_by == "relevance" and cands.rerank is None and cands.relevance
    scores = [cands.relevance[r] if by_relevance else score for r, score in cands.ranked]
    final = scoring.blend(scores, [rows[r]["importance"] for r in ids],
                          [rows[r]["last_validated"] or rows[r]["created"] for r in ids], today,
                          opts.w_importance, opts.w_recency, opts.half_life_days)
    per_note: dict[str, int] = {}
    chosen: list[Hit] = []
    order = sorted(range(len(ids)), key=lambda i: (-final[i], i))
    if not by_relevance:  # (by relevance, it is scaled already)
        order = _name_only_after_content(order, ids, rows, cands.relevance)
    if first := cands.named_first():  # a note the query names by memory_id leads, whatever the blend
        order = _named_first(order, [rows[r]["path"] for r in ids], first, every=cands.names_only)
    whole = set(first or ()) if cands.names_only else set()  # a note asked for by name alone comes whole
    for i in order:
        row = rows[ids[i]]
        if per_note.get(row["path"], 0) >= opts.per_note and row["path"] not in whole:
            continue
        per_note[row["path"]] = per_note.get(row["path"], 0) + 1
        cands.traced(ids[i])["final"] = {"rank": len(chosen) + 1, "score": round(final[i], 4)}
        chosen.append(_hit(ctx, row, final[i], cands.trace[ids[i]], cands.relevance.get(ids[i])))
        if len(chosen) >= opts.top_k * 3:
            break
    kept, rejected = answer(chosen, opts.min_relevance, opts.relative_cut, opts.budget, opts.top_k)
    if opts.blocks:  # a note asked for by name comes whole
        kept = deliver(ctx.index.db, kept, cands.query_vectors.get("dense"), ctx.query.text, set(first or ()))
    return replace(cands, hits=kept, best_rejected=rejected)


def _named_first(order: list[int], paths: list[str], first: dict[str, int], every: bool = False) -> list[int]:
    """``order`` with the best chunk of each note in ``first`` (path → place) moved to the front, in
    that place's order; its other chunks, and every other chunk, keep their order. ``every`` (a query of
    nothing but names): all the chunks of those notes lead, each note's first ones, then each note's second
    ones, so no other note's chunk comes between them."""
    nth: dict[int, int] = {}  # a named note's chunk → how many of its note's come before it
    seen: dict[str, int] = {}
    for i in order:
        if paths[i] in first and (every or paths[i] not in seen):
            nth[i] = seen[paths[i]] = seen.get(paths[i], -1) + 1
    front = sorted(nth, key=lambda i: (nth[i], first[paths[i]]))
    lifted = set(front)
    return front + [i for i in order if i not in lifted]


def _name_only_after_content(order: list[int], ids: list[int], rows: dict[int, dict[str, Any]],
                             relevance: dict[int, float]) -> list[int]:
    """``order`` (positions into ``ids``) with each chunk that holds only its note's name moved below
    every chunk with content that is more relevant (without relevance: below every one), never up."""
    flagged = {i for i in order if name_only(rows[ids[i]])}
    if not flagged:
        return order
    key: dict[int, float] = {}
    for pos, i in enumerate(order):
        if i not in flagged:
            key[i] = pos
            continue
        rel = relevance.get(ids[i])
        better = [p for p, j in enumerate(order) if j not in flagged and (rel is None or relevance.get(ids[j], 0.0) > rel)]
        key[i] = max([pos, *better]) + 0.5
    return sorted(order, key=lambda i: key[i])  # stable: name-only chunks keep their order among themselves


def _hit(ctx: Context, row: dict[str, Any], score: float, trace: dict[str, dict[str, Any]],
         relevance: float | None) -> Hit:
    return Hit(row["id"], row["path"], row["title"], row["heading"], row["text"], round(score, 4), row["start"],
               row["end"], row["blocks"], note_links(ctx.index.db, row["path"], ctx.excluded), tokens=row["tokens"],
               trace=trace, relevance=None if relevance is None else round(relevance, 4),
               memory_id=row["memory_id"], type=row["type"], status=row["status"], confidence=row["confidence"],
               created=row["created"], expires=row["expires"], replaces=trace.get("supersedes", {}).get("replaces"),
               lifted=ctx.lifted(row["path"]))
