"""The reranker as a PyTorch module (training only; run time uses the ONNX export).

A post-LayerNorm BERT / XLM-R encoder (the graph that
:func:`vaultsync.models.convert.onnx_graph.build_cross_encoder` writes, layer for layer)
with the RoBERTa classification head on the first token. Parameter names are
those of a Hugging Face state dict without the ``roberta.`` prefix, so
``state_dict()`` feeds the ONNX builder directly.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


class Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, ffn: int, eps: float, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_ln = nn.LayerNorm(hidden, eps=eps)
        self.inter = nn.Linear(hidden, ffn)
        self.out = nn.Linear(ffn, hidden)
        self.out_ln = nn.LayerNorm(hidden, eps=eps)
        self.drop = nn.Dropout(dropout)
        self.p = dropout

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        B, S, H = x.shape
        hd = H // self.heads

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(B, S, self.heads, hd).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=self.p if self.training else 0.0)
        ctx = ctx.transpose(1, 2).reshape(B, S, H)
        x = self.attn_ln(x + self.drop(self.attn_out(ctx)))
        h = F.gelu(self.inter(x))
        return self.out_ln(x + self.drop(self.out(h)))


class CrossEncoderModel(nn.Module):
    def __init__(self, vocab: int, hidden: int = 384, layers: int = 4, heads: int = 12, ffn: int = 1536,
                 max_positions: int = 512, type_vocab: int = 2, eps: float = 1e-12, dropout: float = 0.1) -> None:
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_positions, hidden)
        self.types = nn.Embedding(type_vocab, hidden)
        self.emb_ln = nn.LayerNorm(hidden, eps=eps)
        self.layers = nn.ModuleList(Layer(hidden, heads, ffn, eps, dropout) for _ in range(layers))
        self.cls_dense = nn.Linear(hidden, hidden)
        self.cls_out = nn.Linear(hidden, 1)
        self.drop = nn.Dropout(dropout)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        S = ids.shape[1]
        x = self.word(ids) + self.pos.weight[:S][None] + self.types.weight[0]
        x = self.drop(self.emb_ln(x))
        bias = ((1.0 - mask[:, None, None, :].to(x.dtype)) * -1e9)
        for layer in self.layers:
            x = layer(x, bias)
        h = self.drop(x[:, 0])
        h = torch.tanh(self.cls_dense(h))
        return self.cls_out(self.drop(h)).squeeze(-1)

    # -- weights in the ONNX builder's naming ---------------------------------
    _NAMES = {
        "query": "attention.self.query", "key": "attention.self.key", "value": "attention.self.value",
        "attn_out": "attention.output.dense", "attn_ln": "attention.output.LayerNorm",
        "inter": "intermediate.dense", "out": "output.dense", "out_ln": "output.LayerNorm",
    }

    def load_hf(self, w: dict[str, np.ndarray]) -> None:
        """Copy HF-named numpy weights in (missing head weights keep their random init)."""
        own = self.hf_names()
        with torch.no_grad():
            for hf, param in own.items():
                if hf in w:
                    param.copy_(torch.from_numpy(np.asarray(w[hf], np.float32)))

    def hf_names(self) -> dict[str, torch.Tensor]:
        out = {
            "embeddings.word_embeddings.weight": self.word.weight,
            "embeddings.position_embeddings.weight": self.pos.weight,
            "embeddings.token_type_embeddings.weight": self.types.weight,
            "embeddings.LayerNorm.weight": self.emb_ln.weight,
            "embeddings.LayerNorm.bias": self.emb_ln.bias,
            "classifier.dense.weight": self.cls_dense.weight,
            "classifier.dense.bias": self.cls_dense.bias,
            "classifier.out_proj.weight": self.cls_out.weight,
            "classifier.out_proj.bias": self.cls_out.bias,
        }
        for i, layer in enumerate(self.layers):
            for short, long in self._NAMES.items():
                mod = getattr(layer, short)
                out[f"encoder.layer.{i}.{long}.weight"] = mod.weight
                out[f"encoder.layer.{i}.{long}.bias"] = mod.bias
        return out

    def export_hf(self) -> dict[str, np.ndarray]:
        return {k: v.detach().cpu().numpy().astype(np.float32).copy() for k, v in self.hf_names().items()}


def init_head(model: CrossEncoderModel, seed: int = 0) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for lin in (model.cls_dense, model.cls_out):
            lin.weight.normal_(0.0, 0.02, generator=g)
            lin.bias.zero_()


if __name__ == "__main__":  # speed check: python training/reranker/torch_model.py LAYERS SEQ GROUP THREADS
    import sys
    import time

    L, S, G, T = (int(a) for a in sys.argv[1:5])
    torch.set_num_threads(T)
    m = CrossEncoderModel(90000, layers=L)
    m.word.weight.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=1e-5)
    ids = torch.randint(5, 90000, (G, S))
    mask = torch.ones(G, S, dtype=torch.long)
    for step in range(6):
        t = time.perf_counter()
        loss = F.cross_entropy(m(ids, mask)[None], torch.zeros(1, dtype=torch.long))
        loss.backward()
        opt.step()
        opt.zero_grad()
        print(f"step {step}: {time.perf_counter() - t:.2f} s for {G} x {S}", flush=True)
    _ = math
