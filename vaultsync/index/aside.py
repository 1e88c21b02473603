"""``index --rebuild`` without risk: the old index files are moved aside, not deleted, until the new
index is built, and put back when the rebuild fails (an unwritable cache, a full disk)."""

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
    for p in (layout.sqlite, Path(str(layout.sqlite) + "-wal"), Path(str(layout.sqlite) + "-shm"), layout.lance):
        if p != layout.lance and p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            aside = p.with_name(p.name + ".rebuilding-old")
            _remove(aside)
            os.replace(p, aside)
            moved.append((aside, p))
    return moved


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
