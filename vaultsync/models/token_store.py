"""Sources of passage token vectors for late interaction, and their compact stored form.

Two sources share one interface (``get(texts) -> list[np.ndarray]``, float32
``[n_tokens, d]`` rows L2-normalised):

* :class:`OnDemandTokenVectors` re-encodes passages at query time and keeps
  the results in an LRU cache keyed by the text's sha256 (cost: one encoder
  pass per uncached passage, ~35 ms for 300 tokens on 2 threads).
* :class:`StoredTokenVectors` looks vectors up in a store filled at index
  time (:meth:`StoredTokenVectors.add`), kept compact by :class:`TokenCodec`:
  int8 per token with one float16 scale (``d + 2`` bytes per token instead of
  768 for float16 at d = 384), optionally after a PCA projection to fewer
  dimensions (e.g. 128 → 130 bytes per token). Missing entries are encoded on
  demand and added.

The index decides where the compact blobs live (:meth:`TokenCodec.to_bytes`
/ :meth:`TokenCodec.from_bytes`); this module only keeps them in memory.
"""

from __future__ import annotations

import hashlib
import struct
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from vaultsync.models.base import Kind


class TokenEncoder(Protocol):
    """What the sources need from an embedder (``Embedder.token_vectors``)."""

    dim: int

    def token_vectors(self, texts: Sequence[str], kind: Kind = "passage") -> list[np.ndarray]: ...


class TokenVectorSource(Protocol):
    """Passage token vectors, float32 ``[n_tokens, d]`` per text, rows L2-normalised."""

    def get(self, texts: Sequence[str]) -> list[np.ndarray]: ...

    def project_query(self, vectors: np.ndarray) -> np.ndarray:
        """Map query token vectors into the same space as the passage vectors."""
        ...


def content_key(text: str) -> str:
    """Cache key of a passage: sha256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _normalise(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=1, keepdims=True)
    out: np.ndarray = (x / np.maximum(n, 1e-12)).astype(np.float32)
    return out


class OnDemandTokenVectors:
    """Encode passages when asked; an LRU of at most ``capacity`` passages and ``max_bytes`` of float16
    vectors (16 MiB: about 70 passages of 300 tokens at d = 384, a few queries' candidates) avoids
    repeats. The byte bound keeps a long-lived daemon's memory flat: 512 passages of that size held
    118 MiB; at 10,000 notes with every rerank stage loaded the daemon read 491–498 MiB with 16 MiB
    against 502–504 MiB with 32 MiB."""

    def __init__(self, encoder: TokenEncoder, capacity: int = 512, max_bytes: int = 16 << 20) -> None:
        self.encoder = encoder
        self.capacity = capacity
        self.max_bytes = max_bytes
        self._bytes = 0
        self._lru: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # a warm daemon may rerank for several requests at once
        self.hits = 0
        self.misses = 0

    def get(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token vectors per text (float16 in the cache, float32 out)."""
        keys = [content_key(t) for t in texts]
        with self._lock:
            found = {i: self._lru[k] for i, k in enumerate(keys) if k in self._lru}
        missing = [i for i in range(len(keys)) if i not in found]
        fresh = self.encoder.token_vectors([texts[i] for i in missing], "passage") if missing else []
        for i, v in zip(missing, fresh, strict=True):
            found[i] = v.astype(np.float16)
        with self._lock:
            self.hits += len(keys) - len(missing)
            self.misses += len(missing)
            for i, k in enumerate(keys):
                if k not in self._lru:
                    self._bytes += found[i].nbytes
                self._lru[k] = found[i]
                self._lru.move_to_end(k)
            while self._lru and (len(self._lru) > self.capacity or self._bytes > self.max_bytes):
                self._bytes -= self._lru.popitem(last=False)[1].nbytes
        return [found[i].astype(np.float32) for i in range(len(keys))]

    def project_query(self, vectors: np.ndarray) -> np.ndarray:
        """Identity: passages stay in the encoder's space."""
        return vectors


@dataclass(frozen=True)
class CompactTokens:
    """int8 codes ``[n, d]`` and float16 scales ``[n]``: value ≈ codes * scale."""

    codes: np.ndarray
    scales: np.ndarray

    @property
    def nbytes(self) -> int:
        """Stored size in bytes."""
        return int(self.codes.nbytes + self.scales.nbytes)


class TokenCodec:
    """Compact token vectors: optional projection (PCA), then symmetric int8 per token.

    ``projection`` is ``[d_in, d_out]`` (orthonormal columns) or None for no reduction.
    """

    def __init__(self, projection: np.ndarray | None = None) -> None:
        self.projection = None if projection is None else np.asarray(projection, np.float32)

    @classmethod
    def fit_pca(cls, sample: np.ndarray, dims: int) -> TokenCodec:
        """Fit a ``dims``-dimensional PCA projection on sample token vectors ``[n, d]`` (uncentred, as cosine needs)."""
        if sample.ndim != 2 or sample.shape[0] < dims:
            raise ValueError("need at least `dims` sample vectors")
        _, _, vt = np.linalg.svd(sample.astype(np.float64), full_matrices=False)
        return cls(vt[:dims].T.astype(np.float32))

    @property
    def dims(self) -> int | None:
        """Output dimensions (None: same as input)."""
        return None if self.projection is None else int(self.projection.shape[1])

    def project(self, vectors: np.ndarray) -> np.ndarray:
        """Apply the projection (if any) and re-normalise rows."""
        if self.projection is None:
            return vectors.astype(np.float32)
        return _normalise(vectors @ self.projection)

    def encode(self, vectors: np.ndarray) -> CompactTokens:
        """float32 ``[n, d]`` → :class:`CompactTokens` (projected, then int8 with a per-row scale)."""
        v = self.project(vectors)
        scale = np.abs(v).max(axis=1) / 127.0 if len(v) else np.zeros(0, np.float32)
        scale = np.maximum(scale, 1e-12)
        codes = np.clip(np.rint(v / scale[:, None]), -127, 127).astype(np.int8)
        return CompactTokens(codes, scale.astype(np.float16))

    @staticmethod
    def decode(c: CompactTokens) -> np.ndarray:
        """Back to float32 rows, re-normalised."""
        if len(c.codes) == 0:
            return np.zeros(c.codes.shape, np.float32)
        return _normalise(c.codes.astype(np.float32) * c.scales.astype(np.float32)[:, None])

    @staticmethod
    def to_bytes(c: CompactTokens) -> bytes:
        """Serialise: u32 n, u32 d, float16 scales, int8 codes."""
        n, d = c.codes.shape
        return struct.pack("<II", n, d) + c.scales.astype("<f2").tobytes() + c.codes.tobytes()

    @staticmethod
    def from_bytes(blob: bytes) -> CompactTokens:
        """Inverse of :meth:`to_bytes`."""
        n, d = struct.unpack_from("<II", blob, 0)
        scales = np.frombuffer(blob, "<f2", n, 8).astype(np.float16)
        codes = np.frombuffer(blob, np.int8, n * d, 8 + 2 * n).reshape(n, d)
        return CompactTokens(codes, scales)


class StoredTokenVectors:
    """In-memory store of compact token vectors keyed by content hash; fills gaps on demand."""

    def __init__(self, encoder: TokenEncoder, codec: TokenCodec | None = None) -> None:
        self.encoder = encoder
        self.codec = codec or TokenCodec()
        self._store: dict[str, CompactTokens] = {}
        self.misses = 0

    def add(self, texts: Sequence[str]) -> None:
        """Encode and store ``texts`` (index time)."""
        todo = [t for t in dict.fromkeys(texts) if content_key(t) not in self._store]
        if todo:
            for t, v in zip(todo, self.encoder.token_vectors(todo, "passage"), strict=True):
                self._store[content_key(t)] = self.codec.encode(v)

    def get(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Decoded vectors per text; texts not yet stored are encoded and added."""
        missing = [t for t in texts if content_key(t) not in self._store]
        self.misses += len(missing)
        self.add(missing)
        return [self.codec.decode(self._store[content_key(t)]) for t in texts]

    def project_query(self, vectors: np.ndarray) -> np.ndarray:
        """Project query vectors like the stored passages (no int8: queries are not stored)."""
        return self.codec.project(vectors)

    @property
    def nbytes(self) -> int:
        """Bytes held by the compact vectors."""
        return sum(c.nbytes for c in self._store.values())

    @property
    def n_tokens(self) -> int:
        """Token vectors held."""
        return sum(len(c.codes) for c in self._store.values())
