"""Interfaces shared by the model runners (structural: any object with these members fits)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

Kind = Literal["query", "passage"]


@runtime_checkable
class TextEmbedder(Protocol):
    """A sentence embedder: texts in, L2-normalised float32 rows out.

    ``model_id`` changes whenever the vectors would change (store it next to
    every vector; a different id means "re-embed", never "compare").
    """

    name: str
    dim: int
    model_id: str

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Search queries → float32 ``[len(texts), dim]``."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Documents / chunks → float32 ``[len(texts), dim]``."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each raw text (no prefix, no special tokens, no truncation)."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """A second-stage scorer: higher is more relevant; scores comparable within one call."""

    name: str

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """Score each passage against ``query`` → float32 ``[len(passages)]``."""
        ...


def check_texts(texts: Sequence[str]) -> list[str]:
    """Validate a batch argument: a sequence of ``str`` (a bare ``str`` is refused, it would be split into characters).

    Raises:
        TypeError: ``texts`` is a ``str`` or holds a non-``str`` item.
    """
    if isinstance(texts, str):
        raise TypeError("expected a sequence of strings, got a single str (wrap it in a list)")
    out = list(texts)
    for t in out:
        if not isinstance(t, str):
            raise TypeError(f"expected str items, got {type(t).__name__}")
    return out


def rerank_inputs(query: str, passages: Sequence[str]) -> tuple[list[str], np.ndarray, list[int]]:
    """Validate a rerank call: ``(passages, zero scores float32[n], indices of non-blank passages)``.

    Raises:
        ValueError: ``query`` is empty or whitespace only.
        TypeError: ``passages`` is a bare ``str`` or holds non-``str`` items.
    """
    if not isinstance(query, str) or not query.strip():
        raise ValueError("the rerank query is empty")
    texts = check_texts(passages)
    return texts, np.zeros(len(texts), np.float32), [i for i, p in enumerate(texts) if p.strip()]
