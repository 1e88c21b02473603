"""Lifecycle checks: dates (TTL), unique ``memory_id``, the supersession graph (its checks:
:mod:`vaultsync.checks.supersession`; readable lifecycle values: :mod:`vaultsync.checks.lifecycle_values`). Supersession model: ``A.supersedes`` lists B ⇔
``B.superseded_by`` names A; a superseded note's ``status`` says so. References are ``"[[WikiLinks]]"``
or ``memory_id``s (see :meth:`Vault.resolve_ref`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from vaultsync.diagnostics import ERROR, WARNING, Diagnostic, shown
from vaultsync.vault.fields import (
    local_day,
    normalised_frontmatter,
    parse_vault_date,
    parse_vault_instant,
    parse_vault_wall_time,
    with_lifecycle_keys,
)
from vaultsync.vault.lifecycle_fields import in_force as status_in_force
from vaultsync.vault.lifecycle_fields import read_lifecycle
from vaultsync.vault.note import Note
from vaultsync.vault.resolve import id_key
from vaultsync.vault.vault import Vault


def check_dates(note: Note, today: dt.date, expired_severity: str = WARNING,
                tz: dt.tzinfo | None = None) -> list[Diagnostic]:
    """``expires`` after ``created``; ``created`` and ``last_validated`` not in the future, nor
    ``last_validated`` before ``created``; expiry."""
    fm = with_lifecycle_keys(note.frontmatter)
    out: list[Diagnostic] = []
    created = parse_vault_date(fm.get("created"))
    expires = parse_vault_date(fm.get("expires"))
    validated = parse_vault_date(fm.get("last_validated"))
    if created and expires and _not_after(fm.get("expires"), fm.get("created"), local_day(fm.get("expires"), tz),
                                          local_day(fm.get("created"), tz), tz):  # days where today is counted, as DT004
        line, col = note.position(("expires",))
        shown = (fm["expires"], fm["created"]) if len(fm["expires"]) > 10 or len(fm["created"]) > 10 else (expires, created)
        out.append(Diagnostic(note.path, line, col, "DT002", f"expires: {shown[0]} is not after created ({shown[1]})"))
    if created and local_day(fm.get("created"), tz) > today:  # type: ignore[operator]
        line, col = note.position(("created",))
        out.append(Diagnostic(note.path, line, col, "DT003", f"created: {_day(fm['created'], tz)} is in the future "
                                                             f"(today is {today})"))
    if validated and local_day(fm.get("last_validated"), tz) > today:  # type: ignore[operator]
        line, col = note.position(("last_validated",))
        out.append(Diagnostic(note.path, line, col, "DT003",
                              f"last_validated: {_day(fm['last_validated'], tz)} is in the future (today is {today})"))
    elif validated and created and _before(fm["last_validated"], fm["created"], local_day(fm["last_validated"], tz),
                                           local_day(fm["created"], tz), tz):  # type: ignore[arg-type]
        line, col = note.position(("last_validated",))
        timed = len(fm["last_validated"]) > 10 or len(fm["created"]) > 10
        shown = (fm["last_validated"], fm["created"]) if timed else (validated, created)
        out.append(Diagnostic(note.path, line, col, "DT003", f"last_validated: {shown[0]} is before created ({shown[1]})"))
    expires = local_day(fm.get("expires"), tz) if expires else None  # a moment's day where today is counted
    # a superseded note is already hidden from search: its expiry asks nothing of anyone
    if expires and expires < today and expired_severity != "off" and not _superseded(note):
        line, col = note.position(("expires",))
        out.append(Diagnostic(note.path, line, col, "DT004", f"expired on {expires}: re-validate it (move expires "
                              "forward, update last_validated) or supersede it",
                              severity=ERROR if expired_severity == "error" else WARNING))
    return out


def _day(text: str, tz: dt.tzinfo | None) -> str:
    """A date as written; a date-time as written, with the day it falls on where today is counted
    (``2026-12-07T23:59:00-11:00 (2026-12-08 here)``)."""
    day = local_day(text, tz)
    return str(day) if len(text) <= 10 else text if str(day) == text[:10] else f"{text} ({day} here)"


def _before(validated_text: str, created_text: str, validated: dt.date, created: dt.date,
            tz: dt.tzinfo | None = None) -> bool:
    """``last_validated`` is before ``created``: two moments compare as moments (:func:`_moments`; a check at
    20:00Z on the 11th follows a creation at 01:00+09:00 on the 12th); otherwise days compare."""
    moments = _moments(validated_text, created_text, tz)
    if moments is not None:
        return moments[0] < moments[1]
    return validated < created


def _not_after(expires_text: str, created_text: str, expires: dt.date, created: dt.date,
               tz: dt.tzinfo | None = None) -> bool:
    """``expires`` is not after ``created``: two moments compare as moments (:func:`_moments`); otherwise
    days compare, and a moment on the creation day is not before it."""
    moments = _moments(expires_text, created_text, tz)
    if moments is not None:
        return moments[0] <= moments[1]
    return expires < created if len(expires_text) > 10 or len(created_text) > 10 else expires <= created


def _moments(first: str, second: str, tz: dt.tzinfo | None = None) -> tuple[dt.datetime, dt.datetime] | None:
    """Two date-times that compare as moments: both with offsets (``+09:00`` and ``Z`` alike), both without
    (wall-clock times of one place), or one of each, the one without read as a wall-clock time where
    "today" is counted (``tz``, None for the process's zone: ADR-0053); None where one is a plain date."""
    for parse in (parse_vault_instant, parse_vault_wall_time):
        a, b = parse(first), parse(second)
        if a is not None and b is not None:
            return a, b
    a, b = parse_vault_instant(first) or parse_vault_wall_time(first), \
        parse_vault_instant(second) or parse_vault_wall_time(second)
    if a is None or b is None:
        return None
    try:
        return _aware(a, tz), _aware(b, tz)
    except (OverflowError, ValueError):  # year 1 or 9999 at a zone's edge: the days compare
        return None


def _aware(moment: dt.datetime, tz: dt.tzinfo | None) -> dt.datetime:
    """``moment``, a naive one read as a wall-clock time in ``tz`` (None: the process's zone)."""
    if moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=tz) if tz is not None else moment.astimezone()


def status_superseded(frontmatter: dict[str, Any]) -> bool:
    """``status:`` says superseded (in any case, or as MADR's ``superseded by X``)."""
    status = normalised_frontmatter(frontmatter).get("status")
    return isinstance(status, str) and status.strip().casefold() == "superseded"


def in_force(note: Note) -> bool:
    """Whether the note's ``supersedes`` takes effect (:func:`vaultsync.vault.lifecycle_fields.in_force`
    of its status; the older note stands until then)."""
    return status_in_force(normalised_frontmatter(note.frontmatter).get("status"))


def in_force_edges(vault: Vault, edges: list[Supersession]) -> list[Supersession]:
    """The edges that take effect: the older note says so itself, or the newer one is :func:`in_force`."""
    return [e for e in edges if e.declared_by_older or in_force(vault.notes[e.newer])]


def _superseded(note: Note) -> bool:
    """The note says it is superseded (``status: superseded``, MADR's ``superseded by X``, or ``superseded_by``)."""
    return status_superseded(note.frontmatter) or bool(normalised_frontmatter(note.frontmatter).get("superseded_by"))


def check_duplicate_ids(vault: Vault) -> list[Diagnostic]:
    """A ``memory_id`` may be used by one note only, in any spelling search takes for the same id
    (:func:`vaultsync.vault.resolve.id_key`: ``adr-0001``, ``ADR‐0001`` with U+2010, ``ＡＤＲ-0001``)."""
    out: list[Diagnostic] = []
    same: dict[str, list[tuple[str, str]]] = defaultdict(list)  # id key → (path, memory_id as written)
    for mid, paths in vault.by_memory_id.items():
        same[id_key(mid)].extend((path, mid) for path in paths)
    for held in same.values():
        if len(held) < 2:
            continue
        for path, mid in held:
            others = ", ".join(sorted(p if m == mid else f"{p} (as {shown(m)})" for p, m in held if p != path))
            line, col = vault.notes[path].position(("memory_id",))
            also = "" if all(m == mid for _, m in held) else " — search and lookups read them as one id"
            out.append(Diagnostic(path, line, col, "ID001", f"memory_id {shown(mid)} is also used by {others}{also}"))
    return out


@dataclass(frozen=True)
class Supersession:
    """One edge ``newer`` supersedes ``older``, and where each side declares it."""

    newer: str
    older: str
    declared_by_newer: bool
    declared_by_older: bool


def refs_of(value: Any) -> list[str]:
    """The references a ``supersedes``/``superseded_by`` value names; blank ones name nothing."""
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [v for v in items if isinstance(v, str) and v.strip()]


def unreadable_field(note: Note, field_name: str) -> bool:
    """Whether ``field_name`` is written but cannot be read (``superseded_by: [[X]]`` unquoted is a list in a
    list), or the frontmatter cannot (FM005, FM003, FM011): that says so; no back-reference is "missing"."""
    unread = note.fm_state in ("invalid", "misplaced", "not-mapping")
    return unread or any(bad.field == field_name for bad in read_lifecycle(note.frontmatter).unreadable)


def extra_successors(vault: Vault, edges: list[Supersession]) -> dict[str, list[str]]:
    """Older note → its successors (sorted), for each note that more than one note supersedes while its
    ``superseded_by`` holds at most one reference (a note has one successor)."""
    by_older: dict[str, list[str]] = {}
    for e in in_force_edges(vault, edges):
        by_older.setdefault(e.older, []).append(e.newer)
    return {old: sorted(new) for old, new in by_older.items() if len(new) > 1
            and not isinstance(normalised_frontmatter(vault.notes[old].frontmatter).get("superseded_by"), list)}


def supersession_edges(vault: Vault) -> tuple[list[Supersession], list[Diagnostic]]:
    """Collect supersession edges from both directions; report unresolvable references. A field the
    lifecycle reader cannot read (LC001, which search also ignores) declares no edge."""
    declared: dict[tuple[str, str], list[bool]] = {}
    out: list[Diagnostic] = []
    for path, note in vault.notes.items():
        if note.fm_state != "mapping":
            continue
        fm = normalised_frontmatter(note.frontmatter)
        unreadable = {bad.field for bad in read_lifecycle(note.frontmatter).unreadable}
        for field_name, newer_side in (("supersedes", True), ("superseded_by", False)):
            if field_name in unreadable:  # LC001 says so; no edge, no SS002/SS004 and nothing for --fix from it
                continue
            for i, ref in enumerate(refs_of(fm.get(field_name))):
                res = vault.resolve_ref(ref, path)
                where = (field_name, i) if isinstance(fm.get(field_name), list) else (field_name,)
                if field_name not in with_lifecycle_keys(note.frontmatter):  # came from a MADR status line
                    where = ("status",)
                if res.status != "ok" or res.path is None:
                    line, col = note.position(where)
                    why = ("ambiguous; candidates: " + ", ".join(res.candidates)) if res.status == "ambiguous" \
                        else "no note of that name" if ref.lstrip().startswith("[[") \
                        else "no note with that memory_id or name"
                    out.append(Diagnostic(path, line, col, "SS001", f"{field_name}: {shown(ref)} → {why}"))
                    continue
                if res.path == path:
                    line, col = note.position(where)
                    out.append(Diagnostic(path, line, col, "SS003", f"{field_name}: a note cannot supersede itself"))
                    continue
                if res.path not in vault.notes:  # a symbolic link or an attachment: no note's lifecycle to read
                    line, col = note.position(where)
                    what = "a symbolic link: name the note it leads to" if res.path in vault.symlinks \
                        else "not a note: name the note it replaces or that replaces it"
                    out.append(Diagnostic(path, line, col, "SS001", f"{field_name}: '{ref}' → {res.path} is {what}"))
                    continue
                key = (path, res.path) if newer_side else (res.path, path)
                flags = declared.setdefault(key, [False, False])
                flags[0 if newer_side else 1] = True
    edges = [Supersession(n, o, f[0], f[1]) for (n, o), f in sorted(declared.items())]
    return edges, out


def unresolved_fields(diagnostics: list[Diagnostic]) -> set[tuple[str, str]]:
    """``(path, field)`` of the supersession fields holding a reference that resolves nowhere (SS001):
    no back-reference is asked of them, nor written by ``--fix``, beside the broken one."""
    return {(d.path, d.message.split(":", 1)[0]) for d in diagnostics if d.code == "SS001"}


_UNLINKABLE = re.compile(r"[#|^\[\]]")


def back_reference(vault: Vault, target: str, source: str) -> str | None:
    """What ``--fix`` writes in ``source`` to name ``target``: a ``[[WikiLink]]`` that resolves uniquely
    from ``source``; ``target``'s ``memory_id`` when the file name holds a character a WikiLink cannot
    (``#``, ``|``, ``^``, brackets: ``[[ADR-6 C# tips]]`` names note "ADR-6 C", heading " tips") and
    that id is the note's alone; None when neither names it (no fix is written: a person chooses)."""
    stem = target.rsplit("/", 1)[-1].removesuffix(".md")
    root = vault.link_index.root
    rel = target[len(root):] if root and target.startswith(root) else target
    if _UNLINKABLE.search(rel):
        mid = vault.notes[target].frontmatter.get("memory_id") if target in vault.notes else None
        unique = isinstance(mid, str) and mid.strip() and len(vault.by_memory_id.get(mid.strip(), [])) == 1
        return mid.strip() if unique else None  # type: ignore[union-attr]
    if vault.link_index.resolve(stem, source).path == target:
        return f"[[{stem}]]"
    return f"[[{rel.removesuffix('.md')}]]"


def cycle_edges(edges: list[Supersession]) -> set[Supersession]:
    """The supersessions that lie on a cycle (the older note leads back to the newer one): SS003, for a
    person to resolve, never ``--fix``."""
    graph: dict[str, list[str]] = {}
    for e in edges:
        graph.setdefault(e.newer, []).append(e.older)
    return {e for e in edges if _reaches(graph, e.older, e.newer)}


def _reaches(graph: dict[str, list[str]], start: str, goal: str) -> bool:
    """Whether ``goal`` is reachable from ``start`` along ``graph``'s edges."""
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph.get(todo.pop(), []):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False
