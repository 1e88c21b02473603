"""Run a Hugging Face cross-encoder (reranker) exported to ONNX.

A model directory holds ``model.onnx`` (or ``onnx/model.onnx``) and
``tokenizer.json``, optionally ``vaultsync.json`` (``max_length``,
``max_query_tokens``; for a calibrated model ``calibrated``, ``threshold`` and
``fusion_weight``, see :mod:`vaultsync.search.fusion`) and ``config.json``. Such exports of e.g.
``cross-encoder/ms-marco-MiniLM-L-6-v2`` (BERT, 3 inputs) or
``hotchpotch/japanese-reranker-xsmall-v2`` can be dropped in as they are.

Feed: built from ``session.get_inputs()`` — ``input_ids`` and
``attention_mask`` always (right padding), ``token_type_ids`` only when the
graph declares it, holding the tokenizer's segment ids (all zeros for
RoBERTa / XLM-R tokenizers and on padding; 0 for the query and 1 for the
passage with BERT pair templates, as the model was trained).

Truncation: the query is kept whole up to ``max_query_tokens`` (default half
of ``max_length``); the passage gets the remaining budget and is cut at its
end. Scores: ``sigmoid(logit)`` for a one-column output, ``softmax[:, 1]``
for two columns (the "relevant" class), so always in [0, 1]. An empty or
whitespace-only query raises ``ValueError`` before the model runs; empty or
whitespace-only passages are skipped and score 0.0.

Batching groups pairs of similar length (:mod:`vaultsync.models.batching`).
For float models a padded batch gives the same scores as single runs; for
models with dynamic INT8 quantisation (activation scales taken over the whole
batch) every pair runs alone so that scores never depend on batch-mates.
"""

from __future__ import annotations

import json
import mmap
import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from vaultsync.models import pair_tokenizer
from vaultsync.models.base import rerank_inputs
from vaultsync.models.batching import map_batches, pad_right, plan_batches
from vaultsync.models.embedder import make_session

_BATCH_DEPENDENT_OPS = {"DynamicQuantizeLinear", "DynamicQuantizeMatMul", "QAttention", "DynamicQuantizeLSTM"}


class CrossEncoderError(RuntimeError):
    """The directory does not hold a usable cross-encoder export."""


def find_model_file(folder: Path) -> Path:
    """``model.onnx`` or ``onnx/model.onnx`` inside ``folder``. Raises :class:`CrossEncoderError`."""
    for candidate in (folder / "model.onnx", folder / "onnx" / "model.onnx"):
        if candidate.is_file():
            return candidate
    raise CrossEncoderError(f"{folder}: no model.onnx or onnx/model.onnx")


class CrossEncoder:
    """A cross-encoder reranker (implements :class:`vaultsync.models.base.Reranker`).

    Attributes:
        name: the directory name.
        max_length: pair length limit in tokens, specials included.
        max_query_tokens: cap on the query's tokens.
        input_names: the graph's declared inputs.
        threshold: calibrated cut-off in [0, 1] (``vaultsync.json`` with ``calibrated: true``), else None.
        fusion_weight: weight of the reranker's rank against the first stage's (``vaultsync.json``), else None.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        threads: int = 2,
        max_length: int | None = None,
        max_query_tokens: int | None = None,
        max_batch_tokens: int = 8192,
        max_batch_size: int | None = None,
    ) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise CrossEncoderError(f"{self.folder}: not a directory")
        model_path = find_model_file(self.folder)
        tok_path = self.folder / "tokenizer.json"
        if not tok_path.is_file():
            raise CrossEncoderError(f"{self.folder}: no tokenizer.json")
        self.name = self.folder.name
        self._pairs = pair_tokenizer.load(tok_path)
        settings = _settings(self.folder, self._pairs.max_length)
        self.max_length = int(max_length or settings.get("max_length") or 512)
        self.max_query_tokens = int(max_query_tokens or settings.get("max_query_tokens") or self.max_length // 2)
        self.threshold: float | None = float(settings["threshold"]) if settings.get("calibrated") else None
        self.fusion_weight: float | None = float(settings["fusion_weight"]) if "fusion_weight" in settings else None
        self._pad_id = self._pairs.pad_id
        self.threads = threads  # runs side by side, each on one intra-op thread (map_batches)
        self._session = make_session(model_path, 1)
        self.input_names = [i.name for i in self._session.get_inputs()]
        for required in ("input_ids", "attention_mask"):
            if required not in self.input_names:
                raise CrossEncoderError(f"{model_path}: graph has no {required!r} input (inputs: {self.input_names})")
        unknown = set(self.input_names) - {"input_ids", "attention_mask", "token_type_ids"}
        if unknown:
            raise CrossEncoderError(f"{model_path}: unsupported inputs {sorted(unknown)}")
        self._output = self._session.get_outputs()[0].name
        self.max_batch_tokens = max_batch_tokens
        self.max_batch_size = (
            max_batch_size if max_batch_size is not None else (1 if _batch_dependent(model_path) else 32)
        )

    @classmethod
    def load(cls, folder: str | os.PathLike[str], threads: int = 2, **kwargs: Any) -> CrossEncoder:
        """Same as the constructor (kept for symmetry with :meth:`Embedder.load`)."""
        return cls(folder, threads=threads, **kwargs)

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """Relevance of each passage to ``query`` → float32 ``[len(passages)]`` in [0, 1].

        Raises:
            ValueError: ``query`` is empty or whitespace only.
            TypeError: ``passages`` is a bare ``str`` or holds non-``str`` items.
        """
        passages, scores, live = rerank_inputs(query, passages)
        if not live:
            return scores
        rows = self._encode_pairs(query, [passages[i] for i in live])
        batches = plan_batches([len(r[0]) for r in rows], self.max_batch_tokens, self.max_batch_size)
        for batch, logits in zip(batches, map_batches(partial(self._run, rows), batches, self.threads), strict=True):
            scores[[live[k] for k in batch]] = _to_probability(np.asarray(logits, dtype=np.float32))
        return scores

    def _run(self, rows: list[tuple[list[int], list[int]]], batch: list[int]) -> np.ndarray:
        return np.asarray(self._session.run([self._output], self.feed([rows[k] for k in batch]))[0])

    def feed(self, rows: Sequence[tuple[list[int], list[int]]]) -> dict[str, np.ndarray]:
        """The input dict for ``(ids, type_ids)`` rows: right-padded, only the declared inputs."""
        ids, mask = pad_right([r[0] for r in rows], self._pad_id)
        out = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            types, _ = pad_right([r[1] for r in rows], 0)
            out["token_type_ids"] = types
        return out

    def encode_pair(self, query: str, passage: str) -> tuple[list[int], list[int]]:
        """Token ids and segment ids of one (query, passage) pair after truncation."""
        return self._encode_pairs(query, [passage])[0]

    def _encode_pairs(self, query: str, passages: list[str]) -> list[tuple[list[int], list[int]]]:
        q_budget = max(1, min(self.max_query_tokens, self.max_length - self._pairs.specials - 1))
        return self._pairs.pairs(query, passages, q_budget, self.max_length)


def _to_probability(logits: np.ndarray) -> np.ndarray:
    if logits.ndim == 1 or logits.shape[-1] == 1:
        x = logits.reshape(-1).astype(np.float64)
        sig: np.ndarray = (1.0 / (1.0 + np.exp(-x))).astype(np.float32)
        return sig
    if logits.shape[-1] == 2:
        x = logits.astype(np.float64)
        x = x - x.max(axis=1, keepdims=True)
        e = np.exp(x)
        probs: np.ndarray = (e[:, 1] / e.sum(axis=1)).astype(np.float32)
        return probs
    raise CrossEncoderError(f"cannot turn logits of shape {logits.shape} into a relevance score")


def _settings(folder: Path, tokenizer_limit: int | None) -> dict[str, Any]:
    """max_length / max_query_tokens from vaultsync.json, tokenizer.json truncation, config.json."""
    out: dict[str, Any] = {}
    cfg = _read_json(folder / "config.json")
    if cfg and "max_position_embeddings" in cfg:
        n = int(cfg["max_position_embeddings"])
        if str(cfg.get("model_type", "")).lower() in {"roberta", "xlm-roberta", "camembert"}:
            n -= int(cfg.get("pad_token_id", 1)) + 1  # RoBERTa position ids start at padding_idx + 1
        out["max_length"] = n
    if tokenizer_limit:
        out["max_length"] = min(int(tokenizer_limit), out.get("max_length", 1 << 30))
    own = _read_json(folder / "vaultsync.json") or {}
    out.update({k: own[k] for k in ("max_length", "max_query_tokens", "threshold", "calibrated", "fusion_weight")
                if k in own})
    return out


def _batch_dependent(model_path: Path) -> bool:
    """True when the graph may quantise activations dynamically (scales over the whole batch).

    A scan of the file's bytes, not a parse: a node's op type is stored verbatim in the graph, so a
    file without those names has none of those ops. A name that merely contains one (a node called
    so) errs on the safe side: pairs then run one by one. Parsing with ``onnx`` held the whole graph
    (29 MB for the shipped model) and the library, ~50 MB, in a process that never needs them again.
    """
    with open(model_path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return any(data.find(op.encode()) >= 0 for op in _BATCH_DEPENDENT_OPS)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
