"""Calibrated relevance: P(this chunk answers the query) from the first stage's evidence.

A fused score says "first", not "relevant": min-max normalisation gives the best of five
unrelated chunks 1.0. :class:`RelevanceModel` is a logistic regression (Cox 1958) over
per-chunk features of the first stage. The stage traces every candidate feature of
:data:`FEATURES` (each dense leg's raw cosine, its gap to the leg's best, the primary cosine
against the query's cosines to a :class:`Background` of unrelated text, the chunk's
reciprocal rank in each leg and in the fused order, the share of the query's informative text
found in the vault and in the chunk); the shipped models use the absolute ones only (cosines
and coverage), because gaps and ranks say "first" again: with them the best chunk of a 6-note
vault scored 0.72 for an off-topic question (ADR-0034). Logistic regression fitted by log-loss
is calibrated on its training distribution, so 0.8 means "answers the query about 8 times in
10" there. It is trained on held-in QA pairs by ``training/relevance`` (never on evaluation
data) and ships as JSON (``models/relevance/first-stage.json``: feature names,
standardisation, coefficients), one model per evidence available (:class:`RelevanceModels`):
with a dense leg, and BM25 alone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vaultsync.models.file_array import NPY_HEADERS
from vaultsync.resources import data_dir

FEATURES = (
    "dense_cos", "dense_gap", "dense_note", "dense_rr", "dense_bg", "dense_bgz",
    "dense2_cos", "dense2_gap", "dense2_on",
    "coverage", "chunk_coverage", "bm25_chunk_rr", "bm25_note_rr",
    "position_rr", "cross_dense", "n_units", "filtered_out",
)


def unit_coverage(units: Sequence[tuple[str, int, float]], found: Callable[[str, int], bool]) -> float:
    """Weighted share of the query's informative units (``(unit, df, weight)``, see
    :func:`vaultsync.search.weights.informative_units`) for which ``found(unit, df)`` holds;
    0 when the query has no informative unit."""
    total = sum(w for _, _, w in units)
    if total <= 0:
        return 0.0
    return sum(w for u, df, w in units if found(u, df)) / total


def expected_calibration_error(probs: Sequence[float], labels: Sequence[int], bins: int = 10) -> float:
    """ECE (Naeini et al. 2015): Σ_b |b|/n · |positive rate in b − mean prediction in b| over ``bins``
    equal-width bins of [0, 1]; 0 for no predictions."""
    p, y = np.asarray(probs, np.float64), np.asarray(labels, np.float64)
    if not len(p):
        return 0.0
    idx = np.minimum((p * bins).astype(int), bins - 1)
    return float(sum((idx == b).sum() / len(p) * abs(y[idx == b].mean() - p[idx == b].mean())
                     for b in range(bins) if (idx == b).any()))


def sigmoid(z: np.ndarray) -> np.ndarray:
    """``1 / (1 + e^-z)`` without overflow."""
    return np.exp(-np.logaddexp(0.0, -np.asarray(z, np.float64)))


@dataclass(frozen=True)
class RelevanceModel:
    """A logistic regression over standardised :data:`FEATURES`.

    Attributes:
        features: the feature names, in column order.
        mean, scale: standardisation (``(x - mean) / scale``), one per feature.
        coef: one coefficient per feature; ``intercept`` the bias.
        name: what the model card calls it; ``floor`` the relevance floor chosen with it.
    """

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    name: str = "first-stage"

    def predict(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        """Relevance in [0, 1], float64 ``[len(rows)]``; a feature missing from a row counts as 0."""
        if not rows:
            return np.zeros(0)
        x = np.array([[float(r.get(f, 0.0)) for f in self.features] for r in rows], np.float64)
        z = ((x - np.array(self.mean)) / np.array(self.scale)) @ np.array(self.coef) + self.intercept
        return np.clip(sigmoid(z), 0.0, 1.0)

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "features": list(self.features), "mean": list(self.mean),
                "scale": list(self.scale), "coef": list(self.coef), "intercept": self.intercept}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> RelevanceModel:
        """Raises ``ValueError`` when the arrays disagree in length or hold a non-finite value."""
        features = tuple(str(f) for f in data["features"])  # type: ignore[attr-defined]
        arrays = [tuple(float(v) for v in data[k]) for k in ("mean", "scale", "coef")]  # type: ignore[attr-defined]
        intercept = float(data["intercept"])  # type: ignore[arg-type]
        if any(len(a) != len(features) for a in arrays) or not all(
                math.isfinite(v) for a in arrays for v in a) or not math.isfinite(intercept) or 0 in arrays[1]:
            raise ValueError("relevance model: arrays disagree with the feature list or are not finite")
        return cls(features, *arrays, intercept, str(data.get("name", "first-stage")))


@dataclass(frozen=True)
class Background:
    """A fixed set of unrelated passages a query's cosines are measured against (cohort normalisation:
    Auckenthaler et al. 2000), built by ``training/relevance/background.py``.

    A raw e5 cosine says little alone: a made-up word scores 0.83 against a note it has nothing to
    do with, a relevant German question 0.84. How far a chunk stands above the query's cosines to
    text of the world at large does.

    Attributes:
        model: the embedder the vectors come from (a query of another embedder is not compared).
        vectors: float32 ``[n, dim]``, rows L2-normalised.
        top: how many of the best background cosines are averaged.
    """

    model: str
    vectors: np.ndarray = field(compare=False, repr=False)
    top: int = 10

    def stats(self, model: str, query_vector: np.ndarray | None) -> tuple[float, float, float] | None:
        """``(mean of the top cosines, mean cosine, standard deviation)`` of the query's cosines to the
        background; None for another embedder's vector or none."""
        if model != self.model or query_vector is None or query_vector.shape[-1] != self.vectors.shape[1]:
            return None
        sims = self.vectors @ np.asarray(query_vector, np.float32).reshape(-1)
        top = np.sort(sims)[-self.top:]
        return float(top.mean()), float(sims.mean()), max(float(sims.std()), 1e-6)


@dataclass(frozen=True)
class RelevanceModels:
    """The model for each kind of evidence: ``dense`` when a dense leg ran, ``bm25`` for BM25 alone;
    ``background`` the passages the dense head's ``dense_bg``/``dense_bgz`` features are measured on."""

    dense: RelevanceModel
    bm25: RelevanceModel
    background: Background | None = None

    def pick(self, dense: bool) -> RelevanceModel:
        return self.dense if dense else self.bm25

    def to_json(self) -> dict[str, object]:
        return {"dense": self.dense.to_json(), "bm25": self.bm25.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Mapping[str, object]], background: Background | None = None) -> RelevanceModels:
        """Raises ``ValueError`` (a damaged file) or ``KeyError`` (a missing model)."""
        return cls(RelevanceModel.from_json(data["dense"]), RelevanceModel.from_json(data["bm25"]), background)


def model_path() -> Path:
    """The shipped first-stage relevance models."""
    return data_dir("models") / "relevance" / "first-stage.json"


_LOADED: RelevanceModels | None = None


def shipped_background() -> Background:
    """The shipped background set (multilingual-e5-small passage vectors)."""
    with NPY_HEADERS:
        vectors = np.load(model_path().with_name("background-e5.npy")).astype(np.float32)
    return Background("multilingual-e5-small", vectors)


def shipped_model() -> RelevanceModels:
    """The shipped models and background, read once per process."""
    global _LOADED
    if _LOADED is None:
        _LOADED = RelevanceModels.from_json(json.loads(model_path().read_text(encoding="utf-8")), shipped_background())
    return _LOADED
