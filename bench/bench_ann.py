"""ANN against exact search at scale: recall@20 of the chunk table's LanceDB ANN index, latency, memory.

    python bench/bench_ann.py --rows 450000 --queries 300
    python bench/bench_ann.py --rows 450000 --probe-fraction 0.15 0.25 --refine-rows 100 200 --variants IVF_PQ 4

450,000 chunk rows are what a 100,000-note vault holds (10,000 generated notes make
45,038 chunks). Embedding that many passages on a laptop CPU takes hours, so the
**vectors are synthetic, derived from real ones**: the paragraphs of the Obsidian
help vault (``../shared/eval/obsidian-help/vault``) are embedded with
multilingual-e5-small, and each synthetic row is one of them plus Gaussian noise
(cosine ≈ 0.9 to its source), re-normalised: the rows keep the anisotropy and the
topic clusters of real e5 vectors. One name row per 4.5 chunk rows is added, as
the index holds them. The queries are real: ``--queries`` queries of the vault's
query set, in all its languages, embedded as e5 queries.

Reports, for the production settings (``ANN_INDEX``, ``ANN_PROBE_FRACTION`` in
``vaultsync/index/vector_store.py``) and for the other settings and index types asked for:

* recall@20 of :meth:`ChunkVectors.nearest` against exact cosine over the same rows;
* index build time; query p50 / p95 (ms), and p50 of a search for name rows;
* exact search over a float32 matrix and over a float16 one (recall@20 and p50), the
  in-memory alternative;
* peak RSS of a fresh process that opens the table and runs 50 queries (per index type, with
  the production refine rows), against one that holds the float32 matrix (what exact search
  needs in memory).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "eval" / "obsidian-help"
TABLE_MODEL = "multilingual-e5-small"


def real_vectors(n_queries: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(passage vectors [m, 384] of the help vault's paragraphs, query vectors [n_queries, 384])."""
    from vaultsync.models.convert.build import load_embedder

    embedder = load_embedder(TABLE_MODEL)
    paragraphs = [p.strip() for note in sorted((SHARED / "vault").rglob("*.md"))
                  for p in note.read_text(encoding="utf-8").split("\n\n") if len(p.strip()) >= 40]
    rows = [json.loads(line) for line in (SHARED / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = [r["query"] for r in random.Random(seed).sample(rows, min(n_queries, len(rows)))]
    passages = np.concatenate([embedder.embed_passages(paragraphs[i:i + 64]) for i in range(0, len(paragraphs), 64)])
    return passages.astype(np.float32), embedder.embed_queries(queries).astype(np.float32)


def synthetic(base: np.ndarray, n: int, seed: int, sigma: float = 0.025) -> np.ndarray:
    """``n`` rows: a random base vector plus N(0, sigma²) noise per dimension, L2-normalised."""
    rng = np.random.default_rng(seed)
    rows = base[rng.integers(0, len(base), n)] + rng.normal(0, sigma, (n, base.shape[1])).astype(np.float32)
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def write_table(path: Path, chunks: np.ndarray, names: np.ndarray) -> Any:
    """A :class:`ChunkVectors` table filled through ``table.add`` in batches, without an ANN index."""
    import pyarrow as pa

    from vaultsync.index.vector_store import ChunkVectors

    table = ChunkVectors(path, chunks.shape[1], TABLE_MODEL)
    for kind, matrix in (("chunk", chunks), ("name", names)):
        for start in range(0, len(matrix), 50_000):
            part = matrix[start:start + 50_000]
            ids = [f"n{(start + i) // 5:06d}.md#{'title' if kind == 'name' else (start + i) % 5}"
                   for i in range(len(part))]
            table.table.add(pa.table({
                "id": ids, "path": [i.partition("#")[0] for i in ids], "kind": [kind] * len(part),
                "hash": [""] * len(part),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(part.ravel()), chunks.shape[1])}))
    return table


def exact_top(matrix: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    scores = matrix @ q if matrix.dtype == np.float32 else half_scores(matrix, q)
    top = np.argpartition(-scores, k - 1)[:k]
    return [int(i) for i in top[np.argsort(-scores[top], kind="stable")]]


def half_scores(matrix: np.ndarray, q: np.ndarray, block: int = 16_384) -> np.ndarray:
    """Cosines over a float16 matrix, converted block by block (no float32 copy of it)."""
    out = np.empty(len(matrix), np.float32)
    for start in range(0, len(matrix), block):
        out[start:start + block] = matrix[start:start + block].astype(np.float32) @ q
    return out


def ann_run(path: Path, version: int, queries: np.ndarray, exact: list[set[int]], k: int) -> tuple[float, ...]:
    """(mean recall@k, p50 ms, p95 ms, name-row search p50 ms) of ChunkVectors.nearest over ``queries``."""
    from vaultsync.index.vector_store import ChunkVectors

    table = ChunkVectors.at_version(path, queries.shape[1], TABLE_MODEL, version)
    table.nearest(queries[0], k)  # open the index files
    recalls, times, name_times = [], [], []
    for q, truth in zip(queries, exact):
        start = time.perf_counter()
        found = table.nearest(q, k)
        times.append((time.perf_counter() - start) * 1000)
        rows = {int(i[1:7]) * 5 + int(i.rpartition("#")[2]) for i, _, _ in found}
        recalls.append(len(rows & truth) / k)
        start = time.perf_counter()
        table.nearest(q, k, "name")
        name_times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.fmean(recalls), statistics.median(times), times[int(0.95 * (len(times) - 1))], \
        statistics.median(name_times)


def rss_child(mode: str, path: str, version: int, npy: str) -> None:
    """Run in a fresh process: open the table (``ann``) or load the matrix (``exact``), run the queries,
    print peak RSS in MiB."""
    queries = np.load(npy)
    if mode == "ann":
        from vaultsync.index.vector_store import ChunkVectors

        table = ChunkVectors.at_version(Path(path), queries.shape[1], TABLE_MODEL, version)
        for q in queries:
            table.nearest(q, 20)
    else:
        matrix = np.load(path)
        for q in queries:
            exact_top(matrix, q, 20)
    status = Path("/proc/self/status").read_text()
    print(int(status.split("VmHWM:")[1].split()[0]) / 1024)


def main() -> None:
    from vaultsync.index import vector_store

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=450_000, help="chunk rows (name rows added: rows / 4.5)")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--probe-fraction", type=float, nargs="+", default=[vector_store.ANN_PROBE_FRACTION])
    ap.add_argument("--refine-rows", type=int, nargs="+", default=[vector_store.ANN_REFINE_ROWS])
    ap.add_argument("--variants", nargs=2, action="append", metavar=("INDEX", "SUBVECTOR_DIMS"),
                    help="also an index of this type (IVF_SQ, IVF_PQ or IVF_FLAT) and PQ sub-vector size")
    ap.add_argument("--rss-child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rss_child:
        mode, path, version, npy = args.rss_child
        return rss_child(mode, path, int(version), npy)
    if not SHARED.is_dir():
        sys.exit(f"bench_ann: {SHARED} is absent (the Obsidian help vault and its queries)")
    base, queries = real_vectors(args.queries, args.seed)
    chunks = synthetic(base, args.rows, args.seed)
    names = synthetic(base, int(args.rows / 4.5), args.seed + 1)
    print(f"{len(base)} real passage vectors → {len(chunks):,} chunk rows + {len(names):,} name rows; "
          f"{len(queries)} real queries")
    exact = [set(exact_top(chunks, q, args.k)) for q in queries]
    with tempfile.TemporaryDirectory() as tmp:
        table = write_table(Path(tmp) / "lance", chunks, names)
        production = (vector_store.ANN_INDEX, vector_store.ANN_SUBVECTOR_DIMS)
        for index, sub_dims in [production] + (args.variants or []):
            vector_store.ANN_INDEX, vector_store.ANN_SUBVECTOR_DIMS = index, int(sub_dims)
            for ix in table.table.list_indices():
                if ix.index_type.startswith("Ivf"):
                    table.table.drop_index(ix.name)
            start = time.perf_counter()
            assert table.ensure_ann_index(min_rows=1)
            print(f"{index}{f' ({sub_dims}-dim sub-vectors)' if index.endswith('PQ') else ''} build: "
                  f"{time.perf_counter() - start:.1f} s")
            version = table.version
            settings = [(fraction, refine) for fraction in args.probe_fraction for refine in args.refine_rows]
            for fraction, refine in settings:
                vector_store.ANN_PROBE_FRACTION, vector_store.ANN_REFINE_ROWS = fraction, refine
                nprobes = max(vector_store.ANN_MIN_PROBES, math.ceil(table.table.count_rows() ** 0.5 * fraction))
                recall, p50, p95, names_p50 = ann_run(Path(tmp) / "lance", version, queries, exact, args.k)
                print(f"  probes {fraction:.0%} ({nprobes}) refine_rows={refine}: recall@{args.k} {recall:.4f}, "
                      f"p50 {p50:.1f} ms, p95 {p95:.1f} ms; name rows p50 {names_p50:.1f} ms")
            np.save(Path(tmp) / "q.npy", queries[:50])
            print(f"  peak RSS of a process running 50 queries: {rss(tmp, 'ann', Path(tmp) / 'lance', version):.0f} MiB")
        vector_store.ANN_INDEX, vector_store.ANN_SUBVECTOR_DIMS = production
        for dtype in (np.float32, np.float16):
            matrix = chunks.astype(dtype)
            times, recalls = [], []
            for q, truth in zip(queries, exact):
                start = time.perf_counter()
                found = exact_top(matrix, q, args.k)
                times.append((time.perf_counter() - start) * 1000)
                recalls.append(len(set(found) & truth) / args.k)
            print(f"exact {np.dtype(dtype).name}: recall@{args.k} {statistics.fmean(recalls):.4f}, "
                  f"p50 {statistics.median(times):.1f} ms, {matrix.nbytes / 2**20:.0f} MiB")
        np.save(Path(tmp) / "m.npy", chunks)
        del chunks, names
        print(f"peak RSS of a process running 50 queries, exact float32: {rss(tmp, 'exact', Path(tmp) / 'm.npy', 0):.0f} MiB")


def rss(tmp: str, mode: str, path: Path, version: int) -> float:
    """Peak RSS (MiB) of :func:`rss_child` run in a fresh process."""
    out = subprocess.run([sys.executable, __file__, "--rss-child", mode, str(path), str(version),
                          str(Path(tmp) / "q.npy")], capture_output=True, text=True, check=True).stdout
    return float(out)


if __name__ == "__main__":
    main()
