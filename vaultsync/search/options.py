"""Search options (:class:`SearchOptions`) and the allowed range of each, checked wherever options
enter: the command line, the config's ``search:`` section, the daemon and the MCP server.

A range bounds the work one query may cause (``graph_hops: 1000000`` once held the daemon for a
minute), so every knob has one.
"""

from __future__ import annotations

import datetime as dt
import math
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultsync.diagnostics import Diagnostic
from vaultsync.vault.schema_words import yaml_shape

if TYPE_CHECKING:
    from vaultsync.vault.config import Config

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
    "min_relevance": ("num", 0.0, 1.0),
    "relative_cut": ("num", 0.0, 1.0),
    "second_chunk": ("num", 0.0, 1.0),
    "name_weight": ("num", 0.0, 1.0),
    "secondary_weight": ("num", 0.0, 10.0),
    "secondary_cross": ("num", 0.0, 10.0),
    "secondary_cross_cjk": ("num", 0.0, 10.0),
    "bm25_power_alone": ("num", 0.0, 10.0),
    "w_importance": ("num", 0.0, 10.0),
    "w_recency": ("num", 0.0, 10.0),
    "half_life_days": ("num", 0.001, 1_000_000.0),
}
FLAGS = ("title_vectors", "rerank", "rerank_cutoff", "include_expired", "include_superseded", "blocks")
FUSIONS = ("convex", "rrf-adaptive", "rrf")
RANK_BY = ("relevance", "fused")
LEGS = ("bm25", "dense", "dense2")
MAX_TERMS, MAX_TERM_CHARS = 64, 200


def check_options(opts: SearchOptions) -> None:
    """Raise ``ValueError`` naming the first option outside its range (see :data:`RANGES`).

    ``opts`` is a :class:`SearchOptions`.
    """
    for key, (kind, low, high) in RANGES.items():
        value = getattr(opts, key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{key} must be a {'whole number' if kind == 'int' else 'number'}, got {yaml_shape(value)}")
        if kind == "int" and not isinstance(value, int):
            raise ValueError(f"{key} must be a whole number, got {value!r}")
        if not (math.isfinite(value) and low <= value <= high):
            raise ValueError(f"{key} must be between {low:g} and {high:g}, got {value!r}")
    for key in FLAGS:
        if not isinstance(getattr(opts, key), bool):
            raise ValueError(f"{key} must be true or false, got {yaml_shape(getattr(opts, key))}")
    if opts.rank_by not in RANK_BY:
        raise ValueError(f"rank_by must be one of {', '.join(RANK_BY)}, got {opts.rank_by!r}")
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
    if opts.zone is not None and not isinstance(opts.zone, dt.tzinfo):
        raise ValueError(f"zone must be a time zone, got {opts.zone!r}")


@dataclass
class SearchOptions:
    """Knobs of one search (defaults chosen on the evaluation sets, see docs/eval.md)."""

    top_k: int = 5
    budget: int = 1200
    candidates: int = 50
    rerank_top: int = 20
    rrf_k: int = 60
    fusion: str = "convex"  # "convex" | "rrf-adaptive" (both with per-query leg weights) | "rrf" (equal)
    legs: tuple[str, ...] = ("bm25", "dense", "dense2")
    secondary_weight: float = 0.5
    secondary_cross: float = 1.0  # the secondary leg's weight on a query the vault's words do not cover
    secondary_cross_cjk: float = 1.5  # ... on such a query in a CJK script (ADR-0061)
    bm25_power_alone: float = 0.5  # BM25 = coverage ** this when the secondary leg is silent (else squared)
    title_vectors: bool = True
    name_weight: float = 0.5  # share of a name vector's lead over the note's best chunk a dense leg counts (ADR-0081)
    graph_hops: int = 1
    graph_decay: float = 0.5
    graph_seeds: int = 5
    rerank: bool = True
    rerank_cutoff: bool = False  # drop candidates under a calibrated reranker's threshold (the best one stays)
    w_importance: float = 0.1
    w_recency: float = 0.05
    half_life_days: float = 365.0
    per_note: int = 2
    second_chunk: float = 0.8  # a note's second-best chunk ranks at this fraction of the note's score
    types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    scope: str | None = None
    include_expired: bool = False
    include_superseded: bool = False
    min_confidence: float = 0.5
    min_relevance: float = 0.006  # no answer unless the best hit reaches this relevance (ADR-0088, ADR-0110)
    relative_cut: float = 0.0  # nor under this fraction of the best hit's relevance (0: off)
    rank_by: str = "fused"  # "fused" (the stages' order) | "relevance" (calibrated, when no reranker ran)
    blocks: bool = True  # deliver the hits' best blocks, not whole chunks (ADR-0116)
    today: dt.date | None = None
    config_filters: tuple[str, ...] = ()  # of types/tags/scope, those the config's `search:` set (no flag lifts them)
    zone: dt.tzinfo | None = None  # where an `expires` moment's day is counted (None: the process's; ADR-0111)
    config_warnings: tuple[str, ...] = ()  # the committed `search:` values left out (ADR-0119), said in the result
    config_refused: str = ""  # the committed config's first problem, when it was refused (defaults used)

    @classmethod
    def from_config(cls, values: dict[str, Any], **overrides: Any) -> SearchOptions:
        """Options from the ``search:`` section of ``.vaultsync.yaml`` plus explicit overrides.

        Raises:
            ValueError: an unknown option or a value of the wrong type or range
                (:data:`RANGES`).
        """
        merged = dict(values)
        merged.update({k: v for k, v in overrides.items() if v is not None})
        unknown = sorted(set(merged) - set(cls.__dataclass_fields__) - {"port"} | set(values) & {"config_filters", "config_warnings", "config_refused"})
        if unknown:
            import difflib

            close = difflib.get_close_matches(unknown[0], sorted(cls.__dataclass_fields__), n=1, cutoff=0.6)
            raise ValueError(f"unknown search option(s): {', '.join(unknown)}"
                             + (f" — did you mean '{close[0]}'?" if close else ""))
        merged.pop("port", None)
        for key in ("legs", "types", "tags"):
            if key in merged:
                value = merged[key]
                names = [value] if isinstance(value, str) else value
                if not isinstance(names, (list, tuple)) or not all(isinstance(v, str) for v in names):
                    raise ValueError(f"{key} must be a name or a list of names, got {value!r}")  # `[1, null]` too
                merged[key] = tuple(names)
        if isinstance(merged.get("scope"), str):
            merged["scope"] = folder_prefix(merged["scope"])
        merged["config_filters"] = tuple(k for k in ("types", "tags", "scope")
                                         if values.get(k) and overrides.get(k) is None)
        opts = cls(**merged)
        check_options(opts)
        return opts


def folder_prefix(scope: str) -> str | None:
    """A ``--scope`` folder as the prefix of the note paths under it: ``./docs//adr/`` is ``docs/adr/``
    (so ``docs/adrs`` is not under ``docs/adr``), ``.`` or ``""`` is the whole repository (None).

    Raises:
        ValueError: a path that leaves the repository (``../x``) or is absolute.
    """
    text = scope.replace("\\", "/")
    if text.startswith("/"):
        raise ValueError(f"scope must be a folder of the repository, got {scope!r}")
    norm = posixpath.normpath(text) if text else "."
    if norm == ".." or norm.startswith("../"):
        raise ValueError(f"scope {scope!r} leaves the repository")
    return None if norm == "." else norm + "/"


def config_problem(config: Config) -> Diagnostic | None:
    """The first of :func:`config_problems`, or None."""
    problems = config_problems(config)
    return problems[0] if problems else None


def config_problems(config: Config) -> list[Diagnostic]:
    """Each invalid value of ``config``'s ``search:`` section as a located CF002 diagnostic, in file order
    (``rerank`` and ``port`` are read elsewhere); a rule across values is judged once each value passes.
    ``vaultsync check`` reports them, so a config that would make every search fail never lands."""

    section = config.raw.get("search")
    if not isinstance(section, dict):
        return []
    values = {k: v for k, v in section.items() if k not in ("rerank", "port")}
    out = [d for k, v in values.items() if (d := _problem(config, {k: v})) is not None]
    if not out and (across := _problem(config, values)) is not None:  # a rule across values
        out.append(across)
    return out


def _problem(config: Config, values: dict[str, Any]) -> Diagnostic | None:
    """CF002 at the key of ``values`` (a ``search:`` section, or part of one) that the options refuse."""
    from vaultsync.vault.config import CONFIG_NAME

    try:
        SearchOptions.from_config(values)
    except (ValueError, TypeError) as exc:
        said = str(exc).removeprefix("unknown search option(s): ")
        key = next((k for k in values if said.startswith(str(k))), None)
        where: tuple[Any, ...] = ("search",) if key is None else ("search", key)
        line, col = config.positions.get(where, (0, 0))
        return Diagnostic(CONFIG_NAME, line + 1, col + 1, "CF002", f"{'.'.join(map(str, where))}: {exc}")
    return None
