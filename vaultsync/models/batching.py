"""Token-length-aware batching and right padding for transformer inputs.

Texts are sorted by token count (longest first) and packed greedily so that a
padded batch holds at most ``max_batch_tokens`` cells (rows × longest row) and
at most ``max_batch_size`` rows: similar lengths share a batch, so little
compute is spent on padding, and one very long text cannot blow up memory.
Callers scatter results back through the returned indices, so output order
always equals input order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

T = TypeVar("T")


def plan_batches(lengths: Sequence[int], max_batch_tokens: int = 8192, max_batch_size: int = 64) -> list[list[int]]:
    """Group input indices into batches.

    Args:
        lengths: token count of each input (specials included).
        max_batch_tokens: cap on ``len(batch) * max(length in batch)``; a single
            input longer than the cap still gets its own batch.
        max_batch_size: cap on rows per batch (1 = every input alone).

    Returns:
        Lists of input indices; each list is one batch, longest input first.
    """
    if max_batch_tokens < 1 or max_batch_size < 1:
        raise ValueError("batch caps must be positive")
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:
        n = max(int(lengths[i]), 1)
        if current and (len(current) >= max_batch_size or (len(current) + 1) * max(longest, n) > max_batch_tokens):
            batches.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, n)
    if current:
        batches.append(current)
    return batches


def pad_right(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Right-pad id lists into ``(input_ids, attention_mask)``, both int64 ``[len(rows), longest]``."""
    width = max((len(r) for r in rows), default=0)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    return ids, mask


def map_batches(run: Callable[[list[int]], T], batches: list[list[int]], workers: int) -> list[T]:
    """``run(batch)`` for every batch, results in batch order; on up to ``workers`` threads at once
    when there are several batches.

    For a CPU transformer, runs side by side on one core each beat one run on several: at batch 1 and
    ~100 tokens, multilingual-e5-small embedded 163–178 passages/s as two single-threaded runs
    against 96–100/s as one run on two intra-op threads, with identical vectors (onnxruntime's
    ``InferenceSession.run`` may be called from several threads and releases the GIL).
    """
    if workers <= 1 or len(batches) <= 1:
        return [run(b) for b in batches]
    with ThreadPoolExecutor(min(workers, len(batches)), thread_name_prefix="onnx-run") as pool:
        return list(pool.map(run, batches))
