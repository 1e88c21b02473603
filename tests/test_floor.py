"""The relevance floor judges the query, the adaptive cut trims the hits (:mod:`vaultsync.search.floor`)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.search.floor import relevance_cut
from vaultsync.search.results import Hit


def hit(i: int, relevance: float | None) -> Hit:
    return Hit(f"n{i}.md#0", f"n{i}.md", "t", "h", "text", 1.0, 1, 1, [], [], relevance=relevance)


@settings(max_examples=200, deadline=None)
@given(rels=st.lists(st.one_of(st.none(), st.floats(0, 1)), max_size=8), floor=st.floats(0, 1),
       relative=st.floats(0, 1))
def test_nothing_or_everything_the_cut_keeps(rels, floor, relative):
    hits = [hit(i, r) for i, r in enumerate(rels)]
    kept, rejected = relevance_cut(hits, floor, relative)
    scored = [r for r in rels if r is not None]
    if scored and max(scored) < floor:  # nothing relevant here: empty, and the best turned away is named
        assert kept == [] and rejected is not None and rejected["relevance"] == max(scored)
        return
    assert rejected is None
    bar = relative * max(scored) if scored else 0.0
    assert kept == [h for h in hits if h.relevance is None or h.relevance >= bar]  # order kept
    assert not scored or any(h.relevance == max(scored) for h in kept)  # the best always stays


def test_a_weak_second_hit_of_an_answered_query_stays():
    kept, rejected = relevance_cut([hit(0, 0.4), hit(1, 0.002), hit(2, None)], 0.005, 0.0)
    assert [h.relevance for h in kept] == [0.4, 0.002, None] and rejected is None
    assert [h.relevance for h in relevance_cut([hit(0, 0.4), hit(1, 0.002)], 0.005, 0.3)[0]] == [0.4]
    assert relevance_cut([hit(0, 0.004), hit(1, 0.001)], 0.005, 0.0) == ([], {
        "chunk_id": "n0.md#0", "path": "n0.md", "relevance": 0.004})
    assert relevance_cut([], 0.005, 0.0) == ([], None)


@settings(max_examples=200, deadline=None)
@given(rels=st.lists(st.floats(0, 1), min_size=1, max_size=12), floor=st.floats(0, 1), top_k=st.integers(1, 6),
       tokens=st.lists(st.integers(1, 400), min_size=12, max_size=12), budget_tokens=st.integers(1, 1500))
def test_an_answer_stands_on_a_hit_the_agent_gets(rels, floor, top_k, tokens, budget_tokens):
    """``--top-k 1`` answered with a hit under the floor because a chunk the cut dropped reached it: the
    floor judges the hits within top-k and the budget, so an answer holds a hit at or above it."""
    from dataclasses import replace

    from vaultsync.search.floor import answer

    hits = [replace(hit(i, r), tokens=tokens[i]) for i, r in enumerate(rels)]
    kept, rejected = answer(hits, floor, 0.0, budget_tokens, top_k)
    positions = [hits.index(h) for h in kept]
    assert len(kept) <= top_k and positions == sorted(positions) and sum(h.tokens for h in kept[1:]) <= budget_tokens
    if kept:
        assert max(h.relevance for h in kept) >= floor and rejected is None  # type: ignore[type-var]
    else:
        assert rejected is not None and rejected["relevance"] < floor
