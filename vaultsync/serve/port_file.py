"""Which port this repository's daemon listens on: ``<git dir>/vaultsync/daemon.port`` (``PORT PID``).

The daemon writes it once bound and removes it when it stops; a client asks that port only, so
``vaultsync serve --port N`` (or ``search.port``) is found without reading the config, and a daemon
that never started (its port taken by another repository's) leaves nothing to ask. A file left by a
killed daemon is ignored once its process is gone. Whatever answers there must still prove it holds the
repository's secret (ADR-0033): the file decides where to ask, never whom to trust.
"""

from __future__ import annotations

import os
from pathlib import Path

PORT_FILE = "daemon.port"


def advertise(index_dir: Path, port: int) -> None:
    """Record that this process serves ``index_dir`` on ``port`` (written aside and renamed: whole or absent)."""
    index_dir.mkdir(parents=True, exist_ok=True)
    aside = index_dir / f".{PORT_FILE}.{os.getpid()}"
    aside.write_text(f"{port} {os.getpid()}\n", encoding="ascii")
    os.replace(aside, index_dir / PORT_FILE)


def withdraw(index_dir: Path) -> None:
    """Remove the record if it is this process's (another daemon may have taken over since)."""
    path = index_dir / PORT_FILE
    try:
        if path.read_text(encoding="ascii").split()[1] == str(os.getpid()):
            path.unlink()
    except (OSError, IndexError, ValueError):
        pass


def advertised_port(index_dir: Path) -> int | None:
    """The port a live daemon of ``index_dir`` recorded, or None (no record, a garbled one, or its process
    is gone)."""
    try:
        port_text, pid_text = (index_dir / PORT_FILE).read_text(encoding="ascii").split()[:2]
        port, pid = int(port_text), int(pid_text)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except (PermissionError, OverflowError):
        pass  # alive under another user (or a pid no process can hold: treated as asked)
    return port if 0 < port < 65536 else None
