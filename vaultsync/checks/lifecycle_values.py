"""LC checks: a lifecycle field that cannot be read (LC001), one read under another spelling (LC002), a
second spelling of a field already given (LC003), and a key nothing reads that was likely meant as a
lifecycle field (LC004). Search fails closed on an unreadable field (ADR-0040), so each is reported in every
folder, typed or not."""

from __future__ import annotations

from typing import Any

from vaultsync.diagnostics import WARNING, Diagnostic
from vaultsync.vault.fields import key_variants, lifecycle_fields_meant, normalised_frontmatter
from vaultsync.vault.lifecycle_fields import EXPECTED, FILTER_OF, read_lifecycle
from vaultsync.vault.note import Note

_RAW_MAX = 60


def check_lifecycle_fields(note: Note, declared: frozenset[str] = frozenset()) -> list[Diagnostic]:
    """LC001 for a lifecycle field that cannot be read, LC002 for a ``status`` or a lifecycle key in another
    case (``Superseded``, ``Expires:``), which is read as meant, LC003 for a second spelling of a field
    (``expires:`` and ``Expires:``), which nothing reads, LC004 (:func:`_meant`) for a key nothing reads that
    was likely meant as a lifecycle field the note does not set (``superceded_by``, ``expiry``), unless the
    note's type schema ``declared`` it.

    Runs in every folder, typed or not: search hides a note with an unreadable
    lifecycle field (the filters fail closed), so the author must hear about it,
    also where a type's schema reports the value too.
    """
    out: list[Diagnostic] = []
    written = {name: key for key, name in key_variants(note.frontmatter)}
    for name, key in written.items():
        line, col = note.position((key,), key=True)
        out.append(Diagnostic(note.path, line, col, "LC002", f"{key}: read as the lifecycle field '{name}' — write "
                              f"the key as '{name}'", severity=WARNING))
    for key, name in key_variants(note.frontmatter, read=False):  # a second spelling of a field: nothing reads it
        line, col = note.position((key,), key=True)
        given = f" as '{written[name]}'" if name in written else ""
        out.append(Diagnostic(note.path, line, col, "LC003", f"{key}: ignored, as '{name}' is already given{given} "
                              f"— remove one of them", severity=WARNING))
    for bad in read_lifecycle(note.frontmatter).unreadable:
        key = written.get(bad.field, bad.field)
        where = ("status",) if key not in note.frontmatter else (key,)
        line, col = note.position(where)
        effect = "search hides this note until it is fixed" if FILTER_OF[bad.field] \
            else "search ignores it when ranking by recency"
        out.append(Diagnostic(note.path, line, col, "LC001",
                              f"{key}: cannot read {_raw(note, bad.value, line, col)} as {bad.expected}; "
                              f"{effect}{_percent_hint(bad.field, bad.value)}"))
    out.extend(_meant(note, declared))
    status = normalised_frontmatter(note.frontmatter).get("status")
    if isinstance(status, str) and status.strip().casefold() == "superseded" and status != "superseded":
        line, col = note.position(("status",))
        how = [fix for fix, wrong in (("without the spaces around it", status != status.strip()),
                                      ("in lower case", status.strip() != "superseded")) if wrong]
        out.append(Diagnostic(note.path, line, col, "LC002",
                              f"status: '{status}' is read as 'superseded' — write it {' and '.join(how)}",
                              severity=WARNING))
    return out


def _meant(note: Note, declared: frozenset[str]) -> list[Diagnostic]:
    """LC004 (a warning) at each top-level key :func:`lifecycle_fields_meant` maps to fields the note does
    not set: search reads nothing from it, so an expiry, a supersession or a confidence written there
    would silently not act."""
    out = []
    given = normalised_frontmatter(note.frontmatter)
    for key, value in note.frontmatter.items():
        fields = [f for f in lifecycle_fields_meant(key) if f not in given]
        if not fields or key in declared:
            continue
        if value is True and {"supersedes", "superseded_by"} & set(fields):
            advice = 'did you mean status: superseded, with superseded_by: "[[successor]]"?'
        else:
            advice = "did you mean " + " or ".join(f"'{f}', {EXPECTED[f]}" for f in fields) + "?"
        line, col = note.position((key,), key=True)
        out.append(Diagnostic(note.path, line, col, "LC004", f"{key}: search does not read this key — {advice}",
                              severity=WARNING))
    return out


def _percent_hint(field_name: str, value: Any) -> str:
    """`` — for 80 %, write 0.8`` where a confidence looks like a percentage, else ``""``."""
    if field_name != "confidence" or isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not 10 <= value <= 100:
        return ""
    return f" — for {value:g} %, write {value / 100:g}"


def _raw(note: Note, value: Any, line: int, col: int) -> str:
    """A string value in quotes (as ``DT001`` shows it), any other value as written in the file,
    shortened to ``_RAW_MAX`` characters."""
    if isinstance(value, str):
        text = f"'{value}'"
    else:  # the value's frontmatter line as written (file line 2 is the YAML's first line)
        lines = note.yaml_text.split("\n")
        text = lines[line - 2][col - 1:].rstrip() if 1 < line < len(lines) + 2 else repr(value)
    return text if len(text) <= _RAW_MAX else text[:_RAW_MAX - 1] + "…"
