"""The one result type every check produces: a located, coded diagnostic."""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True, order=True)
class Diagnostic:
    """A problem at ``path:line:col``.

    Attributes:
        path: repository-relative POSIX path.
        line, col: 1-based; 0 when the problem concerns the whole file.
        code: stable identifier (``FM001``...), documented in the README.
        message: what is wrong and how to fix it.
        severity: ``"error"`` (fails the check) or ``"warning"``.
    """

    path: str
    line: int
    col: int
    code: str
    message: str
    severity: str = ERROR

    def location(self) -> str:
        """``path:line:col``; a whole-file problem (line 0) stands at ``1:1``, as linters place them, so that
        every line an editor or CI parses has the same shape."""
        path = visible(self.path)  # a file name may hold a line break, which would forge a diagnostic line
        return f"{path}:{max(self.line, 1)}:{self.col or 1}"

    def render(self) -> str:
        """``path:line:col: CODE message`` (warnings say so after the code), on one line: a line break or an
        invisible character the message quotes from a note is written as an escape (``\\n``, ``\\u200b``)."""
        tag = f"{self.code} warning:" if self.severity == WARNING else self.code
        return f"{self.location()}: {tag} {visible(self.message)}"


SHOWN_CHARS = 80  # the most of a caller's value a message repeats


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for a message, cut with its length past ``limit`` characters (a string's own, never
    inside an escape; another value's ``repr``): a caller's mistake (a whole body passed as a note
    reference) must not come back as a 100,000-character error."""
    if isinstance(value, str) and len(value) > limit:
        return f"{repr(value[:limit])[:-1]}… ({len(value):,} characters)"
    text = repr(value)
    return text if isinstance(value, str) else cut(text, limit)


def advise(advice: str, text: str, form: str = ": {}") -> str:
    """``advice`` with the ``text`` to write put in by ``form`` (``quote it: "x"``), when the text is short
    enough to repeat (:data:`SHOWN_CHARS` and two quotes); else the advice alone."""
    return advice + form.format(text) if text and len(text) <= SHOWN_CHARS + 2 else advice


def cut(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` as a note wrote it (a number's digits, a value's line), cut with its length past ``limit``
    characters, so that a message quoting it stays one readable line."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def closest(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice most like ``word`` for a "did you mean", or None: compared case-blind and without accents
    (``résolu`` → ``resolved``, ``Hematologie`` → ``hématologie``), by :func:`difflib.get_close_matches`
    (Ratcliff/Obershelp similarity of at least ``cutoff``); the choice is returned as written."""
    by_key: dict[str, str] = {}
    for choice in choices:
        by_key.setdefault(_plain(choice), choice)
    found = difflib.get_close_matches(_plain(word), list(by_key), n=1, cutoff=cutoff)
    return by_key[found[0]] if found else None


def _plain(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(ch))


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(text: str) -> str:
    """``text`` with every character one cannot see or that breaks the line written as an escape:
    ``\\n``, ``\\r``, ``\\t`` (a tab in a quoted name reads as spaces), else ``\\uXXXX`` (``\\UXXXXXXXX``
    past the BMP) for what Unicode calls Other or Separator (``str.isprintable``: U+200B, U+00A0, a BOM,
    bidi marks), the space aside, and
    for the letters and symbols drawn blank (:data:`BLANK_GLYPHS`: the Hangul fillers, the Braille blank).
    Visible text of any script is kept as it is."""
    if text.isprintable() and not BLANK_GLYPHS.intersection(text):
        return text
    return "".join(_escape(ch) if not ch.isprintable() or ch in BLANK_GLYPHS else ch for ch in text)


# letters and symbols that Unicode does not call invisible but that every font draws blank
BLANK_GLYPHS = frozenset("\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")


def _escape(ch: str) -> str:
    return _ESCAPES.get(ch) or (f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")


# what a terminal acts on: C0 controls but the tab and the line feed, a carriage return that ends no line
# (it would overwrite the line), DEL and the C1 controls (U+0080-U+009F: 8-bit CSI and OSC among them)
_CONTROL = re.compile(r"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` of several lines (a note's body as search or ``show`` prints it) with every control
    character a terminal would act on written as an escape (``\\u001b``, ``\\r``): a committed note must
    not drive its readers' terminals (OSC 52 writes the clipboard, ``ESC [2K`` erases a line to forge
    another). Line breaks, tabs and visible text of any script are kept."""
    return _CONTROL.sub(lambda m: _escape(m.group()), text)
