"""``index --rebuild`` without risk: the old index files are moved aside, not deleted, until the new
index is built, and put back when the rebuild fails (an unwritable cache, a full disk) or was killed
before it finished (the next sync puts them back, :func:`recover`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from vaultsync.index.layout import IndexLayout


def set_aside(layout: IndexLayout) -> list[tuple[Path, Path]]:
    """Move the index files aside for a rebuild: ``(aside, original)`` pairs for :func:`put_back`,
    should the rebuild fail (an unwritable cache, a full disk), so the old index is never lost. A
    folder where the SQLite file belongs is no index: it goes."""
    moved: list[tuple[Path, Path]] = []
    for aside, p in _pairs(layout):
        _remove(aside)  # a stale one of a name the index no longer has (a "-wal" long checkpointed) too
        if p != layout.lance and p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            os.replace(p, aside)
            moved.append((aside, p))
    return moved


def recover(layout: IndexLayout) -> bool:
    """Put back what a rebuild killed before it finished left aside (SIGKILL skips :func:`put_back`):
    the unfinished index goes, and its "-wal" with it, so no log is replayed into the old file. Called
    under the sync lock, where no rebuild runs; True when there was something to put back."""
    pairs = _pairs(layout)
    if not any(aside.exists() for aside, _ in pairs):
        return False
    if not (layout.sqlite.with_name(layout.sqlite.name + ".rebuilding-old")).exists():
        for aside, _ in pairs:  # no old SQLite file to go with them: nothing whole to put back
            _remove(aside)
        return False
    for _, original in pairs:
        _remove(original)
    for aside, original in pairs:
        if aside.exists():
            os.replace(aside, original)
    return True


def _pairs(layout: IndexLayout) -> list[tuple[Path, Path]]:
    files = (layout.sqlite, Path(str(layout.sqlite) + "-wal"), Path(str(layout.sqlite) + "-shm"), layout.lance)
    return [(p.with_name(p.name + ".rebuilding-old"), p) for p in files]


def put_back(moved: list[tuple[Path, Path]], failed: bool) -> None:
    """Restore what :func:`set_aside` moved when the rebuild ``failed``, else delete it."""
    for aside, original in moved:
        if failed:
            _remove(original)
            os.replace(aside, original)
        else:
            _remove(aside)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
