"""A read-only array in a ``.npy`` file, read row by row with ``pread``: large model tables that a
lookup touches a few rows of, without holding them in memory."""

from __future__ import annotations

import math
import os
import stat
import struct
import threading
import weakref
import zlib
from pathlib import Path
from typing import Any

import numpy as np

# numpy reads a .npy header with ast.literal_eval, and CPython 3.11's AST builder counts its depth in state
# the interpreter shares (gh-106905): two threads reading headers at once (a background model load beside
# a search) could fail with "SystemError: AST constructor recursion depth mismatch". Every header read holds it.
NPY_HEADERS = threading.RLock()

_FORMATS = {("u", 1): "B", ("u", 2): "H", ("u", 4): "I", ("u", 8): "Q", ("i", 1): "b", ("i", 2): "h",
            ("i", 4): "i", ("i", 8): "q", ("f", 2): "e", ("f", 4): "f", ("f", 8): "d"}


def regular_file(path: Path) -> Path:
    """``path`` when it is a regular file (a symlink to one counts). Raises ``ValueError`` for a
    FIFO, a device or a folder (opening a FIFO would block), ``OSError`` when it is missing."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise ValueError(f"{path.name}: not a regular file")
    return path


def crc32_file(path: Path) -> int:
    """CRC-32 of a regular file's bytes, read 1 MiB at a time (~20 ms for 67 MB from the page cache):
    catches a torn, truncated, zeroed or bit-flipped file (not a forgery). Raises ``OSError``/``ValueError``."""
    crc = 0
    with open(regular_file(path), "rb") as f:
        while block := f.read(1 << 20):
            crc = zlib.crc32(block, crc)
    return crc


class FileArray:
    """A read-only C-order array in a ``.npy`` file, read with ``pread`` at each lookup.

    Neither read into memory nor memory-mapped (a mapped page costs resident memory, and the
    kernel maps a cached page's neighbours with it); a lookup costs a system call (~1 µs) and
    hits the page cache. Supports what py3langid's identifier asks of its tables: ``a[i]`` →
    a Python number (1-D), ``a[rows]`` (an int array) → ``ndarray [len(rows), ...]``.

    Raises ``ValueError`` for anything but a little-endian C-order integer or float array in a regular
    file of the size its header gives; ``IndexError`` out of range, and ``OSError`` or ``ValueError`` when
    the file shrank under it.
    """

    def __init__(self, path: Path) -> None:
        with NPY_HEADERS, open(regular_file(path), "rb") as f:
            version = np.lib.format.read_magic(f)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(f)
            self._offset = f.tell()
        dtype = np.dtype(dtype)
        code = _FORMATS.get((dtype.kind, dtype.itemsize))
        if fortran or not shape or code is None or dtype.byteorder == ">":
            raise ValueError(f"{path.name}: unexpected array layout")
        self.shape, self.dtype = tuple(int(n) for n in shape), dtype
        self._row_bytes = dtype.itemsize * math.prod(self.shape[1:])
        if os.path.getsize(path) != self._offset + self._row_bytes * self.shape[0]:
            raise ValueError(f"{path.name}: not the size its header says")
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
        weakref.finalize(self, os.close, self._fd)
        self._unpack = struct.Struct("<" + code).unpack if len(self.shape) == 1 else None

    def __len__(self) -> int:
        return self.shape[0]

    def _read(self, i: int) -> bytes:
        if not 0 <= i < self.shape[0]:
            raise IndexError(i)
        data = os.pread(self._fd, self._row_bytes, self._offset + i * self._row_bytes)
        if len(data) != self._row_bytes:
            raise ValueError("the file shrank after it was opened")
        return data

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, np.ndarray):  # each distinct row read once
            unique, inverse = np.unique(key, return_inverse=True)
            rows = np.empty((len(unique), *self.shape[1:]), self.dtype)
            for j, i in enumerate(unique.tolist()):
                rows[j] = np.frombuffer(self._read(i), self.dtype).reshape(self.shape[1:])
            return rows[inverse.reshape(key.shape)]
        if self._unpack is None:
            raise TypeError("a row of a 2-D FileArray is read with an index array")
        return self._unpack(self._read(int(key)))[0]
