"""Dense legs: one per embedder, exact cosine top-N over the index's chunk and note-name vectors.

Vectors are L2-normalised, so cosine is a dot product. A leg's vectors are read from the index's
SQLite file once and kept in memory as int8 codes (cached beside the index for the next process,
:mod:`vaultsync.search.leg_cache`), and each search's best rows are re-scored with
their float32 vectors from SQLite (:class:`VectorIndex`, :func:`load_leg`). Past ``index.ann_min_rows``
vectors the leg is served by LanceDB's ANN index instead (:mod:`vaultsync.search.ann`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from vaultsync.search import int8_dot, leg_cache
from vaultsync.search.bm25 import Candidate


class QueryEmbedder(Protocol):
    model_id: str

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]: ...


class ExactVectors:
    """Float32 vectors of one model read from the index's ``vectors`` table by rowid (~5 µs a row
    from the page cache; by the ``(model, id)`` key it took twice that). Thread-safe when ``db`` was
    opened with ``check_same_thread=False`` (SQLite serialises a connection's calls)."""

    BATCH = 500  # rowids per statement (well under SQLite's variable limit)

    def __init__(self, db: sqlite3.Connection, model: str, dim: int) -> None:
        self.db, self.model, self.dim = db, model, dim

    def fetch(self, rowids: Sequence[int], ids: Sequence[str]) -> dict[int, np.ndarray]:
        """Position in ``rowids`` → float32 [dim] vector, for the rows that still hold this model's vector
        of the id at the same position (a sync may have deleted a row, or reused its rowid)."""
        want = {int(r): (j, vid) for j, (r, vid) in enumerate(zip(rowids, ids))}
        keys = list(want)
        out: dict[int, np.ndarray] = {}
        for i in range(0, len(keys), self.BATCH):
            part = keys[i:i + self.BATCH]
            sql = f"SELECT rowid, model, id, vector FROM vectors WHERE rowid IN ({','.join('?' * len(part))})"
            for rowid, model, vid, blob in self.db.execute(sql, part):
                j, expected = want[rowid]
                if vid == expected and model == self.model and len(blob) == 4 * self.dim:
                    out[j] = np.frombuffer(blob, "<f4")
        return out


class VectorIndex:
    """Vectors aligned with SQLite rowids, held as int8 codes and re-scored exactly from SQLite.

    Each row is stored as int8 codes with one float32 scale (symmetric scalar quantisation:
    ``code = round(x / s)``, ``s = max|x| / 127``), a quarter of float32's memory. A search scores every
    row from its codes (:mod:`int8_dot`: ~4 ms for 55,000 × 384 on one core), keeps the best
    ``limit`` rows and a margin (``POOL_EXTRA``), and scores those again with their exact float32 vectors
    (:class:`ExactVectors`). The answer is exact search's unless a row of the exact top ``limit`` scored
    below the pool on its codes (a cosine's code error is ~1e-3; recall against exact search is
    measured by ``bench/bench_int8.py``, ADR-0085). A row the table no longer holds (a sync removed it
    after this reader loaded) keeps its code score.

    Args:
        rowids: int64 [n] SQLite rowids (chunks), or positions (names).
        ids: object [n] vector ids and ``vector_rowids``: int64 [n] their rows in the ``vectors`` table.
        codes: int8 [n, dim]; scales: float32 [n] (see :func:`quantise`).
        exact: where the float32 vectors are read.
    """

    POOL_EXTRA = 0.25  # rows re-scored beyond ``limit``, as a fraction of it ...
    POOL_EXTRA_MIN = 16  # ... and at least this many

    def __init__(self, rowids: np.ndarray, ids: np.ndarray, vector_rowids: np.ndarray, codes: np.ndarray,
                 scales: np.ndarray, exact: ExactVectors) -> None:
        self.rowids = np.asarray(rowids, dtype=np.int64)
        self.ids, self.vector_rowids, self.codes, self.scales, self.exact = ids, vector_rowids, codes, scales, exact
        self._pos = {int(r): i for i, r in enumerate(self.rowids)}

    def __len__(self) -> int:
        return len(self.rowids)

    def approximate(self, query_vector: np.ndarray) -> np.ndarray:
        """Every row's cosine with ``query_vector`` (float32 [dim]) from its codes: float32 [n].

        One integer matrix product over the int8 codes (:func:`int8_dot.dot`, the query quantised
        too): no float32 copy of the matrix, and no BLAS call, whose thread pool the legs searched
        side by side would queue on (blockwise float32 matmuls took 22-39 ms a leg that way)."""
        out = int8_dot.dot(self.codes, query_vector)
        out *= self.scales
        return out

    def top(self, query_vector: np.ndarray, limit: int, allowed: np.ndarray | None = None) -> list[Candidate]:
        """The ``limit`` rows most similar to ``query_vector`` (float32 [dim]), exact cosines, best first
        (ties: lower rowid first).

        Args:
            allowed: optional bool mask [n] (e.g. a folder scope); False rows are skipped.
        """
        if not len(self.rowids):
            return []
        scores = self.approximate(query_vector)
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)
        finite = int(np.isfinite(scores).sum())
        n = min(limit, finite)
        if n <= 0:
            return []
        pool = min(finite, n + max(int(n * self.POOL_EXTRA), self.POOL_EXTRA_MIN))
        cand = np.argpartition(-scores, pool - 1)[:pool]
        exact = self._rescore(query_vector, cand, scores[cand])
        order = np.lexsort((self.rowids[cand], -exact))[:n]
        return [Candidate(int(self.rowids[cand[i]]), float(exact[i]), rank) for rank, i in enumerate(order)]

    def similarity(self, query_vector: np.ndarray, rowids: list[int], exact: bool = True) -> dict[int, float]:
        """Cosine of ``query_vector`` with the given rows (rowids not held are skipped); ``exact=False``:
        the codes' estimate (enough to order a note's chunks), without reading SQLite."""
        at = np.array([self._pos[r] for r in rowids if r in self._pos], dtype=np.int64)
        if not len(at):
            return {}
        q = np.asarray(query_vector, dtype=np.float32)
        approx = (self.codes[at].astype(np.float32) @ q) * self.scales[at]
        scores = self._rescore(q, at, approx) if exact else approx
        return {int(self.rowids[i]): float(s) for i, s in zip(at, scores)}

    def vector(self, rowid: int) -> np.ndarray | None:
        """The row's float32 [dim] vector (its codes' estimate when the table no longer holds it), or
        None when this index does not hold the row."""
        at = self._pos.get(rowid)
        if at is None:
            return None
        found = self.exact.fetch([int(self.vector_rowids[at])], [self.ids[at]])
        return found[0] if found else self.codes[at].astype(np.float32) * self.scales[at]

    def _rescore(self, query_vector: np.ndarray, at: np.ndarray, approx: np.ndarray) -> np.ndarray:
        """Exact cosines of the rows at positions ``at`` (float32 [len(at)]); ``approx`` where unread."""
        found = self.exact.fetch(self.vector_rowids[at].tolist(), self.ids[at].tolist())
        out = np.array(approx, dtype=np.float32)
        if found:
            hit = list(found)
            out[hit] = np.stack([found[j] for j in hit]) @ np.asarray(query_vector, dtype=np.float32)
        return out


def quantise(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 scalar quantisation per row: (codes int8 [n, dim], scales float32 [n]) with
    ``matrix ≈ codes * scales[:, None]``; an all-zero row gets scale 0."""
    peak = np.abs(matrix).max(axis=1) if len(matrix) else np.zeros(0, np.float32)
    scales = (peak / 127.0).astype(np.float32)
    safe = np.where(scales > 0, scales, 1.0).astype(np.float32)
    codes = np.clip(np.rint(matrix / safe[:, None]), -127, 127).astype(np.int8)
    return codes, scales


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
    """One embedder's vectors in memory (int8, see :class:`VectorIndex`): chunk vectors aligned with
    SQLite rowids, and note-name vectors (rowids: their positions in ``name_paths``)."""

    name: str
    embedder: QueryEmbedder
    chunks: VectorIndex
    chunk_paths: np.ndarray
    name_paths: list[str]
    names: VectorIndex

    def top_chunks(self, query_vector: np.ndarray, limit: int, allowed: set[str] | None) -> list[Candidate]:
        """The ``limit`` chunks nearest ``query_vector`` among the notes in ``allowed`` (None: all)."""
        mask = None
        if allowed is not None:
            mask = np.fromiter((p in allowed for p in self.chunk_paths), dtype=bool, count=len(self.chunk_paths))
        return self.chunks.top(query_vector, limit, mask)

    def top_names(self, query_vector: np.ndarray, limit: int, allowed: set[str] | None,
                  scope: str | None) -> list[tuple[str, float]]:
        mask = None
        if allowed is not None or scope:
            mask = np.fromiter(((allowed is None or p in allowed) and (not scope or p.startswith(scope))
                                for p in self.name_paths), dtype=bool, count=len(self.name_paths))
        return [(self.name_paths[c.rowid], c.score) for c in self.names.top(query_vector, limit, mask)]


def load_leg(db: sqlite3.Connection, name: str, embedder: QueryEmbedder, info: dict[str, Any],
             exact_db: sqlite3.Connection | None = None, cache_dir: Path | None = None) -> DenseLeg | None:
    """The leg ``name`` of ``embedder`` (``info``: the index's ``embed_models`` entry, ``id`` and ``dim``),
    or None when the index holds no chunk vectors of that model.

    Args:
        exact_db: the connection that re-scores searches exactly (default ``db``); a leg of its own
            keeps its lookups from queueing behind BM25 on a shared connection.
        cache_dir: where the leg's arrays are cached for the index's generation (:mod:`leg_cache`,
            memory-mapped: a cold process skips reading SQLite); None: always read SQLite.
    """
    model, dim = info.get("id", getattr(embedder, "model_id", "")), int(info.get("dim") or embedder.dim)
    exact = ExactVectors(exact_db or db, model, dim)
    generation = _generation(db) if cache_dir is not None else None
    cached = leg_cache.load(cache_dir, model, generation, dim) if cache_dir and generation else None
    if cached is None:
        cached = _read_leg(db, model, dim)
        if cache_dir and generation and _generation(db) == generation:  # no sync committed meanwhile
            leg_cache.save(cache_dir, model, generation, dim, *cached)
    a, s = cached
    if not len(a["rowids"]):
        return None
    return DenseLeg(name, embedder, VectorIndex(a["rowids"], np.array(s["ids"], dtype=object), a["vector_rowids"],
                                                a["codes"], a["scales"], exact),
                    _shared(s["paths"]), s["name_paths"],
                    VectorIndex(np.arange(len(s["name_paths"])), np.array(s["name_ids"], dtype=object),
                                a["name_vector_rowids"], a["name_codes"], a["name_scales"], exact))


def _generation(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return row[0] if row else None


def _shared(paths: list[str]) -> np.ndarray:
    """``paths`` as an object array in which equal paths share one string."""
    shared: dict[str, str] = {}
    return np.array([shared.setdefault(p, p) for p in paths], dtype=object)


def _read_leg(db: sqlite3.Connection, model: str, dim: int) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    """A leg's arrays read from SQLite, in :mod:`leg_cache`'s shape: numeric arrays and string lists."""
    # v.path (written with the chunk's own path) keeps the chunks lookup inside its id index: reading
    # each chunk row for c.path took 0.47 s instead of 0.30 s a model at 45,000 chunks (6.6 s uncached)
    rowids, paths, (ids, vector_rowids, codes, scales) = read_vectors(
        db, "SELECT c.rowid, v.path, v.id, v.rowid, v.vector FROM vectors v JOIN chunks c ON c.id = v.id "
        "WHERE v.model = ? AND v.kind = 'chunk'", model, dim)
    _, names, (name_ids, name_vector_rowids, name_codes, name_scales) = read_vectors(
        db, "SELECT 0, path, id, rowid, vector FROM vectors WHERE model = ? AND kind = 'name'", model, dim)
    return ({"rowids": rowids, "vector_rowids": vector_rowids, "codes": codes, "scales": scales,
             "name_vector_rowids": name_vector_rowids, "name_codes": name_codes, "name_scales": name_scales},
            {"ids": ids.tolist(), "paths": paths.tolist(), "name_ids": name_ids.tolist(),
             "name_paths": names.tolist()})


def read_vectors(db: sqlite3.Connection, sql: str, model: str,
                 dim: int) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """(rowids int64[n], paths object[n], (ids object[n], vector rowids int64[n], codes int8[n, dim],
    scales float32[n])): the vectors quantised (:func:`quantise`) batch by batch as they stream in, so
    loading never holds the float32 matrix. The arrays are sized by the model's row count (a
    covering-index count; names included): the pages of ``np.empty`` that are never written are never
    resident. Equal paths share one string.

    Args:
        sql: selects ``(rowid, path, id, vector rowid, vector blob)`` rows of ``model``, one ``?`` parameter.
    """
    n = db.execute("SELECT count(*) FROM vectors WHERE model = ?", (model,)).fetchone()[0]
    rowids, paths, ids = np.empty(n, np.int64), np.empty(n, dtype=object), np.empty(n, dtype=object)
    vector_rowids, codes, scales = np.empty(n, np.int64), np.empty((n, dim), np.int8), np.empty(n, np.float32)
    shared: dict[str, str] = {}
    cursor, i = db.execute(sql, (model,)), 0
    while batch := cursor.fetchmany(4096):
        j = i + len(batch)
        rs, ps, vids, vrs, blobs = zip(*batch)
        rowids[i:j], ids[i:j], vector_rowids[i:j] = rs, vids, vrs
        paths[i:j] = [shared.setdefault(p, p) for p in ps]
        codes[i:j], scales[i:j] = quantise(np.frombuffer(b"".join(blobs), "<f4").reshape(j - i, dim))
        i = j
    return rowids[:i], paths[:i], (ids[:i], vector_rowids[:i], codes[:i], scales[:i])
