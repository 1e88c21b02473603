"""stdin for the MCP server: JSON text that the MCP SDK's parser would drop without an answer.

JSON may escape a lone UTF-16 surrogate (``"\\ud800"``); Python's ``json`` reads it, but pydantic's
parser, which the SDK uses, refuses the whole line as invalid JSON, so the request gets no reply and
the client waits until its own timeout. Each such escape is rewritten here as the noncharacter
U+FDD0 (Unicode's "internal use") followed by the code point's hex digits, so the request parses,
and the server refuses it with a tool error that names the argument (:func:`lone_surrogate`).
"""

from __future__ import annotations

import re
from typing import IO, Any

# one JSON escape: \\uXXXX (group 1: its hex digits) or a backslash and the character it escapes
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)")
MARK = "\ufdd0"
_MARKED = re.compile(MARK + "([0-9A-Fa-f]{4})")


def mark_lone_surrogates(line: str) -> str:
    """``line`` with each lone surrogate escape replaced by :data:`MARK` and its 4 hex digits. Escapes
    are read left to right as JSON reads them, so ``\\\\ud800`` (an escaped backslash, then text) is no
    escape, and a high surrogate escape followed at once by a low one is a pair, kept."""
    if "\\u" not in line:
        return line
    out: list[str] = []
    last = 0

    def mark(m: re.Match[str]) -> None:
        nonlocal last
        out.extend([line[last:m.start()], f"\\ufdd0{m.group(1).upper()}"])
        last = m.end()

    pending: re.Match[str] | None = None  # a high surrogate escape, waiting for its low half
    for m in _ESCAPE.finditer(line):
        code = int(m.group(1), 16) if m.group(1) else -1
        if pending is not None:
            if 0xDC00 <= code <= 0xDFFF and m.start() == pending.end():
                pending = None  # a pair, kept as written
                continue
            mark(pending)
            pending = None
        if 0xD800 <= code <= 0xDBFF:
            pending = m
        elif 0xDC00 <= code <= 0xDFFF:
            mark(m)
    if pending is not None:
        mark(pending)
    return "".join(out) + line[last:]


def lone_surrogate(text: str) -> tuple[int, int] | None:
    """(code point, character index) of the first marked lone surrogate in ``text``, or None."""
    found = _MARKED.search(text)
    return None if found is None else (int(found.group(1), 16), found.start())


class MarkedStdin:
    """A text stream whose lines come from ``stream`` through :func:`mark_lone_surrogates`
    (what ``anyio.wrap_file`` needs of it: ``readline`` and ``close``)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def readline(self, *args: Any) -> str:
        return mark_lone_surrogates(self._stream.readline(*args))

    def close(self) -> None:
        self._stream.close()
