"""Rerank: the top ``rerank_top`` chunks rescored by a reranker (MaxSim or a cross-encoder).

The new order is the reranker's, or its rank fused with the first stage's by RRF
(Cormack et al. 2009) when the reranker has a ``fusion_weight`` under 1
(:func:`vaultsync.search.fusion.rerank_order`). With ``rerank_cutoff`` and a calibrated
reranker (a ``threshold``), chunks under the threshold and the unjudged tail are dropped,
the best one always stays. MaxSim reads the candidates' token vectors from the index where a sync
stored them (:mod:`vaultsync.index.token_vectors`), and leaves the order alone on a query under half of
whose words occur in the vault (:func:`~vaultsync.search.weights.vault_word_share`: another language).
Scores become positions: the first of n scores n.
"""

from __future__ import annotations

from dataclasses import replace

from vaultsync.index import token_vectors
from vaultsync.models.token_store import content_key
from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.fusion import rerank_order
from vaultsync.search.weights import COVERED, vault_word_share


def rerank(ctx: Context, cands: Candidates) -> Candidates:
    """Reorder ``ranked`` and set ``rerank`` (no reranker, ``rerank`` off or nothing ranked: unchanged)."""
    reranker, opts, ranked = ctx.index.reranker, ctx.opts, cands.ranked
    if not opts.rerank or reranker is None or not ranked:
        return cands
    if not getattr(reranker, "cross_lingual", True) and (
            (share := vault_word_share(ctx.index.db, ctx.query)) is not None and share < COVERED):
        # a query in another language than the notes': token matches say little (ADR-0117)
        return replace(cands, rerank_note=f"rerank {reranker.name} left the order alone: {share:.0%} of the query's "
                                          "words occur in the vault, under half (another language than the notes'?)")
    head = [r for r, _ in ranked[:opts.rerank_top]]
    note = ""
    if getattr(reranker, "reads_token_vectors", False) and (dim := getattr(getattr(reranker, "encoder", None), "dim", 0)):
        texts = [cands.rows[r]["embed_text"] for r in head]
        hashes = [cands.rows[r]["hash"] for r in head]
        found = token_vectors.read(ctx.index.db, hashes, dim)  # what a sync stored, by the chunk's hash
        stored = {content_key(t): found[h] for h, t in zip(hashes, texts, strict=True) if h in found}  # MaxSim's key
        scores = reranker.score(ctx.query.text, texts, stored=stored)
        if missing := len(set(hashes) - set(found)):
            note = (f"rerank {reranker.name} encoded {missing} of its candidates at query time (~16 ms each): commit "
                    "`search.rerank: maxsim` or `index.token_vectors: true` so that the index keeps their token vectors")
    else:
        scores = reranker.score(ctx.query.text, [cands.rows[r]["rerank_text"] for r in head])
    score_of = {r: float(x) for r, x in zip(head, scores, strict=True)}
    weight = getattr(reranker, "fusion_weight", None)
    reordered = rerank_order(head, scores, weight, opts.rrf_k)
    for pos, r in enumerate(reordered):
        entry = {"rank": pos + 1, "score": round(score_of[r], 4)}
        if weight is not None and weight < 1.0:  # the rank fuses the score's rank with the first stage's
            entry["fusion_weight"] = weight
        cands.traced(r)["rerank"] = entry
    threshold = getattr(reranker, "threshold", None)
    if opts.rerank_cutoff and threshold is not None:
        # calibrated scores: drop what falls under the cut-off (and the unjudged tail), keep the best
        kept = [r for r in reordered if score_of[r] >= threshold]
        reordered = kept or reordered[:1]
    else:
        reordered += [r for r, _ in ranked[opts.rerank_top:]]
    ranked = [(r, float(len(reordered) - pos)) for pos, r in enumerate(reordered)]
    return replace(cands, ranked=ranked, rerank=reranker.name, rerank_note=note)
