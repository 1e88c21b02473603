"""Supersede: a superseded note among the fused notes is swapped for the note that supersedes it.

The successor takes the superseded note's place and score where it is allowed (when it is a
candidate already, it keeps the better of the two scores, so a term found only in the old note
still lifts the new one); lifecycle exclusions name the successor
(:mod:`vaultsync.search.lifecycle`, followed to the end of the chain). A successor with nothing
written yet (every chunk holds only a name or a heading: a skeleton accepted before it was filled
in) takes no place: it would answer with a bare ``## Decision``, and the hidden report still names
the old note and its successor.
"""

from __future__ import annotations

from dataclasses import replace

from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.rows import chunk_rows
from vaultsync.search.stages.relevance import name_only


def supersede(ctx: Context, cands: Candidates) -> Candidates:
    """Rewrite ``notes`` and fill ``replaced`` (successor → superseded note)."""
    notes, allowed = cands.notes, ctx.allowed
    replaced: dict[str, str] = {}
    out: dict[str, float] = {}
    for path, score in notes.items():
        successor = ctx.excluded.replacement.get(path)
        if successor is None:
            out[path] = max(score, out.get(path, score))
        elif (allowed is None or successor in allowed) and score > out.get(successor, notes.get(successor, -1e9)) \
                and _written(ctx, successor):
            out[successor] = score
            replaced[successor] = path
    return replace(cands, notes=dict(sorted(out.items(), key=lambda kv: -kv[1])), replaced=replaced)


def _written(ctx: Context, path: str) -> bool:
    """Whether a note has a chunk with more than its name or its heading (:func:`name_only`)."""
    return not all(name_only(row) for row in chunk_rows(ctx.index.db, ctx.index.note_chunks(path)).values())
