"""Output formats for diagnostics, one reporter class per format registered by its name (in the manner
of check-jsonschema's reporters): ``text`` (``path:line:col: CODE message``), ``github``
(workflow annotations), ``json``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import ClassVar, TextIO

from vaultsync.diagnostics import ERROR, Diagnostic, terminal_safe

REPORTERS: dict[str, type[Reporter]] = {}


class Reporter:
    """Writes a run's diagnostics to a stream. Subclasses set :attr:`name` and are registered under it."""

    name: ClassVar[str]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        REPORTERS[cls.name] = cls

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def report(self, diagnostics: Sequence[Diagnostic], checked: int) -> None:
        """Write ``diagnostics`` (sorted) of a run over ``checked`` notes."""
        raise NotImplementedError


def _counts(diagnostics: Sequence[Diagnostic]) -> tuple[int, int]:
    errors = sum(d.severity == ERROR for d in diagnostics)
    return errors, len(diagnostics) - errors


def _count(n: int, noun: str) -> str:
    """``1 note``, ``2 notes``, ``0 notes``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class TextReporter(Reporter):
    """One ``path:line:col: CODE message`` line per diagnostic, then a summary line."""

    name = "text"

    def report(self, diagnostics: Sequence[Diagnostic], checked: int) -> None:
        for d in diagnostics:
            self.out.write(d.render() + "\n")
        errors, warnings = _counts(diagnostics)
        self.out.write(f"{_count(checked, 'note')} checked: {_count(errors, 'error')}, "
                       f"{_count(warnings, 'warning')}\n")


def github_escape(value: str, prop: bool = False) -> str:
    """``value`` as a GitHub Actions workflow command holds it: ``%``, CR and LF escaped (a line break would
    start a command of its own), and ``:`` and ``,`` too in a property (``file=…,title=…``); every other
    control character a terminal acts on (ESC, OSC, C1) written as an escape, as the text format does: a
    committed file name must not drive a CI log's viewer."""
    value = terminal_safe(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return value.replace(":", "%3A").replace(",", "%2C") if prop else value


class GithubReporter(Reporter):
    """GitHub Actions workflow commands (``::error file=…,line=…,col=…,title=CODE::message``), which
    GitHub shows on the pull request's diff."""

    name = "github"

    def report(self, diagnostics: Sequence[Diagnostic], checked: int) -> None:
        for d in diagnostics:
            level = "error" if d.severity == ERROR else "warning"
            props = f"file={github_escape(d.path, True)},line={max(d.line, 1)},col={d.col or 1}"  # as the text: 1:1
            props += f",title={github_escape(d.code, True)}"
            self.out.write(f"::{level} {props}::{github_escape(d.message)}\n")


class JsonReporter(Reporter):
    """One JSON object: ``checked``, ``errors``, ``warnings`` and the ``diagnostics`` list."""

    name = "json"

    def report(self, diagnostics: Sequence[Diagnostic], checked: int) -> None:
        errors, warnings = _counts(diagnostics)
        json.dump({
            "checked": checked, "errors": errors, "warnings": warnings,
            "diagnostics": [{"path": d.path, "line": max(d.line, 1), "col": d.col or 1, "code": d.code,  # as the text
                             "severity": d.severity, "message": d.message} for d in diagnostics],
        }, self.out, ensure_ascii=False, indent=2)
        self.out.write("\n")


FORMATS = tuple(REPORTERS)


def report(diagnostics: Sequence[Diagnostic], fmt: str, out: TextIO, checked: int) -> None:
    """Write ``diagnostics`` to ``out`` with the reporter registered as ``fmt`` (one of :data:`FORMATS`).

    Raises:
        KeyError: no reporter of that name.
    """
    REPORTERS[fmt](out).report(diagnostics, checked)
