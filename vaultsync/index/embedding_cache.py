"""The embedding cache: ``model id | content hash`` → vector, in LanceDB, per repository.

Shared by worktrees and branches, so an unchanged chunk is never embedded twice, not after a
rename, not in another worktree; a build appends each batch as it is computed (ADR-0070,
ADR-0080). Beside it, the primary embedder's block rows by chunk (ADR-0121).

A cache is never needed: a table of another schema, or one that fails to open, to read or to write, is
made again empty (a file in its folder's place is removed), and where that fails too (an unwritable
folder), lookups find nothing and writes are dropped, so the sync encodes instead (ADR-0121); the sync
warns once (:func:`take_problems`).
"""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np
import pyarrow as pa

from vaultsync.index import vector_store
from vaultsync.index.block_vectors import CACHE_ERRORS
from vaultsync.index.vector_store import connect, in_list, open_table, vector_matrix

T = TypeVar("T")

LOOKUP_KEYS = 2000  # keys per filtered cache query; a larger lookup scans the table once
SCAN_ROWS = 8192  # rows per batch of that scan
DUPLICATE_SLACK = 4  # rows read per key asked of the embedding cache (a key may have been appended twice)

_PROBLEMS: dict[str, str] = {}  # the cache folder of a table that could not be made again → why


def take_problems() -> list[str]:
    """One warning per cache folder where this process could not make a table (a file or an unwritable
    folder in the way), said since the last call; the sync that met them reports them."""
    said = [f"the embedding cache {folder} cannot be used ({why}): syncs encode without it — remove or fix it"
            for folder, why in sorted(_PROBLEMS.items())]
    _PROBLEMS.clear()
    return said


class _KeyedTable:
    """A LanceDB table of rows by string ``key``, appended to and read by key (a content-addressed cache)
    that never fails its caller: see the module docstring."""

    def __init__(self, path: Path, name: str, schema: pa.Schema) -> None:
        self._path, self._name, self._schema = path, name, schema
        self._table = None
        self._opened_version = 0
        try:
            self._db = connect(path)
            self._table, _ = open_table(self._db, path, name, schema)
            self._opened_version = int(self._table.version)
        except CACHE_ERRORS:
            self._remake()

    def _remake(self) -> None:
        """Replace the table by an empty one; no table (no cache) where that fails too."""
        self._table = None
        folder = self._path / f"{self._name}.lance"
        try:
            if folder.is_dir() and not folder.is_symlink():
                shutil.rmtree(folder)
            elif folder.exists() or folder.is_symlink():
                folder.unlink()
            self._db = connect(self._path)
            self._table, _ = open_table(self._db, self._path, self._name, self._schema)
            self._opened_version = int(self._table.version)
        except CACHE_ERRORS as exc:
            self._table = None
            _PROBLEMS.setdefault(str(self._path), f"{type(exc).__name__}: {exc}".splitlines()[0][:200])

    def _safely(self, action: Callable[[], T], default: T) -> T:
        """``action()``, or ``default`` where there is no table or it fails. A failure is tried once more on
        the table opened afresh (another worktree may have compacted it meanwhile); failing again, the
        table's files are damaged and it is made again."""
        for attempt in range(2):
            if self._table is None:
                return default
            try:
                return action()
            except CACHE_ERRORS:
                if attempt:
                    break
                try:
                    self._table = self._db.open_table(self._name)
                except CACHE_ERRORS:
                    break
        self._remake()
        return default

    def _rows(self, keys: Sequence[str], columns: list[str]) -> pa.Table:
        """The rows of ``keys`` (any present; a key may come twice).

        Up to :data:`LOOKUP_KEYS` keys are one filtered query; more (a build resuming, a new worktree) are
        one streamed pass over the table, since each filtered query reads the whole table anyway: 550,000
        keys took 275 passes before."""
        return self._safely(lambda: self._lookup(keys, columns), pa.table({c: [] for c in columns}))

    def _lookup(self, keys: Sequence[str], columns: list[str]) -> pa.Table:
        if not keys:
            return pa.table({c: [] for c in columns})
        if len(keys) <= LOOKUP_KEYS:
            return self._table.search().where(in_list("key", keys)).select(columns) \
                .limit(len(keys) * DUPLICATE_SLACK).to_arrow()
        wanted, parts = set(keys), []
        total = self._table.count_rows()
        for batch in (self._table.search().select(columns).limit(total).to_batches(SCAN_ROWS) if total else []):
            take = [i for i, k in enumerate(batch.column("key").to_pylist()) if k in wanted]
            if take:
                parts.append(batch.take(take))
        return pa.Table.from_batches(parts) if parts else pa.table({c: [] for c in columns})

    def maintain(self) -> None:
        """Compact and drop versions older than a minute once every ``COMPACT_EVERY`` versions.

        Called once per sync, not per batch: compacting while a long build writes batch after
        batch made the process grow by ~1 MiB per batch (bench/bench_index.py peak RSS).
        """
        def compact() -> None:
            every = vector_store.COMPACT_EVERY
            if self._table.version // every > self._opened_version // every:
                self._table.optimize(cleanup_older_than=dt.timedelta(minutes=1))

        self._safely(compact, None)


class EmbeddingCache(_KeyedTable):
    """``(model id, content hash) → vector``, shared by every worktree of a repository."""

    def __init__(self, path: Path, dim: int) -> None:
        self.dim = dim
        super().__init__(path, f"embeddings_{dim}",
                         pa.schema([("key", pa.string()), ("vector", pa.list_(pa.float32(), dim))]))

    def get(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for ``hashes`` (missing ones are absent from the result)."""
        prefix = model_id + "|"
        rows = self._rows([prefix + h for h in hashes], ["key", "vector"])
        return dict(zip((k[len(prefix):] for k in rows.column("key").to_pylist()), vector_matrix(rows, self.dim)))

    def put(self, model_id: str, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Store new vectors (idempotent: existing keys are left alone)."""
        if len(hashes):
            self._safely(lambda: self._table.merge_insert("key").when_not_matched_insert_all().execute(
                self._new(model_id, hashes, vectors)), None)

    def append(self, model_id: str, hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors whose keys :meth:`get` has just found missing (a build's batches), in one
        append: its cost does not grow with the table, where :meth:`put`'s merge reads every key, so
        a build's merges cost O(rows²) (at 100,000 notes they were nearly all of its time). A key
        appended twice (two worktrees embedding one text at once) only costs a row: :meth:`get`
        takes either copy, and reads up to :data:`DUPLICATE_SLACK` rows per key."""
        if len(hashes):
            self._safely(lambda: self._table.add(self._new(model_id, hashes, vectors)), None)

    def _new(self, model_id: str, hashes: Sequence[str], vectors: np.ndarray) -> pa.Table:
        return pa.table({
            "key": [f"{model_id}|{h}" for h in hashes],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.astype(np.float32).ravel()), self.dim),
        })


class BlockRowCache(_KeyedTable):
    """A chunk's block row (:mod:`vaultsync.index.block_vectors`: spans JSON, int8 vectors) by
    ``model id | content hash | spans digest``, beside the embedding cache and shared as it is (ADR-0121):
    an index built from cached embeddings (a new worktree, a rebuild) takes its block rows from here rather
    than encoding every chunk once more."""

    def __init__(self, path: Path, dim: int) -> None:
        super().__init__(path, f"blocks_{dim}",
                         pa.schema([("key", pa.string()), ("spans", pa.string()), ("vectors", pa.binary())]))

    def get(self, keys: Sequence[str]) -> dict[str, tuple[str, bytes]]:
        """key → (spans JSON, vectors blob) for the ``keys`` present."""
        rows = self._rows(list(keys), ["key", "spans", "vectors"])
        return dict(zip(rows.column("key").to_pylist(),
                        zip(rows.column("spans").to_pylist(), rows.column("vectors").to_pylist(), strict=True)))

    def put(self, rows: dict[str, tuple[str, bytes]]) -> None:
        """Store new rows (idempotent: existing keys are left alone; one merge per sync, after its SQLite
        commit)."""
        if rows:
            self._safely(lambda: self._table.merge_insert("key").when_not_matched_insert_all().execute(pa.table({
                "key": list(rows), "spans": [s for s, _ in rows.values()],
                "vectors": pa.array([v for _, v in rows.values()], pa.binary())})), None)
