"""A dense leg's note score: the best chunk cosine ``c`` raised by the name cosine ``n`` to
``c + name_weight * max(0, n - c)`` (vaultsync.search.dense.NoteScoring.best_notes)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultsync.search.bm25 import Candidate
from vaultsync.search.dense import NoteScoring
from vaultsync.search.options import SearchOptions


def _notes(chunks: dict[str, float], names: dict[str, float], weight: float, use_names: bool = True) -> dict[str, float]:
    cands = [Candidate(i, s, i) for i, s in enumerate(sorted(chunks.values(), reverse=True))]
    order = sorted(chunks, key=lambda p: -chunks[p])
    paths = dict(enumerate(order))
    found = sorted(names.items(), key=lambda kv: -kv[1]) if use_names else []
    return NoteScoring().best_notes(cands, paths, found, weight)


def test_a_series_of_alike_names_is_ordered_by_content_below_weight_one():
    chunks = {"x-1.md": 0.70, "x-2.md": 0.80, "x-3.md": 0.75}
    names = {"x-1.md": 0.901, "x-2.md": 0.899, "x-3.md": 0.900}  # "X (1)", "X (2)", "X (3)": noise apart
    assert list(_notes(chunks, names, 1.0)) == ["x-1.md", "x-3.md", "x-2.md"]  # the noise decides
    assert list(_notes(chunks, names, 0.5)) == ["x-2.md", "x-3.md", "x-1.md"]  # the content decides
    assert _notes(chunks, names, 0.5)["x-2.md"] == pytest.approx(0.80 + 0.5 * 0.099)


def test_a_note_found_by_its_name_only_starts_from_the_lowest_chunk_score():
    scores = _notes({"a.md": 0.8, "b.md": 0.6}, {"c.md": 0.9, "d.md": 0.5}, 0.5)
    assert scores["c.md"] == pytest.approx(0.6 + 0.5 * 0.3)
    assert scores["d.md"] == pytest.approx(0.5)  # under the floor: its name cosine bounds it
    assert _notes({}, {"c.md": 0.9}, 0.25) == {"c.md": pytest.approx(0.9)}  # no chunk at all


@given(st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-1, 1), max_size=8),
       st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-1, 1), max_size=8),
       st.floats(0, 1))
def test_scores_lie_between_content_and_the_larger_of_both_and_weight_one_is_the_max(chunks, names, w):
    out = _notes(chunks, names, w)
    top = _notes(chunks, names, 1.0)
    floor = min(chunks.values(), default=None)
    assert set(out) == set(chunks) | set(names) == set(top)
    for p, score in out.items():
        content = chunks.get(p, names.get(p, 0.0) if floor is None else min(floor, names.get(p, 2.0)))
        assert content - 1e-9 <= score <= max(content, names.get(p, -2.0)) + 1e-9
        assert top[p] == pytest.approx(max(chunks.get(p, -2.0), names.get(p, -2.0)))
    assert _notes(chunks, names, w, use_names=False) == dict(sorted(chunks.items(), key=lambda kv: -kv[1]))


def test_the_option_is_checked():
    assert SearchOptions.from_config({"name_weight": 0.5}).name_weight == 0.5
    with pytest.raises(ValueError, match="name_weight"):
        SearchOptions.from_config({"name_weight": 1.5})
