"""Finish: importance/recency blend, at most ``per_note`` chunks per note, then the top k within the budget.

The blend is :func:`vaultsync.search.scoring.blend` over the ranked chunks' scores; the
cut is :func:`vaultsync.search.budget.cut` over the chunks' token counts (counted at index
time). A hit's links leave out notes the lifecycle filters hide.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from vaultsync.search import budget, scoring
from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.results import Hit
from vaultsync.search.rows import note_links


def finish(ctx: Context, cands: Candidates) -> Candidates:
    """Fill ``hits`` from ``ranked``; trace each hit's final rank and score."""
    opts, rows = ctx.opts, cands.rows
    today = opts.today or dt.datetime.now(dt.timezone.utc).date()
    ids = [r for r, _ in cands.ranked]
    final = scoring.blend([score for _, score in cands.ranked], [rows[r]["importance"] for r in ids],
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
        chosen.append(_hit(ctx, row, final[i], cands.trace[ids[i]]))
        if len(chosen) >= opts.top_k * 3:
            break
    return replace(cands, hits=budget.cut(chosen, [h.tokens for h in chosen], opts.budget, opts.top_k))


def _hit(ctx: Context, row: dict[str, Any], score: float, trace: dict[str, dict[str, Any]]) -> Hit:
    return Hit(row["id"], row["path"], row["title"], row["heading"], row["text"], round(score, 4), row["start"],
               row["end"], row["blocks"], note_links(ctx.index.db, row["path"], ctx.excluded), tokens=row["tokens"],
               trace=trace)
