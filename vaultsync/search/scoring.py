"""Importance and recency blend on top of relevance.

``final = (1 - w_imp - w_rec) · relevance + w_imp · importance/10 + w_rec · 0.5^(age / half_life)``

``relevance`` is the stage score min-max normalised over the candidates (so the
blend does not depend on whether RRF, MaxSim or a cross-encoder produced it);
``age`` is days since ``last_validated`` (else ``created``). Missing importance
or dates count as neutral (0.5).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence


def normalise(scores: Sequence[float]) -> list[float]:
    """Min-max to [0, 1]; all-equal scores map to 1."""
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi - lo < 1e-12:
        return [1.0 for _ in scores]
    return [(s - lo) / (hi - lo) for s in scores]


def recency(last: str | None, today: dt.date, half_life_days: float) -> float:
    """``0.5 ** (age_days / half_life_days)``; 0.5 when the date is unknown."""
    if not last:
        return 0.5
    try:
        age = (today - dt.date.fromisoformat(last[:10])).days
    except ValueError:
        return 0.5
    return 0.5 ** (max(age, 0) / max(half_life_days, 1e-9))


def blend(relevance: Sequence[float], importance: Sequence[int | None], dates: Sequence[str | None],
          today: dt.date, w_importance: float = 0.1, w_recency: float = 0.05,
          half_life_days: float = 365.0) -> list[float]:
    """Final scores, one per candidate (see the module docstring)."""
    rel = normalise(relevance)
    w_rel = max(0.0, 1.0 - w_importance - w_recency)
    return [
        w_rel * r + w_importance * ((imp / 10.0) if imp is not None else 0.5)
        + w_recency * recency(d, today, half_life_days)
        for r, imp, d in zip(rel, importance, dates)
    ]
