"""Benchmark the local models: latency, throughput, memory, sizes, rerank cost.

Command (from the repository root; builds the model first if the cache is empty)::

    python bench/bench_models.py [--threads 2] [--runs 5] [--cache-dir DIR] [--rebuild] [--spin] [--tokenizer auto|rust] [--json OUT]

Reports medians over ``--runs`` repetitions (each run shuffles the order):

* build time (``--rebuild`` times a fresh build into a temporary cache,
  otherwise the time recorded in ``build.json``), model file sizes;
* peak RSS (VmHWM) of a fresh process after ``Embedder.load`` and after a
  first 512-token passage;
* query embedding latency p50 / p95 (one query per call, EN/JA/DE mix);
* passages per second at ~300 tokens (``embed_passages`` on 40 passages);
* rerank of 20 candidates of ~300 tokens: MaxSim with passage token vectors
  computed on demand (cold cache) vs stored (int8, and int8 after PCA to 192
  or 128 dims; bytes per token, score error, rank agreement), and the cross-encoder runner on an e5-small-sized
  cross-encoder built here with random head weights and INT8 quantisation
  (``--no-cross-encoder`` skips it);
* the USE multilingual embedder for comparison when its extra is installed.

The machine is shared: medians are reported, and minima next to them.
"""

from __future__ import annotations

import argparse
import json
import os
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

SENTENCES = [
    "The deploy job pushes the container image to the internal registry and tags it with the commit hash.",
    "If the health check fails three times in a row, the load balancer drains the node and pages the on-call engineer.",
    "Postgres credentials are rotated every 90 days through the secrets manager; services reload them without a restart.",
    "We keep nightly snapshots of the analytics database for thirty days and weekly ones for a year.",
    "The search service caches query embeddings for five minutes, keyed by the normalised query text.",
    "Feature flags older than a quarter must be removed or turned into configuration before the next release.",
    "Terraform state lives in a versioned bucket with object lock; only the CI role may write to it.",
    "A flaky integration test is quarantined after two failures and tracked in the reliability board.",
    "Die Migration auf die neue Queue erfolgt schrittweise, zuerst für die Exporte, dann für die Benachrichtigungen.",
    "本番環境へのデプロイは金曜日の午後には行わない。障害対応の人員が確保できないためである。",
    "Les journaux d'accès sont conservés quatorze jours puis anonymisés avant l'archivage.",
    "Rate limits are enforced per API key with a token bucket of 100 requests and a refill of 10 per second.",
    "The incident review found that the retry storm came from clients ignoring the Retry-After header.",
    "Schema changes ship in two steps: add the nullable column first, backfill, then enforce the constraint.",
]
QUERIES = [
    "how do we rotate database credentials?",
    "why was the deploy blocked on friday",
    "retention of analytics backups",
    "Wie funktioniert die Migration der Queue?",
    "本番データベースのバックアップはどこに保存されますか",
    "rate limit per api key",
    "what caused the retry storm incident",
    "who can write terraform state",
    "feature flag cleanup policy",
    "how long are access logs kept?",
]


def _rss() -> dict[str, int]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS", "VmHWM")):
            k, v = line.split(":")
            out[k] = int(v.split()[0]) // 1024
    return out


def _passages(tokens: int, n: int, count_tokens: Any, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts: list[str] = []
        while count_tokens([" ".join(parts)])[0] < tokens:
            parts.append(rng.choice(SENTENCES))
        out.append(" ".join(parts))
    return out


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def _pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q))


def rss_child(cache_dir: str | None, threads: int, spin: bool, tokenizer: str) -> None:
    """Run in a fresh process: RSS after load and after one long passage, printed as JSON."""
    from vaultsync.models.embedder import Embedder

    base = _rss()
    emb = Embedder.load(cache_dir=cache_dir, threads=threads, spin=spin, tokenizer=tokenizer)  # type: ignore[arg-type]
    loaded = _rss()
    emb.embed_passages([" ".join(SENTENCES * 3)])
    emb.embed_queries(["warm up"])
    used = _rss()
    print(json.dumps({"baseline_mb": base["VmRSS"], "after_load": loaded, "after_512_token_passage": used}))


def bench(args: argparse.Namespace) -> dict[str, Any]:
    from vaultsync.models import cache
    from vaultsync.models.convert.build import build_model, stderr_progress
    from vaultsync.models.embedder import Embedder

    report: dict[str, Any] = {
        "tokenizer": args.tokenizer,
        "threads": args.threads,
        "runs": args.runs,
        "spin": args.spin,
        "load_average_at_start": list(os.getloadavg()),
    }
    if args.rebuild:
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            build_model(cache_dir=tmp, progress=stderr_progress)
            report["build_seconds_fresh"] = round(time.perf_counter() - t, 1)
    result = build_model(cache_dir=args.cache_dir, progress=stderr_progress)
    report["build_seconds_recorded"] = result.info.get("build_seconds")
    report["files_mb"] = {k: round(v["bytes"] / 1e6, 1) for k, v in result.info["files"].items()}
    report["cache_folder"] = str(result.folder)

    child = subprocess.run(
        [sys.executable, __file__, "--rss-child", "--threads", str(args.threads)]
        + (["--cache-dir", args.cache_dir] if args.cache_dir else [])
        + (["--spin"] if args.spin else [])
        + ["--tokenizer", args.tokenizer],
        capture_output=True,
        text=True,
        check=True,
    )
    report["rss_mb"] = json.loads(child.stdout.strip().splitlines()[-1])

    t = time.perf_counter()
    emb = Embedder.load(
        cache_dir=args.cache_dir, threads=args.threads, spin=args.spin, tokenizer=args.tokenizer
    )
    report["load_seconds"] = round(time.perf_counter() - t, 2)
    assert isinstance(emb, Embedder)

    # -- query latency ------------------------------------------------------------
    for q in QUERIES:
        emb.embed_queries([q])
    p50s, all_lat = [], []
    for r in range(args.runs):
        order = QUERIES * 5
        random.Random(r).shuffle(order)
        lat = []
        for q in order:
            t = time.perf_counter()
            emb.embed_queries([q])
            lat.append((time.perf_counter() - t) * 1000)
        p50s.append(_pct(lat, 50))
        all_lat += lat
    report["query_ms"] = {
        "p50": round(statistics.median(p50s), 2),
        "p95": round(_pct(all_lat, 95), 2),
        "min_p50": round(min(p50s), 2),
    }

    # -- passage throughput -----------------------------------------------------------
    passages = _passages(300, 40, emb.count_tokens)
    report["passage_tokens_mean"] = round(float(np.mean(emb.count_tokens(passages))), 1)
    rates = []
    for r in range(args.runs):
        batch = passages[:]
        random.Random(r).shuffle(batch)
        t = time.perf_counter()
        emb.embed_passages(batch)
        rates.append(len(batch) / (time.perf_counter() - t))
    report["passages_per_second"] = {"median": round(statistics.median(rates), 1), "max": round(max(rates), 1)}

    # -- rerank: MaxSim -------------------------------------------------------------------
    from vaultsync.models.maxsim import MaxSimReranker
    from vaultsync.models.token_store import OnDemandTokenVectors, StoredTokenVectors, TokenCodec

    candidates = _passages(300, 20, emb.count_tokens, seed=1)
    query = QUERIES[0]
    on_demand = []
    for _ in range(args.runs):
        rr = MaxSimReranker(emb, OnDemandTokenVectors(emb))  # cold: every candidate re-encoded
        t = time.perf_counter()
        rr.score(query, candidates)
        on_demand.append((time.perf_counter() - t) * 1000)
    sample = np.concatenate(emb.token_vectors(candidates[:10]))
    stores = {
        "int8": StoredTokenVectors(emb, TokenCodec()),
        "int8_pca192": StoredTokenVectors(emb, TokenCodec.fit_pca(sample, 192)),
        "int8_pca128": StoredTokenVectors(emb, TokenCodec.fit_pca(sample, 128)),
    }
    maxsim: dict[str, Any] = {"on_demand_ms": round(statistics.median(on_demand), 1), "fp16_bytes_per_token": 768}
    ref = MaxSimReranker(emb).score(query, candidates)
    for label, store in stores.items():
        store.add(candidates)
        rr = MaxSimReranker(emb, store)
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            s = rr.score(query, candidates)
            times.append((time.perf_counter() - t) * 1000)
        maxsim[f"stored_{label}_ms"] = round(statistics.median(times), 1)
        maxsim[f"stored_{label}_bytes_per_token"] = round(store.nbytes / store.n_tokens, 1)
        maxsim[f"stored_{label}_max_score_delta"] = round(float(np.abs(s - ref).max()), 4)
        maxsim[f"stored_{label}_same_top1"] = bool(np.argmax(s) == np.argmax(ref))
        maxsim[f"stored_{label}_spearman"] = round(_spearman(s, ref), 4)
    report["rerank_20x300_maxsim"] = maxsim

    # -- rerank: cross-encoder of e5-small size ----------------------------------------------
    if not args.no_cross_encoder:
        report["rerank_20x300_cross_encoder_ms"] = _cross_encoder(result.folder, candidates, query, args)

    # -- USE for comparison ---------------------------------------------------------------------
    try:
        use = Embedder.load("use-multilingual", threads=args.threads)
    except ImportError:
        report["use"] = "not installed"
    else:
        use.embed_queries(QUERIES)
        lat = []
        for _ in range(args.runs):
            for q in QUERIES:
                t = time.perf_counter()
                use.embed_queries([q])
                lat.append((time.perf_counter() - t) * 1000)
        rates = []
        for _ in range(args.runs):
            t = time.perf_counter()
            use.embed_passages(passages)
            rates.append(len(passages) / (time.perf_counter() - t))
        report["use"] = {
            "query_ms_p50": round(_pct(lat, 50), 2),
            "passages_per_second": round(statistics.median(rates), 1),
        }
    report["cache_root"] = str(cache.cache_root(args.cache_dir))
    return report


def _cross_encoder(e5_folder: Path, candidates: list[str], query: str, args: argparse.Namespace) -> dict[str, Any]:
    import onnx

    from vaultsync.models import manifest as manifests
    from vaultsync.models.convert.build import _quantize, locate_source
    from vaultsync.models.convert.e5_bin import E5Bin, encoder_weights
    from vaultsync.models.convert.encoder_config import EncoderConfig
    from vaultsync.models.convert.onnx_graph import build_cross_encoder, random_weights
    from vaultsync.models.cross_encoder import CrossEncoder

    m = manifests.load("multilingual-e5-small")
    src = E5Bin.open(locate_source(m.sources["weights"]))
    h = src.header
    cfg = EncoderConfig.from_header(h, num_labels=1)
    weights = encoder_weights(src)
    weights.update(
        {
            k: v
            for k, v in random_weights(
                EncoderConfig(hidden=h.hidden, layers=0, vocab=1, max_positions=1), head="roberta"
            ).items()
            if k.startswith("classifier")
        }
    )
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "e5-small-cross-encoder"
        folder.mkdir()
        fp32 = folder / "model.fp32.onnx"
        onnx.save(build_cross_encoder(cfg, weights, head="roberta"), str(fp32))
        _quantize(fp32, folder / "model.onnx", m.raw["build"]["quantization"])
        fp32.unlink()
        (folder / "tokenizer.json").write_bytes((e5_folder / "tokenizer.json").read_bytes())
        (folder / "vaultsync.json").write_text(json.dumps({"max_length": 512}))
        out["model_mb"] = round((folder / "model.onnx").stat().st_size / 1e6, 1)
        ce = CrossEncoder(folder, threads=args.threads)
        ce.score(query, candidates[:2])
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            ce.score(query, candidates)
            times.append((time.perf_counter() - t) * 1000)
        out["int8_ms"] = round(statistics.median(times), 1)
        out["max_batch_size"] = ce.max_batch_size
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--rebuild", action="store_true", help="also time a fresh build into a temporary cache")
    ap.add_argument("--no-cross-encoder", action="store_true")
    ap.add_argument("--spin", action="store_true", help="let onnxruntime worker threads busy-wait (off by default)")
    ap.add_argument("--tokenizer", default="auto", choices=["auto", "compact", "rust"], help="tokenizer back end")
    ap.add_argument("--json", default=None, help="write the report here too")
    ap.add_argument("--rss-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rss_child:
        rss_child(args.cache_dir, args.threads, args.spin, args.tokenizer)
        return
    report = bench(args)
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
