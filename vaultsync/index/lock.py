"""One sync at a time per worktree: a file lock plus a "dirty" flag for callers that find it busy.

A hook that cannot take the lock marks the index dirty and returns at once; the
sync holding the lock loops until no one marked it dirty, so the last commit
always gets indexed (field case GH-10c) without two writers ever racing (IX-05b).
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout


class SyncLock:
    """``with SyncLock(lock_path, dirty_path) as held:`` — ``held`` is False when another sync runs."""

    def __init__(self, lock_path: Path, dirty_path: Path, wait: float = 0.0) -> None:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(lock_path))
        self._dirty = dirty_path
        self._wait = wait
        self.held = False

    def __enter__(self) -> bool:
        try:
            self._lock.acquire(timeout=self._wait)
            self.held = True
        except Timeout:
            self.mark_dirty()
            self.held = False
        return self.held

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.held:
            self._lock.release()

    def mark_dirty(self) -> None:
        """Ask the running sync to run once more."""
        self._dirty.touch()

    def take_dirty(self) -> bool:
        """Clear the dirty flag; True if it was set."""
        try:
            self._dirty.unlink()
            return True
        except FileNotFoundError:
            return False


def sync_running(lock_path: Path) -> bool:
    """True while some process holds the sync lock (a hook's background sync, say)."""
    if not lock_path.exists():
        return False
    lock = FileLock(str(lock_path))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False
