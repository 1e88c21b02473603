"""A read-only array in a ``.npy`` file, read row by row with ``pread``: large model tables that a
lookup touches a few rows of, without holding them in memory."""

from __future__ import annotations

import os
import struct
import weakref
from pathlib import Path
from typing import Any

import numpy as np


class FileArray:
    """A read-only C-order array in a ``.npy`` file, read with ``pread`` at each lookup.

    Neither read into memory nor memory-mapped (a mapped page costs resident memory, and the
    kernel maps a cached page's neighbours with it); a lookup costs a system call (~1 µs) and
    hits the page cache. Supports what py3langid's identifier asks of its tables: ``a[i]`` →
    a Python number (1-D), ``a[rows]`` (an int array) → ``ndarray [len(rows), ...]``.

    Raises ``ValueError`` for an object or Fortran-order array, ``IndexError`` out of range.
    """

    def __init__(self, path: Path) -> None:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read(f)
            self._offset = f.tell()
        if fortran or dtype.hasobject or not shape:
            raise ValueError(f"{path.name}: unexpected array layout")
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self._row_bytes = self.dtype.itemsize * int(np.prod(self.shape[1:], dtype=np.int64))
        if os.path.getsize(path) < self._offset + self._row_bytes * self.shape[0]:
            raise ValueError(f"{path.name}: shorter than its header says")
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        weakref.finalize(self, os.close, self._fd)
        self._unpack = struct.Struct(self.dtype.str.replace("|", "<")[0] + self.dtype.char).unpack if len(self.shape) == 1 else None

    def __len__(self) -> int:
        return self.shape[0]

    def _read(self, i: int) -> bytes:
        if not 0 <= i < self.shape[0]:
            raise IndexError(i)
        return os.pread(self._fd, self._row_bytes, self._offset + i * self._row_bytes)

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
