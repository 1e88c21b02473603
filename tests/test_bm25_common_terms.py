"""BM25 leaves out terms that carry no IDF (held by more than half the notes) in a large index: they cost
most of a search's time there and move no score. A real index (real git, SQLite FTS5) built with the
hashing embedder; the size threshold is lowered so that a small vault stands for a large one."""

from __future__ import annotations

import random
import sqlite3

import pytest
from conftest import HashEmbedder, Vault, hashed_index

from vaultsync.git import open_repo
from vaultsync.index.layout import layout_for
from vaultsync.index.sync import sync
from vaultsync.search import weights
from vaultsync.search.bm25 import bm25_candidates, bm25_notes, match_passes
from vaultsync.search.query import parse_query
from vaultsync.search.weights import clear_caches, common_terms

NOTES = 12


@pytest.fixture(scope="module")
def db(tmp_path_factory):  # type: ignore[no-untyped-def]
    """12 notes: ``ledger`` in 9 of them (common), ``quorum`` in 2, ``zeppelin`` in 1."""
    notes = {}
    for i in range(NOTES):
        words = ["ledger"] * (i < 9) + ["quorum"] * (i in (3, 10)) + ["zeppelin"] * (i == 11)
        notes[f"n{i:02d}.md"] = f"# Note {i}\nThis note mentions {' and '.join(words) or 'nothing'} today.\n"
    con = sqlite3.connect(hashed_index(tmp_path_factory.mktemp("common") / "repo", notes), check_same_thread=False)
    yield con
    con.close()


@pytest.fixture
def large(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(weights, "PRUNE_MIN_NOTES", NOTES)


def paths(db: sqlite3.Connection, cands) -> list[str]:  # type: ignore[no-untyped-def]
    return [db.execute("SELECT path FROM chunks WHERE rowid = ?", (c.rowid,)).fetchone()[0] for c in cands]


def test_below_the_threshold_no_term_is_left_out(db) -> None:  # type: ignore[no-untyped-def]
    clear_caches()
    assert common_terms(db, parse_query("ledger quorum")) == frozenset()


def test_a_common_term_stays_in_the_and_pass_and_out_of_the_or_pass(db, large) -> None:  # type: ignore[no-untyped-def]
    clear_caches()
    query = parse_query("ledger quorum")
    skip = common_terms(db, query)
    assert skip == {"ledger"}
    assert match_passes(query, skip) == ['"ledger" "quorum"', '"quorum"']
    found = paths(db, bm25_candidates(db, query, 50, skip=skip))
    assert found[0] == "n03.md"  # both terms first
    assert set(found) == {"n03.md", "n10.md"}  # no note found by the common term alone
    assert [p for p, _ in bm25_notes(db, query, 50, skip=skip)] == ["n03.md", "n10.md"]
    everything = paths(db, bm25_candidates(db, query, 50))
    assert len(everything) > 2 and everything[:2] == found  # without skipping: the same head, a long tail


def test_a_query_of_common_terms_only_leaves_bm25_to_the_short_terms(db, large) -> None:  # type: ignore[no-untyped-def]
    clear_caches()
    query = parse_query("ledger")
    skip = common_terms(db, query)
    assert skip == {"ledger"} and match_passes(query, skip) == []
    assert bm25_candidates(db, query, 50, skip=skip) == [] and bm25_notes(db, query, 50, skip=skip) == []


def test_property_skipping_keeps_every_note_an_informative_term_finds(db, large) -> None:  # type: ignore[no-untyped-def]
    """Whatever the query's mix of common, rare and absent terms, the pruned passes find exactly the notes
    that hold an informative term (plus, when one exists, the AND matches), never a note found only by a
    common term."""
    rng = random.Random(11)
    vocab = ["ledger", "quorum", "zeppelin", "mentions", "absentword", "today"]
    holders = {w: {r[0] for r in db.execute("SELECT path FROM chunks WHERE text LIKE ?", (f"%{w}%",))} for w in vocab}
    for _ in range(40):
        terms = rng.sample(vocab, rng.randint(1, 4))
        query = parse_query(" ".join(terms))
        clear_caches()
        skip = common_terms(db, query)
        assert skip == {t for t in terms if len(holders[t]) > NOTES // 2}
        informative = set().union(*(holders[t] for t in terms if t not in skip))
        assert {p for p, _ in bm25_notes(db, query, 50, skip=skip)} == informative
        chunk_skip = common_terms(db, query, "chunks")
        in_chunks = set().union(*(holders[t] for t in terms if t not in chunk_skip))
        assert set(paths(db, bm25_candidates(db, query, 50, skip=chunk_skip))) == in_chunks


def test_each_leg_judges_commonness_by_its_own_rows(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A term in most notes but in few of their chunks keeps its IDF in the chunk leg: the chunk BM25
    still finds the one chunk where two such terms meet (only the note leg leaves them out)."""
    from conftest import git

    monkeypatch.setattr(weights, "PRUNE_MIN_NOTES", 8)
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    v = Vault(root)
    v.write(".vaultsync.yaml", "vault: .\n")
    for i in range(10):
        sections = [f"## Part {k}\n" + " ".join([f"filler{k}word{j}" for j in range(60)]) + "\n" for k in range(5)]
        words = ["kafka"] * (i < 8) + ["retention"] * (i >= 2)
        sections[i % 5] = f"## Part {i % 5}\nThis part mentions {' and '.join(words)}.\n"
        v.write(f"n{i:02d}.md", f"# Note {i}\n" + "".join(sections))
    v.commit("notes")
    sync(open_repo(root), embedder_factory=lambda config, name: HashEmbedder(name), wait=30)
    con = sqlite3.connect(layout_for(open_repo(root)).sqlite, check_same_thread=False)
    try:
        query = parse_query("kafka retention")
        assert common_terms(con, query) == {"kafka", "retention"}  # 8 of 10 notes each
        assert common_terms(con, query, "chunks") == frozenset()  # but few of their 50 chunks
        both = [p for p in paths(con, bm25_candidates(con, query, 50, skip=common_terms(con, query, "chunks")))]
        assert both[0] in {f"n{i:02d}.md" for i in range(2, 8)}  # a chunk holding both terms first
    finally:
        con.close()
