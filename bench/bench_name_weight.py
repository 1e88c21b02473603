"""How much a dense leg counts a note's name vector: ``name_weight`` swept on three datasets, one process.

    python bench/bench_name_weight.py [--weights 1 0.5 0.25 0] [--every 4] [--data ../shared]

A dense leg scores a note by its best chunk cosine ``c``, raised by its name vector's cosine ``n``
to ``c + name_weight * max(0, n - c)`` (vaultsync.search.dense.NoteScoring.best_notes). Each row
runs the default pipeline (evaluation options, no rerank) with one weight over: the Obsidian help
vault (every N-th of its 2,646 queries in 8 languages, distinct note titles), XQuAD (every N-th
held-out question in 12 languages over the 240 English paragraphs, titled "Article (n)": five
notes per article share a name) and LoCoMo (every N-th question; note R@5 and turn R@5). Query
embeddings are computed once and shared by the rows. The workspaces are those of
bench/eval_table.py and bench/bench_xquad.py (reused under $VAULTSYNC_CACHE_DIR/eval).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_xquad import CachedEmbedder, build_dataset, load_rows  # noqa: E402

from vaultsync.eval.harness import evaluation_options, load_queries, prepare_workspace, run_queries, summarise  # noqa: E402
from vaultsync.index.embedding import DEFAULT_EMBEDDERS  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", type=float, nargs="+", default=[1.0, 0.5, 0.25, 0.0])
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared")
    args = ap.parse_args()
    if not (args.data / "eval").is_dir():
        print(f"bench_name_weight: no data at {args.data}; nothing to do")
        return
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.sync import sync
    from vaultsync.models.convert.build import load_embedder
    from vaultsync.search.pipeline import Searcher

    cache = Path(os.environ.get("VAULTSYNC_CACHE_DIR") or Path("~/.cache/vaultsync").expanduser()) / "eval"
    models = {n: CachedEmbedder(load_embedder(n, threads=2)) for n in DEFAULT_EMBEDDERS}
    index = lambda r: sync(open_repo(r), embedder_factory=lambda c, n: models[n].inner, wait=600)  # noqa: E731
    xq = build_dataset(load_rows(args.data / "train/qa/xquad.jsonl.gz"), cache / "xquad" / "xquad", args.every)
    sets = {
        "obsidian": (prepare_workspace(args.data / "eval/obsidian-help", cache / "ws", DEFAULT_EMBEDDERS, None,
                                       sync_fn=index), load_queries(args.data / "eval/obsidian-help", every=args.every)),
        "xquad": (prepare_workspace(cache / "xquad" / "xquad", cache / "xquad" / "ws", DEFAULT_EMBEDDERS, None,
                                    sync_fn=index), xq),
        "locomo": (prepare_workspace(args.data / "eval/locomo", cache / "ws", DEFAULT_EMBEDDERS, None,
                                     sync_fn=index), load_queries(args.data / "eval/locomo", every=args.every)),
    }
    for name, (repo, queries) in sets.items():
        searcher = Searcher(layout_for(open_repo(repo)).sqlite, dict(models))
        try:
            for w in args.weights:
                start = time.perf_counter()
                outcomes = run_queries(searcher, queries, evaluation_options(name_weight=w))
                s = summarise(outcomes)
                langs = " ".join(f"{k[5:]} {m['recall@5']:.3f}" for k, m in s["notes"].items()
                                 if k.startswith("lang:") and k != "lang:-")
                turns = s.get("turns", {}).get("all", {}).get("recall@5")
                print(f"{name:8} w={w:<4g} n={len(outcomes)} notes R@5 {s['notes']['all']['recall@5']:.3f}"
                      + (f" turns R@5 {turns:.3f}" if turns is not None else "")
                      + f" | {langs} ({time.perf_counter() - start:.0f} s)", flush=True)
        finally:
            searcher.close()


if __name__ == "__main__":
    main()
