"""Deliver blocks instead of chunks: turn recall@5 and tokens when an agent receives only the best
blocks (paragraphs; a LoCoMo turn is one) of the five chunks the shipped pipeline delivers.

Command (from the repository root; ``../shared/eval`` must exist)::

    python bench/bench_block_delivery.py --every 4

Each query runs once through the real pipeline (evaluation options, floor off); the agent's view is
the harness's (top five chunks, at most two per note, within the 1,200-token budget). Every block of
those chunks is embedded (e5, ``passage:``) and scored: cosine to the query + 0.05 × the share of the
query's words it holds − ``w`` × its chunk's rank (0-based). A row delivers the best ``n`` blocks; the
first row delivers the chunks whole. Tokens are counted with the embedder's tokenizer. Not shipped:
docs/eval.md, "Delivering blocks instead of chunks".
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_BLOCK_ID = re.compile(r"\^([A-Za-z0-9-]+)\s*$")
_WORD = re.compile(r"\w+")
_STOP = set("the a an of to in on and or for is was were did does do what when where who which how why with at by "
            "from her his their he she they it as that this be been has have had about".split())
ROWS = [(0.0, 5), (0.02, 5), (0.03, 5), (0.05, 5), (0.1, 5), (0.03, 4)]  # (w, blocks delivered)


def blocks_of(text: str) -> list[tuple[str, str]]:
    """``(block id, text)`` for each paragraph of a chunk that carries a block id (headings left out)."""
    out = []
    for para in re.split(r"\n\s*\n", text):
        para = para.strip()
        found = _BLOCK_ID.search(para)
        if para and not para.startswith("#") and found:
            out.append((found.group(1), para))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=4, help="every n-th question")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "eval")
    ap.add_argument("--workdir", type=Path, default=None, help="where `vaultsync eval` keeps its workspaces")
    args = ap.parse_args()
    from vaultsync.cli.common import committed_config
    from vaultsync.engine import open_searcher
    from vaultsync.eval.harness import K_RECALL, TURN_BUDGET, evaluation_options, load_queries, prepare_workspace
    from vaultsync.eval.metrics import dedupe, recall_at
    from vaultsync.git import open_repo
    from vaultsync.index.embedding import DEFAULT_EMBEDDERS
    from vaultsync.search.budget import cut

    dataset = args.data / "locomo"
    cache = Path(os.environ.get("VAULTSYNC_CACHE_DIR") or Path("~/.cache/vaultsync").expanduser())
    repo = open_repo(prepare_workspace(dataset, args.workdir or cache / "eval", list(DEFAULT_EMBEDDERS), None))
    searcher, _ = open_searcher(repo, committed_config(repo), rerank="none")  # type: ignore[arg-type]
    embedder = searcher.embedder
    rows: dict[str, tuple[list[float], list[int]]] = {"five chunks": ([], [])}
    for q in load_queries(dataset, None, args.every):
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
        found = [(rank, f"{h.path}#^{bid}", text) for rank, h in enumerate(view) for bid, text in blocks_of(h.text)]
        if not found:
            continue
        texts = [text for *_, text in found]
        cosine = embedder.embed_passages(texts) @ embedder.embed_queries([q["query"]])[0]
        words = {w for w in _WORD.findall(q["query"].lower()) if w not in _STOP}
        share = np.array([len(words & set(_WORD.findall(t.lower()))) / max(1, len(words)) for t in texts])
        tokens = embedder.count_tokens(texts)
        rank = np.array([r for r, *_ in found], dtype=float)
        for w, n in ROWS:
            best = np.argsort(-(cosine + 0.05 * share - w * rank), kind="stable")[:n]
            recall, spent = rows.setdefault(f"best {n} blocks, w = {w}", ([], []))
            recall.append(recall_at([found[i][1] for i in best], q["relevant_blocks"], K_RECALL))
            spent.append(sum(tokens[i] for i in best))
    searcher.close()
    print("| delivered | n | turns R@5 | tokens / query |\n|---|---|---|---|")
    for name, (recall, spent) in rows.items():
        print(f"| {name} | {len(recall)} | {np.mean(recall):.3f} | {np.mean(spent):.0f} |")


if __name__ == "__main__":
    main()
