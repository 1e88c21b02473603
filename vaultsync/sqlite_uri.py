"""SQLite ``file:`` URIs for the index, shared by the index and the search layers.

Built with ``os`` alone (no pathlib, no urllib: the hook's no-change answer opens the index through it).
"""

from __future__ import annotations

import os

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
