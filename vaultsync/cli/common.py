"""Helpers shared by the commands that work on a repository."""

from __future__ import annotations

import sys
from pathlib import Path

import pygit2

from vaultsync.git import open_repo, why_not_opened
from vaultsync.vault.config import Config


def repository(command: str) -> pygit2.Repository | None:
    """The repository around the current directory, or None after printing why (callers exit 2)."""
    repo = open_repo(Path.cwd())
    if repo is None:
        print(f"vaultsync {command}: {why_not_opened(Path.cwd())}", file=sys.stderr)
    return repo


def committed_config(repo: pygit2.Repository) -> Config:
    """The ``.vaultsync.yaml`` committed at HEAD (the config the index was built with).

    An invalid committed config is reported on stderr and the defaults are used, so
    status and search keep working on the last good index; an invalid ``search:`` section alone is
    left out (``Config.ignored``; each search result says so, ADR-0119).
    """
    from vaultsync.git import head_tree
    from vaultsync.index.fastpath import config_at
    from vaultsync.vault.config import ConfigError

    try:
        return config_at(repo, head_tree(repo))[0]
    except ConfigError as exc:
        for diagnostic in exc.diagnostics:
            print(f"vaultsync: warning: {diagnostic.render()} — using the default settings", file=sys.stderr)
        return Config(refused=list(exc.diagnostics))


def environment_error(exc: Exception) -> str | None:
    """What to tell the user about an error of the disk or the index files (a full or read-only disk,
    a folder where the index file belongs), or None for anything else (an internal error)."""
    import errno
    import sqlite3

    from vaultsync.settings import cache_problem

    seen: Exception | None = exc
    for _ in range(8):  # the error itself, or one it was raised from or while handling
        if seen is None:
            return None
        if isinstance(seen, OSError) and (said := cache_problem(seen)) is not None:  # the user's model cache
            return said
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES,
                                                       errno.EPERM, errno.ENOTDIR, errno.EEXIST, errno.EISDIR):
            return f"cannot write {seen.filename}: {seen.strerror}" if seen.filename else f"{seen.strerror}"
        if isinstance(seen, sqlite3.OperationalError) and str(seen) in ("database or disk is full",):
            return f"the disk is full ({seen}): free some space, then run `vaultsync sync`"
        if isinstance(seen, sqlite3.OperationalError) and str(seen) in ("disk I/O error", "unable to open database file"):
            return f"cannot read the index ({seen}): `vaultsync index --rebuild` builds it again"
        if "No space left on device" in str(seen):  # LanceDB's (Rust) I/O errors arrive as RuntimeError
            return "the disk is full (No space left on device): free some space, then run `vaultsync sync`"
        seen = seen.__cause__ or seen.__context__  # type: ignore[assignment]
    return None
