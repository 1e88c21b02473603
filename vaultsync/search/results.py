"""What a search returns: the hits, each a chunk with its provenance, and what the caller should know."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Hit:
    """One result chunk with its provenance."""

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


@dataclass
class SearchResult:
    """Hits plus what the caller should know (stale index, token counting, timings)."""

    query: str
    hits: list[Hit]
    warnings: list[str]
    indexed_commit: str | None
    head: str | None
    token_counter: str
    rerank: str | None
    timings_ms: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SearchResult:
        """Inverse of :meth:`to_dict` (what the daemon sends back)."""
        hits = [Hit(**h) for h in data.get("hits", [])]
        return cls(**{**data, "hits": hits})
