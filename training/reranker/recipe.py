"""Reproducible recipe for vaultsync's own multilingual cross-encoder reranker (ADR-0030).

Run from the repository root with the ``search`` and ``train`` extras installed
(``pip install -e '.[search,train]'``; training needs PyTorch CPU only)::

    python training/reranker/recipe.py all --work /tmp/vaultsync-reranker

or stage by stage: ``data`` (pairs + hard negatives, from shared/train only),
``vocab`` (pruned tokenizer), ``train`` (PyTorch, CPU), ``export`` (ONNX INT8,
calibration, cut-off threshold, golden probe, manifest), ``fusion`` (held-out
check on the first stage's top 20; ``fusion_weight`` of the rank fusion). Every stage reads
``training/reranker/recipe.json`` and writes into ``--work``; ``export`` writes
the model folder ``models/reranker/<name>/`` (what the package ships). Inputs are checked
against ``training/reranker/data-manifest.json`` (paths under shared/train, sha256).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MODELS = ROOT / "models" / "reranker"  # the shipped model folders
sys.path.insert(0, str(ROOT))

from training.reranker import data as datamod  # noqa: E402
from vaultsync.models.manifest import sha256_file  # noqa: E402


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def load_config() -> dict:
    return json.loads((HERE / "recipe.json").read_text(encoding="utf-8"))


def train_dir(cfg: dict) -> Path:
    return (ROOT / cfg["train_dir"]).resolve()


def check_inputs(cfg: dict) -> list[Path]:
    """The data manifest's inputs: under shared/train, present, sha256 as recorded."""
    manifest = json.loads((HERE / "data-manifest.json").read_text(encoding="utf-8"))
    base = train_dir(cfg)
    out = []
    for entry in manifest["inputs"]:
        path = (ROOT / entry["path"]).resolve()
        if base not in path.parents:
            raise SystemExit(f"{path} is not under {base}: training may only read shared/train")
        digest = sha256_file(path)
        if digest != entry["sha256"]:
            raise SystemExit(f"{path}: sha256 {digest} differs from the data manifest ({entry['sha256']})")
        out.append(path)
    return out


def stage_data(cfg: dict, work: Path) -> None:
    check_inputs(cfg)
    from vaultsync.models.convert.build import load_embedder

    dcfg = cfg["data"]
    corpus = datamod.build_corpus(train_dir(cfg), dcfg, say=log)
    threads = int(cfg["train"].get("threads", 1))
    emb = load_embedder(threads=threads)
    emb.max_tokens = int(dcfg.get("mine_max_tokens", 160))  # type: ignore[attr-defined]
    t0 = time.perf_counter()

    def embed(fn):  # noqa: ANN001, ANN202
        def run(texts: list[str]) -> np.ndarray:
            out = []
            for i in range(0, len(texts), 256):
                out.append(fn(texts[i:i + 256]))
                if i % 2560 == 0:
                    log(f"  embedded {i + len(out[-1])}/{len(texts)}")
            return np.concatenate(out) if out else np.zeros((0, 384), np.float32)
        return run

    stats = datamod.mine_negatives(corpus, embed(emb.embed_queries), embed(emb.embed_passages), dcfg, say=log,
                                   vector_cache=work / "vectors")
    corpus.stats["mining"] = stats
    corpus.stats["mining_seconds"] = round(time.perf_counter() - t0, 1)
    datamod.save_corpus(corpus, work / "data")
    hashes = datamod.training_hashes(corpus)
    np.save(HERE / "training-hashes.npy", hashes)
    manifest_path = HERE / "data-manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["outputs"] = {
        "queries": corpus.stats["queries"],
        "validation_queries": corpus.stats["validation"],
        "passages_used": len({pid for q in corpus.queries for pid in (*q.positives, *q.negatives)}),
        "by_kind": corpus.stats["by_kind"],
        "by_lang": corpus.stats["by_lang"],
        "mining": stats,
        "hashes": {"file": "training-hashes.npy", "count": int(len(hashes)),
                   "of": "sha256[:8] of NFKC + casefold + collapsed whitespace of every query and passage"},
    }
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    log(f"data: {corpus.stats['queries']} queries, mining {corpus.stats['mining_seconds']} s; {stats}")


def stage_vocab(cfg: dict, work: Path) -> None:
    from training.reranker import vocab

    check_inputs(cfg)
    info = vocab.build_pruned_tokenizer(train_dir(cfg), cfg["vocab"], work / "vocab", say=log)
    log(f"vocab: {info}")


def stage_train(cfg: dict, work: Path) -> None:
    import train_torch

    train_torch.train(cfg, work, say=log)


def stage_export(cfg: dict, work: Path) -> None:
    from training.reranker import export

    export.export_model(cfg, work, MODELS / cfg["name"], say=log)


def stage_fusion(cfg: dict, work: Path) -> None:
    """Held-out check on the first stage's top 20 (validation queries) and the rank-fusion weight."""
    from training.reranker import fusion
    from vaultsync.models.convert.build import load_embedder
    from vaultsync.models.cross_encoder import CrossEncoder

    corpus = datamod.load_corpus(work / "data")
    # the pools hold every passage build_corpus rendered (the saved corpus keeps only those in groups);
    # build_corpus is deterministic, so the mining's vector cache applies
    corpus.passages = datamod.build_corpus(train_dir(cfg), cfg["data"], say=log).passages
    val = [q for q in corpus.queries if q.split == "val"]
    threads = int(cfg["train"].get("threads", 1))
    emb = None

    def lazy(kind: str):  # noqa: ANN202
        def run(texts: list[str]) -> np.ndarray:
            nonlocal emb
            log(f"  embedding {len(texts)} texts (vector cache miss)")
            if emb is None:
                emb = load_embedder(threads=threads)
                emb.max_tokens = int(cfg["data"].get("mine_max_tokens", 160))  # type: ignore[attr-defined]
            return emb.embed_queries(texts) if kind == "q" else emb.embed_passages(texts)
        return run

    cached = work / "data" / "first_stage_val.json"
    if cached.is_file():
        first = json.loads(cached.read_text(encoding="utf-8"))
    else:
        first = datamod.first_stage_rankings(corpus, {q.qid for q in val}, lazy("q"), lazy("p"), cfg["data"],
                                             vector_cache=work / "vectors")
        cached.write_text(json.dumps(first), encoding="utf-8")
    dest = MODELS / cfg["name"]
    ce = CrossEncoder.load(dest, threads=threads)
    report = fusion.evaluate_fusion(corpus, val, first, ce.score)
    log(f"fusion: {json.dumps({k: report[k] for k in ('evaluated', 'first_stage', 'reranker', 'best_weight')})}")
    settings_path = dest / "vaultsync.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    settings["fusion_weight"] = report["best_weight"]  # w/(60+rank_reranker) + (1-w)/(60+rank_first_stage)
    settings_path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    manifest_path = dest / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["held_out_first_stage_top20"] = report
    manifest["files"]["vaultsync.json"] = {"bytes": settings_path.stat().st_size, "sha256": sha256_file(settings_path)}
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


STAGES = {"data": stage_data, "vocab": stage_vocab, "train": stage_train, "export": stage_export,
          "fusion": stage_fusion}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("stage", choices=[*STAGES, "all"])
    p.add_argument("--work", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "vaultsync-reranker")
    args = p.parse_args(argv)
    cfg = load_config()
    args.work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(HERE))
    for name in (list(STAGES) if args.stage == "all" else [args.stage]):
        t0 = time.perf_counter()
        log(f"stage {name} ...")
        STAGES[name](cfg, args.work)
        log(f"stage {name} done in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
