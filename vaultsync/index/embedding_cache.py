"""The embedding cache: ``model id | content hash`` → vector, in LanceDB, per repository.

Shared by worktrees and branches, so an unchanged chunk is never embedded twice, not after a
rename, not in another worktree; a build appends each batch as it is computed (ADR-0070,
ADR-0080). A table of another schema or that cannot be read is recreated empty
(:func:`vaultsync.index.vector_store.open_table`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from vaultsync.index import vector_store
from vaultsync.index.vector_store import connect, in_list, open_table, vector_matrix

LOOKUP_KEYS = 2000  # keys per filtered cache query; a larger lookup scans the table once
SCAN_ROWS = 8192  # rows per batch of that scan
DUPLICATE_SLACK = 4  # rows read per key asked of the embedding cache (a key may have been appended twice)


class EmbeddingCache:
    """``(model id, content hash) → vector``, shared by every worktree of a repository."""

    def __init__(self, path: Path, dim: int) -> None:
        self.dim = dim
        self._db = connect(path)
        schema = pa.schema([("key", pa.string()), ("vector", pa.list_(pa.float32(), dim))])
        self._table, _ = open_table(self._db, path, f"embeddings_{dim}", schema)
        self._opened_version = int(self._table.version)

    def get(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for ``hashes`` (missing ones are absent from the result).

        Up to :data:`LOOKUP_KEYS` keys are one filtered query; more (a build resuming, a new worktree) are
        one streamed pass over the table, since each filtered query reads the whole table anyway: 550,000
        keys took 275 passes before."""
        prefix = model_id + "|"
        if len(hashes) > LOOKUP_KEYS:
            return self._scan(prefix, set(hashes))
        if not hashes:
            return {}
        keys = [prefix + h for h in hashes]
        rows = self._table.search().where(in_list("key", keys)).limit(len(keys) * DUPLICATE_SLACK).to_arrow()
        return dict(zip((k[len(prefix):] for k in rows.column("key").to_pylist()), vector_matrix(rows, self.dim)))

    def _scan(self, prefix: str, wanted: set[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        total = self._table.count_rows()
        if not total:
            return found
        for batch in self._table.search().select(["key", "vector"]).limit(total).to_batches(SCAN_ROWS):
            keys = batch.column("key").to_pylist()
            take = [i for i, k in enumerate(keys) if k.startswith(prefix) and k[len(prefix):] in wanted]
            if take:
                rows = pa.Table.from_batches([batch.take(take)])
                found.update(zip((keys[i][len(prefix):] for i in take), vector_matrix(rows, self.dim)))
        return found

    def put(self, model_id: str, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Store new vectors (idempotent: existing keys are left alone)."""
        if not len(hashes):
            return
        self._table.merge_insert("key").when_not_matched_insert_all().execute(self._rows(model_id, hashes, vectors))

    def append(self, model_id: str, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors whose keys :meth:`get` has just found missing (a build's batches), in one
        append: its cost does not grow with the table, where :meth:`put`'s merge reads every key, so
        a build's merges cost O(rows²) (at 100,000 notes they were nearly all of its time). A key
        appended twice (two worktrees embedding one text at once) only costs a row: :meth:`get`
        takes either copy, and reads up to :data:`DUPLICATE_SLACK` rows per key."""
        if len(hashes):
            self._table.add(self._rows(model_id, hashes, vectors))

    def _rows(self, model_id: str, hashes: Sequence[str], vectors: np.ndarray) -> pa.Table:
        return pa.table({
            "key": [f"{model_id}|{h}" for h in hashes],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.astype(np.float32).ravel()), self.dim),
        })

    def maintain(self) -> None:
        """Compact and drop versions older than a minute once every ``COMPACT_EVERY`` versions.

        Called once per sync, not per batch: compacting while a long build writes batch after
        batch made the process grow by ~1 MiB per batch (bench/bench_index.py peak RSS).
        """
        every = vector_store.COMPACT_EVERY
        if self._table.version // every > self._opened_version // every:
            self._table.optimize(cleanup_older_than=dt.timedelta(minutes=1))
