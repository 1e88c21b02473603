"""One loaded copy per process of each embedder whose files have not changed.

A process may ask for the same embedder more than once: ``vaultsync search`` that indexes a vault
first and then searches it, a library caller that opens a searcher per question, a test suite. A load
costs ~0.5 s and ~200 MB (multilingual-e5-small: its tokenizer's 250k pieces and an ONNX session).
:func:`shared_model` hands back the copy already loaded while the model's folder holds the same files
(name, inode, size and modification time of each) and loads afresh otherwise: after a rebuild, or with
another cache folder. One copy per (model, threads) is kept and a stale one is replaced, so nothing
piles up in a long-lived process. A load that raises keeps nothing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

Identity = tuple[str, tuple[tuple[str, int, int, int], ...]]

_lock = threading.Lock()
_loaded: dict[tuple[str, int], tuple[Identity, Any]] = {}  # (name, threads) → (its files, the model)


def files_identity(folder: Path) -> Identity | None:
    """``folder`` and the (name, inode, size, mtime in ns) of each file directly in it, sorted; None
    when it cannot be listed (not built yet) or a file goes while it is read."""
    try:
        with os.scandir(folder) as entries:
            stats = [(e.name, e.stat()) for e in entries if e.is_file()]
    except OSError:
        return None
    return str(folder), tuple(sorted((n, s.st_ino, s.st_size, s.st_mtime_ns) for n, s in stats))


def shared_model(name: str, threads: int, load: Callable[[], T]) -> T:
    """The process's copy of model ``name`` loaded for ``threads``, or ``load()``'s result, kept for
    the next caller. ``load`` is called under a lock, so concurrent callers load once.

    Raises:
        vaultsync.models.manifest.ManifestError: ``name`` is no known model.
        Whatever ``load`` raises (nothing is kept then).
    """
    from vaultsync.models import cache, manifest

    folder = cache.model_dir(name, manifest.load(name).version)
    with _lock:
        held = _loaded.get((name, threads))
        if held is not None and held[0] == files_identity(folder):
            return held[1]  # type: ignore[no-any-return]
        _loaded.pop((name, threads), None)  # a stale copy is freed before the new one loads
        del held
        model = load()
        identity = files_identity(folder)  # after the load: a first use builds the files it reads
        if identity is not None:
            _loaded[(name, threads)] = (identity, model)
        return model
