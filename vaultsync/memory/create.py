"""Create a memory of a type: allocate its memory_id, fill the frontmatter, write it validated."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

import pygit2

from vaultsync.diagnostics import WARNING, Diagnostic, shown
from vaultsync.memory import transaction
from vaultsync.memory.errors import MemoryWriteError
from vaultsync.memory.frontmatter_text import render_note
from vaultsync.memory.ids import next_memory_id, type_prefix
from vaultsync.memory.scaffold import build_frontmatter, note_path, scaffold_body, type_schema, type_spec
from vaultsync.memory.workspace import Workspace, today
from vaultsync.vault.note import parse_text


@dataclass
class Written:
    """What a write did.

    Attributes:
        memory_id: the new note's id (for an edit: the edited note's).
        path: repo-relative path of the new note.
        changed: every repo-relative path written or removed.
        warnings: diagnostics of severity warning in the changed files.
        commit: the commit id when the change was committed.
    """

    memory_id: str
    path: str
    changed: list[str]
    warnings: list[Diagnostic] = field(default_factory=list)
    commit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"memory_id": self.memory_id, "path": self.path, "changed": self.changed,
                "warnings": [d.render() for d in self.warnings], "commit": self.commit}


def draft(ws: Workspace, type_name: str, title: str, fields: dict[str, Any] | None = None,
          body: str | None = None, vault: Any = None, inherited: dict[str, Any] | None = None) -> tuple[str, str, str]:
    """(memory_id, path, text) of a new note; nothing written. ``vault``: the current vault if loaded;
    ``inherited``: the superseded note's frontmatter (:func:`~vaultsync.memory.scaffold.build_frontmatter`).

    Raises:
        MemoryWriteError: unknown type, a field vaultsync allocates, an unwritable value.
    """
    title = title.strip()  # one title for the frontmatter, the heading and the file name
    spec = type_spec(ws.config, type_name)
    schema = type_schema(ws.config, str(ws.root), spec)
    vault = vault if vault is not None else ws.vault()
    memory_id = next_memory_id(vault, type_prefix(ws.config, vault, type_name))
    data = build_frontmatter(schema, type_name, memory_id, title, today().isoformat(), dict(fields or {}), inherited)
    path = note_path(spec, memory_id, title)
    ws.check_target(path)
    return memory_id, path, render_note(data, scaffold_body(type_name, title, body))


def create(ws: Workspace, type_name: str, title: str, fields: dict[str, Any] | None = None,
           body: str | None = None) -> Written:
    """Write a new note of ``type_name`` under the type's folder, validated with the whole vault.

    Args:
        fields: further frontmatter (``status``, ``tags``, ``confidence``, ``related``, ...).
        body: Markdown body; None gives the type's empty sections.
    Raises:
        WriteRefused: the note (or the vault with it) fails the checks; no file is left behind.
        MemoryWriteError: unknown type, a field vaultsync allocates (memory_id, type), a required
            ``enum`` field not given (an incident's ``severity``), or a note of this type and title
            written and not committed yet (a retried write).
    """
    with ws.lock():
        vault = ws.vault()
        twins = _twins(ws, vault, type_name, title)
        for twin in twins:  # an agent's retry of a write that landed: one note, not two
            if not twin[3]:
                raise MemoryWriteError(f"refused, nothing written: {twin[1]} ({twin[0]}), a note of type {type_name} "
                                       f"titled {shown(twin[2])}, is written and not committed yet — edit or commit "
                                       "that note")
        memory_id, path, text = draft(ws, type_name, title, fields, body, vault=vault)
        warnings = transaction.apply(ws, {path: text}, create={path})
    if twins:  # committed notes may share a title (two incidents called "Database outage"): said, not refused
        line, col = parse_text(path, text).position(("title",))
        named = ", ".join(f"{mid} ({twin_path})" for mid, twin_path, _, _ in twins[:3])
        warnings.append(Diagnostic(path, line, col, "ID002", f"title: another {type_name} has this title: {named} "
                                   f"— if this write repeats it, remove {path} and edit that note instead",
                                   WARNING))
    return Written(memory_id, path, [path], warnings)


def _twins(ws: Workspace, vault: Any, type_name: str, title: str) -> list[tuple[str, str, str, bool]]:
    """(memory_id, path, title, whether git holds it) of each note of ``type_name`` titled ``title`` (case,
    spacing and Unicode form aside)."""
    def key(text: str) -> str:
        return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()

    wanted, out = key(title), []
    for path, note in sorted(vault.notes.items()):
        fm = note.frontmatter if note.fm_state == "mapping" else {}
        if fm.get("type") == type_name and isinstance(fm.get("title"), str) and key(fm["title"]) == wanted:
            new = ws.repo.status_file(path) & (pygit2.GIT_STATUS_WT_NEW | pygit2.GIT_STATUS_INDEX_NEW)
            out.append((str(fm.get("memory_id")), path, fm["title"], not new))
    return out
