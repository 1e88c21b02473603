"""Embedding-cache segments: the cache entries of one index, in content-addressed files (ADR-0071).

A segment holds the ``(content hash → vector)`` rows of one model id whose hash starts with one
bucket prefix (none below 2,048 rows, 1 hex digit below 65,536, else 2), sorted by hash, so that a
commit that changes a few notes changes a few segments, and an unchanged segment has the same bytes,
sha256 and object key in every snapshot (it is uploaded once). Format, parsed without any code
execution (no pickle)::

    b"VSEMB1\\n" + JSON {"dim": D, "model": ID, "rows": N} + b"\\n"
    + N × 32 bytes (sha256 digests, ascending) + N × D × 4 bytes (float32, little-endian)
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vaultsync.index.remote import ObjectEntry
from vaultsync.sqlite_uri import connect_readonly

if TYPE_CHECKING:
    from vaultsync.index.embedding_cache import EmbeddingCache

MAGIC = b"VSEMB1\n"
NORM_TOLERANCE = 1e-3  # float32 rounding of an L2-normalised vector stays far below this
MAX_SEGMENT_BYTES = 1 << 30  # a bucket of 65,536+ rows is split further (bucket_width): far below this
MERGED_RECORD = "merged-segments.txt"  # in the cache folder: the segments whose rows it holds


def bucket_width(rows: int) -> int:
    """Hex digits of the bucket prefix for a model with ``rows`` cache entries."""
    return 0 if rows < 2048 else 1 if rows < 65536 else 2


def encode(model: str, hashes: list[str], vectors: np.ndarray) -> bytes:
    """One segment's bytes; ``hashes`` are 64-hex sha256 strings, ascending; ``vectors`` float32 [n, dim]."""
    n, dim = vectors.shape
    header = json.dumps({"dim": int(dim), "model": model, "rows": int(n)}, sort_keys=True).encode("utf-8")
    return b"".join([MAGIC, header, b"\n", b"".join(bytes.fromhex(h) for h in hashes),
                     np.ascontiguousarray(vectors, dtype="<f4").tobytes()])


def decode(data: bytes, entry: ObjectEntry) -> tuple[list[str], np.ndarray]:
    """(hashes, float32 vectors [rows, dim]) of a segment whose manifest entry is ``entry``.

    Raises:
        ValueError: malformed, not what ``entry`` declares (model, dim, rows), hashes not strictly
            ascending, non-finite values, or a vector that is not unit length.
    """
    if not data.startswith(MAGIC) or b"\n" not in data[len(MAGIC):]:
        raise ValueError("not an embedding segment")
    end = data.index(b"\n", len(MAGIC))
    header = json.loads(data[len(MAGIC):end].decode("utf-8"))
    if header != {"dim": entry.dim, "model": entry.model, "rows": entry.rows}:
        raise ValueError("segment header differs from the manifest")
    rows, dim = int(entry.rows or 0), int(entry.dim or 0)
    body = data[end + 1:]
    if len(body) != rows * 32 + rows * dim * 4:
        raise ValueError("segment size differs from its header")
    hashes = [body[i:i + 32].hex() for i in range(0, rows * 32, 32)]
    if any(a >= b for a, b in zip(hashes, hashes[1:])):
        raise ValueError("segment hashes are not strictly ascending")
    vectors = np.frombuffer(body, dtype="<f4", offset=rows * 32).reshape(rows, dim).astype(np.float32)
    if not np.isfinite(vectors).all():
        raise ValueError("segment holds non-finite values")
    if rows and np.abs(np.linalg.norm(vectors.astype(np.float64), axis=1) - 1.0).max() > NORM_TOLERANCE:
        raise ValueError("segment holds vectors that are not unit length")  # every embedder L2-normalises
    return hashes, vectors


def export(sqlite_path: Path, out_dir: Path) -> list[tuple[ObjectEntry, Path]]:
    """Write the segments of every model's vectors in the index at ``sqlite_path`` into ``out_dir``.

    Returns:
        (manifest entry, file) per segment, named ``embeddings/<sha256>``.
    Raises:
        sqlite3.Error; ValueError when a model's vectors differ in width.
    """
    db = connect_readonly(sqlite_path)
    out: list[tuple[ObjectEntry, Path]] = []
    try:
        models = [m for (m,) in db.execute("SELECT DISTINCT model FROM vectors ORDER BY model")]
        for model in models:
            rows = db.execute("SELECT hash, vector FROM vectors WHERE model = ? GROUP BY hash ORDER BY hash",
                              (model,)).fetchall()
            widths = {len(v) for _, v in rows}
            if len(widths) != 1 or next(iter(widths)) % 4:
                raise ValueError(f"vectors of {model} differ in width")
            dim = next(iter(widths)) // 4
            width = bucket_width(len(rows))
            buckets: dict[str, list[tuple[str, bytes]]] = {}
            for h, v in rows:
                buckets.setdefault(h[:width], []).append((h, v))
            for prefix, part in sorted(buckets.items()):
                matrix = np.frombuffer(b"".join(v for _, v in part), dtype="<f4").reshape(len(part), dim)
                data = encode(model, [h for h, _ in part], matrix)
                sha = hashlib.sha256(data).hexdigest()
                path = out_dir / f"{sha}.vsemb"
                path.write_bytes(data)
                out.append((ObjectEntry(f"embeddings/{sha}", "embeddings", sha, len(data), model=model, dim=dim,
                                        rows=len(part), prefix=prefix), path))
    finally:
        db.close()
    return out


def merge_into_cache(cache_dir: Path, segments: list[tuple[ObjectEntry, list[str], np.ndarray]],
                     caches: dict[int, EmbeddingCache] | None = None) -> int:
    """Add decoded segments to the local embedding cache at ``cache_dir`` (entries already there are kept),
    and record them as merged (:func:`merged`). ``caches``: open caches by width, to reuse.

    Returns:
        The number of rows offered to the cache.
    """
    from vaultsync.index.embedding_cache import EmbeddingCache

    caches = {} if caches is None else caches
    total = 0
    for entry, hashes, vectors in segments:
        dim = int(entry.dim or 0)
        if dim not in caches:
            caches[dim] = EmbeddingCache(cache_dir, dim)
        caches[dim].put(str(entry.model), hashes, vectors)
        total += len(hashes)
    if segments:
        with open(cache_dir / MERGED_RECORD, "a", encoding="ascii") as out:
            out.write("".join(f"{entry.sha256}\n" for entry, _, _ in segments))
    return total


def merged(cache_dir: Path) -> set[str]:
    """The sha256 of every segment merged into the cache at ``cache_dir`` (its rows are all there, unless the
    cache was emptied since, which only costs embedding them again)."""
    try:
        text = (cache_dir / MERGED_RECORD).read_text(encoding="ascii", errors="replace")
    except OSError:
        return set()
    return {line for line in text.split() if len(line) == 64}
