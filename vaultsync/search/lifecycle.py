"""Lifecycle filters: expired, superseded and low-confidence notes never reach the results.

The excluded set is computed once per query from the ``notes`` table and applied
to every leg *before* fusion (so nothing filtered can leak in through any stage).
A superseded note is replaced by the note that supersedes it (followed to the end
of the chain), which is offered in its place.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True)
class LifecyclePolicy:
    """Which notes to hide.

    Attributes:
        include_expired: keep notes whose ``expires`` is before ``today``.
        include_superseded: keep superseded notes.
        min_confidence: hide notes with ``confidence`` below this (notes without one are kept).
        today: the date expiry is judged against.
    """

    include_expired: bool = False
    include_superseded: bool = False
    min_confidence: float = 0.5
    today: dt.date | None = None  # None: today (UTC) at evaluation time


@dataclass(frozen=True)
class Exclusions:
    """Paths hidden by the policy, with the reason, and superseded → superseding path."""

    reasons: dict[str, str]
    replacement: dict[str, str]

    def __contains__(self, path: object) -> bool:
        return path in self.reasons


def exclusions(db: sqlite3.Connection, policy: LifecyclePolicy) -> Exclusions:
    """Evaluate ``policy`` over every note of the index."""
    reasons: dict[str, str] = {}
    superseded_by: dict[str, str | None] = {}
    today = (policy.today or dt.datetime.now(dt.timezone.utc).date()).isoformat()
    for path, expires, status, by, confidence in db.execute(
        "SELECT path, expires, status, superseded_by, confidence FROM notes"
    ):
        if (status == "superseded" or by) and not policy.include_superseded:
            reasons[path] = "superseded"
            superseded_by[path] = by
        elif expires and expires < today and not policy.include_expired:
            reasons[path] = f"expired {expires}"
        elif confidence is not None and confidence < policy.min_confidence:
            reasons[path] = f"confidence {confidence:g} < {policy.min_confidence:g}"
    replacement: dict[str, str] = {}
    for path, by in superseded_by.items():
        seen = {path}
        while by and by in reasons and reasons[by] == "superseded" and by not in seen:
            seen.add(by)
            by = superseded_by.get(by)
        if by and by not in reasons and by not in seen:
            replacement[path] = by
    return Exclusions(reasons, replacement)
