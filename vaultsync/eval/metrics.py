"""Ranking metrics with binary relevance.

* recall@k — share of the relevant items found in the top k (Manning et al. 2008, §8.3).
* hit@k — 1 if any relevant item is in the top k.
* MRR@k — reciprocal rank of the first relevant item in the top k, else 0
  (Voorhees, TREC-8 QA, 1999).
* nDCG@k — DCG with gains 1/log2(rank + 1) over the ideal DCG (Järvelin &
  Kekäläinen 2002).

Rankings are lists of item ids, best first, without duplicates.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence


def recall_at(ranking: Sequence[str], relevant: Collection[str], k: int) -> float:
    if not relevant:
        return 0.0
    return len(set(ranking[:k]) & set(relevant)) / len(set(relevant))


def hit_at(ranking: Sequence[str], relevant: Collection[str], k: int) -> float:
    return 1.0 if set(ranking[:k]) & set(relevant) else 0.0


def mrr_at(ranking: Sequence[str], relevant: Collection[str], k: int) -> float:
    for i, item in enumerate(ranking[:k]):
        if item in relevant:
            return 1.0 / (i + 1)
    return 0.0


def ndcg_at(ranking: Sequence[str], relevant: Collection[str], k: int) -> float:
    rel = set(relevant)
    if not rel:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(ranking[:k]) if item in rel)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), k)))
    return dcg / ideal


def dedupe(items: Sequence[str]) -> list[str]:
    """Items in first-seen order."""
    return list(dict.fromkeys(items))
