"""Dense legs: one per embedder, exact cosine top-N over the index's chunk and note-name vectors.

Vectors are L2-normalised, so cosine is a dot product; an exact scan of
100k × 384 float32 takes ~10 ms. A leg's vectors are read from the index's SQLite
file once and kept in memory (:func:`load_leg`). Past ``index.ann_min_rows``
vectors the leg is served by LanceDB's ANN index instead (:mod:`vaultsync.search.ann`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from vaultsync.search.bm25 import Candidate


class QueryEmbedder(Protocol):
    model_id: str

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]: ...


class VectorIndex:
    """Chunk vectors aligned with SQLite ``chunks.rowid``.

    Args:
        rowids: int64 [n] SQLite rowids.
        matrix: float32 [n, dim], L2-normalised rows.
    """

    def __init__(self, rowids: np.ndarray, matrix: np.ndarray) -> None:
        self.rowids = np.asarray(rowids, dtype=np.int64)
        self.matrix = np.asarray(matrix, dtype=np.float32)
        self._pos = {int(r): i for i, r in enumerate(self.rowids)}

    def __len__(self) -> int:
        return len(self.rowids)

    def top(self, query_vector: np.ndarray, limit: int, allowed: np.ndarray | None = None) -> list[Candidate]:
        """The ``limit`` chunks most similar to ``query_vector`` (float32 [dim]).

        Args:
            allowed: optional bool mask [n] (e.g. a folder scope); False rows are skipped.
        """
        if not len(self.rowids):
            return []
        scores = self.matrix @ np.asarray(query_vector, dtype=np.float32)
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)
        n = min(limit, int(np.isfinite(scores).sum()))
        if n <= 0:
            return []
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.lexsort((self.rowids[top], -scores[top]))]
        return [Candidate(int(self.rowids[i]), float(scores[i]), rank) for rank, i in enumerate(top)]

    def similarity(self, query_vector: np.ndarray, rowids: list[int]) -> dict[int, float]:
        """Cosine of ``query_vector`` with the given chunks (missing rowids are skipped)."""
        idx = [self._pos[r] for r in rowids if r in self._pos]
        if not idx:
            return {}
        scores = self.matrix[idx] @ np.asarray(query_vector, dtype=np.float32)
        return {int(self.rowids[i]): float(s) for i, s in zip(idx, scores)}


class NoteScoring:
    """Note-level scores of a dense leg, from its chunk hits and its note-name vectors."""

    def top_names(self, query_vector: np.ndarray, limit: int, allowed: set[str] | None,
                  scope: str | None) -> list[tuple[str, float]]:
        """The ``limit`` name vectors nearest ``query_vector`` in ``allowed`` and under ``scope``:
        (note path, cosine), best first."""
        raise NotImplementedError

    def best_notes(self, chunks: list[Candidate], paths: dict[int, str], names: list[tuple[str, float]],
                   name_weight: float) -> dict[str, float]:
        """Notes by their vectors, best first: a note's best chunk cosine ``c``, raised by its name
        vector's cosine ``n`` (``names``: :meth:`top_names`) to ``c + name_weight * max(0, n - c)``:
        1 takes the larger of the two. Below 1, notes whose names are alike (a series "X (1)",
        "X (2)"…) are ordered by their content, not by noise in near-equal name cosines. A note found
        by its name only takes for ``c`` the lowest chunk cosine of ``chunks``, which bounds its own
        best chunk from above.

        Args:
            chunks: this leg's chunk candidates; ``paths`` maps their rowids to note paths.
        """
        best: dict[str, float] = {}
        for c in chunks:
            p = paths.get(c.rowid)  # None: a chunk a sync removed after this reader loaded its vectors
            if p is not None and c.score > best.get(p, -2.0):
                best[p] = c.score
        floor = min((c.score for c in chunks), default=None)
        for p, sim in names:
            content = best.get(p, sim if floor is None else min(floor, sim))
            best[p] = content + name_weight * max(0.0, sim - content)
        return dict(sorted(best.items(), key=lambda kv: -kv[1]))


@dataclass
class DenseLeg(NoteScoring):
    """One embedder's vectors in memory: chunk vectors aligned with SQLite rowids, and note-name vectors."""

    name: str
    embedder: QueryEmbedder
    chunks: VectorIndex
    chunk_paths: np.ndarray
    name_paths: list[str]
    name_matrix: np.ndarray

    def top_chunks(self, query_vector: np.ndarray, limit: int, allowed: set[str] | None) -> list[Candidate]:
        """The ``limit`` chunks nearest ``query_vector`` among the notes in ``allowed`` (None: all)."""
        mask = None
        if allowed is not None:
            mask = np.fromiter((p in allowed for p in self.chunk_paths), dtype=bool, count=len(self.chunk_paths))
        return self.chunks.top(query_vector, limit, mask)

    def top_names(self, query_vector: np.ndarray, limit: int, allowed: set[str] | None,
                  scope: str | None) -> list[tuple[str, float]]:
        if not len(self.name_paths):
            return []
        sims = self.name_matrix @ query_vector
        if allowed is not None or scope:
            ok = np.fromiter(((allowed is None or p in allowed) and (not scope or p.startswith(scope))
                              for p in self.name_paths), dtype=bool, count=len(self.name_paths))
            sims = np.where(ok, sims, -np.inf)
        k = min(len(sims), limit)
        top = np.argpartition(-sims, k - 1)[:k]
        return [(self.name_paths[i], float(sims[i])) for i in top[np.argsort(-sims[top])] if np.isfinite(sims[i])]


def load_leg(db: sqlite3.Connection, name: str, embedder: QueryEmbedder, info: dict[str, Any]) -> DenseLeg | None:
    """The leg ``name`` of ``embedder`` (``info``: the index's ``embed_models`` entry, ``id`` and ``dim``),
    or None when the index holds no chunk vectors of that model."""
    model, dim = info.get("id", getattr(embedder, "model_id", "")), int(info.get("dim") or embedder.dim)
    # v.path (written with the chunk's own path) keeps the chunks lookup inside its id index: reading
    # each chunk row for c.path took 0.47 s instead of 0.30 s a model at 45,000 chunks (6.6 s uncached)
    rowids, paths, matrix = read_vectors(
        db, "SELECT c.rowid, v.path, v.vector FROM vectors v JOIN chunks c ON c.id = v.id "
        "WHERE v.model = ? AND v.kind = 'chunk'", model, dim)
    if not len(rowids):
        return None
    _, names, name_matrix = read_vectors(
        db, "SELECT 0, path, vector FROM vectors WHERE model = ? AND kind = 'name'", model, dim)
    return DenseLeg(name, embedder, VectorIndex(rowids, matrix), paths, list(names), name_matrix)


def read_vectors(db: sqlite3.Connection, sql: str, model: str, dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rowids int64[n], paths object[n], vectors float32[n, dim]) streamed into preallocated arrays, so
    loading never holds a second copy of the vectors (peak memory ≈ the final matrix). The arrays are
    sized by the model's row count (a covering-index count; names included): the pages of ``np.empty``
    that are never written are never resident.

    Args:
        sql: selects ``(rowid, path, vector blob)`` rows of ``model``, one ``?`` parameter.
    """
    n = db.execute("SELECT count(*) FROM vectors WHERE model = ?", (model,)).fetchone()[0]
    rowids, paths = np.empty(n, np.int64), np.empty(n, dtype=object)
    matrix = np.empty((n, dim), np.float32)
    cursor, i = db.execute(sql, (model,)), 0
    while batch := cursor.fetchmany(4096):
        j = i + len(batch)
        ids, ps, blobs = zip(*batch)
        rowids[i:j], paths[i:j] = ids, ps
        matrix[i:j] = np.frombuffer(b"".join(blobs), "<f4").reshape(j - i, dim)
        i = j
    return rowids[:i], paths[:i], matrix[:i]
