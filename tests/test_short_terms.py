"""Short terms through the ``chunks_words`` index (ADR-0106): the same chunks and counts as reading every
chunk's text, which the index replaces. Real SQLite FTS5, with the product's DDL and folding."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.index.format import DDL, fold, short_words
from vaultsync.search import short_terms
from vaultsync.search.short_terms import _scan, indexed, notes_holding, paths_holding, short_term_hits


def index(texts: list[str]) -> sqlite3.Connection:
    """Chunks ``i`` of note ``n{i // 2}.md`` holding ``texts[i]``, with ``chunks_words`` as the index writes it."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE chunks (rowid INTEGER PRIMARY KEY, path TEXT, norm TEXT)")
    db.execute(next(line for line in DDL.splitlines() if "chunks_words" in line))
    for i, text in enumerate(texts):
        rowid = db.execute("INSERT INTO chunks (path, norm) VALUES (?, ?)", (f"n{i // 2}.md", fold(text))).lastrowid
        if short_words(fold(text)):
            db.execute("INSERT INTO chunks_words (rowid, words) VALUES (?, ?)", (rowid, short_words(fold(text))))
    return db


TEXTS = ["CI/CD runs on every push; the CI cache is warm.", "A decision record, not ci.", "DB migrations: v2 first",
         "db_x and _ and a_b", "東京 region, 9 nodes", "No short word here whatsoever", "ciß, éci and C# (c++)"]


@pytest.mark.parametrize(("terms", "every", "expected"), [
    (["ci"], True, {1: 2.0, 2: 1.0}),               # whole words: not in "decision", nor in "ciß"/"éci"
    (["ci", "cd"], True, {1: 3.0}),
    (["ci", "cd"], False, {1: 3.0, 2: 1.0}),
    (["v2", "db"], True, {3: 2.0}),
    (["_"], True, {4: 1.0}),                          # a word of its own; "db_x" and "a_b" are longer words
    (["9"], True, {5: 1.0}),
    (["東京"], True, {5: 1.0}),                       # not indexed: read from the text, as a substring
    (["9", "東京"], True, {5: 2.0}),
    (["c#"], True, {7: 1.0}),
    (["zz"], True, {}),
])
def test_short_terms_are_found_as_whole_words(terms: list[str], every: bool, expected: dict[int, float]) -> None:
    db = index(TEXTS)
    assert short_term_hits(db, terms, None, every) == expected
    assert short_term_hits(db, terms, None, every) == _scan(db, terms, None, every)


def test_notes_and_paths_holding_a_term() -> None:
    db = index(TEXTS)
    assert notes_holding(db, "ci", 10) == 1 and notes_holding(db, "東京", 10) == 1 and notes_holding(db, "zz", 10) == 0
    assert paths_holding(db, "ci", None, 10) == ["n0.md", "n0.md"] and paths_holding(db, "ci", None, 1) == ["n0.md"]
    assert paths_holding(db, "ci", "n1", 10) == [] and paths_holding(db, "東京", "n2", 10) == ["n2.md"]
    db = index(["x", "y", "a x"])  # n0.md holds it once, n1.md once
    assert notes_holding(db, "x", 10) == 2 and notes_holding(db, "x", 1) == 1


def test_a_word_most_chunks_hold_reads_a_bounded_number_of_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(short_terms, "WORD_ROWS", 5)
    db = index([f"a note {i} with a word" for i in range(20)])
    assert len(short_term_hits(db, ["a"], None)) == 5 and len(_scan(db, ["a"], None, True)) == 20


WORDS = st.sampled_from(["ci", "cd", "a", "9", "v2", "_", "db", "x", "ci/cd", "decision", "c++", "éci", "東京",
                         "CI", "Ci.", "(db)", "k8s", "x_y", "ｃｉ", "İ", "ǅ"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(WORDS, max_size=12).map(" ".join), min_size=1, max_size=8),
       st.lists(st.sampled_from(["ci", "cd", "a", "9", "v2", "_", "db", "x", "i", "東京", "c"]), min_size=1, max_size=3,
                unique=True),
       st.booleans())
def test_the_index_finds_what_reading_every_chunk_finds(texts: list[str], terms: list[str], every: bool) -> None:
    """Any texts, any short terms (indexed or not, mixed): the same rows and counts as the full scan."""
    db = index(texts)
    assert short_term_hits(db, terms, None, every) == _scan(db, terms, None, every)
    for term in terms:
        assert indexed(term) == (term.isascii() and term.replace("_", "a").isalnum())
        paths = {p for (p,) in db.execute("SELECT DISTINCT path FROM chunks")}
        assert notes_holding(db, term, 100) == sum(
            any(short_terms.contains(n, term) for (n,) in db.execute("SELECT norm FROM chunks WHERE path = ?", (p,)))
            for p in paths)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(WORDS, max_size=12).map(" ".join), min_size=1, max_size=6),
       st.lists(st.sampled_from(["ci", "cd", "a", "9", "v2", "_", "db", "x", "東京", "東", "京", "c"]), min_size=1,
                max_size=8, unique=True),
       st.booleans(), st.integers(1, 4))
def test_the_scan_checks_every_term_however_few_sqlite_narrows_by(texts: list[str], terms: list[str], every: bool,
                                                                   asked: int) -> None:
    """SQLite narrows the scan by the first SQL_TERMS terms only (a deeper expression is refused): the rows
    and counts are those of narrowing by every term."""
    db = index(texts)
    whole = _scan(db, terms, None, every)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(short_terms, "SQL_TERMS", asked)
        assert _scan(db, terms, None, every) == whole


@pytest.mark.parametrize("every", [True, False])
def test_a_thousand_short_terms_are_scanned_without_error(every: bool) -> None:
    """A query of 999 CJK characters made SQLite refuse the scan: "Expression tree is too large"."""
    terms = [chr(0x4E00 + i) for i in range(999)]
    db = index(["東京 region", "nothing", "一 丁 七 and " + " ".join(terms)])
    found = _scan(db, terms, None, every)
    assert set(found) == ({3} if every else {1, 3})
