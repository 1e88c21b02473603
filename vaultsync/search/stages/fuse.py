"""Fuse: the legs' note scores into one note ranking, and their chunk scores into one, with the query's
leg weights.

``convex`` (the default) is a convex combination of min-max normalised scores (Bruch et al.
2023) over each leg's top ``candidates`` notes; ``rrf`` and ``rrf-adaptive`` use Reciprocal Rank
Fusion with k = ``rrf_k`` (Cormack et al. 2009). See :mod:`vaultsync.search.fusion`. The notes the
query names by ``memory_id``, WikiLink or file name (:mod:`vaultsync.search.named`) then go first, in the query's order,
where the filters allow them.
"""

from __future__ import annotations

from dataclasses import replace

from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.fusion import convex, rrf
from vaultsync.search.named import link_headings, named_notes


def fuse(ctx: Context, cands: Candidates) -> Candidates:
    """Fill ``notes`` (the top :attr:`Context.shortlist` notes) and ``chunk_scores``."""
    opts, weights = ctx.opts, cands.weights
    if opts.fusion == "convex":
        notes = convex({k: dict(list(v.items())[:opts.candidates]) for k, v in cands.note_legs.items() if v}, weights)
        chunk_scores = convex({k: {c.rowid: c.score for c in v} for k, v in cands.chunk_legs.items()}, weights)
    else:
        notes = rrf({k: list(v) for k, v in cands.note_legs.items() if v}, weights, opts.rrf_k)
        chunk_scores = rrf({k: [c.rowid for c in v] for k, v in cands.chunk_legs.items()}, weights, opts.rrf_k)
    notes = notes[:ctx.shortlist]
    named, names_only = named_notes(ctx.query.text, ctx.index.note_names)
    named = [p for p in named if ctx.allowed is None or p in ctx.allowed]
    if named:  # above the best fused score, in the query's order
        top = max((score for _, score in notes), default=0.0)
        lead = {p: top + (len(named) - i) * 1e-6 + 1e-6 for i, p in enumerate(named)}
        notes = [*lead.items(), *((p, score) for p, score in notes if p not in lead)]
    headings = link_headings(ctx.query.text, ctx.index.note_names) if named and "#" in ctx.query.text else {}
    return replace(cands, notes=dict(notes), chunk_scores=dict(chunk_scores), named=tuple(named),
                   names_only=names_only, named_headings=headings)
