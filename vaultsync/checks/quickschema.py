"""The fast path of frontmatter validation: tell valid frontmatter in one call per property.

:func:`quick_check` answers "valid?" for a closed-object schema without jsonschema's
per-instance descent; :func:`compile_subschema` turns a property's subschema into a
plain predicate where it can. jsonschema stays the authority: anything these do not
cover is handed to it, and it writes every message (:mod:`vaultsync.checks.schema`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonschema

from vaultsync.checks.ecma_regex import pattern_search

_OBJECT_KEYWORDS = {"$schema", "$id", "$defs", "title", "description", "type", "required", "properties",
                    "additionalProperties"}
_QUICK: dict[int, tuple[jsonschema.protocols.Validator, Any] | None] = {}


_MEMO_MAX = 100_000
_SCALARS = (str, int, float, bool, type(None))


def _memo_key(name: str, value: Any) -> tuple[Any, ...] | None:
    """A hashable key for ``value`` that tells ``True`` from ``1`` (types included), or None when
    the value is not a scalar or a flat list of scalars (those are validated every time)."""
    if isinstance(value, _SCALARS):
        return (name, type(value), value)
    if isinstance(value, list) and len(value) <= 64 and all(isinstance(v, _SCALARS) for v in value):
        return (name, list, tuple((type(v), v) for v in value))
    return None


_NOT_CHECKED = {"description", "examples", "title", "default", "$comment", "deprecated", "readOnly", "writeOnly"}
_COMPILED = _NOT_CHECKED | {"type", "minLength", "maxLength", "pattern", "enum", "const", "minimum", "maximum",
                            "exclusiveMinimum", "exclusiveMaximum", "format", "items", "uniqueItems", "minItems",
                            "maxItems", "$ref"}


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": _is_number,
    "integer": lambda v: _is_number(v) and (isinstance(v, int) or v.is_integer()),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def compile_subschema(sub: Any, root: dict[str, Any], formats: jsonschema.FormatChecker | None,
                      depth: int = 0) -> Callable[[Any], bool] | None:
    """A predicate equal to ``is_valid`` for a property's subschema, or None when it uses anything else.

    Covers what frontmatter fields use (JSON Schema 2020-12 §6: ``type``, string length, ``pattern``,
    number ranges, string ``enum``/``const``, ``format``, ``items``, string ``uniqueItems``, item
    counts, and ``$ref`` into the schema's own ``$defs``). Each test mirrors jsonschema's own
    (``pattern`` is ``re.search``; a range fails only on ``<``/``>``, so NaN passes as it does there);
    the test suite checks the two agree on generated values.
    """
    if isinstance(sub, bool):
        return (lambda v: True) if sub else (lambda v: False)
    if not isinstance(sub, dict) or set(sub) - _COMPILED or depth > 8:
        return None
    tests: list[Callable[[Any], bool]] = []
    if "type" in sub:
        names = sub["type"] if isinstance(sub["type"], list) else [sub["type"]]
        if not all(isinstance(n, str) and n in _TYPE_TESTS for n in names):
            return None
        kinds = [_TYPE_TESTS[n] for n in names]
        tests.append(lambda v: any(k(v) for k in kinds))
    if "$ref" in sub:
        ref = sub["$ref"]
        if not (isinstance(ref, str) and ref.startswith("#/$defs/") and ref.count("/") == 2):
            return None
        target = compile_subschema((root.get("$defs") or {}).get(ref[8:], None), root, formats, depth + 1)
        if target is None:
            return None
        tests.append(target)
    for key, fails in (("minLength", lambda v, n: len(v) < n), ("maxLength", lambda v, n: len(v) > n)):
        if key in sub:
            n = sub[key]
            tests.append(lambda v, n=n, fails=fails: not isinstance(v, str) or not fails(v, n))
    if "pattern" in sub:
        search = pattern_search(sub["pattern"])
        tests.append(lambda v: not isinstance(v, str) or _within_time(search, v))
    for key in ("enum", "const"):
        if key in sub:
            allowed = sub[key] if key == "enum" else [sub[key]]
            if not (isinstance(allowed, list) and all(isinstance(a, str) for a in allowed)):
                return None  # jsonschema's equality (1 is not True, 1 is 1.0) is only simple for strings
            options = frozenset(allowed)
            tests.append(lambda v, options=options: isinstance(v, str) and v in options)
    for key, fails in (("minimum", lambda v, m: v < m), ("maximum", lambda v, m: v > m),
                       ("exclusiveMinimum", lambda v, m: v <= m), ("exclusiveMaximum", lambda v, m: v >= m)):
        if key in sub:
            if not _is_number(sub[key]):
                return None
            m = sub[key]
            tests.append(lambda v, m=m, fails=fails: not _is_number(v) or not fails(v, m))
    if "format" in sub and formats is not None:
        fmt = sub["format"]
        tests.append(lambda v: formats.conforms(v, fmt))
    if "items" in sub:
        item = compile_subschema(sub["items"], root, formats, depth + 1)
        if item is None:
            return None
        tests.append(lambda v: not isinstance(v, list) or all(item(x) for x in v))
    if sub.get("uniqueItems") is True:
        tests.append(lambda v: not isinstance(v, list) or _unique_strings(v))
    elif sub.get("uniqueItems") not in (None, False):
        return None
    for key, fails in (("minItems", lambda v, n: len(v) < n), ("maxItems", lambda v, n: len(v) > n)):
        if key in sub:
            n = sub[key]
            tests.append(lambda v, n=n, fails=fails: not isinstance(v, list) or not fails(v, n))
    return lambda v: all(t(v) for t in tests)


def _unique_strings(items: list[Any]) -> bool:
    if not all(isinstance(x, str) for x in items):
        raise _NotSimple  # jsonschema's own uniqueness (1 and True differ, 1 and 1.0 do not) decides
    return len(set(items)) == len(items)


class _NotSimple(Exception):
    """A value the compiled predicate cannot judge exactly: the subschema's validator decides."""


def quick_check(validator: jsonschema.protocols.Validator) -> Any:
    """For a closed-object schema (``type: object``, ``required``, ``properties``, ``additionalProperties``
    and nothing else at the top), a function telling valid frontmatter in one call per property, or None.

    Those keywords constrain each property on its own (JSON Schema 2020-12 §10.3.2), so validating
    every value against its property's subschema is exact and skips jsonschema's per-instance
    descent; only invalid frontmatter pays for the full :meth:`iter_errors` with its messages.
    """
    key = id(validator)
    if key in _QUICK and _QUICK[key] is not None and _QUICK[key][0] is validator:  # type: ignore[index]
        return _QUICK[key][1]  # type: ignore[index]
    schema = validator.schema
    check = None
    if isinstance(schema, dict) and set(schema) <= _OBJECT_KEYWORDS and schema.get("type") == "object" \
            and schema.get("additionalProperties") in (False, None, True):
        props = {name: _fast_is_valid(validator, sub) for name, sub in (schema.get("properties") or {}).items()}
        required = list(schema.get("required") or [])
        closed = schema.get("additionalProperties") is False
        memo: dict[tuple[Any, ...], bool] = {}  # (property, value) → valid: a vault repeats its values

        def check(data: Any) -> bool:
            if not isinstance(data, dict) or any(name not in data for name in required):
                return False
            for name, value in data.items():
                sub = props.get(name)
                if sub is None:
                    if closed:
                        return False
                    continue
                key = _memo_key(name, value)
                valid = memo.get(key) if key is not None else None
                if valid is None:
                    valid = sub(value)
                    if key is not None:
                        if len(memo) >= _MEMO_MAX:
                            memo.clear()
                        memo[key] = valid
                if not valid:
                    return False
            return True

    _QUICK[key] = (validator, check)
    return check


def _fast_is_valid(validator: jsonschema.protocols.Validator, sub: Any) -> Callable[[Any], bool]:
    """``is_valid`` for one property's subschema: compiled where :func:`compile_subschema` can, else jsonschema's."""
    full = validator.evolve(schema=sub).is_valid
    compiled = compile_subschema(sub, validator.schema, validator.format_checker)
    if compiled is None:
        return full

    def is_valid(value: Any) -> bool:
        try:
            return compiled(value)
        except _NotSimple:
            return full(value)
    return is_valid


def _within_time(search: Callable[[str], bool], value: str) -> bool:
    """``search(value)``; False when it gives up, so that the full validation says why."""
    try:
        return search(value)
    except TimeoutError:
        return False
