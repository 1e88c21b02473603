"""``vaultsync check --fix``: complete a declared supersession, nothing else: the missing
back-reference (``superseded_by`` or ``supersedes``) and, on the older note, ``status: superseded``
(SS004), which a supersession always asks for.

Only block-style frontmatter is edited. The status is written where ``status:`` holds one word,
quoted or not, on its own line (or is absent: a line is added). A reference is added in four
layouts: the key is absent (a line is added before the closing ``---``), the key holds a block list
(an item is added after its last item), the key holds a one-line flow list
with nothing after it (an item is added before ``]``), or the key is empty (``superseded_by:``,
``~``, ``null``: the value is written after it). Anything else — flow
mappings, multi-line flow lists, comments after the list, broken YAML — is
reported as "not fixed", with the line to write by hand, and left alone; ``check`` itself
advises ``--fix`` only where it will make the edit (:mod:`vaultsync.checks.fix_text`). Every
edit is verified by parsing the new text (the field must hold exactly the old items plus the new
one, and nothing else may change) before the file is replaced atomically, with all of the note's
edits or none; BOM, CRLF or CR line ends, comments and key order are kept.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from vaultsync.checks.fix_text import Fix, by_hand, fixed_note
from vaultsync.checks.frontmatter import schema_allows_status
from vaultsync.checks.lifecycle import (
    back_reference,
    cycle_edges,
    extra_successors,
    in_force,
    status_superseded,
    supersession_edges,
    unreadable_field,
    unresolved_fields,
)
from vaultsync.vault.vault import Vault

__all__ = ["Fix", "apply_fixes", "back_reference_advice", "plan_fixes", "status_advice", "write_note"]


def plan_fixes(vault: Vault, only: set[str] | None = None) -> list[Fix]:
    """The back-references missing on one side of a declared supersession (in ``only`` paths, if given)."""
    edges, problems = supersession_edges(vault)
    broken = unresolved_fields(problems)
    in_cycle = cycle_edges(edges)
    extra = extra_successors(vault, edges)
    fixes: list[Fix] = []
    for e in edges:
        if e in in_cycle or e.older in extra:
            continue  # a cycle (SS003) or a second successor (SS005): for a person to resolve
        if not e.declared_by_older and not in_force(vault.notes[e.newer]):
            continue  # a draft/proposed/rejected successor: the older note stands until it is in force
        if e.declared_by_newer and not e.declared_by_older:
            fixes.append(Fix(e.older, "superseded_by", back_reference(vault, e.newer, e.older)))
        elif e.declared_by_older and not e.declared_by_newer:
            fixes.append(Fix(e.newer, "supersedes", back_reference(vault, e.older, e.newer)))
        older = vault.notes[e.older]
        if older.fm_state == "mapping" and not status_superseded(older.frontmatter) \
                and Fix(e.older, "status", "superseded") not in fixes \
                and schema_allows_status(vault.config, vault.root, e.older, "superseded"):
            fixes.append(Fix(e.older, "status", "superseded"))  # SS004 (asked of a note with frontmatter only)
    # a field LC001 cannot read is mended by hand first, as check asks no back-reference of it (SS002)
    return [f for f in fixes if f.ref is not None and (f.path, f.field) not in broken and (only is None or f.path in only)
            and not (f.field != "status" and unreadable_field(vault.notes[f.path], f.field))]


def back_reference_advice(vault: Vault, target: str, source: str, field: str, in_cycle: bool = False) -> str:
    """How to add the back-reference to ``target`` in ``source``'s ``field`` (SS002): ``--fix`` when it will
    make the edit, else the line to write by hand, or nothing before the cycle it lies on is resolved."""
    if in_cycle:
        return "resolve the supersession cycle first (SS003): `--fix` never writes across one"
    ref = back_reference(vault, target, source)
    if ref is not None:
        fix = Fix(source, field, ref)
        note = vault.notes[source]
        status = [Fix(source, "status", "superseded")] if field == "superseded_by" and note.fm_state == "mapping" \
            and not status_superseded(note.frontmatter) else []  # --fix edits the note whole: its status too
        if fixed_note(source, _text(vault, source), [fix, *status]) is not None:
            return "run `vaultsync check --fix`"
        return f"write by hand {by_hand(fix)} ({_why_not(note.fm_state)})"
    return (f"add it by hand (`--fix` cannot: no [[WikiLink]] names {target}, whose file name holds # | ^ or a "
            "bracket, and no memory_id of its own does)")


def _why_not(fm_state: str) -> str:
    """Why ``--fix`` leaves a note's back-reference to the author, by what frontmatter the note has."""
    if fm_state == "none":
        return "the note has no frontmatter: add a '---' block at its top holding it; `--fix` adds none"
    if fm_state == "empty":
        return "between its empty frontmatter's '---' lines; `--fix` edits frontmatter that holds keys only"
    return "`--fix` edits block-style frontmatter with one-line values only"


def status_advice(vault: Vault) -> Callable[[str], str]:
    """For SS004: a note's path → ``, or run `vaultsync check --fix``` where ``--fix`` will set its ``status:
    superseded`` with its other edits, else nothing. The vault's fixes are planned once, at the first call."""
    plan: dict[str, list[Fix]] | None = None

    def advice(path: str) -> str:
        nonlocal plan
        if plan is None:
            plan = {}
            for f in plan_fixes(vault):
                plan.setdefault(f.path, []).append(f)
        fixes = plan.get(path, [])
        if Fix(path, "status", "superseded") in fixes and fixed_note(path, _text(vault, path), fixes) is not None:
            return ", or run `vaultsync check --fix`"
        return ""

    return advice


def _text(vault: Vault, path: str) -> str:
    """The note's text; a note from the check cache keeps its frontmatter's only, all that a fix edits."""
    note = vault.notes[path]
    return note.text or "---\n" + note.yaml_text + ("" if note.yaml_text.endswith("\n") else "\n") + "---\n"


def apply_fixes(root: Path, vault: Vault, fixes: list[Fix]) -> bool:
    """Make ``fixes`` (one note's: a back-reference, then its status) in one atomic write; False (the file
    untouched) when the note's layout takes one of them not: a note is never left half-edited."""
    path = fixes[0].path
    if vault.notes[path].fm_state != "mapping":
        return False
    file = root / path
    raw = file.read_bytes()
    bom = raw.startswith(b"\xef\xbb\xbf")
    new_text = fixed_note(path, raw[3:].decode("utf-8") if bom else raw.decode("utf-8"), fixes)
    if new_text is None:
        return False
    write_note(file, (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8"))
    return True


def write_note(file: Path, data: bytes) -> None:
    """Replace ``file`` with ``data`` atomically (a temporary file beside it, renamed over it), its mode kept."""
    fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".vaultsync-fix-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, file.stat().st_mode & 0o7777)
        os.replace(tmp, file)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
