"""The whole pipeline at 100,000 notes: build an index whose text is real and whose vectors are synthetic,
then measure the warm daemon and its memory with bench_search.

    python bench/bench_scale.py --notes 100000 --workdir .bench/scale
    python bench/bench_scale.py --notes 100000 --workdir .bench/scale --skip-build   # measure again

Embedding 450,000 chunks with both embedders would take about four hours on a laptop CPU,
so **the vectors are synthetic**. Each chunk's vector is one of 512 topic centres, chosen
by the chunk's content hash, plus Gaussian noise, re-normalised (cosine ≈ 0.6 to its centre).
That gives clustered rows like real embeddings. The ANN recall of real-derived vectors is
measured by bench_ann.py. The queries are embedded by the real models, so every stage runs
as it would on a real vault of that size: BM25 over the real FTS5 text, both dense legs
(LanceDB's ANN index past ``index.ann_min_rows``), fusion, the graph hop, the lifecycle
filters and the relevance model.

Everything else is the product's own code. bench/vaultgen.py writes the notes and git commits
them. ``vaultsync.index.sync.sync`` runs with a synthetic ``embedder_factory``, in-process.
Reported: build wall time and peak RSS, then bench_search.py's warm p50/p95 and daemon RSS
(--rerank, default ``none``) and cold p50.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vaultgen import generate, git_commit  # noqa: E402

TOPICS = 512


class SyntheticEmbedder:
    """Clustered unit vectors keyed by the text's hash, under the real model's id (see module docstring)."""

    def __init__(self, model_id: str, dim: int) -> None:
        self.model_id, self.dim = model_id, dim
        self._centres = np.random.default_rng(dim).standard_normal((TOPICS, dim)).astype(np.float32)
        self._centres /= np.linalg.norm(self._centres, axis=1, keepdims=True)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "little")
            rng = np.random.default_rng(seed)
            v = self._centres[seed % TOPICS] + rng.standard_normal(self.dim).astype(np.float32) / np.sqrt(self.dim) * 1.3
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)


def build(repo: Path, notes: int) -> dict[str, float]:
    from vaultsync.git import open_repo
    from vaultsync.index.embedding import current_model_id
    from vaultsync.index.sync import sync

    start = time.perf_counter()
    if not (repo / ".git").exists():
        generate(repo, notes)
        git_commit(repo)
    generated = time.perf_counter() - start
    dims = {"multilingual-e5-small": 384, "use-multilingual": 512}

    def factory(config, name):  # type: ignore[no-untyped-def]
        return SyntheticEmbedder(current_model_id(config, name) or name, dims[name])

    start = time.perf_counter()
    report = sync(open_repo(repo), rebuild=True, embedder_factory=factory, progress=sys.stderr.isatty(), wait=-1)
    return {"generate_and_commit_s": round(generated, 1), "sync_s": round(time.perf_counter() - start, 1),
            "chunks_embedded": report.chunks_embedded,
            "sync_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--notes", type=int, default=100_000)
    ap.add_argument("--workdir", type=Path, default=Path(".bench/scale"))
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--rerank", nargs="+", default=["none"])
    ap.add_argument("--warm", type=int, default=60)
    ap.add_argument("--cold", type=int, default=3)
    args = ap.parse_args()
    repo = (args.workdir / f"generated-{args.notes}").resolve()
    if not args.skip_build:
        print(json.dumps(build(repo, args.notes)), flush=True)
    subprocess.run([sys.executable, str(Path(__file__).with_name("bench_search.py")), "--repo", str(repo),
                    "--rerank", *args.rerank, "--warm", str(args.warm), "--cold", str(args.cold)], check=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
