"""Golden probes: a few texts with expected vectors that prove a model build right.

A probe (the ``probe`` section of a manifest) lists items ``{"kind": "query"
| "passage", "text": ...}`` and expects, per item, the first ``n`` dimensions
of its vector and, across items, the matrix of pairwise cosines, each within a
tolerance (``tolerance.dims`` / ``tolerance.cosine``), plus (optionally) the
exact token ids. Expected values come from the float32 reference graph; an
INT8 build lands within ~0.01 of them, while a wrong tokenizer, position
table or weight layout misses by far more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vaultsync.models.base import TextEmbedder


def _vectors(embedder: TextEmbedder, items: Sequence[dict[str, str]]) -> np.ndarray:
    rows = []
    for item in items:
        fn = embedder.embed_queries if item["kind"] == "query" else embedder.embed_passages
        rows.append(fn([item["text"]])[0])
    return np.stack(rows).astype(np.float64)


def measure(embedder: TextEmbedder, items: Sequence[dict[str, str]], n_dims: int = 16) -> dict[str, Any]:
    """Compute a probe's values with ``embedder`` (first ``n_dims`` dims, cosines, token ids when available)."""
    vecs = _vectors(embedder, items)
    out: dict[str, Any] = {
        "first_dims": np.round(vecs[:, :n_dims], 4).tolist(),
        "cosines": np.round(vecs @ vecs.T, 4).tolist(),
    }
    input_ids = getattr(embedder, "input_ids", None)
    if callable(input_ids):
        out["token_ids"] = [input_ids([it["text"]], it["kind"])[0] for it in items]
    return out


def compare(probe: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """Differences between a manifest probe and measured values; empty when the build is right."""
    problems: list[str] = []
    tol = probe.get("tolerance", {})
    tol_dims = float(tol.get("dims", 0.03))
    tol_cos = float(tol.get("cosine", 0.02))
    items = probe["items"]
    exp_dims = np.asarray(probe["first_dims"], dtype=np.float64)
    got_dims = np.asarray(got["first_dims"], dtype=np.float64)[:, : exp_dims.shape[1]]
    if got_dims.shape != exp_dims.shape:
        return [f"probe shape {got_dims.shape} != expected {exp_dims.shape}"]
    dev = np.abs(got_dims - exp_dims)
    if dev.max() > tol_dims:
        i, j = np.unravel_index(int(dev.argmax()), dev.shape)
        problems.append(
            f"item {i} ({items[i]['text'][:30]!r}) dim {j}: {got_dims[i, j]:.3f} vs expected {exp_dims[i, j]:.3f}"
        )
    cdev = np.abs(np.asarray(got["cosines"]) - np.asarray(probe["cosines"]))
    if cdev.max() > tol_cos:
        i, j = np.unravel_index(int(cdev.argmax()), cdev.shape)
        problems.append(
            f"cosine(item {i}, item {j}) = {got['cosines'][i][j]:.3f} vs expected {probe['cosines'][i][j]:.3f}"
        )
    if "token_ids" in probe and "token_ids" in got and probe["token_ids"] != got["token_ids"]:
        bad = next(k for k, (a, b) in enumerate(zip(probe["token_ids"], got["token_ids"], strict=False)) if a != b)
        problems.append(f"token ids of item {bad} ({items[bad]['text'][:30]!r}) differ from the expected tokenization")
    return problems


def deviation(probe: dict[str, Any], got: dict[str, Any]) -> dict[str, float]:
    """Largest absolute deviations (dims, cosines) for the build report."""
    exp_dims = np.asarray(probe["first_dims"])
    got_dims = np.asarray(got["first_dims"])[:, : exp_dims.shape[1]]
    return {
        "max_dim_deviation": round(float(np.abs(got_dims - exp_dims).max()), 4),
        "max_cosine_deviation": round(
            float(np.abs(np.asarray(got["cosines"]) - np.asarray(probe["cosines"])).max()), 4
        ),
    }
