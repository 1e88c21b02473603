"""The relevance floor and the adaptive cut: only chunks that answer the query reach the agent.

The floor answers "is anything here relevant?": when the best hit's calibrated relevance
(:mod:`vaultsync.search.relevance`) is under ``min_relevance``, the result is empty (exit 0) and
names the best candidate it turned away. It judges the query, not each hit: a weak second chunk
of an answered query still carries turns an agent needs, and cutting each hit loses more recall
for the same abstention (ADR-0088). The adaptive cut answers "how many of these does the
agent need?": a hit under ``relative_cut`` × the best hit's relevance is dropped (one clear answer
far above the rest comes alone). Hits without a relevance (no model loaded) are never cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vaultsync.search import budget
from vaultsync.search.results import Hit


def relevance_cut(hits: Sequence[Hit], min_relevance: float, relative_cut: float) -> tuple[list[Hit], dict[str, Any] | None]:
    """``(kept hits in order, the best rejected hit when none is kept)``.

    Nothing is kept when the best relevance is under ``min_relevance``; otherwise every hit at or
    above ``relative_cut`` × the best. ``best_rejected`` is ``{"chunk_id", "path", "relevance"}`` of
    the most relevant hit turned away, or None when something was kept or nothing was offered.
    """
    scored = [h.relevance for h in hits if h.relevance is not None]
    if not scored:
        return list(hits), None
    best = max(scored)
    if best < min_relevance:
        top = max((h for h in hits if h.relevance is not None), key=lambda h: h.relevance or 0.0)
        return [], {"chunk_id": top.chunk_id, "path": top.path, "relevance": top.relevance}
    return [h for h in hits if h.relevance is None or h.relevance >= relative_cut * best], None


def answer(hits: Sequence[Hit], min_relevance: float, relative_cut: float, budget_tokens: int,
           top_k: int) -> tuple[list[Hit], dict[str, Any] | None]:
    """What the agent gets: the first ``top_k`` hits within ``budget_tokens`` (:func:`budget.cut`), then
    :func:`relevance_cut` over those. The floor judges these hits, so an answer never stands on a chunk
    the cut drops (``--top-k 1`` answered with a hit under the floor because the 8th reached it)."""
    shown = budget.cut(list(hits), [h.tokens for h in hits], budget_tokens, top_k)
    return relevance_cut(shown, min_relevance, relative_cut)
