"""The in-memory dense leg's int8 codes against exact float32 search: recall, latency, memory.

    python bench/bench_int8.py --rows 45038 --queries 300
    python bench/bench_int8.py --rows 45038 --queries 300 --extra 0 0.1 0.25 0.5
    python bench/bench_int8.py --rows 55038 --queries 300 --scan numpy onnxruntime

45,038 chunk rows are what the 10,000-note generated vault holds. The rows are bench_ann.py's:
**synthetic, derived from real ones** (paragraphs of ``../shared/eval/obsidian-help/vault`` embedded
with multilingual-e5-small, each row one of them plus Gaussian noise at cosine ≈ 0.9 to its source),
so many rows are near-duplicates with tight score gaps: a hard case for quantisation. The queries are
real (the vault's query set, all languages, embedded as e5 queries).

The rows are written into a real index file (the product's schema) and loaded by
:func:`vaultsync.search.dense.load_leg`, as a search loads them. Reported, for each re-scored
margin (``--extra``: fraction of ``limit`` re-scored beyond it; the production value is
``VectorIndex.POOL_EXTRA``): recall@k of ``VectorIndex.top`` against exact float32 search for
k = 20 and k = 200 (the depth a search asks a leg for), the share of queries whose top k equals
exact search's in order, and top(200) p50, for each scan of the codes (``--scan``: numpy's einsum with
the query in float32, or onnxruntime's integer kernels with the query quantised, the production one,
:mod:`vaultsync.search.int8_dot`); then float32 exact search's p50 and both matrices' sizes.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from bench_ann import SHARED, exact_top, real_vectors, synthetic  # noqa: E402


def write_index(path: Path, chunks: np.ndarray) -> sqlite3.Connection:
    """An index file with one chunk row and one vector row per row of ``chunks`` (20 chunks a note)."""
    from vaultsync.index.format import DDL

    db = sqlite3.connect(path, check_same_thread=False)
    db.executescript(DDL)
    with db:
        db.executemany("INSERT INTO chunks VALUES (?, ?, ?, 0, '', 'text', '', '', 1, 1, 1, '[]')",
                       ((i + 1, f"n{i // 20}.md#{i % 20}", f"n{i // 20}.md") for i in range(len(chunks))))
        db.executemany("INSERT INTO vectors VALUES ('m', ?, ?, '', 'chunk', ?)",
                       ((f"n{i // 20}.md#{i % 20}", f"n{i // 20}.md", chunks[i].tobytes()) for i in range(len(chunks))))
    return db


class VectorsOnly:
    model_id, dim = "m", 384


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=45_038)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--extra", type=float, nargs="+", default=None, help="re-scored margins (fractions of limit)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--scan", nargs="+", choices=("numpy", "onnxruntime"), default=["onnxruntime"])
    args = ap.parse_args()
    if not SHARED.is_dir():
        sys.exit(f"bench_int8: {SHARED} is absent (the Obsidian help vault and its queries)")
    from vaultsync.search import int8_dot
    from vaultsync.search.dense import VectorIndex, load_leg

    base, queries = real_vectors(args.queries, args.seed)
    chunks = synthetic(base, args.rows, args.seed)
    print(f"{len(base)} real passage vectors → {len(chunks):,} chunk rows; {len(queries)} real queries")
    truth = {k: [exact_top(chunks, q, k) for q in queries] for k in (20, 200)}
    with tempfile.TemporaryDirectory() as tmp:
        db = write_index(Path(tmp) / "index.sqlite", chunks)
        leg = load_leg(db, "dense", VectorsOnly(), {"id": "m", "dim": chunks.shape[1]})
        assert leg is not None
        production = VectorIndex.POOL_EXTRA
        for scan, extra in [(s, e) for s in args.scan for e in args.extra or [production]]:
            int8_dot._session = False if scan == "numpy" else None  # False: no session, the numpy scan
            leg.chunks.POOL_EXTRA = extra
            line = [f"{scan}, margin {extra:.0%}{' (production)' if extra == production else ''}:"]
            for k, want in truth.items():
                recalls, same, times = [], 0, []
                for q, exact in zip(queries, want):
                    start = time.perf_counter()
                    got = [c.rowid - 1 for c in leg.chunks.top(q, k)]
                    times.append((time.perf_counter() - start) * 1000)
                    recalls.append(len(set(got) & set(exact)) / k)
                    same += got == exact
                line.append(f"recall@{k} {statistics.fmean(recalls):.4f}, same order {same / len(queries):.1%}, "
                            f"p50 {statistics.median(times):.1f} ms;")
            print(" ".join(line), flush=True)
        times = []
        for q in queries:
            start = time.perf_counter()
            exact_top(chunks, q, 200)
            times.append((time.perf_counter() - start) * 1000)
        codes = leg.chunks.codes.nbytes + leg.chunks.scales.nbytes
        print(f"exact float32 top 200: p50 {statistics.median(times):.1f} ms; matrix {chunks.nbytes / 2**20:.0f} MiB, "
              f"int8 codes + scales {codes / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
