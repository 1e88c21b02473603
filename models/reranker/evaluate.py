"""Final comparison of the trained reranker on the evaluation sets (never used for training or tuning).

Runs the real pipeline like ``vaultsync eval`` (same workspace preparation,
options and metrics) for: no rerank, MaxSim, the trained cross-encoder, and
the cross-encoder with its adaptive cut-off applied to the returned hits
(candidates scored under the model's threshold are dropped, the best one is
always kept). Usage, from the repository root::

    python models/reranker/evaluate.py obsidian-help --every 4 --json out.json
    python models/reranker/evaluate.py locomo --every 4 --model models/reranker/vaultsync-reranker-ml4
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from vaultsync.eval import harness  # noqa: E402
from vaultsync.eval.metrics import dedupe  # noqa: E402
from vaultsync.search.budget import cut  # noqa: E402


def run_with_cutoff(searcher, queries, base, threshold):  # noqa: ANN001, ANN201
    """:func:`harness.run_queries`, dropping reranked hits scored under ``threshold`` (the best one stays)."""
    outcomes, kept = [], []
    for q in queries:
        opts = dataclasses.replace(base, scope=q.get("scope") or base.scope)
        start = time.perf_counter()
        result = searcher.search(q["query"], opts)
        ms = (time.perf_counter() - start) * 1000
        hits = [h for i, h in enumerate(result.hits)
                if i == 0 or "rerank" not in h.trace or h.trace["rerank"]["score"] >= threshold]
        kept.append(sum(1 for h in hits if "rerank" in h.trace))
        notes = dedupe([h.path for h in hits])
        per_note: dict[str, int] = {}
        view = []
        for h in hits:
            if per_note.get(h.path, 0) < 2:
                per_note[h.path] = per_note.get(h.path, 0) + 1
                view.append(h)
        view = cut(view, [h.tokens for h in view], harness.TURN_BUDGET, harness.K_RECALL)
        blocks = dedupe([f"{h.path}#^{b}" for h in view for b in h.blocks])
        outcomes.append(harness.QueryOutcome(q, notes, blocks, ms))
    return outcomes, kept


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset")
    p.add_argument("--data", type=Path, default=HERE.parent.parent.parent / "shared" / "eval")
    p.add_argument("--workdir", type=Path, default=Path("/tmp/vaultsync-reranker-eval"))
    p.add_argument("--model", type=Path, default=HERE / "vaultsync-reranker-ml4")
    p.add_argument("--every", type=int, default=4)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--variants", default="none,maxsim,cross-encoder,cross-encoder+cutoff")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args()

    from vaultsync.git import open_repo
    from vaultsync.index.sync import config_at
    from vaultsync.models.cross_encoder import CrossEncoder
    from vaultsync.search.engine import load_reranker, open_searcher

    dataset = args.data / args.dataset
    repo_path = harness.prepare_workspace(dataset, args.workdir, "multilingual-e5-small", None)
    repo = open_repo(repo_path)
    config, _ = config_at(repo, repo.head.peel().tree)  # type: ignore[union-attr]
    queries = harness.load_queries(dataset, args.limit, args.every)
    searcher, _ = open_searcher(repo, config, rerank="none")  # type: ignore[arg-type]
    base = harness.evaluation_options(graph_hops=0)
    report: dict = {"dataset": args.dataset, "queries": len(queries), "every": args.every, "variants": {}}
    try:
        for name in args.variants.split(","):
            t0 = time.perf_counter()
            extra: dict = {}
            if name == "none":
                searcher.reranker = None
            elif name == "maxsim":
                searcher.reranker = load_reranker("maxsim", searcher.embedder, config)
            else:
                searcher.reranker = CrossEncoder.load(args.model, threads=args.threads)
            if name.endswith("+cutoff"):
                settings = json.loads((args.model / "vaultsync.json").read_text(encoding="utf-8"))
                outcomes, kept = run_with_cutoff(searcher, queries, base, float(settings["threshold"]))
                extra = {"reranked_kept_mean": round(sum(kept) / max(1, len(kept)), 2)}
            else:
                outcomes = harness.run_queries(searcher, queries, base)
            summary = harness.summarise(outcomes) | extra
            summary["seconds"] = round(time.perf_counter() - t0, 1)
            report["variants"][name] = summary
            row = [f"{name:<22}"]
            for level in ("notes", "turns"):
                if level in summary:
                    m = summary[level]["all"]
                    row.append(f"{level}: R@5 {m['recall@5']:.3f} hit@5 {m['hit@5']:.3f} MRR@10 {m['mrr@10']:.3f} "
                               f"nDCG@10 {m['ndcg@10']:.3f} (n={m['n']})")
            row.append(f"p50 {summary['latency_ms']['p50']} ms")
            print(" | ".join(row), flush=True)
    finally:
        searcher.close()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
