"""Relevance: each ranked chunk's calibrated P(it answers the query), from the first stage's evidence.

The features (:data:`vaultsync.search.relevance.FEATURES`) are read from what the earlier
stages left: every dense leg's cosine with the chunk (exact, from its vectors) and its gap
to the leg's best chunk, the primary cosine's z-score against the query's cosines to unrelated
text (:class:`vaultsync.search.relevance.Background`, ADR-0100), the chunk's and the note's
reciprocal rank in each leg, the query's
BM25 coverage of the vault and of the chunk (IDF-weighted units, as
:func:`vaultsync.search.weights.informative_units`), the chunk's place in the ranking.
:class:`vaultsync.search.relevance.RelevanceModel` turns them into a probability. The
features and the probability go into the trace (``relevance``), which is also what the
model is trained from (``training/relevance``). A successor standing in for a superseded note
(:mod:`vaultsync.search.stages.supersede`) is as relevant as the old note's best chunk, at
least, in its own best-ranked chunk: the old note matched the query and the new one is what replaces it
(not a chunk that holds only a name). A chunk holding only its note's name (:func:`name_only`) is scaled by :data:`NAME_ONLY_FACTOR`. A chunk of a note the
query names by ``memory_id``, or of its successor, is at least :data:`vaultsync.search.named.NAMED_RELEVANCE`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.named import NAMED_RELEVANCE
from vaultsync.search.relevance import RelevanceModel, unit_coverage
from vaultsync.search.rows import chunk_rows
from vaultsync.search.short_terms import contains
from vaultsync.search.weights import filtered_out_share, informative_units, unit_frequencies

# A chunk that holds only a name answers nothing but "is there a note called so": its relevance is
# scaled down, so a note with content outranks an empty one that shares its words (a prior, not fitted:
# the training and evaluation vaults hold no such chunk).
NAME_ONLY_FACTOR = 0.25
INHERITED_FROM = 3  # a successor inherits the best relevance among the old note's first-ranked chunks
POINTER_WORDS = 2  # "see", "voir", "siehe auch", "を参照" (one word to \w+): a link's own words, not content
_WORDS = re.compile(r"\w+")
_LINKS = re.compile(r"!?\[\[[^\]\n]*\]\]|!?\[[^\]\n]*\]\([^)\n]*\)")  # [[WikiLink]], [text](target.md)


def relevance(ctx: Context, cands: Candidates) -> Candidates:
    """Fill ``relevance`` (chunk rowid → probability) for every ranked chunk; no model: unchanged."""
    models, ranked = ctx.index.relevance_model, cands.ranked
    if models is None or not ranked:
        return cands
    model = models.pick(dense=any(name == "dense" for name, _ in ctx.legs))
    rowids = [r for r, _ in ranked]
    filtered_out = filtered_out_share(ctx.index.db, informative_units(ctx.index.db, ctx.query), ctx.allowed,
                                      ctx.opts.scope, unit_frequencies(ctx.index.db, ctx.query)[1])
    features = chunk_features(ctx, cands, rowids, cands.rows, filtered_out)
    rows = [features[r] for r in rowids]
    probs = model.predict(rows)
    out: dict[int, float] = {}
    for rowid, row, p in zip(rowids, rows, probs, strict=True):
        out[rowid] = float(p)
        cands.traced(rowid)["relevance"] = {"p": round(float(p), 4), **{k: round(v, 4) for k, v in row.items()}}
    for rowid, p in _inherited(ctx, cands, rowids, model).items():
        if p > out[rowid]:
            out[rowid] = p
            cands.traced(rowid)["relevance"]["inherited"] = round(p, 4)
    first = cands.named_first()
    for rowid in rowids:
        if name_only(cands.rows[rowid]):
            out[rowid] *= NAME_ONLY_FACTOR
            cands.traced(rowid)["relevance"]["name_only"] = round(out[rowid], 4)
        if cands.rows[rowid]["path"] in first and out[rowid] < NAMED_RELEVANCE:
            out[rowid] = NAMED_RELEVANCE
            cands.traced(rowid)["relevance"]["named"] = NAMED_RELEVANCE
    return replace(cands, relevance=out)


def name_only(row: dict[str, Any]) -> bool:
    """Whether a chunk's text says nothing but its note's title or its heading (the one chunk of a note
    with an empty body, or of a skeleton ``vaultsync new`` wrote), or that and one or two links with at most
    :data:`POINTER_WORDS` words of its own (``## Why`` / ``See [[INC-0001]].``: a pointer, whose link's
    name holds the query's words; a list of three or more is a hub's answer): words compared case-blind."""
    text = row["text"].casefold()
    words = _WORDS.findall(text)
    named = (_WORDS.findall(row["title"].casefold()), _WORDS.findall(row["heading"].casefold()))
    if not words or words in named:
        return True
    if "[" not in text:  # no link: content (most chunks stop here)
        return False
    links = len(_LINKS.findall(text))  # three or more: a hub's list of notes, which answers "which are there"
    own = _WORDS.findall(_LINKS.sub(" ", text))
    return 0 < links <= 2 and len([w for w in own if w not in {*named[0], *named[1]}]) <= POINTER_WORDS


def _inherited(ctx: Context, cands: Candidates, rowids: list[int], model: RelevanceModel) -> dict[int, float]:
    """The successor's best-ranked chunk (with content) → the best relevance among the :data:`INHERITED_FROM`
    best-ranked chunks of the superseded note it stands in for (its other chunks keep their own: one answers
    for the old note, and the adaptive cut judges the rest), as
    a search that showed that note would give it (its words are not "filtered out": the successor stands
    for it). A chunk holding only a name (:func:`name_only`: an empty section of a successor accepted before
    it was written) inherits nothing: it answers nothing, and had led a search with a bare ``## Decision``."""
    old_best: dict[int, list[int]] = {}  # successor chunk → the old note's best chunks
    heirs: set[str] = set()  # successors whose best-ranked chunk with content inherits (one chunk each)
    for rowid in rowids:
        path = cands.rows[rowid]["path"]
        old = cands.replaced.get(path)
        if old is not None and path not in heirs and not name_only(cands.rows[rowid]):
            heirs.add(path)
            chunks = ctx.index.note_chunks(old)
            if best := sorted(chunks, key=lambda r: -cands.chunk_scores.get(r, -1e9))[:INHERITED_FROM]:
                old_best[rowid] = best
    if not old_best:
        return {}
    rows = chunk_rows(ctx.index.db, sorted({r for best in old_best.values() for r in best}))
    allowed = None if ctx.allowed is None else ctx.allowed | {row["path"] for row in rows.values()}
    filtered_out = filtered_out_share(ctx.index.db, informative_units(ctx.index.db, ctx.query), allowed,
                                      ctx.opts.scope, unit_frequencies(ctx.index.db, ctx.query)[1])
    features = chunk_features(ctx, cands, list(rows), rows, filtered_out)
    probs = dict(zip(rows, model.predict([features[r] for r in rows]), strict=True))
    return {succ: max(float(probs[r]) for r in best) for succ, best in old_best.items()}


def _background(ctx: Context, cands: Candidates) -> tuple[float, float, float] | None:
    """The query's cosines to the relevance model's background passages (top mean, mean, sd), or None."""
    models = ctx.index.relevance_model
    leg = next((leg for name, leg in ctx.legs if name == "dense"), None)
    if models is None or models.background is None or leg is None:
        return None
    return models.background.stats(getattr(leg.embedder, "name", ""), cands.query_vectors.get("dense"))


def chunk_features(ctx: Context, cands: Candidates, rowids: list[int],
                   rows_of: dict[int, dict[str, Any]], filtered_out: float) -> dict[int, dict[str, float]]:
    """Feature rows (feature name → value) of ``rowids`` (in ranked order; ``rows_of`` their rows);
    ``filtered_out`` is the query's (:func:`vaultsync.search.weights.filtered_out_share`), computed once."""
    units = informative_units(ctx.index.db, ctx.query)
    coverage = unit_coverage(units, lambda _u, df: df > 0)
    out: dict[int, dict[str, float]] = {}
    rank_in = {name: {c.rowid: c.rank for c in found} for name, found in cands.chunk_legs.items()}
    note_rank = {name: {p: i for i, p in enumerate(scores)} for name, scores in cands.note_legs.items()}
    cosines = {name: leg.chunks.similarity(cands.query_vectors[name], rowids)
               for name, leg in ctx.legs if name in cands.query_vectors}
    background = _background(ctx, cands)
    for pos, rowid in enumerate(rowids):
        row = rows_of[rowid]
        norm, path = row["norm"], row["path"]
        f: dict[str, float] = {"coverage": coverage, "position_rr": 1.0 / (pos + 1), "n_units": min(len(units), 10) / 10,
                               "filtered_out": filtered_out,
                               "chunk_coverage": unit_coverage(units, lambda u, _df, n=norm: contains(n, u))}
        for name in ("bm25", "dense", "dense2"):
            if name in rank_in and rowid in rank_in[name]:
                f[f"{name}_rr" if name != "bm25" else "bm25_chunk_rr"] = 1.0 / (rank_in[name][rowid] + 1)
        if path in note_rank.get("bm25", {}):
            f["bm25_note_rr"] = 1.0 / (note_rank["bm25"][path] + 1)
        for name, sims in cosines.items():
            if name == "dense2" and cands.weights.get("dense2", 0.0) <= 0:
                continue  # USE gated off for this query: its similarities mean nothing here
            cos = sims.get(rowid, 0.0)
            best = max(cands.chunk_legs[name][0].score if cands.chunk_legs.get(name) else cos, cos)
            f[f"{name}_cos"], f[f"{name}_gap"] = cos, cos - best
            if name == "dense":
                f["dense_note"] = max(cands.note_legs.get(name, {}).get(path, cos), cos)
                if background is not None:
                    top, mean, sd = background
                    f["dense_bg"], f["dense_bgz"] = cos - top, (cos - mean) / sd
            else:
                f["dense2_on"] = 1.0
        f["cross_dense"] = f.get("dense_cos", 0.0) * (1.0 - coverage)
        out[rowid] = f
    return out
