"""The background passages of the relevance model: how close a query comes to text of the world at large.

    python -m training.relevance.background --train ../shared/train --out models/relevance/background-e5.npy

A raw e5 cosine says little on its own: a made-up word scores 0.83 against a note it has nothing
to do with, a relevant German question 0.84 (e5's vectors share one narrow cone). How far a
chunk stands above the query's cosines to unrelated text does: its z-score against the query's
cosines to a fixed background set (cohort normalisation, as in speaker verification:
Auckenthaler et al. 2000; :class:`vaultsync.search.relevance.Background`). This writes that set's e5 passage embeddings, float16
``[n, 384]``, L2-normalised: tldr pages in every language (the commands of :func:`background_command`
only) and windows of RFC / Swift Evolution / EIP design documents, from ``../shared/train`` only
(never evaluation data; tldr-pages CC BY 4.0, the design documents under their repositories'
licences, as models/relevance/README.md says).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path
from typing import Any

import numpy as np

PAGES, WINDOWS, WIDTH = 200, 150, 600


def background_command(command: str) -> bool:
    """True for the quarter of tldr commands whose pages form the background; the relevance data's
    off-topic questions come from the other commands only."""
    return hashlib.sha256(command.encode("utf-8")).digest()[1] % 4 == 0


def texts(train: Path, seed: int = 11) -> list[str]:
    """The background passages: :data:`PAGES` tldr pages and :data:`WINDOWS` design-document windows."""
    rng = random.Random(seed)
    pages = [d for d in _jsonl(train / "tldr-pages.jsonl") if background_command(d["command"])]
    docs = [d["text"] for d in _jsonl(train / "design-docs.jsonl")]
    out = [d["text"][:WIDTH] for d in rng.sample(pages, PAGES)]
    for doc in rng.sample(docs, WINDOWS):
        start = rng.randrange(max(len(doc) - WIDTH, 1))
        out.append(doc[start:start + WIDTH])
    return out


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:  # lines end at "\n" only: texts hold U+2028
        return [json.loads(line) for line in f if line.strip()]


def main() -> None:
    from vaultsync.models.convert.build import load_embedder

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=Path, default=Path("../shared/train"))
    ap.add_argument("--out", type=Path, default=Path("models/relevance/background-e5.npy"))
    args = ap.parse_args()
    vectors = load_embedder("multilingual-e5-small", threads=2).embed_passages(texts(args.train))
    np.save(args.out, vectors.astype(np.float16))
    print(f"{args.out}: {vectors.shape[0]} background passages")


if __name__ == "__main__":
    main()
