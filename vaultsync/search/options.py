"""The allowed range of every search option, checked wherever options enter: the command line,
the config's ``search:`` section, the daemon and the MCP server.

A range bounds the work one query may cause (``graph_hops: 1000000`` once held the daemon for a
minute), so every knob has one.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

# option -> (kind, low, high); integers and numbers are inclusive ranges
RANGES: dict[str, tuple[str, float, float]] = {
    "top_k": ("int", 1, 50),
    "budget": ("int", 1, 1_000_000_000),  # tokens; it cuts, it causes no work
    "candidates": ("int", 1, 1_000),
    "rerank_top": ("int", 1, 200),
    "rrf_k": ("int", 1, 10_000),
    "graph_hops": ("int", 0, 3),
    "graph_seeds": ("int", 0, 50),
    "per_note": ("int", 1, 20),
    "graph_decay": ("num", 0.0, 1.0),
    "min_confidence": ("num", 0.0, 1.0),
    "second_chunk": ("num", 0.0, 1.0),
    "secondary_weight": ("num", 0.0, 10.0),
    "secondary_cross": ("num", 0.0, 10.0),
    "w_importance": ("num", 0.0, 10.0),
    "w_recency": ("num", 0.0, 10.0),
    "half_life_days": ("num", 0.001, 1_000_000.0),
}
FLAGS = ("title_vectors", "rerank", "rerank_cutoff", "include_expired", "include_superseded")
FUSIONS = ("convex", "rrf-adaptive", "rrf")
LEGS = ("bm25", "dense", "dense2")
MAX_TERMS, MAX_TERM_CHARS = 64, 200


def check_options(opts: Any) -> None:
    """Raise ``ValueError`` naming the first option outside its range (see :data:`RANGES`).

    ``opts`` is a :class:`vaultsync.search.pipeline.SearchOptions`.
    """
    for key, (kind, low, high) in RANGES.items():
        value = getattr(opts, key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{key} must be a {'whole number' if kind == 'int' else 'number'}, got {value!r}")
        if kind == "int" and not isinstance(value, int):
            raise ValueError(f"{key} must be a whole number, got {value!r}")
        if not (math.isfinite(value) and low <= value <= high):
            raise ValueError(f"{key} must be between {low:g} and {high:g}, got {value!r}")
    for key in FLAGS:
        if not isinstance(getattr(opts, key), bool):
            raise ValueError(f"{key} must be true or false, got {getattr(opts, key)!r}")
    if opts.fusion not in FUSIONS:
        raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}, got {opts.fusion!r}")
    unknown = [leg for leg in opts.legs if leg not in LEGS]
    if unknown or not opts.legs:
        raise ValueError(f"legs must be a non-empty subset of {', '.join(LEGS)}, got {list(opts.legs)!r}")
    for key in ("types", "tags"):
        terms = getattr(opts, key)
        if len(terms) > MAX_TERMS or any(not t or len(t) > MAX_TERM_CHARS for t in terms):
            raise ValueError(f"{key}: at most {MAX_TERMS} non-empty values of at most {MAX_TERM_CHARS} characters")
    if opts.scope is not None and (not isinstance(opts.scope, str) or len(opts.scope) > 1_000):
        raise ValueError("scope must be a folder path of at most 1000 characters")
    if opts.today is not None and not isinstance(opts.today, dt.date):
        raise ValueError(f"today must be a date, got {opts.today!r}")
