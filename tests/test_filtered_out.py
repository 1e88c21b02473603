"""The share of a query that only filtered-out notes hold (:func:`vaultsync.search.weights.filtered_out_share`):
the evidence that lets relevance say "the answer is outside what you searched" (ADR-0088). Real SQLite
FTS5 tables, trigram as the index builds them, plus the chunks table that short terms are read from."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.index.format import DDL, fold, short_words
from vaultsync.search import weights
from vaultsync.search.short_terms import contains
from vaultsync.search.weights import filtered_out_share, searchable

NOTES = {
    "team-a/outbox.md": "Webhook calls are retried from a durable outbox queue by Caroline.",
    "team-a/ci.md": "The CI runner caches wheels; DB migrations run first.",
    "team-b/tokyo.md": "東京 region failover is drilled monthly by Melanie.",
    "team-b/kerberos.md": "Service accounts renew Kerberos tickets with a sidecar.",
}


def index(notes: dict[str, str]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE notes_fts USING fts5(path UNINDEXED, title, body, tokenize='trigram')")
    db.execute("CREATE TABLE chunks (rowid INTEGER PRIMARY KEY, path TEXT, norm TEXT)")
    db.execute(next(line for line in DDL.splitlines() if "chunks_words" in line))
    for path, body in notes.items():
        db.execute("INSERT INTO notes_fts (path, title, body) VALUES (?, '', ?)", (path, body))
        rowid = db.execute("INSERT INTO chunks (path, norm) VALUES (?, ?)", (path, fold(body))).lastrowid
        db.execute("INSERT INTO chunks_words (rowid, words) VALUES (?, ?)", (rowid, short_words(fold(body))))
    return db


def units(*words: str, df: int = 1) -> list[tuple[str, int, float]]:
    """``(unit, df, weight)`` as informative_units gives them; a word starting "absent" is in no note."""
    return [(w, 0 if w.startswith("absent") else df, float(len(w))) for w in words]


@pytest.mark.parametrize(("unit", "scope", "found"), [
    ("outbox", "team-a/", True), ("outbox", "team-b/", False),
    ("caroline", "team-b/", False), ("melanie", "team-b/", True),
    ("ci", "team-a/", True), ("ci", "team-b/", False),        # short ASCII: a whole word, from the chunks
    ("db", "team-b/", False), ("東京", "team-b/", True), ("東京", "team-a/", False),  # short CJK
    ("kerberos", None, True),
])
def test_a_unit_is_searchable_only_where_the_scope_holds_it(unit: str, scope: str | None, found: bool) -> None:
    db = index(NOTES)
    allowed = {p for p in NOTES if scope is None or p.startswith(scope)}
    assert searchable(db, unit, allowed, scope) is found


def test_an_unfiltered_search_blames_nothing_and_absent_words_are_not_filtered_out() -> None:
    db = index(NOTES)
    assert filtered_out_share(db, units("outbox", "caroline"), None, None, len(NOTES)) == 0.0
    # "absentword" is in no note: its absence is the query's, not the filter's
    assert filtered_out_share(db, units("absentword", "outbox"), {"team-a/outbox.md"}, "team-a/", len(NOTES)) == 0.0


def test_each_missing_unit_counts_by_how_surprising_its_absence_is() -> None:
    """A name in all six notes of another folder counts nearly fully; a word one of them holds counts half."""
    notes = {f"a/{i}.md": f"Caroline wrote entry {i}." + (" Zeppelin." if i == 0 else "") for i in range(6)}
    notes |= {f"b/{i}.md": f"Melanie wrote entry {i}." for i in range(6)}
    db = index(notes)
    query = [("caroline", 6, 8.0), ("zeppelin", 1, 8.0), ("melanie", 6, 7.0), ("absentword", 0, 10.0)]
    got = filtered_out_share(db, query, {p for p in notes if p.startswith("b/")}, "b/", len(notes))
    assert got == pytest.approx((8 * (1 - 0.5 ** 6) + 8 * 0.5) / 23)  # "absentword" weighs nothing
    # a note hidden by a lifecycle filter (no scope): its words are missing from 11 of 12 notes
    hidden = set(notes) - {"a/0.md"}
    assert filtered_out_share(db, [("zeppelin", 1, 8.0)], hidden, None, len(notes)) == pytest.approx(11 / 12)
    # held by more notes than are left out: searchable without a scan, whatever the notes say
    assert filtered_out_share(db, [("caroline", 6, 8.0)], hidden, None, len(notes)) == 0.0


def test_a_unit_too_common_to_scan_is_taken_as_searchable(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(weights, "SEARCHABLE_SCAN", 3)
    db = index({f"a/{i}.md": "ledger entry" for i in range(5)} | {"b/x.md": "ledger"})
    assert searchable(db, "ledger", {"b/x.md"}, None)  # 3 rows read, none allowed: never blamed on the filter


@settings(max_examples=60, deadline=None)
@given(keep=st.lists(st.booleans(), min_size=len(NOTES), max_size=len(NOTES)),
       words=st.lists(st.sampled_from(["outbox", "caroline", "ci", "db", "東京", "kerberos", "melanie", "ledger",
                                       "absentx", "sidecar", "the"]), min_size=1, max_size=6, unique=True))
def test_the_share_equals_a_brute_force_reading_of_the_notes(keep, words) -> None:  # type: ignore[no-untyped-def]
    """Against an oracle that reads every searchable note's text (substring; short ASCII as a whole word)."""
    db = index(NOTES)
    allowed = {p for p, k in zip(NOTES, keep, strict=True) if k}

    def held(unit: str) -> bool:
        return any(contains(NOTES[p].casefold(), unit) for p in allowed)

    df = {w: sum(contains(t.casefold(), w) for t in NOTES.values()) for w in words}
    query = [(w, df[w], float(len(w))) for w in words]
    got = filtered_out_share(db, query, allowed, None, len(NOTES))
    share = len(allowed) / len(NOTES)
    in_vault = sum(len(w) for w in words if df[w])
    want = sum(len(w) * (1 - (1 - share) ** df[w]) for w in words if df[w] and not held(w)) / in_vault if in_vault else 0
    assert got == pytest.approx(want) and 0.0 <= got <= 1.0
    assert filtered_out_share(db, query, set(NOTES), None, len(NOTES)) == 0.0
