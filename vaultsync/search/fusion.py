"""Reciprocal Rank Fusion of ranked lists (Cormack, Clarke & Büttcher, SIGIR 2009).

``score(d) = Σ_leg w_leg / (k + rank_leg(d))`` with 1-based ranks and k = 60.
Equal weights give plain RRF; the pipeline passes per-query leg weights
(see :func:`vaultsync.search.weights.leg_weights`) so that a leg that is weak
for this query (BM25 on a query in another language) cannot drag a strong one down.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
RRF_K = 60


def rrf(legs: Mapping[str, Sequence[K]], weights: Mapping[str, float] | None = None,
        k: int = RRF_K) -> list[tuple[K, float]]:
    """Fuse ranked lists.

    Args:
        legs: leg name → item keys, best first (duplicates after the first are ignored).
        weights: leg name → weight (default 1.0 each); a weight of 0 drops the leg.
        k: the RRF constant (60 in the original paper).
    Returns:
        ``(key, fused score)`` best first; ties keep the order of first appearance.
    """
    fused: dict[K, float] = {}
    for name, keys in legs.items():
        w = 1.0 if weights is None else float(weights.get(name, 1.0))
        if w <= 0:
            continue
        seen: set[K] = set()
        for rank, key in enumerate(keys, start=1):
            if key in seen:
                continue
            seen.add(key)
            fused[key] = fused.get(key, 0.0) + w / (k + rank)
    order = {key: i for i, key in enumerate(fused)}
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def convex(legs: Mapping[str, Mapping[K, float]], weights: Mapping[str, float] | None = None) -> list[tuple[K, float]]:
    """Convex combination of min-max normalised scores (Bruch, Gai & Ingber, TOIS 2023).

    Each leg's scores are scaled to [0, 1] over its own candidates (an item a leg
    did not return scores 0 there), then ``Σ w_leg · norm_leg`` is ranked. Unlike RRF
    it keeps score gaps: a near-exact match stays far ahead of the runner-up.
    """
    fused: dict[K, float] = {}
    for name, scores in legs.items():
        w = 1.0 if weights is None else float(weights.get(name, 1.0))
        if w <= 0 or not scores:
            continue
        lo, hi = min(scores.values()), max(scores.values())
        span = hi - lo
        for key, score in scores.items():
            fused[key] = fused.get(key, 0.0) + w * ((score - lo) / span if span > 1e-12 else 1.0)
    order = {key: i for i, key in enumerate(fused)}
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def rerank_order(ids: Sequence[K], scores: Sequence[float], weight: float | None = None,
                 k: int = RRF_K) -> list[K]:
    """Order reranked candidates: by the reranker's scores, or fused with the first stage.

    Args:
        ids: candidates in first-stage order (best first).
        scores: the reranker's score of each, same length.
        weight: ``w`` of ``w/(k + rank_reranker) + (1 - w)/(k + rank_first_stage)``
            (RRF, Cormack et al. 2009); None or 1.0 orders by the reranker alone.
        k: the RRF constant.
    Returns:
        ``ids`` reordered, best first.
    """
    by_score = [ids[i] for i in sorted(range(len(ids)), key=lambda i: (-float(scores[i]), i))]
    if weight is None or weight >= 1.0:
        return by_score
    return [key for key, _ in rrf({"rerank": by_score, "first": list(ids)}, {"rerank": weight, "first": 1 - weight}, k)]
