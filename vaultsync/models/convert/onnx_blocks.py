"""The building blocks of the encoder graphs (embeddings, attention, FFN, LayerNorm, pooling) as
``onnx.helper`` nodes; :mod:`vaultsync.models.convert.onnx_graph` assembles them."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from vaultsync.models.convert.encoder_config import EncoderConfig

OPSET = 17
_NEG = -1.0e9  # additive attention bias for padded keys: exp() underflows to exactly 0


class GraphBuilder:
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
