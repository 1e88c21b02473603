"""The per-property fast path of schema validation decides exactly as jsonschema does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.checks.schema import _quick_check, load_validator

VALID = {"memory_id": "ADR-0001", "type": "adr", "title": "A decision", "status": "accepted",
         "created": "2024-03-01"}
FIELDS = ["memory_id", "type", "title", "status", "created", "expires", "confidence", "importance", "tags",
          "supersedes", "superseded_by", "related", "aliases", "unknown", "owner"]
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 12), st.floats(allow_nan=True), st.sampled_from(
        ["", "x", "ADR-0002", "accepted", "superseded", "2024-02-30", "2024-03-01", "[[ADR-0002]]", "database"]),
    st.lists(st.sampled_from(["database", "ops", "[[ADR-0002]]", "", 1]), max_size=3),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2),
)


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(["adr", "incident", "rule", "memory"]),
       st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=5), st.lists(st.sampled_from(list(VALID)), max_size=2))
def test_quick_path_agrees_with_full_validation(schema, changes, dropped):
    validator = load_validator(schema)
    data = {**VALID, "type": schema, **changes}
    for key in dropped:
        data.pop(key, None)
    quick = _quick_check(validator)
    assert quick is not None  # every built-in schema is a closed object
    assert quick(data) == validator.is_valid(data), data
