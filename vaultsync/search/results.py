"""What a search returns: the hits, each a chunk with its provenance, and what the caller should know."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ELISION = "\n\n…\n\n"  # between blocks of a hit's text that were not adjacent (blocks left out between them)
# an answer whose best relevance is under this is weak: the floor before ADR-0110, under which fall the best hits
# of 96 % of off-scope and half of the off-topic held-out questions, and 3 % of answerable ones (ADR-0123)
WEAK_RELEVANCE = 0.015


@dataclass
class Hit:
    """One result chunk with its provenance and its note's identity.

    ``score`` orders the hits (the importance/recency blend, relative to this result);
    ``relevance`` ∈ [0, 1] is the calibrated estimate that the chunk answers the query
    (None when no relevance model is loaded). ``memory_id``, ``type``, ``status``,
    ``confidence``, ``created`` and ``expires`` are the note's frontmatter values (None when unset).
    ``replaces``: the superseded note (path) this chunk of its successor stands in for: the old note
    matched, and its place and relevance passed to the note that replaces it; None for any other hit.
    ``left_out``: how many blocks of the chunk ``text`` leaves out, delivering only its best ones
    (:mod:`vaultsync.search.deliver`; 0: the whole chunk). ``lifted``: why the lifecycle filters would
    have hidden this note, shown because ``--include-expired``/``--include-superseded`` lifted them
    (``["superseded", "expired 2024-01-01"]``; empty for any other hit).
    """

    chunk_id: str
    path: str
    title: str
    heading: str
    text: str
    score: float
    start_line: int
    end_line: int
    blocks: list[str]
    links: list[str]
    tokens: int = 0
    trace: dict[str, dict[str, float]] = field(default_factory=dict)
    relevance: float | None = None
    memory_id: str | None = None
    type: str | None = None
    status: str | None = None
    confidence: float | None = None
    created: str | None = None
    expires: str | None = None
    replaces: str | None = None
    left_out: int = 0
    lifted: list[str] = field(default_factory=list)


@dataclass
class SearchResult:
    """Hits plus what the caller should know (stale index, token counting, timings).

    ``min_relevance``: the floor the best hit reached; ``best_rejected``: when it did not, the
    best candidate turned away (``chunk_id``, ``path``, ``relevance``), else None. ``hidden``:
    the matching notes the filters removed (:func:`vaultsync.search.hidden.hidden_matches`):
    ``{"count", "by_reason", "notes": [{"path", "memory_id", "reason", "show_with"}]}``. :attr:`weak`: the
    hits may not answer the query.
    """

    query: str
    hits: list[Hit]
    warnings: list[str]
    indexed_commit: str | None
    head: str | None
    token_counter: str
    rerank: str | None
    timings_ms: dict[str, float]
    min_relevance: float | None = None
    best_rejected: dict[str, Any] | None = None
    hidden: dict[str, Any] = field(default_factory=dict)

    @property
    def weak(self) -> bool:
        """Hits were delivered, but the best relevance is under :data:`WEAK_RELEVANCE`: they may not answer."""
        scored = [h.relevance for h in self.hits if h.relevance is not None]
        return bool(scored) and max(scored) < WEAK_RELEVANCE

    def to_dict(self) -> dict[str, Any]:
        """The fields, and ``weak`` (:attr:`weak`)."""
        return {**asdict(self), "weak": self.weak}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SearchResult:
        """Inverse of :meth:`to_dict` (what the daemon sends back)."""
        hits = [Hit(**h) for h in data.get("hits", [])]
        return cls(**{**{k: v for k, v in data.items() if k != "weak"}, "hits": hits})
