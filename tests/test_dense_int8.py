"""The in-memory dense leg holds int8 codes and re-scores its best rows with SQLite's float32 vectors:
its answers are exact search's (ADR-0085)."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.index.format import DDL
from vaultsync.search.dense import ExactVectors, load_leg, quantise


class QueryHash:
    model_id, dim = "m", 0

    def embed_queries(self, texts):  # pragma: no cover - the legs here are searched by vector
        raise NotImplementedError

    def count_tokens(self, texts):  # pragma: no cover
        return [len(t.split()) for t in texts]


def index(path, vectors: np.ndarray, notes: int):
    """A real index file with one chunk row and vector per row of ``vectors`` and one name row per note."""
    db = sqlite3.connect(path)
    db.executescript(DDL)
    n = len(vectors)
    with db:
        db.executemany("INSERT INTO chunks VALUES (?, ?, ?, 0, '', 'text', '', '', 1, 1, 1, '[]')",
                       [(10 + 2 * i, f"n{i % notes}.md#{i}", f"n{i % notes}.md") for i in range(n)])
        db.executemany("INSERT INTO vectors VALUES ('m', ?, ?, '', ?, ?)",
                       [(f"n{i % notes}.md#{i}", f"n{i % notes}.md", "chunk", vectors[i].tobytes()) for i in range(n)]
                       + [(f"n{i}.md#title", f"n{i}.md", "name", vectors[i].tobytes()) for i in range(notes)])
    return db


def exact_top(vectors: np.ndarray, q: np.ndarray, k: int, allowed=None) -> list[tuple[int, float]]:
    scores = vectors @ q
    order = [i for i in np.lexsort((np.arange(len(scores)), -scores)) if allowed is None or allowed[i]]
    return [(10 + 2 * int(i), float(scores[i])) for i in order[:k]]


def unit(rng: np.random.Generator, n: int, dim: int, clustered: bool) -> np.ndarray:
    if clustered:  # near-duplicates around a few centres: the tight score gaps real vaults have
        centres = rng.standard_normal((8, dim))
        m = centres[rng.integers(0, 8, n)] + 0.15 * rng.standard_normal((n, dim))
    else:
        m = rng.standard_normal((n, dim))
    m = m.astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 1500), dim=st.sampled_from([8, 64, 384]),
       k=st.integers(1, 60), clustered=st.booleans(), filtered=st.booleans())
def test_top_equals_exact_float32_search(tmp_path_factory, seed, n, dim, k, clustered, filtered) -> None:
    rng = np.random.default_rng(seed)
    vectors = unit(rng, n, dim, clustered)
    db = index(tmp_path_factory.mktemp("int8") / "index.sqlite", vectors, notes=max(1, n // 5))
    leg = load_leg(db, "dense", QueryHash(), {"id": "m", "dim": dim})
    q = unit(rng, 1, dim, False)[0]
    allowed = rng.random(n) < 0.3 if filtered else None
    got = leg.chunks.top(q, k, allowed)
    want = exact_top(vectors, q, k, allowed)
    assert [c.rowid for c in got] == [r for r, _ in want]
    assert [c.score for c in got] == pytest.approx([s for _, s in want], abs=1e-6)
    assert [c.rank for c in got] == list(range(len(got)))


def test_names_and_similarity_are_exact(tmp_path) -> None:
    rng = np.random.default_rng(3)
    vectors = unit(rng, 400, 32, True)
    db = index(tmp_path / "index.sqlite", vectors, notes=80)
    leg = load_leg(db, "dense", QueryHash(), {"id": "m", "dim": 32})
    q = vectors[17]
    names = leg.top_names(q, 5, None, None)
    want = sorted(((f"n{i}.md", float(vectors[i] @ q)) for i in range(80)), key=lambda kv: -kv[1])[:5]
    assert [p for p, _ in names] == [p for p, _ in want]
    assert [s for _, s in names] == pytest.approx([s for _, s in want], abs=1e-6)
    scoped = leg.top_names(q, 80, {"n1.md", "n2.md", "n30.md"}, "n3")
    assert [p for p, _ in scoped] == ["n30.md"]
    sims = leg.chunks.similarity(q, [10, 12, 99999])
    assert sims == {10: pytest.approx(float(vectors[0] @ q), abs=1e-6), 12: pytest.approx(float(vectors[1] @ q), abs=1e-6)}


def test_rows_removed_after_loading_keep_their_code_scores(tmp_path) -> None:
    """A sync may delete rows while a reader holds codes: those rows are scored from their codes."""
    rng = np.random.default_rng(4)
    vectors = unit(rng, 50, 16, False)
    db = index(tmp_path / "index.sqlite", vectors, notes=10)
    leg = load_leg(db, "dense", QueryHash(), {"id": "m", "dim": 16})
    with db:
        db.execute("DELETE FROM vectors WHERE id = 'n0.md#0'")
    q = vectors[0]
    top = leg.chunks.top(q, 3)
    assert top[0].rowid == 10 and top[0].score == pytest.approx(1.0, abs=0.02)
    assert leg.chunks.similarity(q, [10])[10] == pytest.approx(1.0, abs=0.02)


def test_quantise_bounds_the_error_and_keeps_zero_rows() -> None:
    rng = np.random.default_rng(5)
    m = np.vstack([unit(rng, 100, 384, False), np.zeros((1, 384), np.float32)])
    codes, scales = quantise(m)
    assert codes.dtype == np.int8 and scales.dtype == np.float32 and codes.shape == m.shape
    assert np.all(np.abs(codes.astype(np.float32) * scales[:, None] - m) <= scales[:, None] / 2 + 1e-7)
    assert scales[-1] == 0 and not codes[-1].any()
    assert np.abs(codes).max() == 127


def test_exact_vectors_reads_in_batches_and_skips_missing(tmp_path) -> None:
    vectors = unit(np.random.default_rng(6), 1200, 8, False)
    db = index(tmp_path / "index.sqlite", vectors, notes=1)
    ids = [f"n0.md#{i}" for i in range(1200)] + ["n0.md#missing"]
    rows = dict(db.execute("SELECT id, rowid FROM vectors"))
    got = ExactVectors(db, "m", 8).fetch([rows.get(i, 99999) for i in ids], ids)
    assert len(got) == 1200 and np.array_equal(got[1199], vectors[1199])
    assert ExactVectors(db, "m", 9).fetch([rows[i] for i in ids[:3]], ids[:3]) == {}  # a blob of another width is not this model's
    # a rowid a sync gave to another vector is not taken for the one that was there
    assert ExactVectors(db, "m", 8).fetch([rows["n0.md#0"]], ["n0.md#5"]) == {}
    # nor one that now holds another model's vector of the same id (an embedder of the same width)
    with db:
        db.execute("UPDATE vectors SET model = 'other' WHERE id = 'n0.md#3'")
    assert ExactVectors(db, "m", 8).fetch([rows["n0.md#3"]], ["n0.md#3"]) == {}
