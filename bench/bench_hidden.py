"""What the hidden report costs: warm search latency with and without it, on LoCoMo questions in scope.

    python bench/bench_hidden.py [--data ../shared/eval] [--every 13] [--rounds 3]

Every ``--every``-th LoCoMo question is asked in its own conversation's folder (``--scope``), with the
shipped search options, so the notes of the other conversations are what the filter hides and the report
(:mod:`vaultsync.search.hidden`) names those the same search shows when its flags are followed. Three
variants (with the report; its candidates unchecked, as before ADR-0113; without it) run on one warm
in-process searcher, alternated query by query, ``--rounds`` times; the benchmark prints the p50 and
p90 of the whole search in milliseconds and the share of queries whose report lists a note. The workspace is that of ``bench/eval_table.py`` (indexed once, reused).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_table import workspace  # noqa: E402

import vaultsync.search.pipeline as pipeline  # noqa: E402
from vaultsync.eval.harness import load_queries  # noqa: E402
from vaultsync.search.options import SearchOptions  # noqa: E402


class _Everything(set):  # type: ignore[type-arg]
    """A set that holds every path: the followed search "shows" every candidate."""

    def __contains__(self, _: object) -> bool:
        return True


def unchecked(report: Any) -> Any:
    """The report without its check that following the flags shows each note (the code before ADR-0113)."""
    return lambda ctx, cands, shown, _: report(ctx, cands, shown, lambda _opts: _Everything())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval")
    ap.add_argument("--every", type=int, default=13)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    root = Path(os.environ.get("VAULTSYNC_CACHE_DIR") or Path("~/.cache/vaultsync").expanduser()) / "eval"
    searcher = workspace(args.data, "locomo", None, root, {})
    queries = [q for q in load_queries(args.data / "locomo", every=args.every) if q.get("scope")]
    report = pipeline.hidden_matches
    variants = {"with the report": report, "its candidates unchecked": unchecked(report), "without": lambda *_: {}}
    times: dict[str, list[float]] = {name: [] for name in variants}
    listed = 0
    for q in queries[:3]:  # warm the handles and the model
        searcher.search(q["query"], SearchOptions(scope=q["scope"]))
    for _ in range(args.rounds):
        for q in queries:
            opts = dataclasses.replace(SearchOptions(), scope=q["scope"])
            for name, fn in variants.items():
                pipeline.hidden_matches = fn  # type: ignore[assignment]
                started = time.perf_counter()
                result: Any = searcher.search(q["query"], opts)
                times[name].append((time.perf_counter() - started) * 1000)
                listed += bool(name == "with the report" and result.hidden.get("notes"))
    pipeline.hidden_matches = report
    searcher.close()
    print(f"{len(queries)} questions × {args.rounds} rounds; the report lists a note for "
          f"{listed / (len(queries) * args.rounds):.0%} of them")
    for name, ms in times.items():
        q = statistics.quantiles(ms, n=10)
        print(f"{name}: p50 {statistics.median(ms):.1f} ms, p90 {q[8]:.1f} ms")


if __name__ == "__main__":
    main()
