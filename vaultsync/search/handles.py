"""The warm handles of one index: its SQLite connections, each embedder's vectors, the reranker."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from vaultsync.search.dense import DenseLeg, QueryEmbedder, VectorIndex, load_leg

if TYPE_CHECKING:
    from vaultsync.search.ann import AnnLeg, OpenTable, SqliteVectors
from vaultsync.search.lifecycle import Exclusions, LifecyclePolicy, exclusions
from vaultsync.search.named import note_names
from vaultsync.search.relevance import RelevanceModels, shipped_model
from vaultsync.search.rows import add_functions, note_chunk_rowids
from vaultsync.sqlite_uri import connect_readonly

NOTE_CHUNKS_KEPT = 20_000  # notes whose chunk rowids a warm searcher keeps (~100 bytes each)


class Reranker(Protocol):
    """A rerank stage: relevance of each passage to the query, float32 ``[len(passages)]`` in [0, 1]."""

    name: str

    def score(self, query: str, passages: list[str]) -> np.ndarray: ...


class IndexHandles:
    """Holds the warm resources of one index state: SQLite, the vectors of each embedder, the models.

    Args:
        db_path: the index's ``index.sqlite``.
        embedders: embedder name → query embedder, primary first (the legs ``dense``,
            ``dense2``, ...); a single embedder is taken as the primary one. None: BM25 only.
        reranker: rerank stage (None: no rerank).
        open_table: opens a leg's LanceDB vector table (:data:`vaultsync.search.ann.OpenTable`); with
            it, a leg the sync gave an ANN index is read from LanceDB (ADR-0073). None: every leg
            is held in memory.
        relevance_model: the calibrated relevance models (default: the shipped ones,
            :func:`vaultsync.search.relevance.shipped_model`; None: hits carry no relevance and
            nothing is cut by it).
    """

    def __init__(self, db_path: Path, embedders: dict[str, QueryEmbedder] | QueryEmbedder | None,
                 reranker: Reranker | None = None, relevance_model: RelevanceModels | None | str = "shipped",
                 open_table: OpenTable | None = None) -> None:
        self.db_path = db_path
        self.db = connect_readonly(db_path, check_same_thread=False, timeout=10)
        add_functions(self.db)
        # a second connection lets whole-note BM25 run beside chunk BM25 (one connection serialises)
        self.notes_db = connect_readonly(db_path, check_same_thread=False, timeout=10)
        self.meta = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        self.reranker = reranker
        self.relevance_model = shipped_model() if relevance_model == "shipped" else relevance_model
        self._exclusions: dict[LifecyclePolicy, Exclusions] = {}
        self._chunks_of: dict[str, list[int]] = {}
        self._note_names: dict[str, list[str]] | None = None
        self._exact_dbs: list[sqlite3.Connection] = []
        models = json.loads(self.meta.get("embed_models") or "{}")
        if embedders is not None and not isinstance(embedders, dict):
            embedders = {next(iter(models), "primary"): embedders}
        self.legs: list[DenseLeg | AnnLeg] = []
        for name, embedder in (embedders or {}).items():
            leg = self._ann_leg(open_table, name, embedder, models.get(name) or {}) if open_table else None
            if leg is None:  # each in-memory leg re-scores on a connection of its own (run beside BM25)
                exact_db = connect_readonly(db_path, check_same_thread=False, timeout=10)
                self._exact_dbs.append(exact_db)
                leg = load_leg(self.db, name, embedder, models.get(name) or {}, exact_db, db_path.parent / "legs")
            if leg is not None:
                self.legs.append(leg)

    def _ann_leg(self, open_table: OpenTable, name: str, embedder: QueryEmbedder,
                 info: dict[str, object]) -> AnnLeg | None:
        """The LanceDB leg of ``name`` when the sync built its ANN index for the indexed tree (ADR-0073)."""
        if name not in json.loads(self.meta.get("lance_ann") or "[]") or \
                self.meta.get("lance_tree") != self.meta.get("indexed_tree"):
            return None
        version = json.loads(self.meta.get("lance_versions") or "{}").get(name)
        if version is None:
            return None
        from vaultsync.search.ann import load_ann_leg

        return load_ann_leg(self.db, open_table, name, embedder, info, int(version))

    @property
    def embedder(self) -> QueryEmbedder | None:
        """The primary embedder (token counts, MaxSim), if loaded."""
        return self.legs[0].embedder if self.legs else None

    @property
    def vectors(self) -> VectorIndex | SqliteVectors | None:
        """The primary embedder's chunk vectors."""
        return self.legs[0].chunks if self.legs else None

    def excluded(self, policy: LifecyclePolicy) -> Exclusions:
        """Lifecycle exclusions, evaluated once per policy and day (the handles hold one index state)."""
        policy = replace(policy, today=policy.today or dt.datetime.now(dt.timezone.utc).date())
        if policy not in self._exclusions:
            self._exclusions[policy] = exclusions(self.db, policy)
        return self._exclusions[policy]

    def note_names(self) -> dict[str, list[str]]:
        """``{name key: paths}`` of memory_ids and file names (:func:`vaultsync.search.named.note_names`),
        read on first use."""
        if self._note_names is None:
            self._note_names = note_names(self.db)
        return self._note_names

    def note_chunks(self, path: str) -> list[int]:
        """The rowids of a note's chunks in document order, read per note (reading every note's at once
        took 1 s at 100,000 notes) and kept for up to ``NOTE_CHUNKS_KEPT`` notes."""
        if (rowids := self._chunks_of.get(path)) is None:
            if len(self._chunks_of) >= NOTE_CHUNKS_KEPT:
                self._chunks_of.clear()
            rowids = self._chunks_of[path] = note_chunk_rowids(self.db, path)
        return rowids

    def close(self) -> None:
        self.db.close()
        self.notes_db.close()
        for db in self._exact_dbs:
            db.close()
