"""Fit the first-stage relevance model and measure its calibration.

    python -m training.relevance.fit --data /tmp/relevance-data [--out models/relevance/first-stage.json]

Reads ``features-{train,heldout}.jsonl`` (all legs) and ``features-bm25-{train,heldout}.jsonl``
(BM25 alone) from :mod:`training.relevance.features` and, for each,
fits an L2-regularised logistic regression by Newton's method (iteratively reweighted
least squares; Hastie, Tibshirani & Friedman 2009, §4.4.1) on standardised features, and
reports on the held-out titles: log-loss, expected calibration error (ECE, 10 equal-width
bins; Naeini et al. 2015), and per floor: the share of no-answer queries left with no hit
and the recall@5 kept on answerable ones. Writes the model JSON.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from vaultsync.search.relevance import FEATURES, RelevanceModel, RelevanceModels, sigmoid
from vaultsync.search.relevance import expected_calibration_error as ece


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# The fitted features: absolute evidence only. Gaps to the best candidate and ranks say "first", not
# "relevant": with them the best chunk of a 6-note vault scored 0.72 for "who won the 1998 world cup";
# without them 0.001, with held-out calibration error 0.008 and the same recall (ADR-0034).
HEADS = {
    "dense": ("dense_cos", "dense_note", "dense2_cos", "dense2_on", "coverage", "chunk_coverage", "cross_dense",
              "n_units", "filtered_out", "dense_bgz"),
    "bm25": ("coverage", "chunk_coverage", "n_units", "filtered_out"),
}
assert all(f in FEATURES for head in HEADS.values() for f in head)


def matrix(rows: list[dict[str, Any]], features: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[r["features"].get(f, 0.0) for f in features] for r in rows], np.float64)
    return x, np.array([r["label"] for r in rows], np.float64)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3, iters: int = 50) -> tuple[np.ndarray, float]:
    """``(coef, intercept)`` minimising mean log-loss + ``l2/2 · |coef|²`` (x already standardised)."""
    n, d = x.shape
    xb = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    reg = np.full(d + 1, l2)
    reg[-1] = 0.0
    for _ in range(iters):
        p = sigmoid(xb @ w)
        grad = xb.T @ (p - y) / n + reg * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb / n + np.diag(reg) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def abstention(rows: list[dict[str, Any]], p: np.ndarray, floors: list[float]) -> list[dict[str, float]]:
    """Per floor: share of no-answer queries with no candidate at or above it, and recall@5 of the
    answerable ones over their candidates at or above it (against the same ranking with no floor)."""
    by_q: dict[str, list[tuple[int, int, float]]] = defaultdict(list)
    kind: dict[str, str] = {}
    for r, pi in zip(rows, p):
        by_q[r["qid"]].append((r["pos"], r["label"], float(pi)))
        kind[r["qid"]] = r["kind"]
    out = []
    for floor in floors:
        answerable = found = found_free = 0
        empty: dict[str, int] = defaultdict(int)
        for q, cands in by_q.items():
            top = sorted(cands)[:5]
            if kind[q] == "gold":
                answerable += 1
                found_free += any(lab for _, lab, _ in top)
                found += any(lab and pi >= floor for _, lab, pi in top)
            else:
                empty[kind[q]] += all(pi < floor for _, _, pi in top)
        no_answer = len(by_q) - answerable
        asked = {k: sum(1 for q in by_q if kind[q] == k) for k in empty}
        out.append({"floor": floor, "abstain": round(sum(empty.values()) / max(no_answer, 1), 3),
                    "recall@5": round(found / max(answerable, 1), 3),
                    "recall@5_no_floor": round(found_free / max(answerable, 1), 3),
                    "abstain_by_kind": {k: round(empty[k] / asked[k], 3) for k in sorted(empty)}})
    return out


def reorder_gain(rows: list[dict[str, Any]], p: np.ndarray) -> dict[str, float]:
    """MRR@10 and recall@5 of the answerable queries in the pipeline's order and ordered by relevance."""
    by_q: dict[str, list[tuple[int, int, float]]] = defaultdict(list)
    for r, pi in zip(rows, p):
        if r["kind"] == "gold":
            by_q[r["qid"]].append((r["pos"], r["label"], float(pi)))
    out: dict[str, float] = {}
    for name, key in (("pipeline", lambda c: c[0]), ("relevance", lambda c: -c[2])):
        mrr = rec = 0.0
        for cands in by_q.values():
            ranked = [lab for *_, lab in [(0, c[1]) for c in sorted(cands, key=key)]]
            first = next((i for i, lab in enumerate(ranked[:10]) if lab), None)
            mrr += 0 if first is None else 1 / (first + 1)
            rec += any(ranked[:5])
        out[f"{name}_mrr@10"], out[f"{name}_hit@5"] = round(mrr / len(by_q), 4), round(rec / len(by_q), 4)
    return out


def report(model: RelevanceModel, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Log-loss, ECE (overall and per query kind and language) and the abstention sweep."""
    p = model.predict([r["features"] for r in rows])
    y = np.array([r["label"] for r in rows], np.float64)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        groups[f"lang:{r['lang']}"].append(i)
        groups[f"kind:{r['kind']}"].append(i)
    return {"n": len(rows), "log_loss": round(log_loss(p, y), 4), "ece": round(ece(p, y), 4),
            "ece_by": {k: round(ece(p[v], y[v]), 4) for k, v in sorted(groups.items())},
            "sweep": abstention(rows, p, [0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.2, 0.35]), "order": reorder_gain(rows, p)}


def train(rows: list[dict[str, Any]], l2: float, name: str) -> RelevanceModel:
    x, y = matrix(rows, HEADS[name])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    coef, intercept = fit_logistic((x - mean) / scale, y, l2)
    return RelevanceModel(HEADS[name], tuple(mean.round(6)), tuple(scale.round(6)), tuple(coef.round(6)),
                          round(intercept, 6), name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path("models/relevance/first-stage.json"))
    ap.add_argument("--l2", type=float, default=1e-3)
    args = ap.parse_args()
    models, result = {}, {}
    for head, tag in (("dense", ""), ("bm25", "bm25-")):
        rows, held = load(args.data / f"features-{tag}train.jsonl"), load(args.data / f"features-{tag}heldout.jsonl")
        models[head] = train(rows, args.l2, head)
        result[head] = {"train": report(models[head], rows), "heldout": report(models[head], held),
                        "coef": dict(zip(HEADS[head], models[head].coef))}
    print(json.dumps(result, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(RelevanceModels(**models).to_json(), indent=1) + "\n", encoding="utf-8")
    (args.data / "fit-report.json").write_text(json.dumps(result, indent=1), encoding="utf-8")

if __name__ == "__main__":
    main()
