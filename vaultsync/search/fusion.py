"""Reciprocal Rank Fusion of candidate lists (Cormack, Clarke & Büttcher, SIGIR 2009).

``score(d) = Σ_leg w_leg / (k + rank_leg(d) + 1)`` with 0-based ranks and k = 60.
Equal weights give plain RRF; the pipeline passes per-query leg weights
(see :func:`vaultsync.search.pipeline.leg_weights`) so that a leg that is weak
for this query (BM25 on a query in another language) cannot drag a strong one down.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vaultsync.search.bm25 import Candidate

RRF_K = 60


def rrf(legs: Mapping[str, Sequence[Candidate]], weights: Mapping[str, float] | None = None,
        k: int = RRF_K) -> list[tuple[int, float]]:
    """Fuse ranked candidate lists.

    Args:
        legs: leg name → candidates best first (their ``rank`` is used).
        weights: leg name → weight (default 1.0 each); a weight of 0 drops the leg.
        k: the RRF constant (60 in the original paper).
    Returns:
        ``(rowid, fused score)`` best first; ties broken by rowid for determinism.
    """
    fused: dict[int, float] = {}
    for name, candidates in legs.items():
        w = 1.0 if weights is None else float(weights.get(name, 1.0))
        if w <= 0:
            continue
        for c in candidates:
            fused[c.rowid] = fused.get(c.rowid, 0.0) + w / (k + c.rank + 1)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))
