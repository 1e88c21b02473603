"""How much of a reranker's rank to fuse with the first stage's: recall@5 and MRR@10 per fusion weight.

Commands (from the repository root)::

    python -m training.relevance.dataset --out /tmp/relevance-data        # the held-out QA titles
    python bench/bench_rerank_fusion.py --set qa-heldout --data /tmp/relevance-data --every 2
    python bench/bench_rerank_fusion.py --set locomo --every 4
    python bench/bench_rerank_fusion.py --set obsidian-help --every 4 --rerank maxsim --weights 1,0.5,0.3

``qa-heldout`` runs the gold questions of the held-out titles (never trained on) over the QA vault,
indexed through the real sync path; the other sets are the evaluation workspaces of ``vaultsync eval``.
Every row is the real pipeline (evaluation options, floor off); the reranker scores each query's
candidates once and the rows reuse them, so the rows differ only in the fusion (RRF, Cormack et al.
2009, ``vaultsync.search.fusion.rerank_order``). ADR-0109.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


class ScoredOnce:
    """A reranker whose scores are kept per (query, passages), with a settable ``fusion_weight``."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.fusion_weight = inner, inner.name, None
        self._scores: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        key = (query, tuple(passages))
        if key not in self._scores:
            self._scores[key] = self.inner.score(query, passages)
        return self._scores[key]


def _searcher(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]]]:
    if args.set == "qa-heldout":
        from training.relevance.features import open_workspace

        data = args.data or Path("/tmp/relevance-data")
        queries = [q for q in map(json.loads, (data / "heldout.jsonl").read_text(encoding="utf-8").splitlines())
                   if q["category"] == "gold"]
        return open_workspace(data, data / "workspace"), queries[::args.every]
    from vaultsync.cli.common import committed_config
    from vaultsync.engine import open_searcher
    from vaultsync.eval.harness import load_queries, prepare_workspace
    from vaultsync.git import open_repo
    from vaultsync.index.embedding import DEFAULT_EMBEDDERS

    dataset = (args.data or ROOT.parent / "shared" / "eval") / args.set
    cache = Path(os.environ.get("VAULTSYNC_CACHE_DIR") or Path("~/.cache/vaultsync").expanduser())
    repo = open_repo(prepare_workspace(dataset, args.workdir or cache / "eval", list(DEFAULT_EMBEDDERS), None))
    searcher, _ = open_searcher(repo, committed_config(repo), rerank="none")  # type: ignore[arg-type]
    return searcher, load_queries(dataset, None, args.every)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="qa-heldout", help="qa-heldout, locomo or obsidian-help")
    ap.add_argument("--data", type=Path, default=None, help="the QA data, or the root of the evaluation sets")
    ap.add_argument("--workdir", type=Path, default=None, help="where `vaultsync eval` keeps its workspaces")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--rerank", default="maxsim", choices=("maxsim", "cross-encoder"))
    ap.add_argument("--weights", default="1,0.5,0.3,0.2", help="fusion weights of the reranker's rank")
    args = ap.parse_args()
    from vaultsync.engine import load_reranker
    from vaultsync.eval.harness import evaluation_options, run_queries, summarise
    from vaultsync.vault.config import Config

    searcher, queries = _searcher(args)
    embedder = searcher.embedder["multilingual-e5-small"] if isinstance(searcher.embedder, dict) else searcher.embedder
    reranker = ScoredOnce(load_reranker(args.rerank, embedder, Config()))
    rows: list[tuple[str, Any]] = [("none", None)] + [(f"{args.rerank} w={w}", float(w)) for w in args.weights.split(",")]
    for name, weight in rows:
        searcher.reranker = None if weight is None else reranker
        reranker.fusion_weight = weight
        notes = summarise(run_queries(searcher, queries, evaluation_options(min_relevance=0.0)))["notes"]
        langs = {k[5:]: v["recall@5"] for k, v in notes.items() if k.startswith("lang:")}
        low = min(langs, key=langs.get) if langs else "-"  # type: ignore[arg-type]
        print(f"{name:<22} n={notes['all']['n']} recall@5 {notes['all']['recall@5']:.3f} "
              f"MRR@10 {notes['all']['mrr@10']:.3f} lowest language {langs.get(low, 0):.3f} ({low})", flush=True)
    searcher.close()


if __name__ == "__main__":
    main()
