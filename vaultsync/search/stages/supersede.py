"""Supersede: a superseded note among the fused notes is swapped for the note that supersedes it.

The successor takes the superseded note's place and score where it is allowed (when it is a
candidate already, it keeps the better of the two scores, so a term found only in the old note
still lifts the new one); lifecycle exclusions name the successor
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
            out[path] = max(score, out.get(path, score))
        elif (allowed is None or successor in allowed) and score > out.get(successor, notes.get(successor, -1e9)):
            out[successor] = score
            replaced[successor] = path
    return replace(cands, notes=dict(sorted(out.items(), key=lambda kv: -kv[1])), replaced=replaced)
