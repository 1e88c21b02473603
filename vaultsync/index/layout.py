"""Where a repository's derived index lives.

Per worktree (``<git dir>/vaultsync/``): ``index.sqlite``, ``lance/`` (chunk
vectors), ``sync.lock``, ``dirty``, ``state.json``, ``progress.json`` (a long
embedding run's progress), ``sqlite.verified`` (the SQLite files as the last sync
left them), ``legs/`` (the dense legs' arrays, memory-mapped by searches) and ``hook.log``. Per
repository (``<common git dir>/vaultsync/embeddings/``): the embedding cache, so
linked worktrees and branches share embeddings.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pygit2

from vaultsync.lfs import common_dir
from vaultsync.vault.config import Config


@dataclass(frozen=True)
class IndexLayout:
    """Paths of one worktree's index."""

    dir: Path
    common: Path

    @property
    def sqlite(self) -> Path:
        return self.dir / "index.sqlite"

    @property
    def lance(self) -> Path:
        return self.dir / "lance"

    @property
    def embeddings(self) -> Path:
        return self.common / "embeddings"

    @property
    def lock(self) -> Path:
        return self.dir / "sync.lock"

    @property
    def dirty(self) -> Path:
        return self.dir / "dirty"

    @property
    def progress(self) -> Path:
        return self.dir / "progress.json"

    @property
    def state(self) -> Path:
        return self.dir / "state.json"

    @property
    def verified(self) -> Path:
        return self.dir / "sqlite.verified"

    @property
    def log(self) -> Path:
        return self.dir / "hook.log"


def common_git_dir(repo: pygit2.Repository) -> Path:
    """The git dir shared by all worktrees (``.git`` of the main worktree)."""
    return common_dir(repo.path)


def layout_for(repo: pygit2.Repository, config: Config | None = None) -> IndexLayout:
    """The index layout of ``repo``'s current worktree (``config`` is accepted for symmetry, unused)."""
    return IndexLayout(dir=(Path(repo.path) / "vaultsync").resolve(), common=common_git_dir(repo) / "vaultsync")


def write_problem(folder: Path) -> str | None:
    """Why the index folder ``folder`` cannot be written (a file in its place, a read-only folder, a full
    disk), or None: a byte written to a new file there, and flushed to disk, must come back without error.
    An absent folder is None (a first sync makes it)."""
    if not folder.exists():
        return None
    if not folder.is_dir():
        return f"the index folder {folder} is not a folder (a file is in its place): remove it, then run " \
               "`vaultsync sync`"
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".write-probe-")
        try:
            os.write(fd, b"\0")
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        return f"the index folder {folder} is not writable: {exc.strerror or exc}; syncs fail until it is " \
               "(free some space or fix its permissions, then run `vaultsync sync`)"
    return None
