"""Commit exactly the files a write changed (``git commit --only``), so the hooks run."""

from __future__ import annotations

import subprocess

from vaultsync.git import head_commit_id
from vaultsync.memory.errors import MemoryWriteError
from vaultsync.memory.workspace import Workspace


def commit_paths(ws: Workspace, paths: list[str], message: str) -> str:
    """Stage and commit ``paths`` only (other staged changes stay staged, uncommitted).

    Returns:
        The new commit id.
    Raises:
        MemoryWriteError: git refused (a failing hook, no identity); its output is in the message
            and the paths are left unstaged, as they were written.
    """
    index = ws.repo.index
    index.read(False)
    existing = [p for p in paths if (ws.root / p).exists()]
    removed = [p for p in paths if p not in existing and p in index]  # an untracked scratch note has no history
    paths = existing + removed
    for args in (["add", "--", *existing] if existing else None,
                 ["rm", "-q", "--cached", "--ignore-unmatch", "--", *removed] if removed else None):
        if args:
            _git(ws, args)
    res = subprocess.run(["git", "commit", "-q", "-m", message, "--only", "--", *paths], cwd=ws.root,
                         capture_output=True, text=True)
    if res.returncode != 0:
        subprocess.run(["git", "reset", "-q", "--", *paths], cwd=ws.root, capture_output=True)
        out = (res.stderr or res.stdout).strip()
        raise MemoryWriteError(f"git commit failed (the files are written, not committed):\n{out}")
    ws.repo = type(ws.repo)(ws.repo.path)  # see the new HEAD
    return head_commit_id(ws.repo) or ""


def _git(ws: Workspace, args: list[str]) -> None:
    res = subprocess.run(["git", *args], cwd=ws.root, capture_output=True, text=True)
    if res.returncode != 0:
        raise MemoryWriteError(f"git {args[0]} failed: {(res.stderr or res.stdout).strip()}")
