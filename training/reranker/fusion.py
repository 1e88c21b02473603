"""Held-out check in the pipeline's setting, and the weight of an optional rank fusion with the first stage.

For every validation query the first stage (BM25 + dense, fused by reciprocal
rank, :func:`training.reranker.data.first_stage_rankings`) gives
the top 20, which the exported reranker scores. Reported on these held-out
training-distribution queries: the first stage's ranking, the reranker's, and
reciprocal-rank fusion of the two, ``w / (k + rank_reranker) + (1 - w) / (k +
rank_first_stage)``, for a grid of ``w``. The best ``w`` (ties → larger ``w``)
is written to the model's ``vaultsync.json`` (``fusion_weight``), which the
search pipeline's rerank stage applies; the shipped scores stay the calibrated
probabilities.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from training.reranker.data import Corpus, QueryRec
from vaultsync.search.fusion import rerank_order

GRID = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def rrf_order(scores: np.ndarray, weight: float, k: int = 60) -> np.ndarray:
    """Candidate order (indices) fusing the reranker's scores with the given first-stage order (index = rank)."""
    return np.array(rerank_order(list(range(len(scores))), scores, weight, k), np.int64)


def metrics(orders: list[np.ndarray], relevant: list[set[int]]) -> dict[str, float]:
    mrr, hit1, rec5 = [], [], []
    for order, rel in zip(orders, relevant, strict=True):
        ranks = [i for i, c in enumerate(order) if c in rel]
        first = ranks[0] if ranks else None
        mrr.append(1.0 / (first + 1) if first is not None and first < 10 else 0.0)
        hit1.append(1.0 if first == 0 else 0.0)
        rec5.append(1.0 if first is not None and first < 5 else 0.0)
    return {"mrr@10": round(float(np.mean(mrr)), 4), "hit@1": round(float(np.mean(hit1)), 4),
            "hit@5": round(float(np.mean(rec5)), 4)}


def evaluate_fusion(corpus: Corpus, queries: list[QueryRec], first_stage: dict[str, list[str]],
                    score: Callable[[str, list[str]], np.ndarray], k: int = 60) -> dict[str, Any]:
    """Metrics of first stage / reranker / fusion over the queries whose positive is in the first stage's top 20."""
    rows = []
    for q in queries:
        cands = first_stage.get(q.qid, [])
        rel = {i for i, pid in enumerate(cands) if pid in set(q.positives)}
        if not rel:
            continue
        s = np.asarray(score(q.text, [corpus.passages[pid].text for pid in cands]), np.float64)
        rows.append((q, s, rel))
    recall20 = len(rows) / max(1, len(queries))
    out: dict[str, Any] = {"queries": len(queries), "positive_in_top20": round(recall20, 4), "evaluated": len(rows)}
    rels = [r for _, _, r in rows]
    out["first_stage"] = metrics([np.arange(len(s)) for _, s, _ in rows], rels)
    out["reranker"] = metrics([np.argsort(-s, kind="stable") for _, s, _ in rows], rels)
    out["fusion"] = {str(w): metrics([rrf_order(s, w, k) for _, s, _ in rows], rels) for w in GRID}
    best = max(GRID, key=lambda w: (out["fusion"][str(w)]["mrr@10"], w))
    out["best_weight"] = best
    kinds = sorted({q.kind for q, _, _ in rows})
    out["by_kind"] = {}
    for kind in kinds:
        sel = [(s, r) for q, s, r in rows if q.kind == kind]
        out["by_kind"][kind] = {
            "n": len(sel),
            "first_stage": metrics([np.arange(len(s)) for s, _ in sel], [r for _, r in sel])["mrr@10"],
            "reranker": metrics([np.argsort(-s, kind="stable") for s, _ in sel], [r for _, r in sel])["mrr@10"],
            "fusion": metrics([rrf_order(s, best, k) for s, _ in sel], [r for _, r in sel])["mrr@10"],
        }
    return out
