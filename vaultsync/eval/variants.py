"""The pipeline variants of the ablation table (docs/eval.md), by name.

``default`` is the shipped pipeline (SearchOptions defaults, rerank from the
config); every other row switches one stage. The legs are ``bm25``, ``dense``
(multilingual-e5-small) and ``dense2`` (USE multilingual).
"""

from __future__ import annotations

from vaultsync.eval.harness import Variant

NO_GRAPH = {"graph_hops": 0}

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
    Variant("convex+graph", {}),
    Variant("convex+maxsim", NO_GRAPH, rerank="maxsim"),
    Variant("convex+cross-encoder", {"rerank_cutoff": True, **NO_GRAPH}, rerank="cross-encoder"),
    Variant("convex+cross-encoder-no-cutoff", NO_GRAPH, rerank="cross-encoder"),
    Variant("default", {}, rerank="default"),
]}
