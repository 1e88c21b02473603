"""A validated, atomic change of the vault: check the vault as it would be, then write.

The change is a set of files to create, replace or remove. The vault is checked with the
same runner as the pre-commit hook, over the working tree with the change applied (over HEAD's
files with it, when the change is committed on its own); the change is refused when it would
add any error (an error of a new or changed file, or one that was not there before, such as
a duplicate memory_id). Files are written to a temporary file in the same folder and moved
into place (``os.link`` for a new file, so an existing one is never overwritten;
``os.replace`` for an edit); if one step fails the files already moved are restored.
Callers hold :meth:`Workspace.lock`.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from vaultsync.checks.runner import run_checks
from vaultsync.diagnostics import ERROR, Diagnostic
from vaultsync.git import head_tree, read_blob
from vaultsync.memory.errors import MemoryWriteError, WriteRefused
from vaultsync.memory.workspace import Workspace, today


def new_errors(ws: Workspace, changes: Mapping[str, str | None]) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """(errors the change adds, warnings of the changed files), checked over the working tree, or over
    HEAD's files when the change will be committed alone (:attr:`Workspace.committing`).

    Dates are judged against the later of the local and the UTC date, so a note written
    with today's local date is never "in the future" east of Greenwich.
    """
    on = max(today(), dt.datetime.now(dt.timezone.utc).date())
    committed = ws.committing
    before = {_identity(d) for d in run_checks(ws.vault(committed=committed), today=on) if d.severity == ERROR}
    after = run_checks(ws.vault(changes, committed), today=on)
    errors = [d for d in after if d.severity == ERROR and _identity(d) not in before]
    warnings = [d for d in after if d.severity != ERROR and d.path in changes]
    return errors, warnings


def _identity(d: Diagnostic) -> tuple[str, str, str]:
    """An error as itself, without its hint (after " — "): the note a dangling link waits for changes
    the hint ("did you mean [[RULE-0002-…]]?"), not the error, so writing that note adds none."""
    return d.path, d.code, d.message.split(" — ", 1)[0]


def _umask() -> int:
    """The process umask, read without changing it where the OS allows (threads may be creating files)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def apply(ws: Workspace, changes: Mapping[str, str | None], create: set[str] | None = None) -> list[Diagnostic]:
    """Validate ``changes`` (path → new text, or None to remove) and write them all or none.

    Args:
        create: paths that must not exist yet (new notes).
    Returns:
        Warnings about the changed files (e.g. an empty link).
    Raises:
        WriteRefused: the change would add errors; nothing was written.
        MemoryWriteError: a path to create already exists, or (``ws.committing``) a path to change holds
            uncommitted edits of the user's, which the commit would carry along; nothing was written.
        OSError: the file system failed; files already moved were restored.
    """
    create = create or set()
    for rel in create:
        if (ws.root / rel).exists():
            raise MemoryWriteError(f"{rel} already exists")
    dirty = {p for p in changes if p not in create and _uncommitted(ws, p)}
    if dirty and ws.committing:  # known before a byte is written: refused, not "written, not committed" after
        raise MemoryWriteError(f"{', '.join(sorted(dirty))} hold{'s' if len(dirty) == 1 else ''} uncommitted changes "
                               "of yours, which a committed write would carry along: commit or stash them first, or "
                               "write without committing; nothing was written")
    errors, warnings = new_errors(ws, changes)
    if errors:
        raise WriteRefused(errors)
    _write_all(ws.root, changes, create)
    return warnings


def _uncommitted(ws: Workspace, rel: str) -> bool:
    """Whether the working-tree file ``rel``, which HEAD holds, differs from HEAD's (edits of the user's own,
    not yet committed). A file HEAD does not hold is new: committing it carries nothing else along."""
    try:
        data = (ws.root / rel).read_bytes()
    except OSError:
        return False
    tree = head_tree(ws.repo)
    if tree is None or rel not in tree:
        return False
    try:
        return read_blob(ws.repo, tree[rel].id) != data  # as the file reads: a Git LFS note's content
    except (KeyError, ValueError):  # HEAD's content is not here (LFS not fetched): cannot tell, as before
        return False


def _write_all(root: Path, changes: Mapping[str, str | None], create: set[str]) -> None:
    done: list[tuple[Path, bytes | None]] = []  # (file, bytes before) to undo
    temps: list[str] = []
    try:
        staged: list[tuple[Path, str | None]] = []
        for rel, text in changes.items():
            file = root / rel
            if text is None:
                staged.append((file, None))
                continue
            file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".vaultsync-", suffix=".tmp")
            temps.append(tmp)
            with os.fdopen(fd, "wb") as fh:
                fh.write(text.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            # an edit keeps the note's mode; a new note gets what the user's umask gives (not mkstemp's 0600)
            os.chmod(tmp, file.stat().st_mode & 0o7777 if file.exists() else 0o666 & ~_umask())
            staged.append((file, tmp))
        for file, tmp in staged:  # removals last: a promote never loses its scratch note early
            if tmp is None:
                continue
            previous = file.read_bytes() if file.exists() else None
            if str(file.relative_to(root).as_posix()) in create:
                os.link(tmp, file)  # fails if the file appeared meanwhile: never overwrite
                os.unlink(tmp)
            else:
                os.replace(tmp, file)
            done.append((file, previous))
        for file, tmp in staged:
            if tmp is None:
                previous = file.read_bytes()
                file.unlink()
                done.append((file, previous))
    except BaseException:
        for file, previous in reversed(done):
            if previous is None:
                file.unlink(missing_ok=True)
            else:
                file.write_bytes(previous)
        raise
    finally:
        for tmp in temps:
            Path(tmp).unlink(missing_ok=True)
