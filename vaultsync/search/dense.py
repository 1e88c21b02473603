"""Vector leg: exact cosine top-N over the index's chunk vectors.

Vectors are L2-normalised, so cosine is a dot product; an exact scan of
100k × 384 float32 takes ~10 ms, so no ANN index is needed below that size
(an ANN index is built by the sync past ``ANN_MIN_ROWS``).
"""

from __future__ import annotations

import numpy as np

from vaultsync.search.bm25 import Candidate


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
