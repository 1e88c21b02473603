"""One sync at a time per worktree: a file lock, an owner record beside it, and a "dirty" flag.

* ``sync.lock`` — the lock (``filelock``); the OS drops it when its holder dies.
* ``sync.owner`` — JSON ``{"pid", "started", "proc_start", "hook"}`` written by the
  holder, so ``vaultsync status`` can tell a running sync without taking the lock
  (taking it would make a colliding hook's sync find the index busy).
* ``dirty`` — "run once more". A sync that finds the lock held has marked it
  *before* trying (field case GH-10c); the holder re-checks it after every pass and
  once more after releasing, so no mark is lost between its last check and the
  release, and two writers never race (IX-05b).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout


@dataclass(frozen=True)
class Owner:
    """Who holds the sync lock: process id, start time (Unix seconds), and the hook that started it."""

    pid: int
    started: float
    hook: str | None = None
    proc_start: str | None = None  # the kernel's start time of ``pid`` (Linux), to tell a reused pid


class SyncLock:
    """``with SyncLock(lock_path, dirty_path) as held:`` — ``held`` is False when another sync runs.

    ``wait``: seconds to wait for the lock; negative waits as long as it takes. A
    caller that may give up (``wait >= 0``) marks the index dirty first, so the
    running sync does its work.
    """

    def __init__(self, lock_path: Path, dirty_path: Path, wait: float = 0.0, hook: str | None = None) -> None:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(lock_path))
        self._owner = owner_path(lock_path)
        self._dirty = dirty_path
        self._wait = wait
        self._hook = hook
        self.held = False

    def __enter__(self) -> bool:
        if self._wait >= 0:
            self.mark_dirty()
        self.held = self._try(self._wait)
        return self.held

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.held:
            self.release()

    def _try(self, wait: float) -> bool:
        try:
            self._lock.acquire(timeout=wait)
        except Timeout:
            return False
        self._write_owner()
        return True

    def release(self) -> None:
        """Drop the owner record, then the lock."""
        self._owner.unlink(missing_ok=True)
        self._lock.release()
        self.held = False

    def reacquire_if_dirty(self) -> bool:
        """After :meth:`release`: True when the flag was set meanwhile and the lock is ours again.

        False when nobody asked, or another sync holds the lock (it re-checks the flag itself).
        """
        if not self._dirty.exists():
            return False
        self.held = self._try(0)
        return self.held

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

    def _write_owner(self) -> None:
        record = {"pid": os.getpid(), "started": time.time(), "hook": self._hook,
                  "proc_start": _proc_start(os.getpid())}
        tmp = self._owner.with_name(f"{self._owner.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(record), encoding="utf-8")
            os.replace(tmp, self._owner)
        except BaseException:  # a full disk: no half-written file is left behind
            tmp.unlink(missing_ok=True)
            raise


def owner_path(lock_path: Path) -> Path:
    """The owner record beside ``lock_path`` (``sync.lock`` → ``sync.owner``)."""
    return lock_path.with_suffix(".owner")


def read_owner(lock_path: Path) -> Owner | None:
    """The recorded holder of ``lock_path``, alive or not; None when there is no readable record."""
    try:
        data = json.loads(owner_path(lock_path).read_text(encoding="utf-8"))
        return Owner(int(data["pid"]), float(data["started"]), data.get("hook"), data.get("proc_start"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def is_alive(owner: Owner) -> bool:
    """True when ``owner.pid`` still runs and is the same process (start time checked where known)."""
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    except OSError:
        return False
    now = _proc_start(owner.pid)
    return owner.proc_start is None or now is None or now == owner.proc_start


def running_sync(lock_path: Path) -> Owner | None:
    """The live holder of the sync lock, or None; never takes the lock."""
    owner = read_owner(lock_path)
    return owner if owner is not None and is_alive(owner) else None


def sync_running(lock_path: Path) -> bool:
    """True while a live process holds the sync lock (read from its owner record)."""
    return running_sync(lock_path) is not None


def _proc_start(pid: int) -> str | None:
    """Field 22 of ``/proc/PID/stat`` (start time in clock ticks since boot); None off Linux."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # the command name may hold spaces and parentheses
    return fields[19] if len(fields) > 19 else None
