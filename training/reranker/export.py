"""Export the trained reranker: standard cross-encoder ONNX, INT8 per channel, calibrated, with a golden probe.

Steps (the recipe's ``export`` stage):

1. assemble the weights: the trained float32 tensors, except the (frozen)
   word-embedding table, which goes back into e5's exact Q4_0 packing for the
   kept vocabulary rows (checked identical to what training used);
2. write the graph with :func:`vaultsync.models.convert.onnx_graph.build_cross_encoder`
   (inputs ``input_ids``, ``attention_mask`` → ``logits [batch, 1]``, RoBERTa
   head on ``<s>``) and quantise MatMul / Attention weights to INT8 per output
   channel like the embedder build;
3. score the held-out validation groups with the INT8 graph, fit Platt scaling
   on one half of the validation items and report calibration on the other;
   fold ``a``, ``b`` into ``classifier.out_proj`` and rebuild, so
   ``sigmoid(logit)`` is the calibrated probability;
4. choose the cut-off threshold (recall target on held-out positives);
5. compute the golden probe with the float32 graph, check the INT8 graph
   against it, and write ``model.onnx``, ``tokenizer.json``, ``vaultsync.json``,
   ``config.json`` and ``manifest.json`` (sha256 of every file).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from training.reranker import calibration as cal
from training.reranker.data import QueryRec, load_corpus, stable_unit
from vaultsync.models import manifest as manifests
from vaultsync.models.convert.build import _quantize, locate_source, verify_source
from vaultsync.models.convert.e5_bin import E5Bin
from vaultsync.models.convert.encoder_config import EncoderConfig
from vaultsync.models.convert.onnx_graph import build_cross_encoder
from vaultsync.models.cross_encoder import CrossEncoder
from vaultsync.models.embedder import make_session
from vaultsync.models.manifest import sha256_file

Say = Callable[[str], None]
MODEL_FILES = ("model.onnx", "tokenizer.json", "vaultsync.json", "config.json")
QUANTIZATION = {"per_channel": True, "op_types": ["MatMul", "Attention"]}


def assemble_weights(trained: dict[str, np.ndarray], keep: np.ndarray) -> dict[str, np.ndarray]:
    """Trained tensors with the word table replaced by e5's Q4_0 packing of the kept rows (lossless)."""
    m = manifests.load("multilingual-e5-small")
    path = locate_source(m.sources["weights"])
    verify_source(path, m.sources["weights"])
    src = E5Bin.open(path)
    packed, scales = src.q4_packed("emb.word")
    codes, sc = src.q4_blocks("emb.word")
    exact = (codes[keep].astype(np.float32) * sc[keep][..., None].astype(np.float32)).reshape(len(keep), -1)
    table = trained["embeddings.word_embeddings.weight"]
    if table.shape != exact.shape or float(np.abs(table - exact).max()) > 0.0:
        raise ValueError("the trained word-embedding table differs from e5's (it must stay frozen)")
    w = {k: v for k, v in trained.items() if k != "embeddings.word_embeddings.weight"}
    w["embeddings.word_embeddings.q4_packed"] = np.ascontiguousarray(packed[keep])
    w["embeddings.word_embeddings.q4_scales"] = np.ascontiguousarray(scales[keep])
    return w


def encoder_config(cfg: dict[str, Any], vocab: int) -> EncoderConfig:
    mc = cfg["model"]
    return EncoderConfig(hidden=int(mc["hidden"]), layers=int(mc["layers"]), heads=int(mc["heads"]),
                         ffn=int(mc["ffn"]), vocab=vocab, max_positions=512, position_offset=0, type_vocab=2,
                         eps=1e-12, token_type_ids_input=False, num_labels=1)


def write_model(folder: Path, config: EncoderConfig, weights: dict[str, np.ndarray], tokenizer: Path,
                settings: dict[str, Any], int8: bool = True) -> None:
    """``model.onnx`` (INT8 per channel unless ``int8`` is False), ``tokenizer.json``, ``vaultsync.json``, ``config.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    model = build_cross_encoder(config, weights, head="roberta", fused=True, name="vaultsync-reranker")
    fp32 = folder / ("model.onnx" if not int8 else "model.fp32.onnx")
    onnx.save(model, str(fp32))
    if int8:
        _quantize(fp32, folder / "model.onnx", QUANTIZATION)
        fp32.unlink()
    shutil.copyfile(tokenizer, folder / "tokenizer.json")
    (folder / "vaultsync.json").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    hf = {
        "architectures": ["XLMRobertaForSequenceClassification"], "model_type": "xlm-roberta",
        "hidden_size": config.hidden, "num_hidden_layers": config.layers, "num_attention_heads": config.heads,
        "intermediate_size": config.ffn, "vocab_size": config.vocab, "max_position_embeddings": 514,
        "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2, "type_vocab_size": 2, "layer_norm_eps": config.eps,
        "hidden_act": "gelu", "num_labels": 1,
        "note": "ONNX export for onnxruntime only (INT8 per channel, fused com.microsoft.Attention); "
                "scores are calibrated probabilities: sigmoid(logits)",
    }
    (folder / "config.json").write_text(json.dumps(hf, indent=2) + "\n", encoding="utf-8")


class Scorer:
    """Raw logits of (query, passage) pairs through a model folder, one pair per run (as at run time)."""

    def __init__(self, folder: Path, threads: int = 1) -> None:
        self.ce = CrossEncoder.load(folder, threads=threads)
        self.session = make_session(folder / "model.onnx", threads)

    def logits(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        out = np.zeros(len(pairs), np.float64)
        for i, (q, p) in enumerate(pairs):
            feed = self.ce.feed([self.ce.encode_pair(q, p)])
            out[i] = float(self.session.run(["logits"], feed)[0].reshape(-1)[0])
        return out


def validation_pairs(queries: list[QueryRec], passages: dict[str, Any],
                     hard: int = 7) -> tuple[list[tuple[str, str]], np.ndarray, list[int]]:
    """Pairs and labels of the validation groups (positive, top ``hard`` mined negatives, 2 random); group index per pair."""
    pairs, labels, group = [], [], []
    for gi, q in enumerate(queries):
        cands = [q.positives[0], *q.negatives[:hard], *[n for n in q.negatives[-2:] if n not in q.negatives[:hard]]]
        for j, pid in enumerate(cands):
            pairs.append((q.text, passages[pid].text))
            labels.append(1.0 if j == 0 else 0.0)
            group.append(gi)
    return pairs, np.asarray(labels), group


def ranking_metrics(scores: np.ndarray, labels: np.ndarray, group: list[int]) -> dict[str, float]:
    g = np.asarray(group)
    rr, hit1 = [], []
    for k in np.unique(g):
        s, y = scores[g == k], labels[g == k]
        rank = int((s > s[y > 0.5][0]).sum())
        rr.append(1.0 / (rank + 1))
        hit1.append(rank == 0)
    return {"mrr": round(float(np.mean(rr)), 4), "hit@1": round(float(np.mean(hit1)), 4), "queries": len(rr)}


def export_model(cfg: dict[str, Any], work: Path, dest: Path, say: Say = print) -> dict[str, Any]:
    t0 = time.perf_counter()
    rc = cfg["runtime"]
    keep = np.load(work / "vocab" / "vocab_ids.npy")
    trained = dict(np.load(work / "train" / "weights.npz"))
    weights = assemble_weights(trained, keep)
    config = encoder_config(cfg, len(keep))
    tokenizer = work / "vocab" / "tokenizer.json"
    settings: dict[str, Any] = {"max_length": int(rc["max_length"]), "max_query_tokens": int(rc["max_query_tokens"])}
    corpus = load_corpus(work / "data")
    val = [q for q in corpus.queries if q.split == "val" and len(q.negatives) >= 9]
    salt = str(cfg["data"].get("split_salt", "vaultsync-reranker"))
    fit_q = [q for q in val if stable_unit(q.item, salt + ":calibration") < 0.5]
    test_q = [q for q in val if stable_unit(q.item, salt + ":calibration") >= 0.5]
    threads = int(cfg["train"].get("threads", 1))

    with tempfile.TemporaryDirectory(prefix="reranker-export-") as tmp_s:
        tmp = Path(tmp_s)
        write_model(tmp / "raw", config, weights, tokenizer, settings)
        scorer = Scorer(tmp / "raw", threads)
        say(f"export: scoring {len(val)} validation groups with the INT8 graph")
        fit_pairs, fit_y, fit_g = validation_pairs(fit_q, corpus.passages)
        test_pairs, test_y, test_g = validation_pairs(test_q, corpus.passages)
        fit_logit = scorer.logits(fit_pairs)
        test_logit = scorer.logits(test_pairs)
        a, b = cal.fit_platt(fit_logit, fit_y)
        if a <= 0:
            raise ValueError(f"Platt scaling gave a <= 0 ({a}): the model ranks positives below negatives")
        raw_test = cal.sigmoid(test_logit)
        cal_test = cal.sigmoid(a * test_logit + b)
        threshold = cal.choose_threshold(cal.sigmoid(a * fit_logit + b), fit_y, float(rc["threshold_recall"]))
        calibration = {
            "method": "Platt scaling folded into classifier.out_proj: p = sigmoid(a * raw_logit + b)",
            "a": round(a, 6), "b": round(b, 6),
            "fit_on": {"queries": len(fit_q), "pairs": len(fit_pairs)},
            "held_out": {"queries": len(test_q), "pairs": len(test_pairs),
                         "before": cal.summary(raw_test, test_y), "after": cal.summary(cal_test, test_y),
                         "reliability": cal.reliability(cal_test, test_y)},
            "candidates_per_query": "1 positive + 7 hardest mined negatives + 2 random passages (base rate 0.1)",
        }
        cutoff = {"threshold": round(threshold, 4), "recall_target": float(rc["threshold_recall"]),
                  "chosen_on": "validation half used for the Platt fit",
                  "held_out_effect": cal.cutoff_effect(cal_test, test_y, threshold),
                  "rule": "after reranking drop candidates with score < threshold, always keeping the best one"}
        validation = {"held_out": ranking_metrics(test_logit, test_y, test_g),
                      "fit_half": ranking_metrics(fit_logit, fit_y, fit_g)}
        say(f"export: Platt a={a:.4f} b={b:.4f}; held-out {calibration['held_out']['after']}; threshold {threshold:.4f}"
            f" {cutoff['held_out_effect']}; ranking {validation}")

        # fold the calibration into the head and rebuild
        folded = dict(weights)
        folded["classifier.out_proj.weight"] = (weights["classifier.out_proj.weight"] * a).astype(np.float32)
        folded["classifier.out_proj.bias"] = (weights["classifier.out_proj.bias"] * a + b).astype(np.float32)
        settings.update({"threshold": round(threshold, 4), "calibrated": True})
        write_model(tmp / "fp32", config, folded, tokenizer, settings, int8=False)
        write_model(tmp / "int8", config, folded, tokenizer, settings, int8=True)
        check = test_pairs[:: max(1, len(test_pairs) // 300)]
        fp = cal.sigmoid(Scorer(tmp / "fp32", threads).logits(check))
        q8 = cal.sigmoid(Scorer(tmp / "int8", threads).logits(check))
        expect = cal.sigmoid(a * scorer.logits(check) + b)
        int8_dev = {"pairs": len(check), "max_abs_vs_fp32": round(float(np.abs(fp - q8).max()), 4),
                    "mean_abs_vs_fp32": round(float(np.abs(fp - q8).mean()), 4),
                    "max_abs_folded_vs_platt": round(float(np.abs(q8 - expect).max()), 4)}
        say(f"export: INT8 vs float32 {int8_dev}")

        probe_items = cfg["probe"]["items"]
        fp_probe = Scorer(tmp / "fp32", threads)
        probe_scores = cal.sigmoid(fp_probe.logits([(it["query"], it["passage"]) for it in probe_items]))
        q8_probe = cal.sigmoid(Scorer(tmp / "int8", threads).logits([(it["query"], it["passage"]) for it in probe_items]))
        # tolerance: the configured one, or twice the INT8 noise measured on validation pairs if larger
        tol = max(float(cfg["probe"].get("tolerance", 0.03)), float(np.ceil(200 * int8_dev["max_abs_vs_fp32"]) / 100))
        worst = float(np.abs(probe_scores - q8_probe).max())
        if worst > tol:
            raise ValueError(f"the INT8 graph misses the golden probe by {worst:.3f} (> {tol})")
        probe = {"note": "expected = the float32 graph's calibrated scores; the shipped INT8 graph must land within "
                         "tolerance, and each relevant passage must outscore the irrelevant one of its query",
                 "tolerance": tol,
                 "items": [{**it, "expected": round(float(s), 4)} for it, s in zip(probe_items, probe_scores, strict=True)],
                 "int8_max_deviation": round(worst, 4)}

        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        for f in MODEL_FILES:
            shutil.copyfile(tmp / "int8" / f, dest / f)
    train_info = json.loads((work / "train" / "train_info.json").read_text(encoding="utf-8"))
    vocab_info = json.loads((work / "vocab" / "vocab.json").read_text(encoding="utf-8"))
    manifest = {
        "name": cfg["name"],
        "version": 1,
        "kind": "cross-encoder-onnx",
        "description": "vaultsync's own compact multilingual cross-encoder: the lower layers of multilingual-e5-small "
                       "fine-tuned as a reranker on shared/train (tldr-pages, design documents); see README.md",
        "files": {f: {"bytes": (dest / f).stat().st_size, "sha256": sha256_file(dest / f)} for f in MODEL_FILES},
        "architecture": {**config.to_dict(), "head": "roberta (dense-tanh-out_proj on <s>)",
                         "word_embeddings": "Q4_0 rows of e5-small (frozen in training, lossless)",
                         "quantization": "onnxruntime quantize_dynamic, INT8 per channel, MatMul + Attention"},
        "input": "<s> query </s></s> passage </s>; query <= max_query_tokens, passage cut at its end to max_length",
        "vocabulary": vocab_info,
        "training": {k: train_info[k] for k in ("train_groups", "validation_queries", "steps", "groups_seen",
                                                "epochs_seen", "best", "minutes", "threads", "torch", "interrupted")
                                                if k in train_info},
        "validation": validation,
        "calibration": calibration,
        "cutoff": cutoff,
        "int8": int8_dev,
        "probe": probe,
        "export_seconds": round(time.perf_counter() - t0, 1),
    }
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    say(f"export: wrote {dest} ({sum((dest / f).stat().st_size for f in MODEL_FILES) / 1e6:.1f} MB)")
    return manifest
