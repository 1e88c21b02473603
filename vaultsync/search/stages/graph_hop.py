"""Graph hop: notes linked to or from the best fused notes join the candidates, with a decayed score.

The top ``graph_seeds`` notes seed a walk of up to ``graph_hops`` WikiLinks in both
directions (:func:`vaultsync.search.graph.neighbours`); a neighbour gets its seed's score
× ``graph_decay`` per hop and is added only when it is allowed and not hidden.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vaultsync.search import graph
from vaultsync.search.candidates import Candidates, Context


def graph_hop(ctx: Context, cands: Candidates) -> Candidates:
    """Add neighbours to ``notes`` and fill ``graph_added``."""
    opts = ctx.opts
    if opts.graph_hops <= 0 or not cands.notes:
        return cands
    notes = dict(cands.notes)
    added: dict[str, dict[str, Any]] = {}
    seeds = dict(list(notes.items())[:opts.graph_seeds])
    for path, (score, seed, depth) in graph.neighbours(ctx.index.db, seeds, opts.graph_hops, opts.graph_decay).items():
        if path not in notes and (ctx.allowed is None or path in ctx.allowed) and path not in ctx.excluded:
            notes[path] = score
            added[path] = {"from": seed, "depth": depth, "score": round(score, 5)}
    return replace(cands, notes=notes, graph_added=added)
