"""The JSON Schema keywords vaultsync evaluates its own way, for input that arrives in a commit.

- ``pattern``: read as ECMA-262 (as the JSON Schema spec says), a custom schema's under a time limit
  (:func:`~vaultsync.checks.ecma_regex.pattern_search`).
- ``uniqueItems``: in time linear in the list. jsonschema compares unhashable items (mappings, lists)
  pairwise: a note with ``tags: [{a: 0}, {a: 1}, …]`` took 39 s at 4,000 items and about an hour at
  40,000, in every commit's check. Here each item is keyed by its JSON value (equal as jsonschema's
  ``equal`` reads them: ``1`` and ``1.0`` one number, ``true`` and ``1`` two values, mappings by their
  keys and values in any order) and looked up in a set.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema

from vaultsync.checks.ecma_regex import PATTERN_TIMEOUT_S, pattern_search
from vaultsync.diagnostics import shown

GAVE_UP = "the schema's pattern"  # how a pattern's error that ran out of time starts


def pattern(validator: Any, regex: str, instance: Any, schema: dict[str, Any]) -> Iterator[jsonschema.ValidationError]:
    """``pattern``: ``instance`` (a string; anything else passes) must hold a match of ``regex``."""
    if not validator.is_type(instance, "string"):
        return
    try:
        found = pattern_search(regex)(instance)
    except TimeoutError:
        yield jsonschema.ValidationError(f"{GAVE_UP} {regex!r} gave up on this value after "
                                         f"{PATTERN_TIMEOUT_S:g} s: it backtracks without end (simplify it)")
        return
    if not found:
        yield jsonschema.ValidationError(f"{shown(instance)} does not match {regex!r}")


def unique_items(validator: Any, unique: bool, instance: Any,
                 schema: dict[str, Any]) -> Iterator[jsonschema.ValidationError]:
    """``uniqueItems``: no two items of ``instance`` (an array; anything else passes) are equal JSON values."""
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = json_key(item)
        if key in seen:
            yield jsonschema.ValidationError(f"{shown(instance)} has non-unique elements")
            return
        seen.add(key)


def json_key(value: Any) -> Any:
    """A hashable key equal for equal JSON values: bools apart from numbers, numbers by value, arrays in
    order, objects in any order; another Python value (a date YAML read) as itself, by type."""
    if isinstance(value, bool) or value is None:
        return ("c", value)
    if isinstance(value, int | float):
        return ("n", value)  # 1 == 1.0 and hash(1) == hash(1.0): one key
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list | tuple):
        return ("l", tuple(json_key(v) for v in value))
    if isinstance(value, dict):
        return ("d", frozenset((k, json_key(v)) for k, v in value.items()))
    return ("o", type(value).__name__, value)
