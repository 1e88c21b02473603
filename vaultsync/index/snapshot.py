"""Index snapshots: a consistent copy of the SQLite index, the checks a snapshot must pass before it is published or used, and installing one (ADR-0071).

A downloaded snapshot is untrusted data. Before it becomes the local index it must pass
:func:`verify_index`: SQLite ``PRAGMA quick_check``; exactly the tables and indices this version
creates (no trigger or view can run when the sync later writes to it); the fingerprint recomputed from
its own ``meta`` equal to the one asked for; ``indexed_commit``/``indexed_tree`` equal to a commit of
the local history and its tree; every indexed note a note of that tree with the same blob id; every
vector of a known model and width. The same checks refuse to publish an index that does not reflect HEAD.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sqlite3
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync.index.damage import sqlite_healthy
from vaultsync.index.fingerprint import fingerprint, parts_from_meta
from vaultsync.index.layout import IndexLayout
from vaultsync.index.sqlite_store import SqliteStore
from vaultsync.sqlite_uri import connect_readonly

if TYPE_CHECKING:
    import pygit2


# meta keys that describe one machine's LanceDB, not the index: never published, reset on install
LOCAL_META = {"lance_tree": "", "lance_versions": "{}", "lance_ann": "[]"}


def copy_index(src: Path, dest: Path) -> dict[str, str]:
    """A consistent copy of the SQLite index ``src`` at ``dest`` through SQLite's backup API (one read
    transaction, whatever a sync writes meanwhile), as one self-contained file (rollback journal, no WAL),
    with the machine-local meta keys cleared. Returns the copy's ``meta``.

    Raises:
        sqlite3.Error.
    """
    dest.unlink(missing_ok=True)
    source = sqlite3.connect(str(src), timeout=30)
    target = sqlite3.connect(str(dest))
    try:
        source.backup(target)
        target.execute("PRAGMA journal_mode=DELETE")
        target.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(LOCAL_META.items()))
        target.commit()
        return dict(target.execute("SELECT key, value FROM meta").fetchall())
    finally:
        target.close()
        source.close()


def verify_index(path: Path, repo: pygit2.Repository, commit: str, expected_fingerprint: str) -> str | None:
    """Why the SQLite file at ``path`` is not an index of ``commit`` with ``expected_fingerprint``, as a short
    phrase (``fingerprint mismatch``, ...); None when it passes every check of the module docstring.

    ``commit`` must be in ``repo``; reading the file never runs SQL of its own (``trusted_schema`` off,
    schema compared first). Cost: one pass over the file's pages and one read of the tree.
    """
    try:
        db = connect_readonly(path)
    except sqlite3.Error:
        return "not an SQLite database"
    try:
        db.execute("PRAGMA trusted_schema=OFF")
        db.execute("PRAGMA cell_size_check=ON")
        if db.execute("PRAGMA quick_check").fetchall() != [("ok",)]:
            return "failed PRAGMA quick_check"
        if _schema(db) != expected_schema():
            return "unexpected schema (tables, indices, triggers or views this version does not create)"
        # FTS5 options (rank functions) stay the defaults
        for table in ("chunks_fts_config", "notes_fts_config", "chunks_words_config"):
            if db.execute(f"SELECT k, v FROM {table}").fetchall() != [("version", 4)]:
                return f"unexpected FTS5 settings in {table}"
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        try:
            found = fingerprint(parts_from_meta(meta))
        except ValueError as exc:
            return str(exc)
        if found != expected_fingerprint:
            return f"fingerprint mismatch (the index inside is {found}, not {expected_fingerprint})"
        tree = str(repo[commit].tree_id)  # type: ignore[attr-defined]
        if meta.get("indexed_commit") != commit or meta.get("indexed_tree") != tree:
            return f"it indexes commit {meta.get('indexed_commit', '')[:12] or '(none)'}, not {commit[:12]}"
        problem = _notes_problem(db, repo, commit)
        if problem:
            return problem
        models = {str(info["id"]): int(info["dim"]) for info in json.loads(meta["embed_models"]).values()}
        for model, width, _ in db.execute("SELECT model, length(vector), count(*) FROM vectors GROUP BY 1, 2"):
            if models.get(model) is None or width != 4 * models[model]:
                return f"vectors of an unknown model or width ({str(model)[:40]}, {width} bytes)"
        orphans = db.execute("SELECT count(*) FROM chunks WHERE path NOT IN (SELECT path FROM notes)").fetchone()[0]
        if orphans:
            return f"{orphans} chunks of notes it does not hold"
    except (sqlite3.Error, KeyError, ValueError, TypeError) as exc:
        return f"unreadable index ({type(exc).__name__}: {exc})"
    finally:
        db.close()
    return None


@lru_cache(maxsize=1)
def expected_schema() -> list[tuple[str, str, str, str | None]]:
    """``sqlite_master`` rows ``(type, name, tbl_name, sql)`` of an index of this version, sorted by type
    and name: what a snapshot from elsewhere must hold exactly (no extra table, trigger or view)."""
    store = SqliteStore(Path(":memory:"))
    try:
        return _schema(store.db)
    finally:
        store.close()


def _schema(db: sqlite3.Connection) -> list[tuple[str, str, str, str | None]]:
    return sorted(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall(),
                  key=lambda r: (r[0], r[1]))


def _notes_problem(db: sqlite3.Connection, repo: pygit2.Repository, commit: str) -> str | None:
    """Every indexed note must be an indexable note of ``commit``'s tree (committed, in the vault, not
    ephemeral) with the same blob; the index may lack notes that could not be read."""
    from vaultsync.git import TreeSnapshot
    from vaultsync.index.fastpath import config_at
    from vaultsync.index.sync import vault_notes

    tree = repo[commit].tree  # type: ignore[attr-defined]
    config, _ = config_at(repo, tree)
    notes, _ = vault_notes(TreeSnapshot(repo, tree), config)
    for path, blob in db.execute("SELECT path, blob FROM notes"):
        if notes.get(path) != blob:
            return f"note {str(path)[:80]!r} is not in commit {commit[:12]}'s vault as indexed"
    return None


def install(staged: Path, layout: IndexLayout, commit: str) -> None:
    """Make the verified SQLite file ``staged`` the local index; the caller holds the sync lock.

    An existing healthy index is overwritten through SQLite's backup API, in one write transaction
    (a reader sees the old index or the new one, never a mix); a missing or damaged one is replaced
    by renaming. The LanceDB vector tables are dropped: the next sync refills them from SQLite
    (``meta.lance_tree`` is cleared). ``staged`` is consumed.

    Raises:
        sqlite3.Error, OSError.
    """
    db = sqlite3.connect(str(staged))
    try:
        values = {**LOCAL_META, "pulled_from": commit,
                  "pulled_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
        db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(values.items()))
        db.commit()
        db.execute("PRAGMA journal_mode=WAL")  # as the live index: the backup keeps the file's format bytes
    finally:
        db.close()
    layout.dir.mkdir(parents=True, exist_ok=True)
    done = False
    if layout.sqlite.exists() and sqlite_healthy(layout.sqlite):
        source = sqlite3.connect(str(staged))
        target = sqlite3.connect(str(layout.sqlite), timeout=30)
        try:
            source.backup(target)
            done = True
        except sqlite3.Error:  # e.g. another page size: replace the file below
            pass
        finally:
            target.close()
            source.close()
    if not done:
        for suffix in ("-wal", "-shm", ""):
            Path(str(layout.sqlite) + suffix).unlink(missing_ok=True)
        os.replace(staged, layout.sqlite)
    for suffix in ("", "-wal", "-shm"):
        Path(str(staged) + suffix).unlink(missing_ok=True)
    shutil.rmtree(layout.lance, ignore_errors=True)
