"""The SQLite half of the derived index: notes, chunks, FTS5 trigram text, the WikiLink graph, meta.

Schema (``SCHEMA_VERSION`` and ``SCHEMA_FINGERPRINT``, a hash of the DDL itself, in
:mod:`vaultsync.index.format`; a cache, so a file whose version or fingerprint differs is simply rebuilt):

* ``notes``  — path, blob oid, lifecycle columns (memory_id, type, status,
  created, last_validated, expires, confidence, importance, superseded_by path),
  title, aliases and the whole frontmatter as JSON, parse/validation warnings, and
  ``unreadable``: JSON ``{field: value}`` of lifecycle fields that could not be read
  (search hides such a note: lifecycle filters fail closed), NULL when none.
* ``chunks`` — one row per chunk (id ``path#n``, heading path, text, content hash, lines, block
  ids, token count) plus ``norm``: its folded (:func:`fold`) title, heading and text.
* ``vectors`` — one embedding per (model, chunk) and per (model, note name: title
  or alias, ``kind = 'name'``), so several embedders can serve as dense legs and a
  known-item query can match a note by its name.
* ``blocks`` — one row per chunk: its blocks' spans and vectors (:mod:`vaultsync.index.block_vectors`).
* ``tokens`` — one row per chunk, where MaxSim reranks: its token vectors (:mod:`vaultsync.index.token_vectors`).
* ``chunks_fts`` — FTS5 ``tokenize='trigram'`` over folded (:func:`fold`) title, aliases and the
  note's frontmatter tags, heading and text; ``rowid`` = ``chunks.rowid``.
* ``notes_fts`` — the same over whole notes (title, body): BM25 at note level,
  where terms spread over a long note still meet.
* ``chunks_words`` — FTS5 ``unicode61`` over each chunk's ASCII words of 1–2 characters (:func:`short_words`
  of ``norm``: ``CI``, ``v2``, which trigrams cannot match; ADR-0106); ``rowid`` = ``chunks.rowid``.
* ``links`` — source path, target as written, anchor, kind (link, embed,
  frontmatter), resolved path (NULL when dangling), line.
* ``refs`` — supersession references: source path, field (``supersedes`` or
  ``superseded_by``), the target as written, whether it was a WikiLink, and the
  path it resolves to by name (NULL when it does not; search then tries it as a
  ``memory_id``). Re-resolved like ``links`` when notes come or go.
* ``meta`` — indexed commit and tree, schema version, embedder model id, LanceDB table version, config hash.

All writes of one sync happen in a single ``BEGIN IMMEDIATE`` transaction, and
``meta`` is written in it, so a reader (WAL mode) always sees one consistent commit.
Embeddings are float32 little-endian BLOBs written in that same transaction: the
search path reads them from here (no LanceDB import, whose cost alone is ~1.2 s),
and a sync commits text and vectors atomically. LanceDB keeps the embedding cache
and the vector table (see :mod:`vaultsync.index.vector_store`).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultsync.index.chunking import Chunk, block_key
from vaultsync.index.format import DDL, SCHEMA_FINGERPRINT, SCHEMA_VERSION, fold, searched_names, short_words
from vaultsync.sqlite_uri import connect_readonly

if TYPE_CHECKING:  # block_vectors loads numpy, which `vaultsync status` never does
    from vaultsync.index.block_vectors import Key, Row


@dataclass(frozen=True)
class LinkRow:
    """One edge of the WikiLink graph."""

    source: str
    target: str
    anchor: str | None
    kind: str
    resolved: str | None
    line: int


@dataclass(frozen=True)
class RefRow:
    """One supersession reference: ``source`` names ``ref`` in its ``field``."""

    source: str
    field: str  # "supersedes" or "superseded_by"
    ref: str  # link target (WikiLink brackets removed) or memory_id, as written
    wikilink: bool
    resolved: str | None  # resolved by name, None when it does not resolve


@dataclass
class NoteRecord:
    """Everything the index stores about one note."""

    path: str
    blob: str
    title: str
    frontmatter: dict[str, Any]
    lifecycle: dict[str, Any]
    aliases: list[str]
    warnings: list[str]
    chunks: list[Chunk]
    name_chunks: list[Chunk] = field(default_factory=list)
    body: str = ""
    links: list[LinkRow] = field(default_factory=list)
    refs: list[RefRow] = field(default_factory=list)


def _blob(vector: Any) -> bytes:
    """A vector as float32 little-endian bytes (``vector``: bytes, or a numpy array)."""
    return vector if isinstance(vector, bytes) else vector.astype("<f4").tobytes()  # type: ignore[no-any-return]


class SqliteStore:
    """Reads and writes ``index.sqlite`` (see the module docstring for the schema)."""

    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = path
        if readonly:
            self.db = connect_readonly(path, timeout=10)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
            except sqlite3.DatabaseError:  # not a database any more: it is a cache, start afresh
                self.db.close()
                for suffix in ("", "-wal", "-shm"):
                    Path(str(path) + suffix).unlink(missing_ok=True)
                self.db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
                self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            if not self._schema_current():
                self._create_schema()

    def _create_schema(self) -> None:
        """(Re)create every table in one transaction: a reader sees no tables or all of them."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if not self._schema_current():
                self._drop_all()  # another version's tables, or none at all
            for statement in DDL.split(";"):
                if statement.strip():
                    self.db.execute(statement)
            self._write_meta({"schema_version": SCHEMA_VERSION, "schema_fingerprint": SCHEMA_FINGERPRINT})
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def close(self) -> None:
        self.db.close()

    def _schema_current(self) -> bool:
        try:
            found = dict(self.db.execute(
                "SELECT key, value FROM meta WHERE key IN ('schema_version', 'schema_fingerprint')").fetchall())
        except sqlite3.OperationalError:
            return False
        return found == {"schema_version": SCHEMA_VERSION, "schema_fingerprint": SCHEMA_FINGERPRINT}

    def _drop_all(self) -> None:
        for (name,) in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE '%_fts_%'"
        ).fetchall():
            self.db.execute(f'DROP TABLE IF EXISTS "{name}"')

    def meta(self) -> dict[str, str]:
        """All ``meta`` keys (indexed_commit, indexed_tree, embed_model, lance_version, ...)."""
        return dict(self.db.execute("SELECT key, value FROM meta").fetchall())

    def set_meta(self, values: dict[str, str]) -> None:
        """Write ``meta`` keys in their own transaction."""
        with self.transaction():
            self._write_meta(values)

    def _write_meta(self, values: dict[str, str]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [(k, str(v)) for k, v in values.items()])

    def transaction(self) -> _Transaction:
        """``with store.transaction():`` — BEGIN IMMEDIATE … COMMIT (ROLLBACK on error)."""
        return _Transaction(self.db)

    def paths(self) -> dict[str, str]:
        """Indexed note path → blob oid."""
        return dict(self.db.execute("SELECT path, blob FROM notes").fetchall())

    def aliases(self) -> dict[str, list[str]]:
        """Indexed note path → its frontmatter aliases."""
        return {p: json.loads(a) for p, a in self.db.execute("SELECT path, aliases FROM notes")}

    def apply(self, removed: Sequence[str], records: Sequence[NoteRecord], meta: dict[str, str],
              relinks: Iterable[tuple[str | None, int]] = (),
              vectors: dict[str, dict[str, Any]] | None = None,
              rerefs: Iterable[tuple[str | None, int]] = (), blocks: dict[Key, Row] | None = None,
              tokens: dict[str, bytes] | None = None) -> None:
        """Apply one sync in one transaction.

        Args:
            removed: note paths to delete (renamed-away paths included).
            records: notes to insert or replace, with their chunks and links.
            meta: ``meta`` keys to write in the same transaction. A change of chunks or vectors also
                writes a fresh ``generation`` (random hex), the key of derived caches of those rows
                (:mod:`vaultsync.search.leg_cache`).
            relinks: ``(resolved path, links.rowid)`` updates for links whose
                target resolution changed because other notes came or went.
            vectors: model id → content hash → embedding (float32 ``[dim]`` array, or its
                little-endian bytes), for the records' chunks and names. Arrays are turned into
                bytes one record at a time, so the sync never holds a bytes copy of them all.
            rerefs: ``(resolved path, refs.rowid)`` updates, as ``relinks`` for ``refs``.
            blocks: the records' chunks' block rows (:func:`vaultsync.index.block_vectors.rows_for`).
            tokens: content hash → the chunk's token vectors (:func:`vaultsync.index.token_vectors.rows_for`).
        """
        vectors = vectors or {}
        if removed or records or "generation" not in self.meta():
            meta = {**meta, "generation": uuid.uuid4().hex}
        with self.transaction():
            gone = list(removed) + [r.path for r in records]
            for start in range(0, len(gone), 500):
                batch = gone[start:start + 500]
                marks = ",".join("?" * len(batch))
                for fts in ("chunks_fts", "chunks_words"):
                    self.db.execute(
                        f"DELETE FROM {fts} WHERE rowid IN (SELECT rowid FROM chunks WHERE path IN ({marks}))", batch)
                self.db.execute(f"DELETE FROM chunks WHERE path IN ({marks})", batch)
                self.db.execute(f"DELETE FROM notes_fts WHERE path IN ({marks})", batch)
                for table, column in (("vectors", "path"), ("blocks", "path"), ("tokens", "path"), ("links", "source"),
                                      ("refs", "source"), ("notes", "path")):
                    self.db.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", batch)
            for rec in records:
                self._insert(rec, vectors)
                self.db.executemany("INSERT INTO blocks VALUES (?,?,?,?,?)", [
                    (c.id, rec.path, c.hash, *blocks[block_key(c)]) for c in rec.chunks
                    if blocks and block_key(c) in blocks])
                self.db.executemany("INSERT INTO tokens VALUES (?,?,?,?)", [
                    (c.id, rec.path, c.hash, tokens[c.hash]) for c in rec.chunks if tokens and c.hash in tokens])
            self.db.executemany("UPDATE links SET resolved = ? WHERE rowid = ?", list(relinks))
            self.db.executemany("UPDATE refs SET resolved = ? WHERE rowid = ?", list(rerefs))
            self._write_meta(meta)

    def _insert(self, rec: NoteRecord, vectors: dict[str, dict[str, bytes]]) -> None:
        lc = rec.lifecycle
        self.db.execute(
            "INSERT INTO notes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (rec.path, rec.blob, rec.title, lc.get("memory_id"), lc.get("type"), lc.get("status"),
             lc.get("created"), lc.get("last_validated"), lc.get("expires"), lc.get("confidence"),
             lc.get("importance"), lc.get("superseded_by"), json.dumps(rec.aliases, ensure_ascii=False),
             json.dumps(rec.frontmatter, ensure_ascii=False, sort_keys=True, default=str, allow_nan=False),
             json.dumps(rec.warnings, ensure_ascii=False), lc.get("unreadable")),
        )
        # FTS5 folds case one character to one; queries are fully case-folded ("Straße" → "strasse"),
        # so the indexed text is folded the same way first (normalise), or such words never match
        names = searched_names(rec.title, rec.aliases, rec.frontmatter)
        title_norm = fold(names)
        self.db.execute("INSERT INTO notes_fts (path, title, body) VALUES (?,?,?)",
                        (rec.path, title_norm, fold(rec.body)))
        for c in rec.chunks:
            norm = fold(f"{names}\n{c.heading}\n{c.text}")
            cur = self.db.execute(
                "INSERT INTO chunks (id, path, n, heading, text, norm, hash, start_line, end_line, tokens, blocks) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?)", (c.id, c.path, c.n, c.heading, c.text, norm, c.hash,
                                                    c.start_line, c.end_line, c.tokens, json.dumps(list(c.blocks))))
            self.db.execute(
                "INSERT INTO chunks_fts (rowid, title, heading, text) VALUES (?,?,?,?)",
                (cur.lastrowid, title_norm, fold(c.heading), fold(c.text)),
            )
            if words := short_words(norm):
                self.db.execute("INSERT INTO chunks_words (rowid, words) VALUES (?,?)", (cur.lastrowid, words))
        self.db.executemany(
            "INSERT INTO vectors VALUES (?,?,?,?,?,?)",
            [(model, c.id, c.path, c.hash, kind, _blob(by_hash[c.hash]))
             for model, by_hash in vectors.items()
             for kind, items in (("chunk", rec.chunks), ("name", rec.name_chunks))
             for c in items if c.hash in by_hash],
        )
        self.db.executemany(
            "INSERT INTO links VALUES (?,?,?,?,?,?)",
            [(k.source, k.target, k.anchor, k.kind, k.resolved, k.line) for k in rec.links],
        )
        self.db.executemany("INSERT INTO refs VALUES (?,?,?,?,?)",
                            [(r.source, r.field, r.ref, int(r.wikilink), r.resolved) for r in rec.refs])

    def link_rows(self) -> list[tuple[int, str, str, str | None]]:
        """``(rowid, source, target, resolved)`` of every link."""
        return self.db.execute("SELECT rowid, source, target, resolved FROM links").fetchall()

    def ref_rows(self) -> list[tuple[int, str, str, str | None]]:
        """``(rowid, source, ref, resolved)`` of every supersession reference."""
        return self.db.execute("SELECT rowid, source, ref, resolved FROM refs").fetchall()

    def unreadable(self) -> dict[str, dict[str, str]]:
        """Note path → ``{field: value}`` of every indexed note with an unreadable lifecycle or frontmatter."""
        return {p: json.loads(u) for p, u in
                self.db.execute("SELECT path, unreadable FROM notes WHERE unreadable IS NOT NULL ORDER BY path")}

    def counts(self) -> dict[str, int]:
        """Row counts per table."""
        return {t: self.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("notes", "chunks", "links")}


    def vectors_by_hash(self, model: str, hashes: Sequence[str]) -> dict[str, bytes]:
        """Embeddings by ``model`` already in this index for any of ``hashes``."""
        found: dict[str, bytes] = {}
        for start in range(0, len(hashes), 500):
            batch = list(hashes[start:start + 500])
            marks = ",".join("?" * len(batch))
            found.update(self.db.execute(
                f"SELECT hash, vector FROM vectors WHERE model = ? AND hash IN ({marks})", [model, *batch]))
        return found

    def iter_vectors(self, model: str, batch: int = 4096) -> Iterator[tuple[list[str], list[str], list[str],
                                                                        list[str], bytes]]:
        """Every chunk and name vector of ``model`` by id, ``batch`` rows at a time: (ids, paths,
        kinds, hashes, the vectors' float32 bytes back to back). Reads committed rows on a
        connection of its own, so the consumer may pull batches from another thread."""
        db = connect_readonly(self.path, timeout=10, check_same_thread=False)
        try:
            cursor = db.execute("SELECT id, path, kind, hash, vector FROM vectors WHERE model = ? ORDER BY id",
                                (model,))
            while rows := cursor.fetchmany(batch):
                ids, paths, kinds, hashes, blobs = zip(*rows)
                yield list(ids), list(paths), list(kinds), list(hashes), b"".join(blobs)
        finally:
            db.close()

    def all_vectors(self, model: str) -> tuple[list[str], list[str], list[str], list[bytes]]:
        """(ids, paths, hashes, vector bytes) of every chunk and name vector of ``model``, by id."""
        rows = self.db.execute("SELECT id, path, hash, vector FROM vectors WHERE model = ? ORDER BY id",
                               (model,)).fetchall()
        return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], [r[3] for r in rows]


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if not exc_type:
            self.db.execute("COMMIT")
        elif self.db.in_transaction:  # SQLite rolls back by itself on some errors (a full disk): the error stays
            self.db.execute("ROLLBACK")
