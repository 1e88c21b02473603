"""Supersession as one validated change: the new note ``supersedes`` the old one, the old note
points back with ``superseded_by`` and says ``status: superseded``. A new note that is not in force
yet (``draft``, ``proposed``, ``rejected``: ADR-0114) only says ``supersedes``: the old note stands
until the new one is accepted, when ``check`` asks for the old side and ``check --fix`` writes it."""

from __future__ import annotations

from typing import Any

import pygit2

from vaultsync.diagnostics import WARNING, Diagnostic
from vaultsync.git import head_tree
from vaultsync.memory import transaction
from vaultsync.memory.create import Written, draft
from vaultsync.memory.errors import MemoryWriteError
from vaultsync.memory.frontmatter_text import set_fields
from vaultsync.memory.lookup import find_note, ref_to
from vaultsync.memory.workspace import Workspace
from vaultsync.vault.fields import normalised_frontmatter, parse_vault_date
from vaultsync.vault.lifecycle_fields import in_force
from vaultsync.vault.note import Note, parse_note
from vaultsync.vault.vault import Vault


def _not_superseded(vault: Vault, old: str) -> None:
    """Raise MemoryWriteError when ``old`` already names its successor (a note has one)."""
    fm = normalised_frontmatter(vault.notes[old].frontmatter)
    if fm.get("superseded_by"):
        raise MemoryWriteError(f"{vault.display_name(old)} is already superseded by {fm['superseded_by']}")


def _old_side(ws: Workspace, old: str, new_ref: str) -> str:
    text = (ws.root / old).read_bytes().decode("utf-8")
    changes: dict[str, Any] = {"status": "superseded", "superseded_by": new_ref}
    return set_fields(text, changes)


def commit_message(written: Written, old_ref: str) -> str:
    """``NEW supersedes OLD``, or ``NEW proposes to supersede OLD`` when the new note is not in force."""
    verb = "proposes to supersede" if any(w.code == "SS007" for w in written.warnings) else "supersedes"
    return f"{written.memory_id} {verb} {old_ref}"


def _supersedes(note_fm: dict[str, Any], ref: str) -> list[str]:
    current = note_fm.get("supersedes")
    items = list(current) if isinstance(current, list) else ([current] if isinstance(current, str) else [])
    return items if ref in items else [*items, ref]


def supersede(ws: Workspace, old_ref: str, new_ref: str) -> Written:
    """Mark the existing note ``new_ref`` as superseding ``old_ref`` (both sides, validated together).

    Raises:
        WriteRefused: the vault would have errors after the change; neither file changes.
        MemoryWriteError: a note not found, the same note twice, or the old one already superseded.
    """
    with ws.lock():
        vault = ws.vault()
        old, new = find_note(vault, old_ref), find_note(vault, new_ref)
        if old == new:
            raise MemoryWriteError("a note cannot supersede itself")
        _committed(ws, vault, old, new)
        _not_superseded(vault, old)
        listed = _supersedes(vault.notes[new].frontmatter, ref_to(vault, old))
        before = (ws.root / new).read_bytes().decode("utf-8")
        new_text = set_fields(before, {"supersedes": listed})
        pending = _not_in_force(vault, old, vault.notes[new])
        if pending and new_text == before:
            raise MemoryWriteError(f"{vault.display_name(new)} already lists {vault.display_name(old)} in supersedes; "
                                   "it takes effect once the note is accepted (then `vaultsync check --fix`)")
        changes = {new: new_text} if pending else {old: _old_side(ws, old, ref_to(vault, new)), new: new_text}
        originals = {p: (ws.root / p).read_bytes() for p in changes}
        warnings = transaction.apply(ws, changes)
    return Written(vault.display_name(new), new, list(changes)[::-1],
                   warnings + pending + _older(ws, vault, old, new, originals))


def _committed(ws: Workspace, vault: Vault, *paths: str) -> None:
    """A change committed on its own is checked over HEAD's files: a note it names that HEAD lacks would be
    refused as "no note of that name" (SS001, WL001), which the user sees in the working tree.

    Raises:
        MemoryWriteError: naming the note that is not committed.
    """
    tree = head_tree(ws.repo) if ws.committing else None
    for path in paths if ws.committing else ():
        if tree is None or path not in tree:
            raise MemoryWriteError(f"{vault.display_name(path)} ({path}) is not committed, and this change is "
                                   "committed on its own: commit that note first, or write without committing")


def _not_in_force(vault: Vault, old: str, new: Note) -> list[Diagnostic]:
    """SS007 (a warning of these commands) when the superseding note is not in force: the old note is
    left as it is, and stays in search, until the new one is accepted."""
    status = normalised_frontmatter(new.frontmatter).get("status")
    if in_force(status):
        return []
    line, col = new.position(("status",))
    until = ("a rejected note supersedes nothing" if status.strip().casefold() == "rejected" else
             "until this note is accepted; then `vaultsync check --fix` marks it superseded")
    return [Diagnostic(new.path, line, col, "SS007", f"status: {status.strip()} — {vault.display_name(old)} stays in "
                       f"force, and in search: {until}", severity=WARNING)]


def _older(ws: Workspace, vault: Vault, old: str, new: str, originals: dict[str, bytes]) -> list[Diagnostic]:
    """SS006 (a warning of this command): the replacing note was created before the one it replaces, the
    usual sign of OLD and NEW given the other way round. The undo restores with ``git checkout`` only the
    notes whose text before this command (``originals``) is what git's index holds: for any other (not
    tracked, or holding edits not staged) ``git checkout`` would fail or throw those edits away, so the
    edit to take back by hand is named."""
    created = [parse_vault_date(normalised_frontmatter(vault.notes[p].frontmatter).get("created")) for p in (old, new)]
    if created[0] is None or created[1] is None or created[1] >= created[0]:
        return []
    line, col = vault.notes[new].position(("created",))
    index = ws.repo.index
    index.read(False)
    tracked = {p for p in originals if p in index and index[p].id == pygit2.hash(originals[p])}
    untouched = {p for p in (old, new) if p not in originals}  # a successor not in force leaves the old note
    return [Diagnostic(new, line, col, "SS006", f"created {created[1]}, before the note it now supersedes, "
                       f"{vault.display_name(old)} (created {created[0]}) — if that one is the newer decision, the "
                       f"order is `vaultsync supersede {vault.display_name(new)} {vault.display_name(old)}` "
                       f"({_undo(old, new, tracked | untouched)})", severity=WARNING)]


def _undo(old: str, new: str, tracked: set[str]) -> str:
    """How to take this command's edits back: ``git checkout`` restores a note git's index holds as it was
    before; any other by hand (one git does not track, or one with edits ``git checkout`` would discard)."""
    by_hand = [f"{p} holds edits git does not have: remove its {field} there by hand"
               for p, field in ((old, "superseded_by, and set its status back to what it was,"), (new, "supersedes"))
               if p not in tracked]
    restore = f"undo this with `git checkout -- {' '.join(sorted(tracked))}`" if tracked else ""
    return "; ".join(filter(None, [restore, *by_hand]))


def supersede_with_new(ws: Workspace, old_ref: str, type_name: str | None, title: str,
                       fields: dict[str, Any] | None = None, body: str | None = None) -> Written:
    """Write a new note (of ``type_name``, default the old note's type) that supersedes ``old_ref``; of the
    same type, it keeps the old note's required ``enum`` fields not given (an incident's ``severity``).

    Raises:
        WriteRefused: the vault would have errors; no file is written or changed.
        MemoryWriteError: see :func:`supersede` and :func:`vaultsync.memory.create.create`.
    """
    with ws.lock():
        vault = ws.vault()
        old = find_note(vault, old_ref)
        _committed(ws, vault, old)
        _not_superseded(vault, old)
        old_fields = vault.notes[old].frontmatter
        type_name = type_name or str(old_fields.get("type") or "")
        fields = dict(fields or {})
        fields["supersedes"] = _supersedes(fields, ref_to(vault, old))
        same_type = old_fields.get("type") == type_name
        memory_id, path, text = draft(ws, type_name, title, fields, body, vault=vault,
                                      inherited=old_fields if same_type else None)
        stem = path.rsplit("/", 1)[-1].removesuffix(".md")
        pending = _not_in_force(vault, old, parse_note(path, text.encode("utf-8")))
        changes = {path: text} if pending else {path: text, old: _old_side(ws, old, f"[[{stem}]]")}
        warnings = transaction.apply(ws, changes, create={path})
    return Written(memory_id, path, list(changes), warnings + pending)
