"""Commit exactly the files a write changed (``git commit --only``), so the hooks run."""

from __future__ import annotations

import unicodedata

from vaultsync.git import head_commit_id, run_git
from vaultsync.memory.errors import MemoryWriteError, NotCommitted
from vaultsync.memory.workspace import Workspace

NOT_COMMITTED = ("written, not committed: search finds it once it is committed (vaultsync indexes commits); "
                 "{how}, or git commit it")


def commit_paths(ws: Workspace, paths: list[str], message: str) -> str:
    """Stage and commit ``paths`` only (other staged changes stay staged, uncommitted), each a literal path:
    no glob or pathspec magic of a name a committed config chose reaches git. ``message`` is made one line
    (every run of white space, line separators and control characters one space): an argument an agent passed, quoted in it,
    cannot add a paragraph of forged trailers (``Signed-off-by:``).

    A removed path is committed as a removal when git tracks it; an untracked one (a
    scratch note) is left out. A path holding the user's own uncommitted edits never gets here: a
    committing workspace's write refuses it before writing (:func:`vaultsync.memory.transaction.apply`).

    Returns:
        The new commit id.
    Raises:
        MemoryWriteError: git refused (a failing hook, no identity); its output is in the message
            and the paths are unstaged again, as written.
    """
    message = " ".join("".join(" " if unicodedata.category(c) == "Cc" else c for c in message).split())
    index = ws.repo.index
    index.read(False)
    existing = [p for p in paths if (ws.root / p).exists()]
    removed = [p for p in paths if p not in existing and p in index]
    paths = existing + removed
    specs = {p: ":(literal)" + p for p in paths}  # a folder named ':!m' or 'docs/*' is a name, not a pattern
    for args in (["add", "--", *(specs[p] for p in existing)] if existing else None,
                 ["rm", "-q", "--cached", "--", *(specs[p] for p in removed)] if removed else None):
        if args:
            res = run_git(args, ws.root)
            if res.returncode != 0:
                raise MemoryWriteError(f"git {args[0]} failed: {(res.stderr or res.stdout).strip()}")
    res = run_git(["commit", "-q", "-m", message, "--only", "--", *specs.values()], ws.root)
    if res.returncode != 0:
        run_git(["reset", "-q", "--", *specs.values()], ws.root)
        out = (res.stderr or res.stdout).strip()
        raise NotCommitted(f"git commit failed (the files are written, not committed):\n{out}")
    ws.repo = type(ws.repo)(ws.repo.path)  # a fresh handle sees the new HEAD
    return head_commit_id(ws.repo) or ""
