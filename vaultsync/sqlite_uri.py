"""Read-only SQLite connections to the index, shared by the index and the search layers.

Built with ``os`` and ``sqlite3`` alone (no pathlib, no urllib: the hook's no-change answer opens the
index through it).
"""

from __future__ import annotations

import os
import sqlite3

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/")


def readonly_uri(path: str | os.PathLike[str]) -> str:
    """An SQLite ``file:`` URI opening ``path`` read-only: the absolute path percent-encoded (RFC 3986;
    the same URI as ``pathlib.Path.as_uri()``), so ``#``, ``?``, ``%``, spaces and non-ASCII are safe.

    Raises:
        OSError when ``path`` cannot be made absolute.
    """
    if os.name == "nt":  # drive letters and backslashes: pathlib knows the rules
        from pathlib import Path

        return Path(path).absolute().as_uri() + "?mode=ro"
    raw = os.fsencode(os.path.abspath(path))
    quoted = "".join(chr(b) if b in _UNRESERVED else f"%{b:02X}" for b in raw)
    return f"file://{quoted}?mode=ro"


def connect_readonly(path: str | os.PathLike[str], **kwargs: object) -> sqlite3.Connection:
    """An SQLite connection reading ``path`` (``kwargs`` go to :func:`sqlite3.connect`).

    A database in WAL mode whose ``-shm`` file went with its last writer needs that file made again by
    its first reader, which a read-only folder or a full disk refuses ("unable to open database
    file"): an index that is whole and current would read as no index at all. There nothing can write
    the database either, so it is opened ``immutable`` (SQLite reads it without ``-shm`` or locks).

    Raises:
        sqlite3.Error when the file cannot be read at all (also when it does not exist).
    """
    db = sqlite3.connect(readonly_uri(path), uri=True, **kwargs)  # type: ignore[arg-type]
    try:
        db.execute("PRAGMA schema_version").fetchone()
    except sqlite3.OperationalError as exc:
        db.close()
        if not os.path.isfile(path) or str(exc) not in ("unable to open database file", "disk I/O error"):
            raise
        return sqlite3.connect(readonly_uri(path) + "&immutable=1", uri=True, **kwargs)  # type: ignore[arg-type]
    except sqlite3.DatabaseError:  # not a database: the caller's first statement says so, as it would unprobed
        pass
    return db
