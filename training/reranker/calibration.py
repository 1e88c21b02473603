"""Score calibration for the reranker: Platt scaling, reliability, the adaptive cut-off threshold.

Platt scaling (Platt 1999) fits ``p = sigmoid(a · logit + b)`` on held-out
(query, candidate, label) triples by Newton's method on the log-loss; with
``a > 0`` it never changes an ordering. The export folds ``a`` and ``b`` into
the classifier's last layer, so the shipped graph's ``sigmoid(logit)`` is the
calibrated probability and any cross-encoder runner reads it as is.

The cut-off threshold is the largest ``t`` such that at least ``recall`` of the
held-out positives score ``≥ t``: candidates under it can be dropped while
losing at most ``1 - recall`` of the relevant ones (on data like the training
distribution; the top candidate is always kept).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def sigmoid(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    return np.exp(-np.logaddexp(0.0, -x))  # 1 / (1 + e^-x) without overflow


def fit_platt(logits: np.ndarray, labels: np.ndarray, iters: int = 100, l2: float = 1e-6) -> tuple[float, float]:
    """``(a, b)`` minimising the mean log-loss of ``sigmoid(a·logits + b)``.

    Newton's method with step halving (a step is taken only when it lowers the
    loss), so it converges from ``(1, 0)`` even when the raw logits are large.
    """
    x = np.asarray(logits, np.float64)
    y = np.asarray(labels, np.float64)

    def loss(a: float, b: float) -> float:
        z = a * x + b  # log(1 + e^z) - y z, computed without overflow
        return float(np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * a * a)

    a, b = 1.0, 0.0
    current = loss(a, b)
    for _ in range(iters):
        p = sigmoid(a * x + b)
        g = np.array([np.mean((p - y) * x) + l2 * a, np.mean(p - y)])
        w = p * (1 - p)
        h = np.array([[np.mean(w * x * x) + l2, np.mean(w * x)], [np.mean(w * x), np.mean(w) + 1e-12]])
        step = np.linalg.solve(h, g)
        t = 1.0
        while t > 1e-8 and loss(a - t * step[0], b - t * step[1]) > current:
            t /= 2
        if t <= 1e-8:
            break
        a, b = a - t * step[0], b - t * step[1]
        current = loss(a, b)
        if np.abs(t * step).max() < 1e-10:
            break
    return float(a), float(b)


def log_loss(probs: np.ndarray, labels: np.ndarray) -> float:
    p = np.clip(np.asarray(probs, np.float64), 1e-7, 1 - 1e-7)
    y = np.asarray(labels, np.float64)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def brier(probs: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean((np.asarray(probs, np.float64) - np.asarray(labels, np.float64)) ** 2))


def reliability(probs: np.ndarray, labels: np.ndarray, bins: int = 10) -> list[dict[str, float]]:
    """Equal-width bins over [0, 1]: count, mean predicted probability, observed positive rate."""
    p = np.asarray(probs, np.float64)
    y = np.asarray(labels, np.float64)
    idx = np.minimum((p * bins).astype(int), bins - 1)
    out = []
    for k in range(bins):
        sel = idx == k
        if sel.any():
            out.append({"lo": k / bins, "hi": (k + 1) / bins, "n": int(sel.sum()),
                        "mean_p": round(float(p[sel].mean()), 4), "pos_rate": round(float(y[sel].mean()), 4)})
    return out


def ece(probs: np.ndarray, labels: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error: bin-size-weighted |mean p - positive rate| (equal-width bins)."""
    n = len(probs)
    return float(sum(b["n"] / n * abs(b["mean_p"] - b["pos_rate"]) for b in reliability(probs, labels, bins)))


def choose_threshold(probs: np.ndarray, labels: np.ndarray, recall: float) -> float:
    """Largest ``t`` keeping at least ``recall`` of the positives (``p >= t``)."""
    pos = np.sort(np.asarray(probs, np.float64)[np.asarray(labels) > 0.5])
    if not len(pos):
        return 0.0
    k = int(np.floor((1.0 - recall) * len(pos)))
    return float(pos[min(k, len(pos) - 1)])


def cutoff_effect(probs: np.ndarray, labels: np.ndarray, threshold: float) -> dict[str, float]:
    p = np.asarray(probs, np.float64)
    y = np.asarray(labels) > 0.5
    keep = p >= threshold
    return {"positives_kept": round(float(keep[y].mean()) if y.any() else 1.0, 4),
            "negatives_dropped": round(float((~keep[~y]).mean()) if (~y).any() else 0.0, 4),
            "candidates_dropped": round(float((~keep).mean()), 4)}


def summary(probs: np.ndarray, labels: np.ndarray) -> dict[str, Any]:
    return {"n": int(len(probs)), "positives": int(np.sum(labels)), "log_loss": round(log_loss(probs, labels), 4),
            "brier": round(brier(probs, labels), 4), "ece": round(ece(probs, labels), 4)}
