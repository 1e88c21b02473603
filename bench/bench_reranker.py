"""Benchmark vaultsync's trained cross-encoder reranker: latency, memory, size.

Command (from the repository root)::

    python bench/bench_reranker.py [--model models/reranker/vaultsync-reranker-ml4] [--threads 2] [--runs 7] [--json OUT]

Reports:

* model files and their sizes;
* rerank latency of 20 candidates of ~300 tokens (one query, one ``score``
  call, as the search pipeline does): median and minimum over ``--runs``, with
  the load average (the machine is shared: the minimum is the quiet-machine figure);
* the same with the real pipeline's ~200-token chunks;
* peak RSS (VmHWM) of fresh processes: the reranker alone after loading and
  scoring, and the daemon's warm set (e5 embedder + reranker, after a query
  and a rerank).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

DEFAULT_MODEL = ROOT / "models" / "reranker" / "vaultsync-reranker-ml4"


def _passages(tokens: int, n: int, count) -> list[str]:  # noqa: ANN001
    from bench_models import SENTENCES

    out = []
    for i in range(n):
        parts: list[str] = [f"Runbook {i} > Section {i % 7}"]
        k = i
        while count("\n".join(parts)) < tokens:
            parts.append(SENTENCES[k % len(SENTENCES)])
            k += 3
        out.append(parts[0] + "\n" + " ".join(parts[1:]))
    return out


def rss_child(model: Path, threads: int, with_embedder: bool) -> None:
    from bench_models import _rss

    from vaultsync.models.cross_encoder import CrossEncoder

    out: dict[str, object] = {"start": _rss()}
    if with_embedder:
        from vaultsync.models.embedder import Embedder

        emb = Embedder.load(threads=threads)
        emb.embed_queries(["how do we rotate database credentials?"])
        out["after_embedder"] = _rss()
    ce = CrossEncoder.load(model, threads=threads)
    out["after_load"] = _rss()
    ps = _passages(300, 20, _counter(model))
    ce.score("how do we rotate database credentials?", ps)
    out["after_rerank"] = _rss()
    print(json.dumps(out))


def _counter(model: Path):  # type: ignore[no-untyped-def]
    """Tokens of a text by the model's own tokenizer (to size the passages), specials left out."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model / "tokenizer.json"))
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--rss-child", choices=["alone", "daemon"], default=None)
    args = p.parse_args()
    if args.rss_child:
        rss_child(args.model, args.threads, args.rss_child == "daemon")
        return 0

    from bench_models import QUERIES

    from vaultsync.models.cross_encoder import CrossEncoder

    report: dict[str, object] = {"model": str(args.model), "threads": args.threads,
                                 "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}
    report["files_mb"] = {f.name: round(f.stat().st_size / 1e6, 2) for f in sorted(args.model.iterdir()) if f.is_file()}
    t = time.perf_counter()
    ce = CrossEncoder.load(args.model, threads=args.threads)
    report["load_seconds"] = round(time.perf_counter() - t, 2)

    count = _counter(args.model)

    for tokens in (300, 200):
        ps = _passages(tokens, 20, count)
        pair_tokens = [len(ce.encode_pair(QUERIES[0], x)[0]) for x in ps]
        ce.score(QUERIES[0], ps)  # warm-up
        times, loads = [], []
        for r in range(args.runs):
            q = QUERIES[r % len(QUERIES)]
            t = time.perf_counter()
            ce.score(q, ps)
            times.append((time.perf_counter() - t) * 1000)
            loads.append(os.getloadavg()[0])
        report[f"rerank_20x{tokens}"] = {
            "pair_tokens_mean": round(statistics.mean(pair_tokens), 1),
            "ms_median": round(statistics.median(times), 1), "ms_min": round(min(times), 1),
            "load_average": round(statistics.mean(loads), 2)}
        print(f"rerank 20 x ~{tokens} tokens (pairs {statistics.mean(pair_tokens):.0f} tokens): median "
              f"{statistics.median(times):.0f} ms, min {min(times):.0f} ms, load {statistics.mean(loads):.2f}",
              flush=True)
    for mode in ("alone", "daemon"):
        child = subprocess.run([sys.executable, __file__, "--rss-child", mode, "--model", str(args.model),
                                "--threads", str(args.threads)], capture_output=True, text=True, check=True)
        report[f"rss_mb_{mode}"] = json.loads(child.stdout.strip().splitlines()[-1])
        print(f"peak RSS ({mode}): {report[f'rss_mb_{mode}']}", flush=True)
    report["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
