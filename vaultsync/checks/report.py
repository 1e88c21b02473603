"""Output formats for diagnostics: text (``path:line:col: CODE message``), GitHub annotations, JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from vaultsync.diagnostics import ERROR, Diagnostic

FORMATS = ("text", "github", "json")


def _github_escape(value: str, prop: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def report(diagnostics: Sequence[Diagnostic], fmt: str, out: TextIO, checked: int) -> None:
    """Write ``diagnostics`` to ``out`` in ``fmt`` (one of :data:`FORMATS`).

    Args:
        checked: number of notes checked, for the summary line.
    """
    errors = sum(d.severity == ERROR for d in diagnostics)
    warnings = len(diagnostics) - errors
    if fmt == "json":
        json.dump({
            "checked": checked, "errors": errors, "warnings": warnings,
            "diagnostics": [
                {"path": d.path, "line": d.line, "col": d.col, "code": d.code,
                 "severity": d.severity, "message": d.message}
                for d in diagnostics
            ],
        }, out, ensure_ascii=False, indent=2)
        out.write("\n")
        return
    for d in diagnostics:
        if fmt == "github":
            level = "error" if d.severity == ERROR else "warning"
            props = f"file={_github_escape(d.path, True)}"
            if d.line > 0:
                props += f",line={d.line},col={d.col or 1}"
            props += f",title={_github_escape(d.code, True)}"
            out.write(f"::{level} {props}::{_github_escape(d.message)}\n")
        else:
            out.write(d.render() + "\n")
    if fmt == "text":
        summary = f"{checked} notes checked: {errors} error(s), {warnings} warning(s)"
        out.write(summary + "\n")
