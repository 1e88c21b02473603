"""A damaged SQLite index (ADR-0046): how it is told from the machine's state, and when it is looked for.

A sync records the files' signature in ``sqlite.verified``
(:func:`vaultsync.index.fastpath.record_as_left`); a file whose signature differs was written by something
else since (a crash mid-write, a disk fault, a stray tool), so the next sync — the hooks' fast path
included — checks it page by page (:func:`sqlite_healthy`) and rebuilds it when damaged.
:func:`is_damage` tells damage from a full disk or a lock, which a rebuild would not mend.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

from vaultsync.index.fastpath import as_left, record_as_left
from vaultsync.index.layout import IndexLayout
from vaultsync.sqlite_uri import connect_readonly


class _Report(Protocol):
    warnings: list[str]


R = TypeVar("R", bound=_Report)  # a sync's report


def sqlite_healthy(path: Path) -> bool:
    """False when ``path`` is not an SQLite database or fails ``PRAGMA quick_check`` (damaged pages).

    Cost: one pass over the file's pages (milliseconds for a vault of thousands of notes).
    """
    try:
        db = connect_readonly(path, timeout=10)
    except sqlite3.Error:
        return False
    try:
        rows = db.execute("PRAGMA quick_check").fetchall()
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc):
            return True  # a writer holds it: not damage
        return False
    except sqlite3.DatabaseError:
        return False
    finally:
        db.close()
    return rows == [("ok",)]


def is_damage(exc: sqlite3.DatabaseError) -> bool:
    """Whether ``exc`` says the SQLite file itself is damaged (SQLITE_CORRUPT, SQLITE_NOTADB), the only case
    in which the index is dropped and rebuilt; anything else (SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY,
    SQLITE_BUSY…) is the machine's state, and rebuilding would only lose the last good index."""
    name, text = getattr(exc, "sqlite_errorname", "") or "", str(exc).lower()
    if name:  # a table of the index's own schema gone is damage too: the file is not what a sync wrote
        return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "no such table" in text
    return "malformed" in text or "not a database" in text or "no such table" in text


def repairing(layout: IndexLayout, run: Callable[[], R]) -> R:
    """``run()`` (one sync pass) over a sound SQLite file: one that fails ``PRAGMA quick_check``, or breaks
    mid-pass (:func:`is_damage`), is dropped and the pass runs again on an empty index, with a warning.

    The check reads every page (0.4 s for a 10,000-note index), so it is skipped when the SQLite files
    are exactly as the last sync left them (:func:`record_as_left` in ``sqlite.verified``): anything
    that wrote to them since, a crash mid-write included, changes the signature.
    """
    if layout.sqlite.exists() and not as_left(layout.sqlite, layout.verified) and not sqlite_healthy(layout.sqlite):
        drop(layout)
    layout.verified.unlink(missing_ok=True)
    try:
        report = run()
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise  # a full disk, a read-only folder, a reader holding a lock: the index stays as it was
        drop(layout)
        report = run()
        report.warnings.append(f"index rebuilt: {exc}")
    except Exception:  # a later stage failed (LanceDB): SQLite is as this pass committed or rolled it back
        record_as_left(layout.sqlite, layout.verified)
        raise
    record_as_left(layout.sqlite, layout.verified)
    return report


def drop(layout: IndexLayout) -> None:
    """Delete the index (SQLite with its WAL and shared memory, LanceDB): the next pass rebuilds it."""
    for p in (layout.sqlite, Path(str(layout.sqlite) + "-wal"), Path(str(layout.sqlite) + "-shm")):
        p.unlink(missing_ok=True)
    shutil.rmtree(layout.lance, ignore_errors=True)
