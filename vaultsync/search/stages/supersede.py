"""Supersede: a superseded note among the fused notes is swapped for the note that supersedes it.

The successor takes the superseded note's place and score (once, and only where it is
allowed and not already a candidate); lifecycle exclusions name the successor
(:mod:`vaultsync.search.lifecycle`, followed to the end of the chain).
"""

from __future__ import annotations

from dataclasses import replace

from vaultsync.search.candidates import Candidates, Context


def supersede(ctx: Context, cands: Candidates) -> Candidates:
    """Rewrite ``notes`` and fill ``replaced`` (successor → superseded note)."""
    notes, allowed = cands.notes, ctx.allowed
    replaced: dict[str, str] = {}
    out: dict[str, float] = {}
    for path, score in notes.items():
        successor = ctx.excluded.replacement.get(path)
        if successor is None:
            out.setdefault(path, score)
        elif successor not in notes and (allowed is None or successor in allowed) and successor not in out:
            out[successor] = score
            replaced[successor] = path
    return replace(cands, notes=out, replaced=replaced)
