"""Errors of the write path: a refused change carries the diagnostics that refused it."""

from __future__ import annotations

from vaultsync.diagnostics import Diagnostic


class MemoryWriteError(Exception):
    """A request that cannot be carried out (unknown type, note not found, bad field); one clear message."""


class NotCommitted(MemoryWriteError):
    """The files are written and checked, but ``git commit`` failed (a hook refused it, no identity):
    a refusal (exit 1), not a bad request."""


class WriteRefused(MemoryWriteError):
    """The change would add errors to the vault; nothing was written.

    Attributes:
        diagnostics: the new errors, ``path:line:col: CODE message`` when rendered.
    """

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        lines = "\n".join(d.render() for d in diagnostics)
        super().__init__(f"refused: the change would add {len(diagnostics)} error(s)\n{lines}")
