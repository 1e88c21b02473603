"""A narrow filter searched exactly over SQLite's vectors (ADR-0127): the cost of ``SqliteVectors.nearest_in``.

    python bench/bench_narrow_filter.py --notes 20000 --chunks-per-note 10 --runs 3

Builds a ``vectors`` table as the index holds it (random unit vectors of 384 dimensions, ``--chunks-per-note``
rows per note, the ``vectors_path`` index, and the ``chunks`` rows' paths) in a temporary file, then times, for filters of 100 to 5,000
notes, the exact top 15 (median of ``--runs``): the rows read, and the time with ``+model`` (the
path index) against the plain ``model = ?`` (SQLite's planner took the (model, id) key and walked
every row of the model). A filter over more than ``EXACT_SCAN_ROWS`` rows gets None (the ANN search serves it)
after counting its chunks on the ``chunks_path`` index.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vaultsync.search.ann import EXACT_SCAN_ROWS, SqliteVectors  # noqa: E402


def build(path: Path, notes: int, per_note: int, dim: int = 384) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE vectors (model TEXT NOT NULL, id TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL,"
               " kind TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, id))")
    db.execute("CREATE INDEX vectors_path ON vectors(path)")
    db.execute("CREATE TABLE chunks (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, path TEXT NOT NULL)")
    db.execute("CREATE INDEX chunks_path ON chunks(path)")
    rng = np.random.default_rng(0)
    for start in range(0, notes, 1000):
        rows = []
        for n in range(start, min(notes, start + 1000)):
            vectors = rng.standard_normal((per_note, dim)).astype("<f4")
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            rows += [("m", f"n{n}#{c}", f"docs/n{n:06d}.md", "h", "chunk", v.tobytes()) for c, v in enumerate(vectors)]
        db.executemany("INSERT INTO vectors VALUES (?, ?, ?, ?, ?, ?)", rows)
        db.executemany("INSERT INTO chunks (id, path) VALUES (?, ?)", [(r[1], r[2]) for r in rows])
    db.commit()
    db.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--notes", type=int, default=20_000)
    ap.add_argument("--chunks-per-note", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "vectors.sqlite"
        build(path, args.notes, args.chunks_per_note)
        db = sqlite3.connect(path)
        vectors, rng = SqliteVectors(db, "m"), np.random.default_rng(1)
        query = rng.standard_normal(384).astype(np.float32)
        query /= np.linalg.norm(query)
        print(f"{args.notes * args.chunks_per_note:,} rows; EXACT_SCAN_ROWS {EXACT_SCAN_ROWS:,}")
        print(f"{'notes':>6} {'rows read':>10} {'nearest_in ms':>14} {'model = ? ms':>13}")
        for k in (100, 500, 1000, 5000):
            paths = {f"docs/n{i:06d}.md" for i in rng.choice(args.notes, k, replace=False)}
            times, found = [], None
            for _ in range(args.runs):
                start = time.perf_counter()
                found = vectors.nearest_in(query, 15, "chunk", paths)
                times.append((time.perf_counter() - start) * 1000)
            marks = ",".join("?" * len(paths))
            plain = []
            for _ in range(args.runs):
                start = time.perf_counter()
                db.execute(f"SELECT id, path, vector FROM vectors WHERE model = ? AND kind = ? AND path IN ({marks}) "
                           "LIMIT ?", ["m", "chunk", *paths, EXACT_SCAN_ROWS + 1]).fetchall()
                plain.append((time.perf_counter() - start) * 1000)
            rows = "over cap" if found is None else f"{min(k * args.chunks_per_note, EXACT_SCAN_ROWS):,}"
            print(f"{k:6d} {rows:>10} {statistics.median(times):14.1f} {statistics.median(plain):13.1f}")


if __name__ == "__main__":
    main()
