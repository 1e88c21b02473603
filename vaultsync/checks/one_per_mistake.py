"""One diagnostic per mistake: where two checks refuse one value, or one key, the note gets the diagnostic
that says how to fix it, carrying what the other adds (what search does about the value, how it reads
the key), and never loses a mistake only the other names."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vaultsync.diagnostics import Diagnostic
from vaultsync.vault.fields import lifecycle_field_of
from vaultsync.vault.lifecycle_fields import EXPECTED, read_lifecycle
from vaultsync.vault.note import Note

_SCHEMA_CODES = ("DT001", "SC001")  # the schema's errors for one value


def one_per_mistake(note: Note, found: list[Diagnostic]) -> list[Diagnostic]:
    """``found`` (one note's diagnostics) with each mistake said once.

    - LC001 (a lifecycle field search cannot read) gives way when the field's unquoted ``[[links]]``
      (YAML reads each as a list inside a list) are all that makes it unreadable: the first diagnostic at
      such a link, FM017 or the schema's SC001, also says what search does. Otherwise it gives way only
      to the schema's error at its own place (``expires: 20250101``), which says it too.
    - FM017 for an unquoted link is not also the schema's "got a list" (SC001) for that field on its line.
    - The schema's refusal of a key (SC003) is not also LC002, LC003 or LC004, and says how search reads it.
    """
    read_as = {(d.line, d.col): d.message.split(" read as ", 1)[1].split(" — ")[0] for d in found
               if d.code == "LC002" and " read as " in d.message}  # "the lifecycle field 'expires'"
    refused_keys = {(d.line, d.col) for d in found if d.code == "SC003"}
    nested = {(d.line, _field(d)) for d in found if d.code == "FM017" and "as a list inside a list" in d.message}
    kept = [d for d in found if not ((d.code == "SC001" and (d.line, _field(d)) in nested)
                                     or (d.code in ("LC002", "LC003", "LC004") and (d.line, d.col) in refused_keys))]
    carrier: dict[int, Diagnostic] = {}  # id(diagnostic that says it) -> the LC001 it stands for
    for lc in (d for d in kept if d.code == "LC001"):
        said = _at_links(note, kept, lc) or next((d for d in kept if d.code in _SCHEMA_CODES
                                                  and (d.line, d.col) == (lc.line, lc.col)), None)
        if said is not None and id(said) not in carrier:  # one LC001 per diagnostic that says it: none lost
            carrier[id(said)] = lc
    said_by_other = {id(lc) for lc in carrier.values()}
    out = []
    for d in kept:
        if id(d) in said_by_other:
            continue
        if id(d) in carrier:
            d = replace(d, message=_with_effect(d.message, carrier[id(d)].message))
        elif d.code == "SC003" and (d.line, d.col) in read_as:
            d = replace(d, message=f"{d.message}; search reads it as {read_as[d.line, d.col]}")
        out.append(d)
    return out


def _at_links(note: Note, found: list[Diagnostic], lc001: Diagnostic) -> Diagnostic | None:
    """The first FM017 or SC001 at an unquoted link of ``lc001``'s field, where quoting its links would make
    the field readable; else None (the field holds another mistake, which LC001 must still name)."""
    key = _field(lc001)
    lines = {f.line + 2 for f in note.scalar_findings if f.kind == "wikilink" and f.path[:1] == (key,)}
    if not lines or key not in note.frontmatter:
        return None
    quoted = {**note.frontmatter, key: _quoted(note.frontmatter[key])}
    if any(bad.field == (lifecycle_field_of(key) or key) for bad in read_lifecycle(quoted).unreadable):
        return None
    return min((d for d in found if d.code in ("FM017", "SC001") and d.line in lines and _field(d) == key),
               key=lambda d: (d.line, d.col), default=None)


def _quoted(value: Any) -> Any:
    """``value`` as YAML reads it once each unquoted ``[[link]]`` (a list holding one list of one string)
    is quoted: the string ``"[[link]]"``."""
    if isinstance(value, list):
        if len(value) == 1 and isinstance(value[0], list) and len(value[0]) == 1 and isinstance(value[0][0], str):
            return f"[[{value[0][0]}]]"
        return [_quoted(v) for v in value]
    return value


def _field(d: Diagnostic) -> str:
    """The top-level field a value diagnostic names (``supersedes[0]: …`` → ``supersedes``)."""
    return d.message.split(":", 1)[0].split("[", 1)[0]


def _with_effect(said: str, lc001: str) -> str:
    """``said`` with what LC001 says search does; after a type error ("expected string, got 20250101"),
    also what the lifecycle reader reads there ("expires must be a date (YYYY-MM-DD)")."""
    effect = lc001.rsplit("; ", 1)[-1]
    field_name = said.split(":", 1)[0]
    if "expected " in said and ", got " in said and field_name in EXPECTED:
        return f"{said}; {field_name} must be {EXPECTED[field_name]}: {effect}"
    return f"{said}; {effect}"
