"""Heading subpaths matched through a note's indexed headings (WL-04: a link to each of 20,000 headings
took minutes): the same answers as walking the headings, at any size."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.vault.resolve import HeadingLookup, heading_keys, match_heading_path, normalise_heading, strip_heading


def _walk(wanted: str, headings: list[tuple[int, str]]) -> str | None:
    """The specification: follow the parts through the headings in document order, each part inside the
    section of the one before (deeper, before a heading at its level or above)."""
    parts = [p for p in wanted.split("#") if p.strip()]

    def one(part: str, text: str) -> str | None:
        part = part.strip()
        if part == text:
            return "exact"
        keys = {normalise_heading(part), normalise_heading(strip_heading(part))} - {""}
        return "normalised" if keys & heading_keys(text) else None

    def walk(i: int, start: int, above: int) -> str | None:
        for j in range(start, len(headings)):
            level, text = headings[j]
            if i and level <= above:
                return None
            how = one(parts[i], text)
            if how is None:
                continue
            rest = "exact" if i + 1 == len(parts) else walk(i + 1, j + 1, level)
            if rest is not None:
                return "exact" if how == rest == "exact" else "normalised"
        return None

    if not parts:
        return None
    if len(parts) == 1:
        found = {one(parts[0], t) for _, t in headings} - {None}
        return "exact" if "exact" in found else "normalised" if found else None
    return walk(0, 0, 0)


NAMES = st.sampled_from(["A", "a", "B", "b c", "B-C", "x", "Q&A", "Über", "ü", "日本"])


@settings(max_examples=400, deadline=None)
@given(headings=st.lists(st.tuples(st.integers(1, 6), NAMES), max_size=14),
       wanted=st.lists(NAMES, min_size=1, max_size=4).map("#".join))
def test_the_lookup_answers_as_the_walk_does(headings, wanted):
    assert HeadingLookup(headings).match(wanted) == _walk(wanted, headings)
    assert match_heading_path(wanted, headings) == _walk(wanted, headings)


@settings(max_examples=200, deadline=None)
@given(headings=st.lists(st.tuples(st.integers(1, 6), NAMES), max_size=14),
       asked=st.lists(st.lists(NAMES, min_size=1, max_size=3).map("#".join), min_size=1, max_size=8))
def test_one_lookup_asked_again_and_again_answers_as_the_walk_does(headings, asked):
    """A note's lookup serves every link into it, each subpath answered once and then remembered."""
    lookup = HeadingLookup(headings)
    for wanted in asked + asked[::-1]:
        assert lookup.match(wanted) == _walk(wanted, headings)


def test_many_links_into_many_headings_of_one_name():
    """16,000 `## Notes` and a link `[[#Notes]]` under each (and `[[#A#B]]` into 5,000 `# A`/`## B` sections): each
    link walked every heading of its name (`vaultsync check` 35 s and past 60 s); now each name is looked up once."""
    lookup = HeadingLookup([(2, "Notes")] * 16_000)
    assert all(lookup.match(w) == "exact" for w in ["Notes"] * 16_000) and lookup.match("notes") == "normalised"
    lookup = HeadingLookup([(1, "A"), (2, "B")] * 5_000)
    assert all(lookup.match("A#B") == "exact" for _ in range(10_000)) and lookup.match("B#A") is None


def test_many_links_into_a_large_note():
    """20,000 headings with a link to each, nested paths through 10,000 sections, seven parts over 3,000
    headings of one name: a second here, minutes with a walk per link (`vaultsync check` of such a note:
    0.6 s, past 60 s before)."""
    lookup = HeadingLookup([(1, f"h{i}") for i in range(20_000)])
    assert all(lookup.match(f"h{i}") == "exact" for i in range(20_000))
    nested = [(1, "A")] + [h for i in range(10_000) for h in ((2, f"b{i}"), (3, f"c{i}"))]
    lookup = HeadingLookup(nested)
    assert all(lookup.match(f"A#b{i}#c{i}") == "exact" for i in range(0, 10_000, 7))
    assert lookup.match("b5#c6") is None and lookup.match("A#c5") == "exact"
    same = [(min(i + 1, 6), "x") for i in range(3_000)]
    assert HeadingLookup(same).match("x#x#x#x#x#x#y") is None and HeadingLookup(same).match("x#x#x") == "exact"
