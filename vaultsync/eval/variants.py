"""The pipeline variants of the ablation table (docs/eval.md), by name.

``default`` is the shipped pipeline (SearchOptions defaults, rerank from the
config); every other row switches one stage.
"""

from __future__ import annotations

from vaultsync.eval.harness import Variant

VARIANTS: dict[str, Variant] = {v.name: v for v in [
    Variant("bm25", {"legs": ("bm25",), "graph_hops": 0}),
    Variant("dense", {"legs": ("dense",), "graph_hops": 0}),
    Variant("dense-no-names", {"legs": ("dense",), "graph_hops": 0, "title_vectors": False}),
    Variant("rrf", {"fusion": "rrf", "graph_hops": 0}),
    Variant("rrf-adaptive", {"fusion": "rrf-adaptive", "graph_hops": 0}),
    Variant("convex", {"graph_hops": 0}),
    Variant("convex-1st-chunk-only", {"graph_hops": 0, "second_chunk": 0.5}),
    Variant("convex+graph", {}),
    Variant("convex+maxsim", {"graph_hops": 0}, rerank="maxsim"),
    Variant("convex+cross-encoder", {"graph_hops": 0}, rerank="cross-encoder"),
    Variant("default", {}, rerank="default"),
]}
