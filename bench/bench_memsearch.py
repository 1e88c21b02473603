"""A whole ``git memsearch`` process through a warm daemon: checkouts compared in one run.

    python bench/bench_memsearch.py --repo .bench/index/generated-10000 --roots . ../base --queries 40
    python bench/bench_memsearch.py --repo .bench/index/generated-10000 --roots . --installed   # + the repo's alias

--repo is an indexed repository (bench/bench_index.py --keep leaves one). One daemon of the first root
serves it on a free port (the client protocol is the same across the checkouts compared). Each query is
a distinct three-word query drawn from the vault's own vocabulary; for each, every root runs
``git -c alias.memsearch='!env PYTHONPATH=ROOT python -m vaultsync search' memsearch QUERY``, in
rotating order, so that the machine's noise falls on all alike (``--installed``: also the alias
``vaultsync install`` set in the repository, run as is). Reported per variant: p25, p50, p75 of
the wall time (ms) of the whole process, git's alias shell included, and the daemon's own p50
(``timings_ms.total`` of the same queries) for scale.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def vocabulary(index_dir: Path, n: int, seed: int) -> list[str]:
    """``n`` distinct three-word queries from the words of the indexed chunks."""
    db = sqlite3.connect(index_dir / "index.sqlite")
    text = " ".join(r[0] for r in db.execute("SELECT text FROM chunks ORDER BY rowid LIMIT 2000"))
    words = sorted({w.lower() for w in re.findall(r"[A-Za-z]{4,12}", text)})
    rng = random.Random(seed)
    return list(dict.fromkeys(" ".join(rng.sample(words, 3)) for _ in range(n * 2)))[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--roots", type=Path, nargs="+", required=True, help="checkouts to compare (PYTHONPATH)")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--installed", action="store_true", help="also time the repository's own git memsearch alias")
    args = ap.parse_args()
    roots = [r.resolve() for r in args.roots]
    git_dir = subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=args.repo, capture_output=True,
                             text=True, check=True).stdout.strip()
    index_dir = Path(git_dir) / "vaultsync"
    queries = vocabulary(index_dir, args.queries, args.seed)
    port = free_port()
    env = {**os.environ, "VAULTSYNC_PORT": str(port), "PYTHONPATH": str(roots[0])}
    daemon = subprocess.Popen([sys.executable, "-m", "vaultsync", "serve", "--port", str(port)], cwd=args.repo,
                              env=env, stderr=subprocess.DEVNULL)
    variants: list[tuple[str, list[str]]] = []
    for root in roots:
        alias = f"!env PYTHONPATH={shlex.quote(str(root))} {shlex.quote(sys.executable)} -m vaultsync search"
        variants.append((str(root), ["git", "-c", f"alias.memsearch={alias}", "memsearch"]))
    if args.installed:
        variants.append(("installed alias", ["git", "memsearch"]))
    wall: dict[str, list[float]] = {name: [] for name, _ in variants}
    inner: list[float] = []
    try:
        for _ in range(600):  # up and warm: its first answer loads the models
            done = subprocess.run([sys.executable, "-m", "vaultsync", "search", "warm up", "--format", "json"],
                                  cwd=args.repo, env=env, capture_output=True, text=True)
            if done.returncode == 0 and '"timings_ms"' in done.stdout:
                break
            time.sleep(0.5)
        for i, query in enumerate(queries):
            for name, command in variants[i % len(variants):] + variants[:i % len(variants)]:
                start = time.perf_counter()
                subprocess.run([*command, query], cwd=args.repo, env={**env, "PYTHONPATH": ""}, check=True,
                               stdout=subprocess.DEVNULL)
                wall[name].append((time.perf_counter() - start) * 1000)
            out = subprocess.run([sys.executable, "-m", "vaultsync", "search", query, "--format", "json"],
                                 cwd=args.repo, env=env, capture_output=True, text=True, check=True).stdout
            inner.append(json.loads(out)["timings_ms"]["total"])
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    report = {"repo": str(args.repo.resolve()), "queries": len(queries),
              "daemon_search_p50_ms": round(statistics.median(inner), 1)}
    for name, times in wall.items():
        q = statistics.quantiles(times, n=4)
        report[name] = {"p25_ms": round(q[0], 1), "p50_ms": round(q[1], 1), "p75_ms": round(q[2], 1)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
