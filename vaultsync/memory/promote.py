"""Promote a scratch note: an ephemeral file becomes a permanent note of a type, in one validated change.

The scratch note's frontmatter (if any) is kept as fields, its first ``# heading`` (else its
file name) is the title unless it has one; memory_id, type, created and last_validated are
filled; the new note goes to the type's folder and the scratch file is removed.
"""

from __future__ import annotations

import re
from typing import Any

import pygit2

from vaultsync.memory import transaction
from vaultsync.memory.create import Written, draft
from vaultsync.memory.errors import MemoryWriteError
from vaultsync.memory.scaffold import MAX_TITLE_CHARS, title_length
from vaultsync.memory.workspace import Workspace
from vaultsync.vault.note import parse_note

_H1 = re.compile(r"^#[ \t]+(.*?\S.*?)[ \t]*#*[ \t]*$", re.MULTILINE)  # one line, not blank


def promote(ws: Workspace, scratch: str, type_name: str, title: str | None = None,
            fields: dict[str, Any] | None = None) -> Written:
    """Turn the ephemeral note at ``scratch`` (path) into a note of ``type_name``.

    Raises:
        MemoryWriteError: not an ephemeral path, not a readable note.
        WriteRefused: the new note fails the checks; the scratch file stays untouched.
    """
    rel = ws.relative(scratch)
    ws.check_inside(rel)  # never removes a file in .git, outside the vault or behind a link
    if not ws.config.is_ephemeral(rel):
        globs = ", ".join(ws.config.ephemeral) or "none configured"
        raise MemoryWriteError(f"{rel}: not a scratch note (ephemeral globs: {globs})")
    file = ws.root / rel
    if not file.is_file():
        raise MemoryWriteError(f"{rel}: no such file")
    note = parse_note(rel, file.read_bytes())
    if not note.readable or note.fm_state not in ("none", "mapping", "empty"):
        detail = "; ".join(d.render() for d in note.diagnostics) or "unreadable frontmatter"
        raise MemoryWriteError(f"cannot promote {rel}: {detail}")
    data = {k: v for k, v in (note.frontmatter or {}).items() if k not in ("memory_id", "type")}
    data.update(fields or {})
    own = data.pop("title", "") or ""
    if isinstance(own, (int, float)) and not isinstance(own, bool):
        own = str(own)  # `title: 2024`: YAML's number, the text as written
    if not isinstance(own, str):  # `title: [a, b]`: no title a note can take (it was written as "['a', 'b']")
        raise MemoryWriteError(f"cannot promote {rel}: its frontmatter title is not text ({type(own).__name__}) — "
                               "write it as one line of text, or give one: --title (MCP: title)")
    own = own.strip()
    m = _H1.search(note.body)
    title, source = (title, "") if title else (own, "its frontmatter title") if own else \
        (m.group(1), "its first heading") if m else (file.stem.split(".")[0], "its file name")
    if source and title_length(title) > MAX_TITLE_CHARS:
        raise MemoryWriteError(f"{rel}: {source}, the title it would take, has {title_length(title):,} characters "
                               f"(at most {MAX_TITLE_CHARS}) — give a shorter one: --title (MCP: title)")
    with ws.lock():
        memory_id, path, text = draft(ws, type_name, title, data, note.body)
        warnings = transaction.apply(ws, {path: text, rel: None}, create={path})
        _unstage_if_new(ws, rel)
    return Written(memory_id, path, [path, rel], warnings)


def _unstage_if_new(ws: Workspace, rel: str) -> None:
    """The scratch note moved into the new one: a staged copy of it that no commit holds yet (``git add``
    before the promotion) leaves the index too, so the next commit does not carry it back. One a commit
    holds stays: removing it is a change the user commits."""
    from vaultsync.gitcmd import run_git

    try:
        in_head = not ws.repo.head_is_unborn and rel in ws.repo.head.peel(pygit2.Tree)
    except pygit2.GitError:
        in_head = False
    if not in_head:
        run_git(["--literal-pathspecs", "rm", "--cached", "--quiet", "--ignore-unmatch", "--", rel], ws.root)


def promoted_message(written: Written) -> str:
    """The commit message of a promotion, naming the scratch path as resolved (``changed[1]``), not as asked."""
    return f"{written.memory_id}: promoted from {written.changed[1]}"
