"""SQLite ``file:`` URIs for the index, shared by the index and the search layers."""

from __future__ import annotations

from pathlib import Path


def readonly_uri(path: Path) -> str:
    """An SQLite ``file:`` URI opening ``path`` read-only; ``#``, ``?``, ``%`` and spaces escaped.

    Raises:
        OSError when ``path`` cannot be made absolute.
    """
    return Path(path).absolute().as_uri() + "?mode=ro"
