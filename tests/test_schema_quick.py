"""The fast path of schema validation (vaultsync.checks.quickschema) decides exactly as jsonschema does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.checks.quickschema import quick_check
from vaultsync.checks.schema import load_validator

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
    quick = quick_check(validator)
    assert quick is not None  # every built-in schema is a closed object
    assert quick(data) == validator.is_valid(data), data


SUBSCHEMAS = st.sampled_from([
    {"type": "integer", "minimum": 1, "maximum": 10}, {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    {"type": ["string", "null"], "maxLength": 3}, {"const": "adr"}, {"enum": ["a", "b"]}, {"minimum": 0},
    {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": True, "minItems": 1, "maxItems": 2},
    {"type": "string", "pattern": "^[A-Z]+-[0-9]+$", "description": "an id"}, {"type": "boolean"},
    {"type": "string", "format": "vault-date"}, {"items": {"$ref": "#/$defs/id"}}, {"$ref": "#/$defs/id"}, True, False,
])
ANY_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 12), st.floats(), st.sampled_from([2.0, 1.0, 0.0, -0.0]),
              st.sampled_from(["", "a", "b", "adr", "ABC", "AB-12", "2024-03-01", "2024-02-30", "xyz", "abcd"])),
    lambda inner: st.lists(inner, max_size=3), max_leaves=6)


@settings(max_examples=1200, deadline=None)
@given(SUBSCHEMAS, ANY_VALUE)
def test_a_compiled_subschema_decides_as_jsonschema(sub, value):
    import jsonschema

    from vaultsync.checks.quickschema import _NotSimple, compile_subschema
    from vaultsync.checks.schema import _FORMATS

    root = {"$defs": {"id": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$"}}}
    full = jsonschema.Draft202012Validator({**root, **sub} if isinstance(sub, dict) else sub, format_checker=_FORMATS)
    compiled = compile_subschema(sub, root, _FORMATS)
    assert compiled is not None
    try:
        decided = compiled(value)
    except _NotSimple:
        return  # handed to jsonschema itself
    assert decided == full.is_valid(value), (sub, value)


def test_subschemas_beyond_the_compiled_keywords_are_left_to_jsonschema():
    from vaultsync.checks.quickschema import compile_subschema
    from vaultsync.checks.schema import _FORMATS

    for sub in ({"anyOf": [{"type": "string"}]}, {"enum": [1, True]}, {"$ref": "other.json"}, {"not": {}},
                {"type": "array", "items": {"oneOf": []}}, {"minimum": "1"}):
        assert compile_subschema(sub, {}, _FORMATS) is None, sub
