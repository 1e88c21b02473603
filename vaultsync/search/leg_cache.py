"""A dense leg's in-memory arrays, cached beside the index and memory-mapped by the next process.

Reading a leg from SQLite (:func:`vaultsync.search.dense.read_vectors`) streams and quantises every
float32 vector: ~0.75 s a leg at 55,000 chunks, most of a cold search. The arrays it yields (rowids,
int8 codes, scales, ids, paths) are written once to ``<index dir>/legs/`` and later opened with
``mmap``: no copy, no decoding of the codes, and pages shared by every process that reads them.

A file describes one state of the index: its name and header carry the index's ``generation``
(a random id written by every sync that changes chunks or vectors, in the same transaction,
:meth:`vaultsync.index.sqlite_store.SqliteStore.apply`), the model and its dimension. A file of
another state is never read, a damaged one is ignored, and files are replaced atomically
(written aside, then renamed), so a reader sees a whole file or none. Everything here is best
effort: a cache that cannot be read or written costs the SQLite read, never a search.

Layout: ``VSLEG1\\n``, a 4-byte little-endian header length, a JSON header (``key``; ``arrays``:
name → ``[dtype, shape, offset]``; ``strings``: name → ``[offset, bytes, count]``), then the data,
each array at a 64-byte aligned offset; a string list is its items UTF-8 encoded, NUL separated.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import struct
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

MAGIC = b"VSLEG1\n"
ALIGN = 64


def cache_key(generation: str, model: str, dim: int) -> str:
    """The key of one leg's arrays in one index state."""
    return f"{generation}:{model}:{dim}"


def _file(folder: Path, model: str, generation: str) -> Path:
    return folder / f"{hashlib.sha256(model.encode()).hexdigest()[:12]}-{generation[:32]}.leg"


def save(folder: Path, model: str, generation: str, dim: int, arrays: Mapping[str, np.ndarray],
         strings: Mapping[str, Sequence[str]]) -> bool:
    """Write one leg's ``arrays`` (numeric numpy arrays) and ``strings`` (lists of str without NUL);
    remove the model's files of other generations. Returns whether the file was written (False on any
    ``OSError``, e.g. a read-only index folder, or a string holding NUL)."""
    if any("\0" in s for items in strings.values() for s in items):
        return False
    blobs = {name: "\0".join(items).encode("utf-8", "surrogatepass") for name, items in strings.items()}
    header: dict[str, object] = {"key": cache_key(generation, model, dim), "arrays": {}, "strings": {}}
    parts: list[tuple[int, bytes | memoryview]] = []
    offset = 0

    def place(data: bytes | memoryview) -> int:
        nonlocal offset
        at = -(-offset // ALIGN) * ALIGN
        parts.append((at, data))
        offset = at + len(data)
        return at

    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        header["arrays"][name] = [arr.dtype.str, list(arr.shape), place(memoryview(arr.reshape(-1).view(np.uint8)))]  # type: ignore[index]
    for name, blob in blobs.items():
        header["strings"][name] = [place(blob), len(blob), len(strings[name])]  # type: ignore[index]
    head = json.dumps(header).encode()
    start = -(-(len(MAGIC) + 4 + len(head)) // ALIGN) * ALIGN
    target = _file(folder, model, generation)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + struct.pack("<I", len(head)) + head)
                for at, data in parts:
                    f.seek(start + at)
                    f.write(data)
                f.truncate(start + offset)  # an empty last item still lies inside the file
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        prefix = target.name.split("-", 1)[0] + "-"
        for old in folder.glob(f"{prefix}*.leg"):
            if old != target:
                old.unlink(missing_ok=True)
    except OSError:
        return False
    return True


def load(folder: Path, model: str, generation: str,
         dim: int) -> tuple[dict[str, np.ndarray], dict[str, list[str]]] | None:
    """The arrays (read-only, memory-mapped) and string lists saved for this key; None when there is no
    such file or it is damaged (bad magic, header or bounds, another key)."""
    try:
        with open(_file(folder, model, generation), "rb") as f:
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # ValueError: an empty file cannot be mapped
        return None
    try:
        return _parse(mm, cache_key(generation, model, dim))
    except (ValueError, KeyError, TypeError, struct.error, UnicodeDecodeError):
        return None


def _parse(mm: mmap.mmap, key: str) -> tuple[dict[str, np.ndarray], dict[str, list[str]]] | None:
    if mm[:len(MAGIC)] != MAGIC:
        return None
    (length,) = struct.unpack("<I", mm[len(MAGIC):len(MAGIC) + 4])
    header = json.loads(mm[len(MAGIC) + 4:len(MAGIC) + 4 + length])
    if header.get("key") != key:
        return None
    start = -(-(len(MAGIC) + 4 + length) // ALIGN) * ALIGN
    arrays: dict[str, np.ndarray] = {}
    for name, (dtype, shape, at) in header["arrays"].items():
        dt = np.dtype(dtype)
        if dt.hasobject:
            return None
        count = int(np.prod(shape, dtype=np.int64))
        if at < 0 or start + at + count * dt.itemsize > len(mm):
            return None
        arrays[name] = np.frombuffer(mm, dt, count, start + at).reshape(shape)
    strings: dict[str, list[str]] = {}
    for name, (at, size, count) in header["strings"].items():
        if at < 0 or start + at + size > len(mm):
            return None
        items = mm[start + at:start + at + size].decode("utf-8", "surrogatepass").split("\0") if count else []
        if len(items) != count:
            return None
        strings[name] = items
    return arrays, strings
