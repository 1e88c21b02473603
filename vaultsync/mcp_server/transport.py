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

_HIGH, _LOW = r"\\u[dD][89abAB][0-9a-fA-F]{2}", r"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
# an escape not itself escaped (even backslashes before it) that is not half of a surrogate pair
_LONE_ESCAPE = re.compile(rf"(?<!\\)((?:\\\\)*)(?:\\u([dD][89abAB][0-9a-fA-F]{{2}})(?!{_LOW})"
                          rf"|(?<!{_HIGH})\\u([dD][c-fC-F][0-9a-fA-F]{{2}}))")
MARK = "\ufdd0"
_MARKED = re.compile(MARK + "([0-9A-Fa-f]{4})")


def mark_lone_surrogates(line: str) -> str:
    """``line`` with each lone surrogate escape replaced by :data:`MARK` and its 4 hex digits."""
    if "\\u" not in line:
        return line
    return _LONE_ESCAPE.sub(lambda m: f"{m.group(1)}\\ufdd0{(m.group(2) or m.group(3)).upper()}", line)


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
