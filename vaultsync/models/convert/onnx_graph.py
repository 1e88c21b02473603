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
``bert.`` / ``roberta.`` prefix — see :func:`vaultsync.models.convert.encoder_config.strip_prefix`):

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

from collections.abc import Mapping

import numpy as np
import onnx
from onnx import TensorProto, helper

from vaultsync.models.convert.encoder_config import EncoderConfig, Head
from vaultsync.models.convert.onnx_blocks import GraphBuilder


def build_embedder(
    config: EncoderConfig, weights: Mapping[str, np.ndarray], *, fused: bool = True, name: str = "encoder"
) -> onnx.ModelProto:
    """Build the embedder graph (see module docstring for inputs, outputs and weight names).

    Raises:
        KeyError: a required weight is missing.
        ValueError: a weight has the wrong shape.
    """
    g = GraphBuilder(config, weights, fused)
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
    g = GraphBuilder(config, weights, fused)
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
