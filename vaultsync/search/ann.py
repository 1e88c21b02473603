"""A dense leg served by LanceDB's IVF_SQ index, for vaults past ``index.ann_min_rows`` vectors (ADR-0073, ADR-0084).

Below the threshold a leg holds its vectors in memory and scans them exactly
(:mod:`vaultsync.search.dense`). Past it that matrix would cost ~0.7 GiB per
embedder at 100,000 notes, so the leg queries the sync's LanceDB table instead,
at the version SQLite's ``meta.lance_versions`` names (the table can be ahead of
the SQLite state a reader holds, never behind it: a leg is only built when
``meta.lance_tree`` is the indexed tree). Hits are mapped to SQLite rowids by
chunk id; the few exact cosines later stages ask for are read from SQLite.

Filters: when the notes a query may see hold at most ``EXACT_SCAN_ROWS`` rows, those
rows are read from SQLite and compared one by one (exact, and cheaper than probing
partitions for a narrow filter: ~40 ms per 10,000 rows of 384 dimensions). Otherwise
the notes it may not see are excluded inside the ANN search (``path NOT IN``, or
``path IN`` when fewer are allowed), which probes further partitions until it has
``limit`` allowed rows. A table that fails mid-query
(damaged files, a version compacted away under a long-lived reader) turns the leg
into the exact one over SQLite's vectors; the next sync rebuilds an unreadable index.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from typing import Any

import numpy as np

from vaultsync.search.bm25 import Candidate
from vaultsync.search.dense import DenseLeg, NoteScoring, QueryEmbedder, load_leg

# (leg name, dimensions, table version) -> the leg's vector table at that version, with
# ``nearest(vector, limit, kind, paths=None, exclude=False)`` and ``has_ann_index()``
# (vaultsync.index.vector_store.ChunkVectors.at_version, bound to the index's folder by the engine).
OpenTable = Callable[[str, int, int], Any]
PATH_LIST_MAX = 5_000  # paths in one IN list; past it the leg over-fetches and filters after
EXACT_SCAN_ROWS = 8_192  # allowed rows compared one by one rather than searched through the ANN index
LANCE_ERRORS = (OSError, RuntimeError, ValueError)  # what LanceDB raises for files it cannot read


class SqliteVectors:
    """Exact cosines of a few chunks, read from SQLite (what the ANN leg offers later stages)."""

    def __init__(self, db: sqlite3.Connection, model: str) -> None:
        self._db, self._model = db, model

    @functools.cached_property
    def rows(self) -> int:
        """The model's chunk vectors, counted when first asked (reading every vector row: 2.6 s at 450,000
        chunks, which a cold search must not pay)."""
        return int(self._db.execute("SELECT count(*) FROM vectors WHERE model = ? AND kind = 'chunk'",
                                    (self._model,)).fetchone()[0])

    def __len__(self) -> int:
        return self.rows

    def similarity(self, query_vector: np.ndarray, rowids: list[int], exact: bool = True) -> dict[int, float]:
        """Cosine of ``query_vector`` with the given chunks (missing rowids are skipped); always exact."""
        if not rowids:
            return {}
        marks = ",".join("?" * len(rowids))
        found = self._db.execute(
            # CROSS JOIN keeps chunks outermost: with a plain JOIN, SQLite's planner may walk every
            # vector of the model (vectors_hash) and probe chunks, ~15 s at 300,000 chunks.
            f"SELECT c.rowid, v.vector FROM chunks c CROSS JOIN vectors v ON v.model = ? AND v.id = c.id "
            f"WHERE c.rowid IN ({marks})", [self._model, *rowids]).fetchall()
        if not found:
            return {}
        matrix = np.frombuffer(b"".join(blob for _, blob in found), "<f4").reshape(len(found), -1)
        scores = matrix @ np.asarray(query_vector, np.float32)
        return {int(r): float(s) for (r, _), s in zip(found, scores)}

    def nearest_in(self, query_vector: np.ndarray, limit: int, kind: str, paths: set[str],
                   most: int = EXACT_SCAN_ROWS) -> list[tuple[str, str, float]] | None:
        """The ``limit`` rows of ``kind`` (chunk or name) of the notes in ``paths`` nearest ``query_vector``,
        exactly: (id, path, cosine), best first, ties by id; None when those notes hold more than ``most``
        rows (chunks are counted first on the ``chunks_path`` index, so such a filter reads no vector; names,
        a few per note, are read no further than ``most + 1``). ``paths``: at most SQLite's variable limit."""
        marks = ",".join("?" * len(paths))
        ordered = sorted(paths)
        if kind == "chunk" and self._db.execute(  # counted on the chunks_path index alone: no vector is read
                f"SELECT count(*) FROM (SELECT 1 FROM chunks WHERE path IN ({marks}) LIMIT ?)",
                [*ordered, most + 1]).fetchone()[0] > most:
            return None
        found = self._db.execute(
            # +model keeps SQLite on the path index: by (model, id) it would walk every vector of the model
            f"SELECT id, path, vector FROM vectors WHERE +model = ? AND kind = ? AND path IN ({marks}) LIMIT ?",
            [self._model, kind, *ordered, most + 1]).fetchall()
        if len(found) > most:
            return None
        if not found:
            return []
        matrix = np.frombuffer(b"".join(blob for _, _, blob in found), "<f4").reshape(len(found), -1)
        norms = np.linalg.norm(matrix, axis=1)
        cosines = (matrix @ np.asarray(query_vector, np.float32)) / np.where(norms > 0, norms, 1.0)
        rows = [(i, p, float(c)) for (i, p, _), c in zip(found, cosines.tolist())]
        return sorted(rows, key=lambda r: (-r[2], r[0]))[:limit]

    def vector(self, rowid: int) -> np.ndarray | None:
        """The chunk's float32 [dim] vector, or None when it has none of this model."""
        found = self._db.execute("SELECT v.vector FROM chunks c CROSS JOIN vectors v ON v.model = ? AND v.id = c.id "
                                 "WHERE c.rowid = ?", (self._model, rowid)).fetchone()
        return None if found is None else np.frombuffer(found[0], "<f4")


class AnnLeg(NoteScoring):
    """One embedder's leg over its LanceDB table (``table``: see :data:`OpenTable`) at the indexed version."""

    def __init__(self, name: str, embedder: QueryEmbedder, table: Any, db: sqlite3.Connection,
                 info: dict[str, Any]) -> None:
        self.name, self.embedder, self.table, self._db, self._info = name, embedder, table, db, info
        self.chunks = SqliteVectors(db, info.get("id", getattr(embedder, "model_id", "")))
        self._exact: DenseLeg | None = None
        self._denied: tuple[set[str] | None, frozenset[str]] = (None, frozenset())

    @functools.cached_property
    def note_paths(self) -> frozenset[str]:
        """Every note's path (read when a filter first needs it)."""
        return frozenset(p for (p,) in self._db.execute("SELECT path FROM notes"))

    def top_chunks(self, query_vector: np.ndarray, limit: int, allowed: set[str] | None) -> list[Candidate]:
        """The ``limit`` chunks nearest ``query_vector`` among the notes in ``allowed`` (None: all)."""
        if self._exact is None:
            try:
                found = self._nearest(query_vector, limit, "chunk", allowed)
                rowid_of = self._rowids([i for i, _, _ in found])
                hits = [(rowid_of[i], s) for i, _, s in found if i in rowid_of]
                return [Candidate(r, s, rank) for rank, (r, s) in enumerate(hits)]
            except LANCE_ERRORS:
                self._fall_back()
        return self._exact.top_chunks(query_vector, limit, allowed) if self._exact else []

    def top_names(self, query_vector: np.ndarray, limit: int, allowed: set[str] | None,
                  scope: str | None) -> list[tuple[str, float]]:
        if self._exact is None:
            try:
                within = allowed
                if scope:
                    within = {p for p in (self.note_paths if allowed is None else allowed) if p.startswith(scope)}
                best: dict[str, float] = {}  # a note's title and alias rows: its best one
                for _, path, sim in self._nearest(query_vector, limit, "name", within):
                    best.setdefault(path, sim)
                return list(best.items())
            except LANCE_ERRORS:
                self._fall_back()
        return self._exact.top_names(query_vector, limit, allowed, scope) if self._exact else []

    def _fall_back(self) -> None:
        """The table failed mid-query (damaged files, or a version a sync has compacted away):
        serve this leg from SQLite's vectors, exactly, for as long as this reader lives."""
        self._exact = load_leg(self._db, self.name, self.embedder, self._info)

    def _nearest(self, query_vector: np.ndarray, limit: int, kind: str,
                 allowed: set[str] | None) -> list[tuple[str, str, float]]:
        """The table's ``limit`` nearest rows of ``kind`` in ``allowed``: (id, path, cosine)."""
        if allowed is None:
            return self.table.nearest(query_vector, limit, kind)  # type: ignore[no-any-return]
        if not allowed:
            return []
        if self._denied[0] is not allowed:  # one set difference per query, not per call
            self._denied = (allowed, self.note_paths - allowed)
        denied = self._denied[1]
        if not denied:
            return self.table.nearest(query_vector, limit, kind)  # type: ignore[no-any-return]
        if len(allowed) <= min(EXACT_SCAN_ROWS, PATH_LIST_MAX):  # few notes may hold few rows: compare them all
            exact = self.chunks.nearest_in(query_vector, limit, kind, allowed, EXACT_SCAN_ROWS)
            if exact is not None:
                return exact
        if min(len(denied), len(allowed)) <= PATH_LIST_MAX:
            if len(denied) <= len(allowed):
                return self.table.nearest(query_vector, limit, kind, denied, exclude=True)  # type: ignore[no-any-return]
            return self.table.nearest(query_vector, limit, kind, allowed)  # type: ignore[no-any-return]
        fetch = limit * 4
        while True:  # many paths on both sides: fetch deeper until enough allowed rows are found
            found = self.table.nearest(query_vector, fetch, kind)
            kept = [row for row in found if row[1] in allowed]
            if len(kept) >= limit or len(found) < fetch:
                return kept[:limit]
            fetch *= 4

    def _rowids(self, ids: list[str]) -> dict[str, int]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        return {i: int(r) for r, i in self._db.execute(f"SELECT rowid, id FROM chunks WHERE id IN ({marks})", ids)}


def load_ann_leg(db: sqlite3.Connection, open_table: OpenTable, name: str, embedder: QueryEmbedder,
                 info: dict[str, Any], version: int) -> AnnLeg | None:
    """The ANN leg ``name`` over the table ``open_table(name, dim, version)`` gives, or None when it
    cannot be read or has no ANN index (the caller falls back to the exact leg)."""
    dim = int(info.get("dim") or embedder.dim)
    try:
        table = open_table(name, dim, version)
        if not table.has_ann_index():
            return None
    except LANCE_ERRORS:
        return None
    return AnnLeg(name, embedder, table, db, info)
