"""Deliver blocks instead of chunks: turn recall@5 and tokens when an agent receives only the best
blocks (paragraphs; a LoCoMo turn is one) of the five chunks the pipeline ranks first (ADR-0116).

Command (from the repository root; ``../shared/eval`` must exist)::

    python bench/bench_block_delivery.py --every 4              # the 496 questions the weights were read on
    python bench/bench_block_delivery.py --every 4 --held-out   # the other 1,485

Each query runs once through the real pipeline (evaluation options, floor off); the agent's view is
the harness's (top five chunks, at most two per note, within the 1,200-token budget). Each block of
those chunks is scored ``cos(query, block) + a × share of the query's 4+-letter words it holds − w ×
its chunk's rank`` and the best ``n`` are delivered, the 4th and 5th only within ``margin`` of the
best. Block vectors two ways: the stored late-chunked ones (what search uses,
:mod:`vaultsync.index.block_vectors`) and each block embedded on its own (e5 ``passage:``, ~100 ms per
query at query time). ``shipped`` is :mod:`vaultsync.search.deliver`'s constants. Tokens are the
embedder tokenizer's.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# (w, a, n, margin): rank weight, word-share weight, blocks at most, margin for the 4th and 5th
GRID = [(0.0, 0.0, 5, 9.0), (0.03, 0.0, 5, 9.0), (0.03, 0.0, 5, 0.12), (0.03, 0.1, 5, 9.0), (0.03, 0.1, 5, 0.12),
        (0.02, 0.1, 5, 0.1), (0.03, 0.15, 5, 0.15), (0.03, 0.1, 4, 9.0)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=4, help="every n-th question")
    ap.add_argument("--held-out", action="store_true", help="every question but the n-th ones")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval")
    ap.add_argument("--workdir", type=Path, default=None, help="where `vaultsync eval` keeps its workspaces")
    args = ap.parse_args()
    from vaultsync.cli.common import committed_config
    from vaultsync.engine import open_searcher
    from vaultsync.eval.harness import K_RECALL, TURN_BUDGET, evaluation_options, load_queries, prepare_workspace
    from vaultsync.eval.metrics import dedupe, recall_at
    from vaultsync.git import open_repo
    from vaultsync.index.block_vectors import read
    from vaultsync.index.embedding import DEFAULT_EMBEDDERS
    from vaultsync.index.format import fold
    from vaultsync.search import deliver
    from vaultsync.search.budget import cut

    dataset = args.data / "locomo"
    cache = Path(os.environ.get("VAULTSYNC_CACHE_DIR") or Path("~/.cache/vaultsync").expanduser())
    repo = open_repo(prepare_workspace(dataset, args.workdir or cache / "eval", list(DEFAULT_EMBEDDERS), None))
    searcher, _ = open_searcher(repo, committed_config(repo), rerank="none")  # type: ignore[arg-type]
    embedder = searcher.embedder
    shipped = (deliver.W_RANK, deliver.W_WORDS, deliver.MAX_BLOCKS, deliver.MARGIN)
    rows: dict[str, tuple[list[float], list[int]]] = {"five chunks": ([], [])}
    picked = [q for i, q in enumerate(load_queries(dataset)) if (i % args.every == 0) != args.held_out]
    for q in picked:
        if not q.get("relevant_blocks"):
            continue
        hits = searcher.search(q["query"], dataclasses.replace(evaluation_options(), scope=q.get("scope"))).hits
        per_note: dict[str, int] = {}
        view = []
        for h in hits:  # the harness's agent view: at most two chunks per note
            per_note[h.path] = per_note.get(h.path, 0) + 1
            if per_note[h.path] <= 2:
                view.append(h)
        view = cut(view, [h.tokens for h in view], TURN_BUDGET, K_RECALL)
        whole = dedupe([f"{h.path}#^{b}" for h in view for b in h.blocks])
        rows["five chunks"][0].append(recall_at(whole, q["relevant_blocks"], K_RECALL))
        rows["five chunks"][1].append(sum(h.tokens for h in view))
        query = embedder.embed_queries([q["query"]])[0]
        stored = read(searcher.db, [h.chunk_id for h in view], len(query))
        found = [(rank, [f"{h.path}#^{i}" for i in span[3]], h.text[span[0]:span[1]], int(span[2]), vector)
                 for rank, h in enumerate(view) if h.chunk_id in stored
                 for span, vector in zip(*stored[h.chunk_id], strict=True)]
        if not found:
            continue
        texts = [t for _, _, t, _, _ in found]
        words = set(deliver._WORD.findall(fold(q["query"])))
        share = np.array([len(words & set(deliver._WORD.findall(fold(t)))) / max(1, len(words)) for t in texts])
        rank = np.array([r for r, *_ in found], dtype=float)
        for source, vectors in (("late chunking (stored)", np.stack([v for *_, v in found])),
                                ("e5 per block", embedder.embed_passages(texts))):
            cosine = vectors @ query
            for w, a, n, margin in GRID + ([shipped] if source.startswith("late") else []):
                score = cosine + a * share - w * rank
                best = np.argsort(-score, kind="stable")[:n]
                best = [i for k, i in enumerate(best) if k < deliver.ALWAYS or score[i] >= score[best[0]] - margin]
                name = (f"{source}: w {w}, a {a}, n {n}, margin {margin:g}"
                        + (" (shipped)" if (w, a, n, margin) == shipped and source.startswith("late") else ""))
                recall, spent = rows.setdefault(name, ([], []))
                recall.append(recall_at([b for i in best for b in found[i][1]], q["relevant_blocks"], K_RECALL))
                spent.append(sum(found[i][3] for i in best))
    searcher.close()
    print("| delivered | n | turns R@5 | tokens / query |\n|---|---|---|---|")
    for name, (recall, spent) in rows.items():
        print(f"| {name} | {len(recall)} | {np.mean(recall):.3f} | {np.mean(spent):.0f} |")


if __name__ == "__main__":
    main()
