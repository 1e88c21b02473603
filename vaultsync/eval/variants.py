"""The pipeline variants of the ablation table (docs/eval.md), by name."""

from __future__ import annotations

from vaultsync.eval.harness import Variant

VARIANTS: dict[str, Variant] = {v.name: v for v in [
    Variant("bm25", {"legs": ("bm25",), "graph_hops": 0}),
    Variant("dense", {"legs": ("dense",), "graph_hops": 0}),
    Variant("dense-no-names", {"legs": ("dense",), "graph_hops": 0, "title_vectors": False}),
    Variant("rrf", {"fusion": "rrf", "graph_hops": 0}),
    Variant("adaptive", {"graph_hops": 0}),
    Variant("adaptive+graph", {"graph_hops": 1}),
    Variant("adaptive+maxsim", {"graph_hops": 0}, rerank="maxsim"),
    Variant("adaptive+cross-encoder", {"graph_hops": 0}, rerank="cross-encoder"),
    Variant("full", {}, rerank="default"),
]}
