"""Search latency: warm (the `vaultsync serve` daemon) and cold (a fresh process), and daemon RSS.

    python bench/bench_search.py --repo .bench/index/locomo --queries ../shared/eval/locomo/queries.jsonl
    python bench/bench_search.py --repo .bench/index/generated-10000

--repo is an indexed repository (bench/bench_index.py --keep leaves one). Queries come
from a queries.jsonl (``query`` field) or, without one, are drawn from the vault's own
vocabulary. For each rerank stage (--rerank none maxsim ...) it reports warm p50/p95
over --warm queries through the daemon's HTTP API, cold p50/p95 of
``vaultsync search --no-daemon`` over --cold fresh processes (``cold``: the legs' arrays
memory-mapped from the index's cache, as every search after the first since a sync;
``cold_uncached``: that cache removed first, so the process reads SQLite and writes it, as the
first search after a sync without a daemon), and the daemon's RSS (current and peak) after the
warm queries.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mib(pid: int) -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def load_queries(args: argparse.Namespace) -> list[str]:
    rng = random.Random(7)
    if args.queries:
        rows = [json.loads(line)["query"] for line in Path(args.queries).read_text(encoding="utf-8").splitlines()]
        return rng.sample(rows, min(len(rows), args.warm))
    words = []
    for note in sorted(args.repo.rglob("*.md"))[:200]:
        words += [w.strip(".,") for w in note.read_text(encoding="utf-8", errors="replace").split() if w.isalpha()]
    return [" ".join(rng.sample(words, 3)) for _ in range(args.warm)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--queries", type=Path, default=None)
    ap.add_argument("--rerank", nargs="+", default=["none", "maxsim"])
    ap.add_argument("--warm", type=int, default=60)
    ap.add_argument("--cold", type=int, default=7)
    args = ap.parse_args()
    from vaultsync.serve.client import search_via_daemon

    queries = load_queries(args)
    port = free_port()
    daemon = subprocess.Popen([sys.executable, "-m", "vaultsync", "serve", "--port", str(port)], cwd=args.repo,
                              stderr=subprocess.DEVNULL)
    repo = Path(subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=args.repo, capture_output=True,
                               text=True, check=True).stdout.strip()) / "vaultsync"  # the index dir (its secret)
    results: dict[str, object] = {"repo": str(args.repo.resolve()), "queries": len(queries)}
    try:
        for _ in range(300):
            if search_via_daemon(port, repo, "warm up", {}, "none") is not None:
                break
            time.sleep(0.2)
        for rerank in args.rerank:
            search_via_daemon(port, repo, "warm up", {}, rerank)
            lat = []
            for q in queries:
                start = time.perf_counter()
                assert search_via_daemon(port, repo, q, {}, rerank) is not None
                lat.append((time.perf_counter() - start) * 1000)
            cold: dict[bool, list[float]] = {True: [], False: []}
            for q in queries[:args.cold]:
                for cached in (False, True):
                    if not cached:
                        shutil.rmtree(repo / "legs", ignore_errors=True)
                    start = time.perf_counter()
                    cmd = [sys.executable, "-m", "vaultsync", "search", q, "--no-daemon", "--format", "json",
                           "--rerank", rerank]
                    subprocess.run(cmd, cwd=args.repo, check=True, capture_output=True)
                    cold[cached].append(time.perf_counter() - start)
            results[rerank] = {"warm_p50_ms": round(statistics.median(lat), 1), "warm_p95_ms": round(pct(lat, 0.95), 1)}
            if cold[True]:  # --cold 0: warm and memory only
                results[rerank] |= {"cold_p50_s": round(statistics.median(cold[True]), 2),
                                    "cold_p95_s": round(pct(cold[True], 0.95), 2),
                                    "cold_uncached_p50_s": round(statistics.median(cold[False]), 2)}
            print(rerank, results[rerank], flush=True)
        now, peak = rss_mib(daemon.pid)
        results["daemon_rss_mib"] = round(now)
        results["daemon_peak_rss_mib"] = round(peak)
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
