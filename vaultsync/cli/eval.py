"""``vaultsync eval DATASET``: retrieval quality of the real pipeline on an evaluation set.

DATASET is a folder name under ``--data`` (``locomo``, ``obsidian-help``) or a
path. The vault is committed into a reusable workspace repository and indexed
through the real sync path; every query then runs through the real pipeline for
each ``--variant`` (see ``vaultsync.eval.variants``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset", help="dataset name under --data, or a dataset folder")
    p.add_argument("--data", type=Path, default=Path("../shared/eval"), help="root of the evaluation sets")
    p.add_argument("--workdir", type=Path, default=None, help="where the indexed workspaces live")
    p.add_argument("--variant", action="append", dest="variants",
                   help="pipeline variant (repeatable; default: default, the shipped pipeline)")
    p.add_argument("--embedder", action="append", dest="embedders",
                   help="embedder of the index (repeatable; default: multilingual-e5-small and use-multilingual)")
    p.add_argument("--chunk-tokens", type=int, default=None)
    p.add_argument("--every", type=int, default=1, help="use every N-th query")
    p.add_argument("--limit", type=int, default=None, help="at most N queries")
    p.add_argument("--no-answer", action="store_true",
                   help="also ask every scoped question in another scope, where it has no answer")
    p.add_argument("--json", type=Path, default=None, help="also write all metrics as JSON here")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from vaultsync.cli.common import committed_config
    from vaultsync.engine import open_searcher
    from vaultsync.eval.harness import (
        evaluation_options,
        load_queries,
        no_answer_queries,
        prepare_workspace,
        run_queries,
        summarise,
    )
    from vaultsync.eval.variants import VARIANTS
    from vaultsync.git import open_repo

    dataset = Path(args.dataset) if Path(args.dataset).is_dir() else args.data / args.dataset
    if not (dataset / "queries.jsonl").is_file():
        print(f"vaultsync eval: no dataset at {dataset} (expected vault/ and queries.jsonl)", file=sys.stderr)
        return 2
    names = args.variants or ["default"]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        print(f"vaultsync eval: unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    cache = Path(os.environ.get("VAULTSYNC_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser()
                 / "vaultsync")
    workdir = args.workdir or cache / "eval"
    started = time.perf_counter()
    from vaultsync.index.embedding import DEFAULT_EMBEDDERS

    embedders = args.embedders or list(DEFAULT_EMBEDDERS)
    maxsim = any(VARIANTS[n].rerank == "maxsim" for n in names)  # its index keeps token vectors (ADR-0117)
    repo_path = prepare_workspace(dataset, workdir, embedders, args.chunk_tokens, token_vectors=maxsim)
    repo = open_repo(repo_path)
    config = committed_config(repo)  # type: ignore[arg-type]
    queries = load_queries(dataset, args.limit, args.every)
    if args.no_answer:
        queries += no_answer_queries(queries)
    print(f"{dataset.name}: {len(queries)} queries, workspace {repo_path} ready in "
          f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
    report: dict[str, object] = {"dataset": dataset.name, "queries": len(queries), "embedders": embedders,
                                 "chunk_tokens": args.chunk_tokens, "variants": {}}
    searcher, _ = open_searcher(repo, config, rerank="none")  # type: ignore[arg-type]
    try:
        for name in names:
            variant = VARIANTS[name]
            from vaultsync.engine import default_rerank, load_reranker

            spec = default_rerank(config) if variant.rerank == "default" else variant.rerank
            searcher.reranker = load_reranker(spec, searcher.embedder, config)
            t0 = time.perf_counter()
            options = dict(variant.options)
            deliver = options.pop("blocks", True)  # the agent's view: the best blocks (ADR-0116), or whole chunks
            outcomes = run_queries(searcher, queries, evaluation_options(**options), deliver)
            summary = summarise(outcomes)
            summary["seconds"] = round(time.perf_counter() - t0, 1)
            report["variants"][name] = summary  # type: ignore[index]
            _print_row(name, summary)
    finally:
        searcher.close()
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


def _print_row(name: str, summary: dict) -> None:  # type: ignore[type-arg]
    parts = [f"{name:<24}"]
    for level in ("notes", "turns"):
        if level in summary:
            m = summary[level]["all"]
            parts.append(f"{level}: R@5 {m['recall@5']:.3f} hit@5 {m['hit@5']:.3f} MRR@10 {m['mrr@10']:.3f} "
                         f"nDCG@10 {m['ndcg@10']:.3f}")
    langs = {k[5:]: v["recall@5"] for k, v in summary.get("notes", {}).items() if k.startswith("lang:")}
    if len(langs) > 1:
        parts.append("min lang R@5 " + f"{min(langs.values()):.3f} ({min(langs, key=langs.get)})")
    trust = summary.get("trust", {})
    if "no_answer" in trust:
        parts.append(f"no-answer abstain {trust['no_answer']['abstain']:.3f}")
    if trust.get("tokens_per_answerable") is not None:
        parts.append(f"tokens/q {trust['tokens_per_answerable']:.0f}")
    if "ece" in trust:
        parts.append(f"ECE {trust['ece']:.3f}")
    parts.append(f"p50 {summary['latency_ms']['p50']} ms")
    print(" | ".join(parts), flush=True)
