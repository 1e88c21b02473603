"""What flows through the search stages: a query's :class:`Context` and its :class:`Candidates`.

Every stage is a function ``stage(ctx, cands) -> cands`` (:data:`Stage`): it reads the
context, returns the candidates with its own fields replaced and adds its entries to
``cands.trace``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from vaultsync.search.bm25 import Candidate
from vaultsync.search.dense import DenseLeg
from vaultsync.search.lifecycle import Exclusions, LifecyclePolicy
from vaultsync.search.options import SearchOptions
from vaultsync.search.query import Query
from vaultsync.search.results import Hit

if TYPE_CHECKING:
    from vaultsync.search.handles import IndexHandles


@dataclass(frozen=True)
class Context:
    """One query over one index.

    Attributes:
        index: the index's SQLite connections, dense legs and reranker.
        legs: the dense legs this query uses, by leg name (``dense``, ``dense2``), primary first.
        excluded: lifecycle exclusions (hidden notes, superseded → successor).
        allowed: note paths that may be returned (None: all), from filters and exclusions.
    """

    index: IndexHandles
    query: Query
    opts: SearchOptions
    legs: list[tuple[str, DenseLeg]]
    excluded: Exclusions
    allowed: set[str] | None

    def lifted(self, path: str) -> list[str]:
        """Why the lifecycle filters would hide ``path`` had ``--include-expired``/``--include-superseded``
        not lifted them (``superseded``, ``expired 2024-01-01``, ``unreadable expires``…); empty for a note
        they would show, and when neither flag is given."""
        opts = self.opts
        if not (opts.include_expired or opts.include_superseded):
            return []
        strict = self.index.excluded(LifecyclePolicy(False, False, opts.min_confidence, opts.today, opts.zone))
        return [strict.reasons[path], *strict.also.get(path, [])] if path in strict else []

    @property
    def shortlist(self) -> int:
        """How many notes leave fusion and how many chunks reach the rerank: enough for rerank and cut."""
        return max(self.opts.rerank_top, self.opts.top_k * 4)


@dataclass(frozen=True)
class Candidates:
    """The candidates of one query, as far as the stages have got.

    Attributes:
        query_vectors: leg name → the query's embedding, float32 [dim].
        chunk_legs: leg name → chunk candidates, best first (``bm25``, then the dense legs).
        note_legs: leg name → note path → the note's score in that leg, best first.
        weights: leg name → fusion weight for this query (:mod:`vaultsync.search.weights`).
        chunk_scores: chunk rowid → fused chunk score (orders a note's chunks).
        notes: note path → fused note score; supersession and the graph hop rewrite it.
        named: the notes the query names (:mod:`vaultsync.search.named`), in its order; ``names_only``:
            the query holds nothing else; ``named_headings``: note path → the heading a ``[[note#heading]]``
            names (case-folded), where a query of names starts that note.
        replaced: successor path → the superseded note it stands in for.
        graph_added: note path → how the graph hop reached it (seed, depth, score).
        ranked: ``(chunk rowid, score)`` best first: a note's best chunks, then the rerank's order.
        rows: chunk rowid → its chunk and note fields (:func:`vaultsync.search.rows.chunk_rows`).
        rerank: the reranker's name, when one ran.
        rerank_note: what the caller should know of the rerank stage (it left the order alone; it
            encoded its candidates at query time), said as a warning.
        relevance: chunk rowid → calibrated P(it answers the query) (:mod:`vaultsync.search.relevance`).
        hits: the result after the importance/recency blend, per-note cap, relevance floor and budget cut.
        best_rejected: when the floor left no hit, the best candidate it turned away.
        trace: chunk rowid → stage → its rank and score there (``--explain``).
    """

    query_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    chunk_legs: dict[str, list[Candidate]] = field(default_factory=dict)
    note_legs: dict[str, dict[str, float]] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    chunk_scores: dict[int, float] = field(default_factory=dict)
    notes: dict[str, float] = field(default_factory=dict)
    named: tuple[str, ...] = ()
    names_only: bool = False
    named_headings: dict[str, str] = field(default_factory=dict)
    replaced: dict[str, str] = field(default_factory=dict)
    graph_added: dict[str, dict[str, Any]] = field(default_factory=dict)
    ranked: list[tuple[int, float]] = field(default_factory=list)
    rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    rerank: str | None = None
    rerank_note: str = ""
    relevance: dict[int, float] = field(default_factory=dict)
    hits: list[Hit] = field(default_factory=list)
    best_rejected: dict[str, Any] | None = None
    trace: dict[int, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def traced(self, rowid: int) -> dict[str, dict[str, Any]]:
        """The trace of chunk ``rowid`` (created empty), for a stage to add its entry."""
        return self.trace.setdefault(rowid, {})

    def named_first(self) -> dict[str, int]:
        """The notes that go first, with their place: those the query names (``named``), and each
        successor that stands in for one (``replaced``), in the query's order."""
        place = {path: i for i, path in enumerate(self.named)}
        return place | {succ: place[old] for succ, old in self.replaced.items() if old in place}

    def best_chunk(self, rowids: list[int]) -> int | None:
        """The chunk of ``rowids`` (a note's) with the best fused chunk evidence, or None when empty."""
        return max(rowids, key=lambda r: self.chunk_scores.get(r, -1e9), default=None)


Stage = Callable[[Context, Candidates], Candidates]
