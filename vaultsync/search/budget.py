"""Token-budget cut: keep the best hits whose text fits in ``budget`` tokens, at most ``top_k``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def cut(hits: Sequence[T], token_counts: Sequence[int], budget: int, top_k: int) -> list[T]:
    """The longest prefix of ``hits`` within ``top_k`` items and ``budget`` tokens.

    A hit that does not fit is skipped (a later, shorter one may still fit); the
    first hit is always kept, even alone over budget, so an answer is never empty.
    """
    kept: list[T] = []
    used = 0
    for hit, tokens in zip(hits, token_counts):
        if len(kept) >= top_k:
            break
        if kept and used + tokens > budget:
            continue
        kept.append(hit)
        used += tokens
    return kept


Counter = Callable[[Sequence[str]], list[int]]
