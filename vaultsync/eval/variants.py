"""The pipeline variants of the ablation table (docs/eval.md), by name.

``default`` is the shipped pipeline (SearchOptions defaults, relevance floor included, rerank
from the config); every other row switches one stage, with the relevance floor off (so the
rows compare rankings) except ``default``, ``floor-*`` and ``adaptive-*``; the ranking rows
order by the stages' scores (``rank_by: fused``, the default) except ``convex+graph+relevance``. The legs are ``bm25``, ``dense``
(multilingual-e5-small) and ``dense2`` (USE multilingual). Every row's agent view is the best blocks of its
chunks (ADR-0116) except ``default-whole-chunks``'s (``blocks: False``: the chunks whole).
"""

from __future__ import annotations

from vaultsync.eval.harness import Variant
from vaultsync.search.options import SearchOptions

NO_GRAPH = {"graph_hops": 0, "rank_by": "fused"}  # the ranking rows order by the stages' scores

VARIANTS: dict[str, Variant] = {v.name: v for v in [
    Variant("bm25", {"legs": ("bm25",), **NO_GRAPH}),
    Variant("dense", {"legs": ("dense",), **NO_GRAPH}),
    Variant("dense2", {"legs": ("dense2",), **NO_GRAPH}),
    Variant("dense-no-names", {"legs": ("dense",), "title_vectors": False, **NO_GRAPH}),
    Variant("rrf", {"fusion": "rrf", **NO_GRAPH}),
    Variant("rrf-adaptive", {"fusion": "rrf-adaptive", **NO_GRAPH}),
    Variant("convex-bm25+dense", {"legs": ("bm25", "dense"), **NO_GRAPH}),
    Variant("convex", NO_GRAPH),
    Variant("convex-2nd-chunk-0.5", {"second_chunk": 0.5, **NO_GRAPH}),
    Variant("convex+graph", {"rank_by": "fused"}),
    Variant("convex+graph+relevance", {"rank_by": "relevance"}),
    Variant("convex+maxsim", NO_GRAPH, rerank="maxsim"),
    Variant("convex+cross-encoder", {"rerank_cutoff": True, **NO_GRAPH}, rerank="cross-encoder"),
    Variant("convex+cross-encoder-no-cutoff", NO_GRAPH, rerank="cross-encoder"),
    Variant("default", {"min_relevance": SearchOptions.min_relevance}, rerank="default"),
    Variant("default+maxsim", {"min_relevance": SearchOptions.min_relevance}, rerank="maxsim"),
    Variant("default-whole-chunks", {"min_relevance": SearchOptions.min_relevance, "blocks": False}, rerank="default"),
    *[Variant(f"floor-{f:g}", {"min_relevance": f}) for f in (0.2, 0.3, 0.4, 0.5)],
    *[Variant(f"adaptive-{c:g}", {"min_relevance": SearchOptions.min_relevance, "relative_cut": c})
      for c in (0.3, 0.5, 0.7)],
]}
