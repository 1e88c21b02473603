"""The LanceDB half of the derived index: the chunk vector tables, and the connection and table
helpers that the embedding cache (:mod:`vaultsync.index.embedding_cache`) shares.

* ``chunks`` (per worktree): ``id`` (``path#n``, ``path#title``), ``path``, ``kind`` (``chunk`` or
  ``name``), ``hash``, ``vector``. One sync is **one** ``merge_insert`` — upserts by ``id`` and deletes
  the rows of changed or removed paths that the new state lacks — so the table gains one version per
  sync (field case IX-05) and never half-applies. It is written right after the SQLite commit (which
  already holds the vectors); ``meta.lance_tree`` says which tree it reflects, and the next sync
  repairs it from SQLite if a sync died in between.
* ``embeddings_<dim>`` (per repository): the embedding cache.

A table whose schema differs from the one this version writes (an older
vaultsync), or that cannot be opened (damaged files), is dropped and recreated
empty: both are caches, and a recreated chunk table is refilled from SQLite.

Predicates quote strings SQL-style (``'`` doubled), never with double quotes
(IX-04). Search is exact, over SQLite's copy of the vectors, below ``ANN_MIN_ROWS``;
past it the sync builds an IVF_SQ index once (IX-06) and search queries this table
(:meth:`ChunkVectors.nearest`, ADR-0073, ADR-0084).
"""

from __future__ import annotations

import datetime as dt
import errno
import math
import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from vaultsync.index.fastpath import chunk_table_name
from vaultsync.index.lance_loader import import_lancedb

ANN_MIN_ROWS = 100_000
# The ANN index, chosen with bench/bench_ann.py for recall@20 >= 0.98 of exact search at 450k rows
# (ADR-0073, ADR-0084): IVF_SQ (8-bit scalar quantisation) over ~sqrt(n) partitions, probing
# ANN_PROBE_FRACTION of them; the ANN_REFINE_ROWS nearest by quantised distance are re-scored exactly.
# IVF_PQ (ANN_SUBVECTOR_DIMS-dimension sub-vectors) and IVF_FLAT are the variants compared.
ANN_INDEX = "IVF_SQ"
ANN_PROBE_FRACTION = 0.25
ANN_MIN_PROBES = 20
ANN_SUBVECTOR_DIMS = 4
ANN_REFINE_ROWS = 100
# The pool of a search confined to listed notes (``path IN``): when the probed partitions hold fewer
# of their rows than this, the filter is narrow and the search probes on (exact for small sets).
ANN_NARROW_POOL = 800
COMPACT_EVERY = 20  # versions between compaction + cleanup of old versions


def sql_string(value: str) -> str:
    """A SQL string literal: ``o'brien`` → ``'o''brien'``."""
    return "'" + value.replace("'", "''") + "'"


def in_list(column: str, values: Iterable[str]) -> str:
    """``column IN ('a', 'b')`` with every value quoted by :func:`sql_string`."""
    return f"{column} IN ({', '.join(sql_string(v) for v in values)})"


# LanceDB's caches of index partitions and table metadata, bounded so that a warm daemon does not grow
# with every partition read; 512 MiB holds both IVF_SQ indices of 100,000 notes (~490 MB; 128 MiB re-read
# the IVF_PQ ones of ADR-0073).
INDEX_CACHE_BYTES = 512 << 20
METADATA_CACHE_BYTES = 32 << 20
_SESSION: Any = None


def connect(path: Path) -> Any:
    """The LanceDB database at ``path`` (made if absent), in this process's one bounded session."""
    # LanceDB's native logger would print warnings (empty k-means clusters...) on the user's terminal
    os.environ.setdefault("LANCEDB_LOG", "error")
    lancedb = import_lancedb()

    global _SESSION
    if _SESSION is None:
        _SESSION = lancedb.Session(index_cache_size_bytes=INDEX_CACHE_BYTES,
                                   metadata_cache_size_bytes=METADATA_CACHE_BYTES)
    clear_way(path)
    path.mkdir(parents=True, exist_ok=True)
    return lancedb.connect(str(_addressable(path)), session=_SESSION)


def clear_way(folder: Path) -> None:
    """Remove a regular file where ``folder``, a derived cache's folder, belongs (a stray write or copy): the
    folder is made afresh and the sync refills it. A symlink is the user's choice and stays.

    Raises:
        NotADirectoryError: ``folder`` is a symlink to a file or to nothing (said as such, not as mkdir's
            "File exists").
    """
    if folder.is_symlink() and not folder.is_dir():
        what = "a file" if folder.exists() else "nothing (a dangling link)"
        raise NotADirectoryError(errno.ENOTDIR, f"a symbolic link to {what}, where a folder belongs: remove the "
                                 "link or point it at a folder", str(folder))
    if folder.is_file() and not folder.is_symlink():
        folder.unlink()


def _addressable(path: Path) -> Path:
    """``path``, or when it holds a control character (a repository under a folder named "a\\nb") or a
    byte that is not UTF-8, which LanceDB's object-store paths refuse, a symlink to it: in the user cache
    (``<cache>/lance-paths/<sha256 of the path>``, made or corrected atomically), else, when the cache
    cannot hold it, in a private temporary folder of this process."""
    text = str(path)
    if not any(ord(c) < 32 or ord(c) == 127 or 0xDC80 <= ord(c) <= 0xDCFF for c in text):
        return path  # (U+DC80-U+DCFF: a byte that is not UTF-8, as os.fsdecode keeps it)
    import hashlib

    from vaultsync.settings import cache_root

    name = hashlib.sha256(os.fsencode(text)).hexdigest()[:32]
    try:
        return _link(cache_root() / "lance-paths", name, text)
    except (OSError, RuntimeError):
        return _link(_private_links(), name, text)


def _link(folder: Path, name: str, target: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    alias = folder / name
    if not (alias.is_symlink() and os.readlink(alias) == target):
        staged = folder / f".{name}.{os.getpid()}"
        staged.unlink(missing_ok=True)
        os.symlink(target, staged)
        try:
            os.replace(staged, alias)
        except OSError:
            staged.unlink(missing_ok=True)
            raise
    return alias


def _private_links() -> Path:
    """A folder only this process uses, removed when it exits."""
    global _PRIVATE
    if _PRIVATE is None:
        import atexit
        import shutil
        import tempfile

        _PRIVATE = Path(tempfile.mkdtemp(prefix="vaultsync-lance-"))
        atexit.register(shutil.rmtree, _PRIVATE, True)
    return _PRIVATE


_PRIVATE: Path | None = None


def open_table(db: Any, path: Path, name: str, schema: pa.Schema) -> tuple[Any, bool]:
    """Table ``name`` of the LanceDB at ``path`` with exactly ``schema``: (table, created).

    ``created`` is True when this call made an empty table: none existed, or the one there had
    another schema or could not be read (it is dropped).
    """
    clear_way(path / f"{name}.lance")
    try:
        table = db.open_table(name)
    except ValueError:  # not there yet, or a folder of its name that holds no table
        try:
            return db.create_table(name, schema=schema, exist_ok=True), True
        except (OSError, RuntimeError, ValueError):
            table = None
    except (OSError, RuntimeError):  # lance could not read it
        table = None
    if table is not None:
        try:
            if table.schema == schema:
                return table, False
        except (OSError, RuntimeError):
            pass
    try:
        db.drop_table(name)
    except (OSError, RuntimeError, ValueError):
        import shutil

        shutil.rmtree(path / f"{name}.lance", ignore_errors=True)
    return db.create_table(name, schema=schema, exist_ok=True), True


def drop_other_tables(path: Path, keep: set[str]) -> list[str]:
    """Remove the vector tables under ``path`` (``chunks_*.lance``) not named in ``keep``: an embedder
    dropped from the config, or one whose dimension changed. Returns the names removed."""
    import shutil

    gone = sorted(t.name[:-len(".lance")] for t in path.glob("chunks_*.lance") if t.name[:-len(".lance")] not in keep)
    for name in gone:
        shutil.rmtree(path / f"{name}.lance", ignore_errors=True)
    return gone


def vector_matrix(rows: pa.Table, dim: int) -> np.ndarray:
    """The ``vector`` column of ``rows`` as float32 [n, dim]."""
    if rows.num_rows == 0:
        return np.zeros((0, dim), dtype=np.float32)
    flat = rows.column("vector").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    return np.asarray(flat, dtype=np.float32).reshape(rows.num_rows, dim)


class ChunkVectors:
    """The vector table of one embedder in one worktree's index."""

    def __init__(self, path: Path, dim: int, model: str = "multilingual-e5-small", recreate: bool = False) -> None:
        """Open the table (``recreate``: drop what is there first); :attr:`fresh` says it was
        (re)created empty now and must be refilled."""
        self.dim = dim
        if recreate:
            import shutil

            shutil.rmtree(path / f"{chunk_table_name(model, dim)}.lance", ignore_errors=True)
        self._db = connect(path)
        self._schema = pa.schema([("id", pa.string()), ("path", pa.string()), ("kind", pa.string()),
                                  ("hash", pa.string()), ("vector", pa.list_(pa.float32(), dim))])
        self.table, self.fresh = open_table(self._db, path, chunk_table_name(model, dim), self._schema)
        self._nprobes: int | None = None

    @classmethod
    def at_version(cls, path: Path, dim: int, model: str, version: int) -> ChunkVectors:
        """The table as of ``version`` (what SQLite's ``meta.lance_versions`` names), for reading.

        Raises:
            OSError, RuntimeError, ValueError: the table or that version cannot be read.
        """
        self = cls.__new__(cls)
        self.dim, self._db = dim, connect(path)
        self.table, self.fresh = self._db.open_table(chunk_table_name(model, dim)), False
        self._nprobes = None
        if self.table.version != version:
            self.table.checkout(version)
        return self

    @property
    def version(self) -> int:
        return int(self.table.version)

    def apply(self, touched_paths: Sequence[str], ids: Sequence[str], paths: Sequence[str], kinds: Sequence[str],
              hashes: Sequence[str], vectors: np.ndarray) -> int:
        """Make the rows of ``touched_paths`` exactly the given rows, in one version.

        Args:
            touched_paths: every path added, modified, renamed or removed by the sync.
            ids, paths, kinds, hashes, vectors: the new rows (kind ``chunk`` or ``name``; vectors
                float32 [n, dim]).
        Returns:
            The table version holding the result.
        """
        if not touched_paths:
            return self.version
        data = pa.table({
            "id": pa.array(ids, pa.string()), "path": pa.array(paths, pa.string()),
            "kind": pa.array(kinds, pa.string()), "hash": pa.array(hashes, pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(np.asarray(vectors, np.float32).ravel(), pa.float32()), self.dim),
        })
        (self.table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
         .when_not_matched_by_source_delete(in_list("path", sorted(set(touched_paths)))).execute(data))
        return self.version

    def replace_all(self, batches: Iterable[tuple[list[str], list[str], list[str], list[str], bytes]]) -> int:
        """Make the table exactly the given rows, in one new version, streamed batch by batch (a full
        build never holds every vector twice). An ANN index is dropped with the old rows.

        Args:
            batches: (ids, paths, kinds, hashes, float32 vector bytes back to back), e.g.
                :meth:`SqliteStore.iter_vectors <vaultsync.index.sqlite_store.SqliteStore.iter_vectors>`.
        Returns:
            The table version holding the result.
        """
        def record_batches() -> Iterator[pa.RecordBatch]:
            for ids, paths, kinds, hashes, blob in batches:
                yield pa.record_batch([
                    pa.array(ids, pa.string()), pa.array(paths, pa.string()),
                    pa.array(kinds, pa.string()), pa.array(hashes, pa.string()),
                    pa.FixedSizeListArray.from_arrays(pa.array(np.frombuffer(blob, "<f4")), self.dim)],
                    schema=self._schema)

        name = self.table.name
        reader = pa.RecordBatchReader.from_batches(self._schema, record_batches())
        self.table = self._db.create_table(name, data=reader, schema=self._schema, mode="overwrite")
        return self.version

    def maintain(self) -> bool:
        """Compact and drop old versions every ``COMPACT_EVERY`` versions; True when it did.

        Callers must record the new :attr:`version` (same rows, new files).
        """
        if self.version % COMPACT_EVERY:
            return False
        with warnings.catch_warnings():
            # Safe here: writers hold the sync lock and readers use the vector snapshot, not this table.
            warnings.simplefilter("ignore", UserWarning)
            self.table.optimize(cleanup_older_than=dt.timedelta(seconds=0))
        return True

    def ensure_ann_index(self, min_rows: int = ANN_MIN_ROWS) -> bool:
        """Once the table reaches ``min_rows`` rows, build what it lacks of: the ANN index
        (``ANN_INDEX``, cosine, ~√n partitions; one of another type, built by an older version, is
        replaced), a bitmap index on ``kind`` and a B-tree on ``path`` (the lifecycle filters'
        ``path NOT IN``: 118 → 54 ms a query at 550,000 rows); True when it built any.

        Rows added later are searched exactly beside the indices until compaction folds them in.
        """
        if (rows := self.table.count_rows()) < min_rows:
            return False
        from lancedb.index import Bitmap, BTree, IvfFlat, IvfPq, IvfSq

        have = {tuple(ix.columns): ix.index_type for ix in self.table.list_indices()}
        partitions = max(1, int(rows ** 0.5))
        vector = {"IVF_PQ": lambda: IvfPq(distance_type="cosine", num_partitions=partitions,
                                          num_sub_vectors=self.dim // ANN_SUBVECTOR_DIMS),
                  "IVF_SQ": lambda: IvfSq(distance_type="cosine", num_partitions=partitions),
                  "IVF_FLAT": lambda: IvfFlat(distance_type="cosine", num_partitions=partitions)}[ANN_INDEX]
        wanted = {"kind": Bitmap, "path": BTree, "vector": vector}
        if (built := have.get(("vector",))) and built.upper() != ANN_INDEX.replace("_", ""):
            del have[("vector",)]
        for column in (missing := [column for column in wanted if (column,) not in have]):
            self.table.create_index(column, config=wanted[column](), replace=True)
        return bool(missing)

    def has_ann_index(self) -> bool:
        return any(ix.index_type.startswith("Ivf") for ix in self.table.list_indices())

    def repair_ann_index(self) -> bool:
        """Drop an ANN index that the manifest lists but that cannot be searched (its files damaged or
        deleted), so that :meth:`ensure_ann_index` builds it again; True when it did."""
        if not self.has_ann_index():
            return False
        try:
            self.nearest(np.full(self.dim, self.dim ** -0.5, np.float32), 1)
            return False
        except (OSError, RuntimeError, ValueError):
            for ix in self.table.list_indices():
                self.table.drop_index(ix.name)
            return True

    def nearest(self, vector: np.ndarray, limit: int, kind: str = "chunk", paths: Iterable[str] | None = None,
                exclude: bool = False) -> list[tuple[str, str, float]]:
        """The ``limit`` rows of ``kind`` nearest ``vector`` (float32 [dim], L2-normalised):
        (id, path, cosine), best first, ties by id.

        Uses the ANN index when there is one (inverted file: Jégou et al. 2011, "Product quantization
        for nearest neighbor search"), probing ``ANN_PROBE_FRACTION`` of its ~√n partitions, else an
        exact scan. The ``ANN_REFINE_ROWS`` nearest by quantised code (``ANN_NARROW_POOL`` with
        ``paths``, ``limit`` if more) come back with their vectors and are re-scored exactly here.
        ``paths``: only rows of these notes (``exclude``: of any other note), applied inside the search;
        when the probed partitions hold fewer such rows than the pool (no ``paths``: than ``limit``),
        the search probes on until found.
        """
        if limit <= 0:
            return []
        condition = f"kind = {sql_string(kind)}"
        if paths is not None:
            condition += f" AND {'NOT ' if exclude else ''}{in_list('path', sorted(paths))}"
        if self._nprobes is None:
            self._nprobes = max(ANN_MIN_PROBES, math.ceil(self.table.count_rows() ** 0.5 * ANN_PROBE_FRACTION))
        pool = max(limit, ANN_NARROW_POOL if paths is not None and not exclude else ANN_REFINE_ROWS)
        query = (self.table.search(np.asarray(vector, np.float32), vector_column_name="vector")
                 .distance_type("cosine").where(condition, prefilter=True).select(["id", "path", "vector", "_distance"]).limit(pool))
        rows = query.nprobes(self._nprobes).to_arrow()
        if rows.num_rows < (pool if paths is not None else limit):  # a narrow filter: probe on (3x the cost)
            rows = query.minimum_nprobes(self._nprobes).maximum_nprobes(0).to_arrow()
        matrix = vector_matrix(rows, self.dim)
        norms = np.linalg.norm(matrix, axis=1)
        cosines = (matrix @ np.asarray(vector, np.float32)) / np.where(norms > 0, norms, 1.0)
        found = zip(rows.column("id").to_pylist(), rows.column("path").to_pylist(), cosines.tolist())
        return sorted(found, key=lambda r: (-r[2], r[0]))[:limit]

    def count(self, where: str | None = None) -> int:
        return int(self.table.count_rows(where) if where else self.table.count_rows())

