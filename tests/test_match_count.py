"""Row counts of query units in a large FTS5 table: exact for rare units, estimated from rowid windows
spread over the table for frequent ones (:func:`vaultsync.search.weights.match_count`). Real SQLite FTS5
tables (trigram, as the index builds them) in memory; the sampling threshold is lowered so that a few
thousand rows stand for a large vault."""

from __future__ import annotations

import math
import random
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.search import weights
from vaultsync.search.weights import clear_caches, match_count

ROWS = 3000


def fts(bodies: list[str]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE notes_fts USING fts5(path UNINDEXED, title, body, tokenize='trigram')")
    db.executemany("INSERT INTO notes_fts (path, title, body) VALUES (?, '', ?)",
                   [(f"n{i}.md", b) for i, b in enumerate(bodies)])
    return db


def exact(db: sqlite3.Connection, unit: str) -> int:
    return int(db.execute("SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?", (f'"{unit}"',)).fetchone()[0])


@pytest.fixture
def sampled(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(weights, "SAMPLE_ROWS", 600)
    clear_caches()
    yield
    clear_caches()


def test_a_small_table_is_counted_exactly(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    clear_caches()
    rng = random.Random(1)
    db = fts([" ".join(rng.choice(["ledger", "quorum", "filler"]) for _ in range(5)) for _ in range(200)])
    for unit in ("ledger", "quorum", "absent"):
        assert match_count(db, "notes_fts", unit, 10_000) == exact(db, unit)
    assert match_count(db, "notes_fts", "ledger", 7) == 7  # counted up to the limit


def test_a_rare_unit_is_counted_exactly_past_the_threshold(sampled) -> None:  # type: ignore[no-untyped-def]
    bodies = ["common words only"] * ROWS
    for i in (5, 900, 2999):
        bodies[i] += " zeppelin"
    db = fts(bodies)
    assert match_count(db, "notes_fts", "zeppelin", ROWS) == 3
    assert match_count(db, "notes_fts", "absentword", ROWS) == 0  # coverage needs "not in the vault" exactly


def test_a_unit_held_by_one_folder_is_not_misjudged(sampled) -> None:  # type: ignore[no-untyped-def]
    """Rows are in build order, a folder at a time: a word in every note of the first 40 % only must not be
    estimated from a prefix (it would look held by all)."""
    bodies = [("incident timeline" if i < 0.4 * ROWS else "decision record") for i in range(ROWS)]
    db = fts(bodies)
    estimate = match_count(db, "notes_fts", "incident", ROWS)
    assert abs(estimate - exact(db, "incident")) <= 0.1 * ROWS
    assert estimate <= ROWS // 2  # not "held by more than half"


@settings(max_examples=25, deadline=None)
@given(share=st.floats(0.05, 0.95), seed=st.integers(0, 10_000), deleted=st.floats(0.0, 0.5))
def test_property_a_frequent_unit_is_estimated_within_a_few_per_cent(share: float, seed: int,
                                                                     deleted: float) -> None:
    """Whatever the unit's share of the rows, and with rows deleted (rowid gaps), the estimate is within five
    standard errors of the sample's share (~600 rows: about 0.1 at a share of one half; a failure once in
    ~2 million examples, where 0.08 failed on seed 8754) and never above the limit."""
    weights_before = weights.SAMPLE_ROWS
    weights.SAMPLE_ROWS = 600
    clear_caches()
    try:
        rng = random.Random(seed)
        db = fts([("ledger entry" if rng.random() < share else "other entry") for _ in range(ROWS)])
        db.executemany("DELETE FROM notes_fts WHERE rowid = ?",
                       [(r,) for r in range(1, ROWS + 1) if rng.random() < deleted])
        rows = db.execute("SELECT count(*) FROM notes_fts_docsize").fetchone()[0]
        truth = exact(db, "ledger")
        estimate = match_count(db, "notes_fts", "ledger", rows)
        share_of_rows, sampled = truth / rows, weights._windows(db, "notes_fts")[1]
        assert abs(estimate - truth) <= 5 * math.sqrt(share_of_rows * (1 - share_of_rows) / sampled) * rows + 1
        assert match_count(db, "notes_fts", "ledger", rows // 3) <= rows // 3
    finally:
        weights.SAMPLE_ROWS = weights_before
        clear_caches()
