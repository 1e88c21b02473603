"""Trust figures: abstention on no-answer queries, recall kept, tokens delivered, calibration — per floor.

    python bench/bench_trust.py [--data ../shared/eval] [--every 4] [--offset 0] [--floors 0,0.01,0.015,0.02,0.05]

LoCoMo: every ``--every``-th question in its own conversation (answerable) and in the next
conversation (no answer, :func:`vaultsync.eval.harness.no_answer_queries`); Obsidian help: its
queries in 8 languages (all answerable). Each query runs once through the real pipeline with the
floor off and a deep ranking; every floor (and adaptive cut) is then applied to the hits'
relevance exactly as :func:`vaultsync.search.floor.relevance_cut` does, and the agent's view is
cut as the evaluation harness cuts it (top 5 chunks, ≤ 2 per note, 1,200 tokens). Reports,
per floor: note recall@5 and turn recall@5 of the answerable queries, the share of no-answer
queries with no hit, tokens delivered per answerable query, and the expected calibration error
of every hit's relevance against note labels (floor off). Workspaces are those of
``bench/eval_table.py`` (indexed once, reused).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_table import workspace  # noqa: E402

from vaultsync.eval.harness import TURN_BUDGET, evaluation_options, load_queries, no_answer_queries  # noqa: E402
from vaultsync.search.budget import cut  # noqa: E402
from vaultsync.search.floor import relevance_cut  # noqa: E402
from vaultsync.search.relevance import expected_calibration_error  # noqa: E402


def run(searcher: Any, queries: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[Any]]]:
    """Each query with its hits (floor off, deep ranking)."""
    out = []
    for q in queries:
        opts = dataclasses.replace(evaluation_options(), scope=q.get("scope") or None)
        out.append((q, searcher.search(q["query"], opts).hits))
    return out


def agent_view(hits: list[Any], floor: float, relative: float) -> list[Any]:
    kept, _ = relevance_cut(hits, floor, relative)
    per_note: dict[str, int] = {}
    view = []
    for h in kept:
        if per_note.get(h.path, 0) < 2:
            per_note[h.path] = per_note.get(h.path, 0) + 1
            view.append(h)
    return cut(view, [h.tokens for h in view], TURN_BUDGET, 5)


def row(results: list[tuple[dict[str, Any], list[Any]]], floor: float, relative: float) -> dict[str, float]:
    answerable = [(q, h) for q, h in results if q["relevant"]]
    unanswerable = [(q, h) for q, h in results if not q["relevant"]]
    notes = turns = tokens = 0.0
    for q, hits in answerable:
        view = agent_view(hits, floor, relative)
        found = list(dict.fromkeys(h.path for h in view))
        notes += len(set(found) & set(q["relevant"])) / len(q["relevant"])
        tokens += sum(h.tokens for h in view)
        if q.get("relevant_blocks"):
            blocks = list(dict.fromkeys(f"{h.path}#^{b}" for h in view for b in h.blocks))[:5]
            turns += len(set(blocks) & set(q["relevant_blocks"])) / len(set(q["relevant_blocks"]))
    n = max(len(answerable), 1)
    out = {"notes R@5": notes / n, "turns R@5": turns / n, "tokens/query": tokens / n}
    if unanswerable:
        out["no-answer abstain"] = sum(not agent_view(h, floor, relative) for _, h in unanswerable) / len(unanswerable)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/eval"))
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--offset", type=int, default=0, help="start at this question: --every 8 --offset 4 is disjoint "
                                                           "from --every 8")
    ap.add_argument("--floors", default="0,0.005,0.01,0.015,0.02,0.03,0.05,0.1")
    ap.add_argument("--relative", default="0.3,0.5", help="adaptive cuts tried with the default floor")
    args = ap.parse_args()
    root = Path(os.environ.get("VAULTSYNC_CACHE_DIR") or Path("~/.cache/vaultsync").expanduser()) / "eval"
    models: dict[str, Any] = {}
    from vaultsync.search.options import SearchOptions

    default = SearchOptions().min_relevance
    for name in ("locomo", "obsidian-help"):
        if not (args.data / name / "queries.jsonl").exists():
            sys.exit(f"missing dataset {args.data / name}")
        searcher = workspace(args.data, name, None, root, models)
        queries = load_queries(args.data / name, every=args.every, offset=args.offset)
        queries += no_answer_queries(queries)
        results = run(searcher, queries)
        searcher.close()
        judged = [(h.relevance, int(h.path in q["relevant"])) for q, hits in results for h in hits]
        ece = expected_calibration_error([p for p, _ in judged], [y for _, y in judged])
        print(f"\n{name}: {len(queries)} queries, ECE {ece:.4f} over {len(judged)} hits")
        cuts = [(float(f), 0.0) for f in args.floors.split(",")] + [(default, float(c)) for c in args.relative.split(",")]
        for floor, relative in cuts:
            r = row(results, floor, relative)
            print(f"| {floor:g} | {relative:g} | " + " | ".join(f"{k} {v:.3f}" for k, v in r.items()) + " |", flush=True)


if __name__ == "__main__":
    main()
