"""The BM25 leg's two passes keep their order by value: every match of all the query's terms scores above
every match of some of them, so the default fusion by value (``convex``) ranks as the passes promise.

Found on a Japanese vault: ``ロールバック`` put a note holding only ``バックフィル`` (one shared trigram, written
often) above the notes holding the whole word. A real index (real git, SQLite FTS5) with the hashing
embedder."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import hashed_index
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.search.bm25 import below, bm25_candidates, bm25_notes
from vaultsync.search.query import parse_query

_FILLER = "倉庫の在庫と配送の記録を毎日まとめて、担当者が確認してから共有する。 The team reviews the weekly plan. "
NOTES = {
    "whole.md": "# 手順\n" + _FILLER * 12 + "本番でロールバックする手順を定める。\n",
    "whole2.md": "# 運用\n" + _FILLER * 8 + "リリース後に問題があればロールバックを行う。\n",
    "part.md": "# 移行\nバックフィル、バックフィル、バックフィル。\n",
    "en_all.md": "# Rates\n" + _FILLER * 12 + "The exchange rate cache is refreshed hourly.\n",
    "en_some.md": "# Limits\nRate, rate, rate.\n",
    **{f"other{i}.md": f"# Other {i}\n{_FILLER}\n" for i in range(12)},
}


@pytest.fixture(scope="module")
def db(tmp_path_factory):  # type: ignore[no-untyped-def]
    con = sqlite3.connect(hashed_index(tmp_path_factory.mktemp("passes") / "repo", NOTES), check_same_thread=False)
    yield con
    con.close()


def _chunk_paths(db: sqlite3.Connection, query: str) -> list[tuple[str, float]]:
    cands = bm25_candidates(db, parse_query(query))
    return [(db.execute("SELECT path FROM chunks WHERE rowid = ?", (c.rowid,)).fetchone()[0], c.score) for c in cands]


@pytest.mark.parametrize("query, whole, part", [
    ("ロールバック", {"whole.md", "whole2.md"}, {"part.md"}),
    ("exchange rate", {"en_all.md"}, {"en_some.md"}),
])
def test_a_match_of_every_term_scores_above_a_match_of_some(db, query, whole, part) -> None:  # type: ignore[no-untyped-def]
    for found in (_chunk_paths(db, query), bm25_notes(db, parse_query(query))):
        scores: dict[str, float] = {}
        for path, score in found:  # a note's best chunk
            scores[path] = max(scores.get(path, 0.0), score)
        assert whole <= scores.keys() and part <= scores.keys(), found
        assert min(scores[p] for p in whole) > max(scores[p] for p in part), found
        assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)  # by value, as ranked


@settings(max_examples=200, deadline=None)
@given(first=st.lists(st.floats(0.01, 50), min_size=1, max_size=6),
       rest=st.lists(st.floats(0.01, 80), min_size=1, max_size=8))
def test_the_or_pass_is_scaled_under_the_and_pass_keeping_its_order_and_ratios(first, rest) -> None:
    """Property: after :func:`below`, every OR-pass score is under every AND-pass score, the OR pass keeps
    its order and the ratios between its scores; rows already under the floor are left as they are."""
    rows = [(f"or{i}", s) for i, s in enumerate(sorted(rest, reverse=True))]
    got = below(rows, {f"and{i}": s for i, s in enumerate(first)})
    assert [k for k, _ in got] == [k for k, _ in rows]
    assert max(s for _, s in got) < min(first)
    if rows[0][1] < min(first):
        assert got == rows
    else:
        ratio = got[0][1] / rows[0][1]
        assert all(abs(g - r * ratio) <= 1e-9 * max(1.0, r) for (_, g), (_, r) in zip(got, rows))
