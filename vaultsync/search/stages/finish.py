"""Finish: importance/recency blend, at most ``per_note`` chunks per note, the relevance floor and
adaptive cut, then the top k within the budget.

The blend is :func:`vaultsync.search.scoring.blend` over the ranked chunks' relevance
(``rank_by: relevance``, when no reranker ran) or their stage scores; the
floor is :func:`vaultsync.search.floor.relevance_cut`; the budget cut is
:func:`vaultsync.search.budget.cut` over the chunks' token counts (counted at index time).
A hit's links leave out notes the lifecycle filters hide.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from vaultsync.search import budget, scoring
from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.floor import relevance_cut
from vaultsync.search.results import Hit
from vaultsync.search.rows import note_links


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
    for i in sorted(range(len(ids)), key=lambda i: (-final[i], i)):
        row = rows[ids[i]]
        if per_note.get(row["path"], 0) >= opts.per_note:
            continue
        per_note[row["path"]] = per_note.get(row["path"], 0) + 1
        cands.traced(ids[i])["final"] = {"rank": len(chosen) + 1, "score": round(final[i], 4)}
        chosen.append(_hit(ctx, row, final[i], cands.trace[ids[i]], cands.relevance.get(ids[i])))
        if len(chosen) >= opts.top_k * 3:
            break
    kept, rejected = relevance_cut(chosen, opts.min_relevance, opts.relative_cut)
    return replace(cands, hits=budget.cut(kept, [h.tokens for h in kept], opts.budget, opts.top_k),
                   best_rejected=rejected)


def _hit(ctx: Context, row: dict[str, Any], score: float, trace: dict[str, dict[str, Any]],
         relevance: float | None) -> Hit:
    return Hit(row["id"], row["path"], row["title"], row["heading"], row["text"], round(score, 4), row["start"],
               row["end"], row["blocks"], note_links(ctx.index.db, row["path"], ctx.excluded), tokens=row["tokens"],
               trace=trace, relevance=None if relevance is None else round(relevance, 4),
               memory_id=row["memory_id"], type=row["type"], status=row["status"], confidence=row["confidence"],
               created=row["created"], expires=row["expires"])
