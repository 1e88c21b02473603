"""The one result type every check produces: a located, coded diagnostic."""

from __future__ import annotations

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
        """``path:line:col`` (``path`` alone for whole-file problems)."""
        if self.line <= 0:
            return self.path
        return f"{self.path}:{self.line}:{self.col or 1}"

    def render(self) -> str:
        """``path:line:col: CODE message`` (warnings say so after the code)."""
        tag = f"{self.code} warning:" if self.severity == WARNING else self.code
        return f"{self.location()}: {tag} {self.message}"
