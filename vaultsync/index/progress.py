"""Progress of a long embedding run: ``progress.json`` beside the lock, and a bar on a terminal.

A sync that embeds more than one batch writes, after every batch that reached the embedding
cache, ``{"pid", "model", "leg", "legs", "done", "total", "embedded", "since",
"updated"}`` to ``progress.json`` (temporary file + ``os.replace``, so a reader never sees half
a record). ``done`` counts the chunks whose vector is kept (found or embedded and flushed), of
``total`` chunks that embedder needs; ``embedded`` counts those embedded by this process since
``since``, which gives the rate, hence the ETA. ``vaultsync status`` shows it while the lock's
owner is that pid, and names it in the error of a sync that was killed or timed out. The sync
removes it when it ends (see ADR-0070).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any


class SyncProgress:
    """Records (and with ``bar``, shows) how far the embedding of one sync has come."""

    def __init__(self, path: Path | None, bar: bool = False) -> None:
        self.path = path
        self.bar = bar
        self._record: dict[str, Any] | None = None
        self._rich: Any = None
        self._task: Any = None

    def start(self, model: str, leg: int, legs: int, total: int, done: int) -> None:
        """An embedder starts on ``total - done`` missing chunks (``done`` were kept already)."""
        self.finish_leg()
        now = time.time()
        self._record = {"pid": os.getpid(), "model": model, "leg": leg, "legs": legs,
                        "done": done, "total": total, "embedded": 0, "since": now, "updated": now}
        self._write()
        if self.bar:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            self._rich = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                                  TimeRemainingColumn(), transient=True)
            self._rich.start()
            self._task = self._rich.add_task(f"embedding chunks ({model})", total=total, completed=done)

    def advance(self, n: int) -> None:
        """``n`` more chunks were embedded and reached the cache."""
        if self._record is None:
            return
        self._record["done"] += n
        self._record["embedded"] += n
        self._record["updated"] = time.time()
        self._write()
        if self._rich is not None:
            self._rich.advance(self._task, n)

    def finish_leg(self) -> None:
        """The current embedder is done (the record stays until :meth:`close`)."""
        if self._rich is not None:
            self._rich.stop()
            self._rich = None

    def close(self) -> None:
        """The pass ends: stop the bar and remove the record (also one left by a killed sync: only the
        lock's holder writes it)."""
        self.finish_leg()
        if self.path is not None:
            self.path.unlink(missing_ok=True)
        self._record = None

    def _write(self) -> None:
        if self.path is None or self._record is None:
            return
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(self._record), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:  # progress is a courtesy: never fail the sync for it
            tmp.unlink(missing_ok=True)


def read_progress(path: Path, pid: int | None = None, since: float = 0.0) -> dict[str, Any] | None:
    """The record at ``path`` (only if written by ``pid`` at or after ``since``, when given); None when
    absent or unreadable."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        ok = isinstance(record, dict) and int(record["total"]) >= 0 and float(record["since"]) >= 0 and (
            pid is None or (record.get("pid") == pid and float(record["since"]) >= since - 1))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if ok else None


def eta_seconds(record: dict[str, Any], now: float | None = None) -> float | None:
    """Seconds left at this process's rate so far, or None before the first batch."""
    now = time.time() if now is None else now
    embedded, elapsed = int(record.get("embedded") or 0), float(record["updated"]) - float(record["since"])
    if embedded <= 0 or elapsed <= 0:
        return None
    left = (int(record["total"]) - int(record["done"])) * elapsed / embedded
    return max(0.0, left - max(0.0, now - float(record["updated"])))


def describe(record: dict[str, Any], now: float | None = None, eta: bool = True) -> str:
    """``12,800 / 46,700 texts embedded (chunks and note names; multilingual-e5-small, embedder 1 of 2), ETA 14 min``:
    a note's name is embedded beside its chunks (its name vector), so the texts outnumber the chunks."""
    text = (f"{int(record['done']):,} / {int(record['total']):,} texts embedded (chunks and note names; "
            f"{record.get('model')}, embedder {record.get('leg', 1)} of {record.get('legs', 1)})")
    if int(record["done"]) >= int(record["total"]) and record.get("leg", 1) == record.get("legs", 1):
        return text + ("; writing the index" if eta else "")
    left = eta_seconds(record, now) if eta else None
    return text + (f", ETA {_duration(left)}" if left is not None else "")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
