"""Late-interaction reranking: MaxSim over the embedder's token vectors.

ColBERT's scoring (Khattab & Zaharia 2020, "ColBERT: Efficient and
Effective Passage Search via Contextualized Late Interaction over BERT",
SIGIR): for each query token take the highest cosine with any passage token,
then aggregate over query tokens. Here the token vectors are multilingual-e5's
last hidden states (not a ColBERT-trained projection), without prefix and
special tokens; the aggregate is the mean (default, so scores lie in [-1, 1]
whatever the query length) or the sum (ColBERT's original).

Its rank is fused with the first stage's by plain RRF, equal weights (``fusion_weight`` 0.5,
:func:`vaultsync.search.fusion.rerank_order`): alone it loses to the first stage on LoCoMo and the
Obsidian queries; fused it gains on LoCoMo and on held-out QA questions (ADR-0109).

It works offline out of the box because it needs only the embedder. Cost is
in the passage vectors: an index built for this stage (``search.rerank: maxsim``) holds them
(:mod:`vaultsync.index.token_vectors`, ADR-0117) and the rerank stage hands them over; any other
passage comes from the ``source`` (:mod:`vaultsync.models.token_store`: re-encoded at query time
with an LRU by default).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np

from vaultsync.models.base import rerank_inputs
from vaultsync.models.token_store import OnDemandTokenVectors, TokenEncoder, TokenVectorSource, content_key

Reduce = Literal["mean", "sum"]


def maxsim(query_vectors: np.ndarray, passage_vectors: np.ndarray, reduce: Reduce = "mean") -> float:
    """MaxSim of one pair: ``agg_i max_j <q_i, p_j>`` over L2-normalised rows.

    Args:
        query_vectors: float32 ``[n_q, d]``; passage_vectors: float32 ``[n_p, d]``.
        reduce: ``"mean"`` or ``"sum"`` over query tokens.

    Returns 0.0 when either side has no tokens.
    """
    if len(query_vectors) == 0 or len(passage_vectors) == 0:
        return 0.0
    best = (query_vectors @ passage_vectors.T).max(axis=1)
    return float(best.mean() if reduce == "mean" else best.sum())


def maxsim_many(query_vectors: np.ndarray, passages: Sequence[np.ndarray], reduce: Reduce = "mean") -> np.ndarray:
    """:func:`maxsim` for every non-empty passage at once → float32 ``[n_non_empty]``.

    One matrix product over the concatenated passage tokens, then a segmented max
    (``np.maximum.reduceat``): one BLAS call instead of one per passage.
    """
    parts = [p for p in passages if len(p)]
    if not parts:
        return np.zeros(0, np.float32)
    if len(query_vectors) == 0:
        return np.zeros(len(parts), np.float32)
    starts = np.cumsum([0] + [len(p) for p in parts[:-1]])
    sims = query_vectors @ np.concatenate(parts).T  # [n_q, total passage tokens]
    best = np.maximum.reduceat(sims, starts, axis=1)  # [n_q, n_passages]
    out: np.ndarray = (best.mean(axis=0) if reduce == "mean" else best.sum(axis=0)).astype(np.float32)
    return out


class MaxSimReranker:
    """Rerank with MaxSim (implements :class:`vaultsync.models.base.Reranker`).

    Args:
        encoder: the embedder (needs ``token_vectors``; multilingual-e5-small).
        source: where passage token vectors come from (default: on demand with an LRU).
        reduce: aggregate over query tokens.
        fusion_weight: weight of MaxSim's rank against the first stage's in the rerank stage's RRF
            (0.5: equal; None or 1.0: MaxSim's order alone).
    """

    def __init__(self, encoder: TokenEncoder, source: TokenVectorSource | None = None, reduce: Reduce = "mean",
                 fusion_weight: float | None = 0.5) -> None:
        self.encoder = encoder
        self.source = source or OnDemandTokenVectors(encoder)
        self.reduce = reduce
        self.fusion_weight = fusion_weight
        self.name = f"maxsim-{getattr(encoder, 'name', 'encoder')}"

    reads_token_vectors = True  # the rerank stage hands it the token vectors a sync stored (ADR-0117)
    cross_lingual = False  # token matches need the query in the notes' language (it lost cross-lingually, ADR-0117)

    def score(self, query: str, passages: Sequence[str], stored: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
        """MaxSim of each passage with ``query`` → float32 ``[len(passages)]``; empty passages score 0.

        Args:
            stored: token vectors an index holds, by :func:`~vaultsync.models.token_store.content_key` of the
                passage (float32 ``[n_tokens, d]`` in the encoder's space, as :meth:`Embedder.token_vectors`
                gives them; :mod:`vaultsync.index.token_vectors`); the other passages come from ``source``.

        Raises:
            ValueError: ``query`` is empty or whitespace only.
        """
        passages, scores, live = rerank_inputs(query, passages)
        if not live:
            return scores
        q = self.source.project_query(self.encoder.token_vectors([query], "query")[0])
        stored = stored if stored and not getattr(self.source, "codec", None) else {}  # a projected source: its own
        keys = [content_key(passages[i]) for i in live]
        missing = [i for i, k in zip(live, keys, strict=True) if k not in stored]
        fetched = dict(zip(missing, self.source.get([passages[i] for i in missing]) if missing else [], strict=True))
        vecs = [stored[k] if k in stored else fetched[i] for i, k in zip(live, keys, strict=True)]
        scores[[i for i, v in zip(live, vecs, strict=True) if len(v)]] = maxsim_many(q, vecs, self.reduce)
        return scores
