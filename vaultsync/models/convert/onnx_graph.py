"""Write BERT / XLM-R encoder graphs as ONNX with ``onnx.helper`` (no PyTorch).

Two graphs share one encoder:

* :func:`build_embedder` — inputs ``input_ids``, ``attention_mask`` (int64
  ``[batch, seq]``) → ``last_hidden_state`` float32 ``[batch, seq, hidden]`` and
  ``sentence_embedding`` float32 ``[batch, hidden]`` (mean over the attention
  mask, then L2-normalised: the E5 / sentence-transformers recipe).
* :func:`build_cross_encoder` — inputs ``input_ids``, ``attention_mask`` and,
  when ``config.token_type_ids_input``, ``token_type_ids`` → ``logits`` float32
  ``[batch, num_labels]``: the Hugging Face sequence-classification head on the
  first token. ``head="roberta"`` is ``XLMRobertaClassificationHead``
  (``classifier.dense`` → tanh → ``classifier.out_proj``); ``head="bert"`` is
  ``BertPooler`` + ``BertForSequenceClassification`` (``pooler.dense`` → tanh →
  ``classifier``). Dropout is the identity at inference.

The encoder is the post-LayerNorm Transformer of Devlin et al. 2019 (BERT) /
Conneau et al. 2020 (XLM-R): embeddings (word + position + token type) →
LayerNorm → N × [self-attention → add & LayerNorm → GELU (erf) FFN → add &
LayerNorm]. Padding must be on the right: position ids are
``position_offset + arange(seq)`` for every row (HF RoBERTa derives them from
the mask, which gives the same ids for every non-pad token under right
padding; pad positions are masked out of attention and pooling).

Weights (``Mapping[str, np.ndarray]``, float32 unless noted; Linear weights in
PyTorch ``[out, in]`` layout, the names of a HF state dict without its
``bert.`` / ``roberta.`` prefix — see :func:`strip_prefix`):

* ``embeddings.word_embeddings.weight`` ``[vocab, hidden]`` — or, stored
  losslessly from a Q4_0 source, ``embeddings.word_embeddings.q4_packed`` uint8
  ``[vocab, hidden/32, 16]`` (byte j: weight j low nibble, j+16 high nibble)
  and ``embeddings.word_embeddings.q4_scales`` float16 ``[vocab, hidden/32]``;
  value = ``(nibble - 8) * scale``.
* ``embeddings.position_embeddings.weight`` ``[max_positions, hidden]``,
  ``embeddings.token_type_embeddings.weight`` ``[type_vocab, hidden]``,
  ``embeddings.LayerNorm.{weight,bias}``.
* per layer ``i``, prefix ``encoder.layer.{i}.``:
  ``attention.self.{query,key,value}.{weight,bias}``,
  ``attention.output.dense.{weight,bias}``, ``attention.output.LayerNorm.{weight,bias}``,
  ``intermediate.dense.{weight,bias}`` (``[ffn, hidden]``),
  ``output.dense.{weight,bias}`` (``[hidden, ffn]``), ``output.LayerNorm.{weight,bias}``.
* cross-encoder head: ``classifier.dense.{weight,bias}`` + ``classifier.out_proj.{weight,bias}``
  (roberta) or ``pooler.dense.{weight,bias}`` + ``classifier.{weight,bias}`` (bert).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
_NEG = -1.0e9  # additive attention bias for padded keys: exp() underflows to exactly 0

Head = Literal["roberta", "bert"]


@dataclass(frozen=True)
class EncoderConfig:
    """Shape of a BERT / XLM-R encoder.

    Attributes:
        hidden, layers, heads, ffn: width, depth, attention heads, FFN width.
        vocab: rows of the word-embedding table.
        max_positions: rows of the position table.
        position_offset: position id of the first token (0 for BERT and for the
            e5 ``.bin`` table whose first two rows were dropped; 2 =
            ``padding_idx + 1`` for a full HF XLM-R / RoBERTa table).
        type_vocab: rows of the token-type table (the embedder always uses row 0).
        eps: LayerNorm epsilon.
        token_type_ids_input: cross-encoder only — declare a ``token_type_ids`` input.
        num_labels: cross-encoder only — columns of ``logits``.
    """

    hidden: int = 384
    layers: int = 12
    heads: int = 12
    ffn: int = 1536
    vocab: int = 250037
    max_positions: int = 512
    position_offset: int = 0
    type_vocab: int = 2
    eps: float = 1e-12
    token_type_ids_input: bool = False
    num_labels: int = 1

    @classmethod
    def from_header(cls, header: Any, **overrides: Any) -> EncoderConfig:
        """The shape an e5 ``.bin`` header describes (:class:`vaultsync.models.convert.e5_bin.Header`), plus overrides."""
        fields = ("hidden", "layers", "heads", "ffn", "vocab", "max_positions", "type_vocab", "eps")
        return cls(**{**{f: getattr(header, f) for f in fields}, **overrides})

    @property
    def max_tokens(self) -> int:
        """Longest input (specials included) the position table allows."""
        return self.max_positions - self.position_offset

    def to_dict(self) -> dict[str, object]:
        """JSON-friendly form (for ``config.json`` / build info)."""
        return asdict(self)


def strip_prefix(
    weights: Mapping[str, np.ndarray], prefixes: tuple[str, ...] = ("roberta.", "bert.")
) -> dict[str, np.ndarray]:
    """Return ``weights`` with a leading HF model prefix (``roberta.``, ``bert.``) removed from each name."""
    out: dict[str, np.ndarray] = {}
    for name, value in weights.items():
        for p in prefixes:
            if name.startswith(p):
                name = name[len(p) :]
                break
        out[name] = value
    return out


def build_embedder(
    config: EncoderConfig, weights: Mapping[str, np.ndarray], *, fused: bool = True, name: str = "encoder"
) -> onnx.ModelProto:
    """Build the embedder graph (see module docstring for inputs, outputs and weight names).

    Raises:
        KeyError: a required weight is missing.
        ValueError: a weight has the wrong shape.
    """
    g = _Graph(config, weights, fused)
    hidden = g.encoder(with_token_types=False)
    g.identity(hidden, "last_hidden_state")
    g.outputs.append(
        helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", config.hidden])
    )
    pooled = g.mean_pool(hidden)
    g.identity(g.l2_normalize(pooled), "sentence_embedding")
    g.outputs.append(helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", config.hidden]))
    return g.model(name)


def build_cross_encoder(
    config: EncoderConfig,
    weights: Mapping[str, np.ndarray],
    *,
    head: Head = "roberta",
    fused: bool = True,
    name: str = "cross_encoder",
) -> onnx.ModelProto:
    """Build the HF sequence-classification graph: ``logits`` ``[batch, num_labels]``.

    ``head`` picks the weight names and layout (module docstring). Raises
    ``KeyError`` / ``ValueError`` like :func:`build_embedder`.
    """
    g = _Graph(config, weights, fused)
    hidden = g.encoder(with_token_types=config.token_type_ids_input)
    first = g.node("Gather", [hidden, g.const("idx0", np.array(0, np.int64))], axis=1)  # [B, H]
    if head == "roberta":
        x = g.linear(first, "classifier.dense", config.hidden, config.hidden)
        x = g.node("Tanh", [x])
        logits = g.linear(x, "classifier.out_proj", config.hidden, config.num_labels)
    elif head == "bert":
        x = g.linear(first, "pooler.dense", config.hidden, config.hidden)
        x = g.node("Tanh", [x])
        logits = g.linear(x, "classifier", config.hidden, config.num_labels)
    else:
        raise ValueError(f"unknown head {head!r} (expected 'roberta' or 'bert')")
    g.identity(logits, "logits")
    g.outputs.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", config.num_labels]))
    return g.model(name)


def random_weights(
    config: EncoderConfig, *, head: Head | None = None, seed: int = 0, std: float = 0.05
) -> dict[str, np.ndarray]:
    """Random float32 weights with the documented names (tests and benchmarks only).

    LayerNorm weights are 1 and biases small, so the network is well conditioned.
    """
    rng = np.random.default_rng(seed)
    H, F = config.hidden, config.ffn

    def mat(o: int, i: int) -> np.ndarray:
        return (rng.standard_normal((o, i)) * std).astype(np.float32)

    def vec(n: int, scale: float = 0.01) -> np.ndarray:
        return (rng.standard_normal(n) * scale).astype(np.float32)

    w: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.weight": mat(config.vocab, H) * 10,
        "embeddings.position_embeddings.weight": mat(config.max_positions, H) * 4,
        "embeddings.token_type_embeddings.weight": mat(config.type_vocab, H) * 4,
        "embeddings.LayerNorm.weight": np.ones(H, np.float32),
        "embeddings.LayerNorm.bias": vec(H),
    }
    for i in range(config.layers):
        p = f"encoder.layer.{i}."
        for part in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            w[p + part + ".weight"], w[p + part + ".bias"] = mat(H, H), vec(H)
        w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"] = mat(F, H), vec(F)
        w[p + "output.dense.weight"], w[p + "output.dense.bias"] = mat(H, F), vec(H)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + ln + ".weight"], w[p + ln + ".bias"] = np.ones(H, np.float32), vec(H)
    if head == "roberta":
        w["classifier.dense.weight"], w["classifier.dense.bias"] = mat(H, H) * 4, vec(H)
        w["classifier.out_proj.weight"], w["classifier.out_proj.bias"] = (
            mat(config.num_labels, H) * 4,
            vec(config.num_labels),
        )
    elif head == "bert":
        w["pooler.dense.weight"], w["pooler.dense.bias"] = mat(H, H) * 4, vec(H)
        w["classifier.weight"], w["classifier.bias"] = mat(config.num_labels, H) * 4, vec(config.num_labels)
    return w


class _Graph:
    """Accumulates nodes and initializers; one method per building block."""

    def __init__(self, config: EncoderConfig, weights: Mapping[str, np.ndarray], fused: bool) -> None:
        if config.hidden % config.heads:
            raise ValueError("hidden must be a multiple of heads")
        self.c = config
        self.fused = fused
        self.w = weights
        self.nodes: list[onnx.NodeProto] = []
        self.inits: dict[str, onnx.TensorProto] = {}
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self._n = 0

    # -- plumbing ---------------------------------------------------------
    def fresh(self, stem: str) -> str:
        self._n += 1
        return f"{stem}_{self._n}"

    def node(self, op: str, inputs: list[str], **attrs: object) -> str:
        return self.nodes_out(op, inputs, 1, **attrs)[0]

    def nodes_out(self, op: str, inputs: list[str], n_out: int, **attrs: object) -> list[str]:
        outs = [self.fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.fresh(op), **attrs))  # type: ignore[arg-type]
        return outs

    def identity(self, src: str, dst: str) -> None:
        self.nodes.append(helper.make_node("Identity", [src], [dst], name=self.fresh("Identity")))

    def const(self, name: str, value: np.ndarray) -> str:
        if name not in self.inits:
            self.inits[name] = numpy_helper.from_array(np.asarray(value), name)
        return name

    def weight(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        arr = np.asarray(self.w[name])
        if arr.shape != shape:
            raise ValueError(f"weight {name!r} has shape {arr.shape}, expected {shape}")
        return arr

    def model(self, name: str) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, name, self.inputs, self.outputs, list(self.inits.values()))
        opsets = [helper.make_opsetid("", OPSET)]
        if self.fused:
            opsets.append(helper.make_opsetid("com.microsoft", 1))
        model = helper.make_model(graph, opset_imports=opsets, producer_name="vaultsync")
        model.ir_version = 8
        return model

    # -- blocks -----------------------------------------------------------
    def linear(self, x: str, prefix: str, n_in: int, n_out: int) -> str:
        wt = self.weight(prefix + ".weight", (n_out, n_in)).astype(np.float32)
        b = self.weight(prefix + ".bias", (n_out,)).astype(np.float32)
        y = self.node("MatMul", [x, self.const(prefix + ".weight_T", np.ascontiguousarray(wt.T))])
        return self.node("Add", [y, self.const(prefix + ".bias", b)])

    def layer_norm(self, x: str, prefix: str) -> str:
        H = self.c.hidden
        scale = self.const(prefix + ".weight", self.weight(prefix + ".weight", (H,)).astype(np.float32))
        bias = self.const(prefix + ".bias", self.weight(prefix + ".bias", (H,)).astype(np.float32))
        return self.node("LayerNormalization", [x, scale, bias], axis=-1, epsilon=float(self.c.eps))

    def word_embeddings(self, ids: str) -> str:
        c = self.c
        if "embeddings.word_embeddings.q4_packed" in self.w:
            nb = c.hidden // 32
            packed = self.weight("embeddings.word_embeddings.q4_packed", (c.vocab, nb, 16)).astype(np.uint8)
            scales = self.weight("embeddings.word_embeddings.q4_scales", (c.vocab, nb)).astype(np.float16)
            g = self.node("Gather", [self.const("word_q4_packed", packed), ids], axis=0)  # [B,S,nb,16] u8
            gi = self.node("Cast", [g], to=TensorProto.INT32)
            hi = self.node("Div", [gi, self.const("i32_16", np.array(16, np.int32))])
            lo = self.node("Sub", [gi, self.node("Mul", [hi, "i32_16"])])
            q = self.node("Concat", [lo, hi], axis=-1)  # [B,S,nb,32], block order restored
            qf = self.node(
                "Cast", [self.node("Sub", [q, self.const("i32_8", np.array(8, np.int32))])], to=TensorProto.FLOAT
            )
            s = self.node("Gather", [self.const("word_q4_scales", scales), ids], axis=0)  # [B,S,nb] f16
            sf = self.node(
                "Unsqueeze",
                [self.node("Cast", [s], to=TensorProto.FLOAT), self.const("ax_m1", np.array([-1], np.int64))],
            )
            x = self.node("Mul", [qf, sf])
            return self.node("Reshape", [x, self.const("shape_bsh", np.array([0, 0, c.hidden], np.int64))])
        table = self.weight("embeddings.word_embeddings.weight", (c.vocab, c.hidden)).astype(np.float32)
        return self.node("Gather", [self.const("word_embeddings", table), ids], axis=0)

    def encoder(self, *, with_token_types: bool) -> str:
        c = self.c
        I64 = TensorProto.INT64
        self.inputs.append(helper.make_tensor_value_info("input_ids", I64, ["batch", "seq"]))
        self.inputs.append(helper.make_tensor_value_info("attention_mask", I64, ["batch", "seq"]))
        if with_token_types:
            self.inputs.append(helper.make_tensor_value_info("token_type_ids", I64, ["batch", "seq"]))

        x = self.word_embeddings("input_ids")
        # positions: rows [offset, offset + seq) of the table, broadcast over the batch
        seq = self.node(
            "Slice",
            [
                self.node("Shape", ["input_ids"]),
                self.const("i1", np.array([1], np.int64)),
                self.const("i2", np.array([2], np.int64)),
            ],
        )
        off = self.const("pos_offset", np.array([c.position_offset], np.int64))
        pos_table = self.const(
            "position_embeddings",
            self.weight("embeddings.position_embeddings.weight", (c.max_positions, c.hidden)).astype(np.float32),
        )
        pos = self.node(
            "Slice", [pos_table, off, self.node("Add", [off, seq]), self.const("i0", np.array([0], np.int64))]
        )
        x = self.node("Add", [x, pos])
        types = self.weight("embeddings.token_type_embeddings.weight", (c.type_vocab, c.hidden)).astype(np.float32)
        if with_token_types:
            x = self.node(
                "Add", [x, self.node("Gather", [self.const("token_type_embeddings", types), "token_type_ids"], axis=0)]
            )
        else:
            x = self.node("Add", [x, self.const("token_type_row0", types[0])])
        x = self.layer_norm(x, "embeddings.LayerNorm")

        # additive mask [B,1,1,S]: 0 for real tokens, -1e9 for padding
        m = self.node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
        self.mask_f = m
        self.mask_i32 = self.node("Cast", ["attention_mask"], to=TensorProto.INT32)
        bias = self.node(
            "Mul",
            [
                self.node("Sub", [m, self.const("f1", np.array(1.0, np.float32))]),
                self.const("fneg", np.array(-_NEG, np.float32)),
            ],
        )
        bias = self.node("Unsqueeze", [bias, self.const("ax_1_2", np.array([1, 2], np.int64))])
        for i in range(c.layers):
            x = self.layer(x, bias, f"encoder.layer.{i}.")
        return x

    def layer(self, x: str, mask_bias: str, p: str) -> str:
        c = self.c
        H, NH = c.hidden, c.heads
        hd = H // NH
        # fused QKV projection: one [H, 3H] MatMul (per-column quantisation is unaffected)
        wq, wk, wv = (
            self.weight(f"{p}attention.self.{n}.weight", (H, H)).astype(np.float32) for n in ("query", "key", "value")
        )
        bq, bk, bv = (
            self.weight(f"{p}attention.self.{n}.bias", (H,)).astype(np.float32) for n in ("query", "key", "value")
        )
        w_qkv = np.ascontiguousarray(np.concatenate([wq.T, wk.T, wv.T], axis=1))
        if self.fused:
            ctx = self.node(
                "Attention",
                [
                    x,
                    self.const(p + "attention.qkv.weight_T", w_qkv),
                    self.const(p + "attention.qkv.bias", np.concatenate([bq, bk, bv])),
                    self.mask_i32,
                ],
                domain="com.microsoft",
                num_heads=NH,
            )
            attn = self.linear(ctx, p + "attention.output.dense", H, H)
            x = self.layer_norm(self.node("Add", [x, attn]), p + "attention.output.LayerNorm")
            return self.ffn(x, p)
        qkv = self.node(
            "Add",
            [
                self.node("MatMul", [x, self.const(p + "attention.qkv.weight_T", w_qkv)]),
                self.const(p + "attention.qkv.bias", np.concatenate([bq, bk, bv])),
            ],
        )
        q, k, v = self.nodes_out("Split", [qkv, self.const("split_qkv", np.array([H, H, H], np.int64))], 3, axis=-1)
        heads_shape = self.const("shape_heads", np.array([0, 0, NH, hd], np.int64))

        def split_heads(t: str, perm: list[int]) -> str:
            return self.node("Transpose", [self.node("Reshape", [t, heads_shape])], perm=perm)

        qh = split_heads(
            self.node("Mul", [q, self.const("attn_scale", np.array(1.0 / math.sqrt(hd), np.float32))]), [0, 2, 1, 3]
        )  # [B,NH,S,hd]
        kh = split_heads(k, [0, 2, 3, 1])  # [B,NH,hd,S]
        vh = split_heads(v, [0, 2, 1, 3])
        scores = self.node("Add", [self.node("MatMul", [qh, kh]), mask_bias])
        probs = self.node("Softmax", [scores], axis=-1)
        ctx = self.node("Transpose", [self.node("MatMul", [probs, vh])], perm=[0, 2, 1, 3])
        ctx = self.node("Reshape", [ctx, self.const("shape_bsh", np.array([0, 0, H], np.int64))])
        attn = self.linear(ctx, p + "attention.output.dense", H, H)
        x = self.layer_norm(self.node("Add", [x, attn]), p + "attention.output.LayerNorm")
        return self.ffn(x, p)

    def ffn(self, x: str, p: str) -> str:
        c = self.c
        H = c.hidden
        h = self.linear(x, p + "intermediate.dense", H, c.ffn)
        h = self.gelu(h)
        out = self.linear(h, p + "output.dense", c.ffn, H)
        return self.layer_norm(self.node("Add", [x, out]), p + "output.LayerNorm")

    def gelu(self, x: str) -> str:
        """Exact GELU, 0.5·x·(1 + erf(x/√2)) (Hendrycks & Gimpel 2016), as BERT uses."""
        # written in the PyTorch-export order so onnxruntime fuses it into one (Bias)Gelu kernel
        e = self.node("Erf", [self.node("Div", [x, self.const("sqrt2", np.array(math.sqrt(2), np.float32))])])
        y = self.node("Mul", [x, self.node("Add", [e, self.const("f1", np.array(1.0, np.float32))])])
        return self.node("Mul", [y, self.const("f05", np.array(0.5, np.float32))])

    def mean_pool(self, hidden: str) -> str:
        """Mean of the hidden states over the attention mask: ``[B,S,H] → [B,H]``."""
        m = self.node("Unsqueeze", [self.mask_f, self.const("ax_m1", np.array([-1], np.int64))])  # [B,S,1]
        axis1 = self.const("ax_1", np.array([1], np.int64))
        total = self.node("ReduceSum", [self.node("Mul", [hidden, m]), axis1], keepdims=0)
        count = self.node(
            "Max", [self.node("ReduceSum", [m, axis1], keepdims=0), self.const("f_tiny", np.array(1e-9, np.float32))]
        )
        return self.node("Div", [total, count])

    def l2_normalize(self, x: str) -> str:
        """``x / max(‖x‖₂, 1e-12)`` along the last axis."""
        sq = self.node(
            "ReduceSum", [self.node("Mul", [x, x]), self.const("ax_m1", np.array([-1], np.int64))], keepdims=1
        )
        norm = self.node("Max", [self.node("Sqrt", [sq]), self.const("f_eps_norm", np.array(1e-12, np.float32))])
        return self.node("Div", [x, norm])
