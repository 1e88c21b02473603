"""The user cache that holds built models, and atomic installation into it.

Location: ``cache_dir`` argument, else the user's own setting (``$VAULTSYNC_CACHE_DIR`` or
``models.cache_dir`` in ``~/.config/vaultsync/config.yaml``, see :mod:`vaultsync.settings`; never
the repository's config), else ``$XDG_CACHE_HOME/vaultsync``, else ``~/.cache/vaultsync``. A model lives in
``<cache>/models/<name>-v<manifest version>/`` with ``model.onnx``,
``tokenizer.json`` and ``build.json``. A build writes into a temporary sibling
folder and renames it into place, so a killed build never leaves a half model.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock

from vaultsync.settings import cache_root

BUILD_INFO = "build.json"


def model_dir(name: str, version: int, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Folder of a built model (it may not exist)."""
    return cache_root(cache_dir) / "models" / f"{name}-v{version}"


def read_build_info(folder: Path) -> dict[str, Any] | None:
    """The ``build.json`` of a built model, or None when the folder holds no complete build: no
    ``build.json``, or a file it lists missing or of another size (deleted or cut short since; a
    build then runs again instead of every search failing to load it)."""
    try:
        info: dict[str, Any] = json.loads((folder / BUILD_INFO).read_text(encoding="utf-8"))
        files = info.get("files") or {}
        if any((folder / name).stat().st_size != int(meta["bytes"]) for name, meta in files.items()):
            return None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return info


@contextmanager
def build_lock(folder: Path, timeout: float = 900.0) -> Iterator[None]:
    """Serialise builds of one model across processes (a second builder waits, then reuses)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder.parent / f".{folder.name}.lock"), timeout=timeout):
        yield


@contextmanager
def staging(folder: Path) -> Iterator[Path]:
    """Yield a temporary folder next to ``folder``; on success it replaces ``folder`` atomically.

    On an exception (or a kill) the temporary folder is removed (or left as a
    ``.tmp-*`` sibling that :func:`sweep` deletes) and ``folder`` is untouched.
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    try:
        yield tmp
        trash = None
        if folder.exists() or folder.is_symlink():
            trash = folder.parent / f".{folder.name}.old-{uuid.uuid4().hex[:8]}"
            os.replace(folder, trash)
        os.replace(tmp, folder)
        if trash is not None:
            _remove(trash)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _remove(path: Path) -> None:
    """Delete a folder, or a file or link that stood where a folder belongs."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def sweep(models_root: Path) -> None:
    """Delete leftovers of killed builds (``.*.tmp-*`` / ``.*.old-*`` folders)."""
    if not models_root.is_dir():
        return
    for p in models_root.iterdir():
        if p.is_dir() and p.name.startswith(".") and (".tmp-" in p.name or ".old-" in p.name):
            shutil.rmtree(p, ignore_errors=True)
