"""Embedding-cache writes during a build: one append per batch against the merge it replaced.

    python bench/bench_cache_writes.py --rows 100000 --batch 64

A build stores each batch of vectors as soon as it is computed (ADR-0070). ``EmbeddingCache.put``
merges by key, reading every key already in the table, so a build of N rows costs O(N²) in the
cache; ``EmbeddingCache.append`` (what a build uses, its keys just found missing) costs the same
per batch at any size. Both variants fill a fresh cache in the same run, batch by batch (random
unit vectors, dim 384, keys as a build writes them); reported: total seconds and the median
milliseconds per batch over the last tenth of the batches (the largest table).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from vaultsync.index.embedding_cache import EmbeddingCache


def fill(kind: str, rows: int, batch: int, dim: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(Path(tmp), dim)
        write = cache.append if kind == "append" else cache.put
        times = []
        start = time.perf_counter()
        for first in range(0, rows, batch):
            hashes = [f"{i:064x}" for i in range(first, min(rows, first + batch))]
            vectors = rng.standard_normal((len(hashes), dim)).astype(np.float32)
            t = time.perf_counter()
            write("multilingual-e5-small@v1", hashes, vectors)
            times.append(time.perf_counter() - t)
        total = time.perf_counter() - start
        assert len(cache.get("multilingual-e5-small@v1", [f"{i:064x}" for i in range(0, rows, 97)])) == len(range(0, rows, 97))
    tail = times[-max(1, len(times) // 10):]
    return {"variant": kind, "rows": rows, "total_s": round(total, 1), "last_tenth_ms_per_batch": round(statistics.median(tail) * 1000, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--dim", type=int, default=384)
    args = ap.parse_args()
    for kind in ("append", "merge"):
        print(json.dumps(fill(kind, args.rows, args.batch, args.dim)), flush=True)


if __name__ == "__main__":
    main()
