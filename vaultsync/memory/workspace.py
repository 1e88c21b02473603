"""The vault a write works on: the repository's working tree, its config, a write lock, and
overlay snapshots (the working tree as it would be after a change)."""

from __future__ import annotations

import datetime as dt
import os
import posixpath
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pygit2
from filelock import FileLock, Timeout

from vaultsync.checks.runner import load_checked_vault
from vaultsync.git import Snapshot, TreeSnapshot, WorktreeSnapshot, head_tree, open_repo, unreadable_repository, workdir
from vaultsync.memory.errors import MemoryWriteError
from vaultsync.symlinks import symlinked_part
from vaultsync.vault.config import Config, ConfigError, load_config
from vaultsync.vault.vault import Vault

WRITE_LOCK_TIMEOUT_S = 30.0


def today() -> dt.date:
    """The local calendar date (what ``created`` and ``last_validated`` are filled with)."""
    return dt.date.today()


class OverlaySnapshot:
    """``base`` with some files replaced (text) or removed (None)."""

    def __init__(self, base: Snapshot, changes: Mapping[str, str | None]) -> None:
        self._base = base
        self._changes = dict(changes)
        present = [p for p in base.paths() if self._changes.get(p, "") is not None]
        self._paths = present + [p for p, t in self._changes.items() if t is not None and p not in set(present)]

    def paths(self) -> list[str]:
        return list(self._paths)

    def symlinks(self) -> list[str]:
        return [p for p in self._base.symlinks() if p not in self._changes]

    def read(self, path: str) -> bytes:
        if path in self._changes:
            text = self._changes[path]
            if text is None:
                raise FileNotFoundError(path)
            return text.encode("utf-8")
        return self._base.read(path)


@dataclass
class Workspace:
    """A repository's working tree and its ``.vaultsync.yaml``.

    Attributes:
        repo: the pygit2 repository.
        root: the working tree's root (absolute).
        config: the working tree's config (validated).
        committing: the write will be committed, its files only: it is checked over HEAD's files, not the
            working tree's (a link to a note not yet committed would dangle in the commit).
    """

    repo: pygit2.Repository
    root: Path
    config: Config
    committing: bool = False

    @classmethod
    def open(cls, start: Path | str = ".", committing: bool = False) -> Workspace:
        """The workspace around ``start`` (``committing``: see the class).

        Raises:
            MemoryWriteError: not in a git repository with a working tree, or an invalid config.
        """
        repo = open_repo(start)
        if repo is None or repo.is_bare:
            reason = unreadable_repository(start) if repo is None else None
            raise MemoryWriteError(reason or f"{start} is not inside a git working tree")
        root = workdir(repo)
        try:
            config = load_config(root)
        except ConfigError as exc:
            raise MemoryWriteError(str(exc)) from None
        return cls(repo, root, config, committing=committing)

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Held by every writer of this worktree (CLI or MCP server) while it allocates a memory_id
        and writes: ``<git dir>/vaultsync/write.lock``.

        Raises:
            MemoryWriteError: another writer held it for :data:`WRITE_LOCK_TIMEOUT_S` seconds.
        """
        folder = Path(self.repo.path) / "vaultsync"
        folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(folder / "write.lock"))
        try:
            lock.acquire(timeout=WRITE_LOCK_TIMEOUT_S)
        except Timeout:
            raise MemoryWriteError(f"another write held {folder / 'write.lock'} for {WRITE_LOCK_TIMEOUT_S:.0f} s") \
                from None
        try:
            yield
        finally:
            lock.release()

    def snapshot(self, changes: Mapping[str, str | None] | None = None, committed: bool = False) -> Snapshot:
        """The working tree's vault files (HEAD's when ``committed``), with ``changes`` applied when given."""
        base = TreeSnapshot(self.repo, head_tree(self.repo)) if committed else \
            WorktreeSnapshot(self.root, self.config.vault, self.repo)
        return OverlaySnapshot(base, changes) if changes else base

    def vault(self, changes: Mapping[str, str | None] | None = None, committed: bool = False) -> Vault:
        """The vault parsed and per-note checked, as it is (or would be after ``changes``); HEAD's files
        instead of the working tree's when ``committed``."""
        return load_checked_vault(self.snapshot(changes, committed), self.config, self.root, jobs=1)

    def relative(self, path: str | Path) -> str:
        """``path`` (absolute, or relative to the current directory or the root) as a repo-relative POSIX path.

        Raises:
            MemoryWriteError: the path lies outside the repository.
        """
        p = Path(path)
        if not p.is_absolute():
            p = Path.cwd() / p if (Path.cwd() / p).exists() or (Path.cwd() / p).is_symlink() else self.root / p
        # links are not followed: a path through one is refused by name (check_inside), not taken for its target
        for candidate in (Path(os.path.abspath(p)), p.parent.resolve() / p.name):  # the second: a cwd reached by a link
            try:
                return candidate.relative_to(self.root).as_posix()
            except ValueError:
                continue
        raise MemoryWriteError(f"{path} is outside the repository {self.root}")

    def check_inside(self, rel: str) -> None:
        """Refuse a path that is not a plain path inside the vault: ``..``, absolute, a dot-folder
        (``.git``), outside the vault folders, or reached through a symbolic link (a committed link
        could point anywhere on the machine)."""
        norm = posixpath.normpath(rel)
        if norm != rel or rel.startswith(("../", "/")) or any(part.startswith(".") for part in rel.split("/")):
            raise MemoryWriteError(f"{rel}: not a plain path inside the repository")
        if not self.config.in_vault(rel):
            raise MemoryWriteError(f"{rel}: outside the vault folder(s) {', '.join(self.config.vault)}")
        link = symlinked_part(self.root, rel)
        if link is not None:
            raise MemoryWriteError(f"{rel}: {link} is a symbolic link; notes are never written or removed through one")

    def check_target(self, rel: str) -> None:
        """Refuse a destination :meth:`check_inside` refuses, or one matching an ephemeral glob."""
        self.check_inside(rel)
        pattern = self.config.is_ephemeral(rel)
        if pattern:
            raise MemoryWriteError(f"{rel}: matches the ephemeral glob {pattern!r}; notes there are never written")
