"""First-stage features of every candidate chunk, labelled, from the real pipeline over the QA vault.

    python -m training.relevance.features --data /tmp/relevance-data [--side train|heldout|both] [--bm25-only]

Indexes ``<data>/vault`` through the real sync path with both embedders (the workspace is
reused), runs every query of ``<data>/<side>.jsonl`` through the real pipeline with rerank
off, no floor and a deep cut (20 chunks, ≤ 3 per note), and writes one JSON line per
candidate: ``{"qid", "kind", "lang", "side", "pos", "label", "features"}`` to
``<data>/features-<side>.jsonl``. A chunk is labelled 1 when its note is the query's
relevant note. The features are the ``relevance`` entry of the chunk's trace, so they are
exactly what the search computes at run time. ``--bm25-only`` runs the BM25 leg alone (the
evidence of an index without vectors) and writes ``features-bm25-<side>.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from vaultsync.eval.harness import prepare_workspace
from vaultsync.git import open_repo
from vaultsync.index.embedding import DEFAULT_EMBEDDERS
from vaultsync.index.layout import layout_for
from vaultsync.search.options import SearchOptions
from vaultsync.search.pipeline import Searcher
from vaultsync.search.relevance import FEATURES, RelevanceModel, RelevanceModels, shipped_background

# every feature is traced; the prediction itself is not used
_ZERO = RelevanceModel(FEATURES, (0.0,) * len(FEATURES), (1.0,) * len(FEATURES), (0.0,) * len(FEATURES), 0.0)
PROBE = RelevanceModels(_ZERO, _ZERO, shipped_background())


def open_workspace(data: Path, workdir: Path) -> Searcher:
    """The QA vault indexed with both embedders, and a Searcher that traces the features."""
    from vaultsync.index.sync import sync
    from vaultsync.models.convert.build import load_embedder

    models = {name: load_embedder(name, threads=2) for name in DEFAULT_EMBEDDERS}
    repo = prepare_workspace(data, workdir, list(DEFAULT_EMBEDDERS), None,
                             sync_fn=lambda r: sync(open_repo(r), embedder_factory=lambda c, n: models[n], wait=3600))
    return Searcher(layout_for(open_repo(repo)).sqlite, models, relevance_model=PROBE)


def collect(searcher: Searcher, queries: list[dict], side: str, out: Path,  # type: ignore[type-arg]
            legs: tuple[str, ...] = SearchOptions.legs) -> int:
    """Write the labelled candidates of ``queries``; returns the number of lines."""
    n = 0
    started = time.perf_counter()
    with out.open("w", encoding="utf-8") as f:
        for i, q in enumerate(queries):
            opts = SearchOptions(top_k=20, budget=10**9, per_note=3, scope=q.get("scope"), min_relevance=0.0,
                                 relative_cut=0.0, legs=legs)
            result = searcher.search(q["query"], opts)
            for pos, hit in enumerate(result.hits):
                row = dict(hit.trace.get("relevance", {}))
                row.pop("p", None)
                f.write(json.dumps({"qid": q["id"], "kind": q["category"], "lang": q["lang"], "side": side,
                                    "pos": pos, "label": int(hit.path in q["relevant"]), "features": row}) + "\n")
                n += 1
            if i % 500 == 0:
                print(f"{side}: {i}/{len(queries)} queries, {time.perf_counter() - started:.0f} s", flush=True)
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--side", choices=("train", "heldout", "both"), default="both")
    ap.add_argument("--bm25-only", action="store_true")
    args = ap.parse_args()
    legs, tag = (("bm25",), "bm25-") if args.bm25_only else (SearchOptions.legs, "")
    searcher = open_workspace(args.data, args.workdir or args.data / "workspace")
    for side in (("train", "heldout") if args.side == "both" else (args.side,)):
        queries = [json.loads(line) for line in (args.data / f"{side}.jsonl").read_text(encoding="utf-8").splitlines()]
        lines = collect(searcher, queries, side, args.data / f"features-{tag}{side}.jsonl", legs)
        print(f"{side}: {lines} candidates", flush=True)


if __name__ == "__main__":
    main()
