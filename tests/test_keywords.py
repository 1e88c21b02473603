"""JSON Schema keywords read in linear time: ``uniqueItems`` means what jsonschema means by it."""

from __future__ import annotations

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.checks.keywords import unique_items

JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.0, 1.0, 2.5, -0.0]) |
                    st.text("ab", max_size=2),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner,
                                                                                max_size=3), max_leaves=8)


@settings(max_examples=400, deadline=None)
@given(st.lists(JSON, max_size=6))
def test_unique_items_agrees_with_jsonschema(items):
    validator = jsonschema.Draft202012Validator({"uniqueItems": True})
    assert bool(list(unique_items(validator, True, items, {}))) == (not validator.is_valid(items)), items


def test_equal_values_that_python_tells_apart_or_not():
    validator = jsonschema.Draft202012Validator({})
    dup = lambda items: bool(list(unique_items(validator, True, items, {})))  # noqa: E731
    assert dup([1, 1.0]) and dup([{"a": [1, 2]}, {"a": [1, 2]}]) and dup([{"a": 1, "b": 2}, {"b": 2, "a": 1}])
    assert not dup([True, 1]) and not dup([False, 0]) and not dup([[1, 2], [2, 1]]) and not dup([None, False])


def test_a_list_of_many_mappings_is_refused_without_comparing_every_pair(vault):
    """``tags: [{a: 0}, {a: 1}, …]``: 39 s at 4,000 items and 4 min at 10,000 before (pairwise), in every check."""
    from conftest import adr

    tags = ", ".join(f"{{a: {i}}}" for i in range(10_000))
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f"tags: [{tags}]\n"))
    vault.commit("init")
    res = vault.check()
    assert res.code == 1 and "SC001 tags[9999]: expected string" in res.out, res.out[-500:]
