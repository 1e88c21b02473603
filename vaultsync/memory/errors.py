"""Errors of the write path: a refused change carries the diagnostics that refused it."""

from __future__ import annotations

from vaultsync.diagnostics import Diagnostic

SHOWN_CHARS = 80  # the most of a caller's value a message repeats


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for a message, cut after ``limit`` characters with the value's length: a caller's
    mistake (a whole body passed as a note reference) must not come back as a 100,000-character error."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(value) if isinstance(value, str) else len(text):,} characters)"


class MemoryWriteError(Exception):
    """A request that cannot be carried out (unknown type, note not found, bad field); one clear message."""


class WriteRefused(MemoryWriteError):
    """The change would add errors to the vault; nothing was written.

    Attributes:
        diagnostics: the new errors, ``path:line:col: CODE message`` when rendered.
    """

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        lines = "\n".join(d.render() for d in diagnostics)
        super().__init__(f"refused: the change would add {len(diagnostics)} error(s)\n{lines}")
