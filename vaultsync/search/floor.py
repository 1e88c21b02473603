"""The relevance floor and the adaptive cut: only chunks that answer the query reach the agent.

A hit stays when its calibrated relevance (:mod:`vaultsync.search.relevance`) is at least
``max(min_relevance, relative_cut × the best hit's relevance)``: the absolute floor answers
"is anything here relevant?" (nothing passes: an empty result, exit 0), the relative cut
"how many of these does the agent need?" (one clear answer far above the rest comes alone).
Hits without a relevance (no model loaded) are never cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vaultsync.search.results import Hit


def relevance_cut(hits: Sequence[Hit], min_relevance: float, relative_cut: float) -> tuple[list[Hit], dict[str, Any] | None]:
    """``(kept hits in order, the best rejected hit when none is kept)``.

    ``best_rejected`` is ``{"chunk_id", "path", "relevance"}`` of the most relevant hit turned
    away, or None when something was kept or nothing was offered.
    """
    scored = [h.relevance for h in hits if h.relevance is not None]
    if not scored:
        return list(hits), None
    bar = max(min_relevance, relative_cut * max(scored))
    kept = [h for h in hits if h.relevance is None or h.relevance >= bar]
    if kept or not hits:
        return kept, None
    best = max(hits, key=lambda h: h.relevance or 0.0)
    return [], {"chunk_id": best.chunk_id, "path": best.path, "relevance": best.relevance}
