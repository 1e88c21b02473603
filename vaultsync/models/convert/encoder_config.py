"""The shape of a BERT / XLM-R encoder, and Hugging Face weight names without their model prefix."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

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
