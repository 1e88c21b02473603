"""Bounded log files, and the crash report an unexpected error leaves behind (as pre-commit's
``error_handler`` does): the full traceback and the versions go to a file, the user sees one line
naming it.

Files: ``<git dir>/vaultsync/crash.log`` inside a repository, else ``<user cache>/crash.log``;
each log is rotated to ``<name>.1`` once it passes :data:`MAX_LOG_BYTES`.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

MAX_LOG_BYTES = 1 << 20
CRASH_EXIT = 3  # distinct from 1 (findings) and 2 (usage), like pre-commit
_VERSIONED = ("vaultsync", "pygit2", "pyyaml", "jsonschema", "numpy", "onnxruntime", "tokenizers", "lancedb",
              "pyarrow")


def rotate(path: Path, max_bytes: int = MAX_LOG_BYTES) -> None:
    """Move ``path`` to ``path.1`` (replacing it) once it holds more than ``max_bytes``; never raises."""
    try:
        if path.stat().st_size > max_bytes:
            os.replace(path, path.with_name(path.name + ".1"))
    except OSError:
        pass


def crash_log_path(start: Path | None = None) -> Path:
    """Where a crash in the repository around ``start`` (default: the working directory) is logged."""
    try:
        from vaultsync.git import open_repo

        repo = open_repo(start or Path.cwd())
        if repo is not None:
            return Path(repo.path) / "vaultsync" / "crash.log"
    except Exception:  # noqa: BLE001 - any doubt: the user cache
        pass
    from vaultsync.settings import cache_root

    return cache_root() / "crash.log"


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for name in _VERSIONED:
        try:
            out.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            continue
    return ", ".join(out)


def write_crash_report(exc: BaseException, argv: list[str], path: Path | None = None) -> Path | None:
    """Append a report of ``exc`` (time, command line, versions, platform, full traceback) to the
    crash log and return its path; None when no log could be written."""
    import platform
    import traceback

    path = path or crash_log_path()
    report = (
        f"### {time.strftime('%Y-%m-%dT%H:%M:%S%z')} vaultsync {' '.join(argv)}\n"
        f"versions: {_versions()}\n"
        f"python {platform.python_version()} on {platform.platform()} ({sys.executable})\n"
        + "".join(traceback.format_exception(exc)) + "\n"
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        rotate(path)
        with path.open("a", encoding="utf-8", errors="replace") as fh:
            fh.write(report)
    except OSError:
        return None
    return path
