"""JSON Schema (2020-12) validation of frontmatter, with messages that tell the fix.

Schemas come from the built-in ``schemas/`` folder (``adr``, ``incident``,
``rule``, ``memory``) or from a JSON file in the repository named in
``.vaultsync.yaml``. Errors become ``SC*`` diagnostics at the offending value's
line: ``field: expected boolean, got 'yes' (use true/false)``.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource

from vaultsync.diagnostics import Diagnostic
from vaultsync.resources import data_dir
from vaultsync.vault.fields import parse_vault_date
from vaultsync.vault.note import Note
from vaultsync.vault.scalars import quote

_JSON_TYPES = {
    "string": "string", "number": "number", "integer": "integer", "boolean": "boolean",
    "array": "list", "object": "mapping", "null": "null",
}


_FORMATS = jsonschema.FormatChecker()


@_FORMATS.checks("vault-date")
def _is_vault_date(value: object) -> bool:
    return not isinstance(value, str) or parse_vault_date(value) is not None


@lru_cache(maxsize=1)
def _builtin_registry() -> Registry:
    resources = []
    for file in sorted(data_dir("schemas").glob("*.schema.json")):
        schema = json.loads(file.read_text(encoding="utf-8"))
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


def builtin_schema_names() -> list[str]:
    """Names of the schemas that ship with vaultsync (``adr``, ``incident``, ...)."""
    return sorted(p.name.removesuffix(".schema.json") for p in data_dir("schemas").glob("*.schema.json"))


@lru_cache(maxsize=64)
def load_validator(name_or_path: str, repo_root: str = ".", text: str | None = None) -> jsonschema.protocols.Validator:
    """A compiled validator for a built-in schema name or a repo-relative schema file.

    Args:
        text: the schema file's content when it was read from a snapshot (the index
            or a commit) rather than from disk.
    Raises:
        FileNotFoundError: no such built-in schema or file.
        ValueError: the file is not valid JSON / not a valid schema.
    """
    builtin = data_dir("schemas") / f"{name_or_path}.schema.json"
    if builtin.is_file():
        schema = json.loads(builtin.read_text(encoding="utf-8"))
    else:
        path = Path(repo_root) / name_or_path
        if text is None and not path.is_file():
            raise FileNotFoundError(
                f"schema {name_or_path!r} is neither built in ({', '.join(builtin_schema_names())}) nor a file"
            )
        try:
            schema = json.loads(text if text is not None else path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"schema {name_or_path}: {exc}") from None
        if not isinstance(schema, dict):
            raise ValueError(f"schema {name_or_path}: a schema file must hold a JSON object")
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"schema {name_or_path}: {exc.message}") from None
    validator = jsonschema.Draft202012Validator(flatten(schema), registry=_builtin_registry(), format_checker=_FORMATS)
    try:
        validator.is_valid({})  # resolve every $ref once: a dangling one is a schema error, not a crash later
    except Exception as exc:  # noqa: BLE001 - referencing raises several unrelated types
        raise ValueError(f"schema {name_or_path}: {type(exc).__name__}: {exc}") from None
    return validator


def flatten(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline a top-level ``$ref`` to a built-in schema closed by ``unevaluatedProperties: false``.

    ``{"$ref": base, "properties": P, "unevaluatedProperties": false}`` accepts
    exactly what ``base`` with ``P`` merged into its properties and
    ``additionalProperties: false`` accepts, and the latter validates several
    times faster (no annotation collection). Other shapes are returned unchanged.
    """
    ref = schema.get("$ref")
    if not isinstance(ref, str) or schema.get("unevaluatedProperties") is not False:
        return schema
    if set(schema) - {"$schema", "$id", "$ref", "title", "description", "properties", "required",
                      "unevaluatedProperties"}:
        return schema
    try:
        base = _builtin_registry().resolver(base_uri=schema.get("$id", "")).lookup(ref).contents
    except Exception:  # noqa: BLE001 - an unresolvable $ref is reported by validation itself
        return schema
    if not isinstance(base, dict) or "$ref" in base or base.get("type") != "object":
        return schema
    merged = copy.deepcopy(base)
    properties = merged.setdefault("properties", {})
    for key, sub in (schema.get("properties") or {}).items():
        if key in properties and set(properties[key]) & set(sub):
            properties[key] = {"allOf": [properties[key], sub]}
        else:
            properties[key] = {**properties.get(key, {}), **sub}
    merged["required"] = list(dict.fromkeys(list(base.get("required", [])) + list(schema.get("required", []))))
    merged["additionalProperties"] = False
    for key in ("$id", "title", "description"):
        if key in schema:
            merged[key] = schema[key]
    return merged


def field_name(path: tuple[Any, ...]) -> str:
    """``('related', 0)`` → ``related[0]``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _describe(value: Any, raw: str | None = None) -> str:
    """How to show ``value`` in a message: the author's ``raw`` text for numbers and booleans, when known."""
    if raw is not None and isinstance(value, (bool, int, float)):
        return raw
    if value is None:
        return "null (empty value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "a nested list" if value and all(isinstance(v, list) for v in value) else "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, str):
        return repr(value)
    return repr(value)


def _expected(schema_type: Any) -> str:
    if isinstance(schema_type, list):
        return " or ".join(_JSON_TYPES.get(t, t) for t in schema_type)
    return _JSON_TYPES.get(schema_type, str(schema_type))


def _suggest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _message(err: jsonschema.ValidationError, note: Note) -> tuple[tuple[Any, ...], str, bool]:
    """(path, message, at_key) for one validation error."""
    path = tuple(err.absolute_path)
    name = field_name(path)
    value = err.instance
    kw = err.validator
    raw = note.raw(path) if isinstance(value, (bool, int, float)) else None
    shown = _describe(value, raw)
    if kw == "type":
        expected = _expected(err.validator_value)
        if isinstance(value, list) and r"\[\[" in str(err.schema.get("pattern", "")):
            return path, f'{name}: expected "[[note]]" string, got a nested list — quote wikilinks in YAML', False
        hint = " (use true/false)" if expected == "boolean" and isinstance(value, str) else ""
        if expected == "string" and raw is not None and raw[:1] not in "'\"":
            hint = f" — YAML reads it as a {'boolean' if isinstance(value, bool) else 'number'}: quote it: {quote(raw)}"
        return path, f"{name}: expected {expected}, got {shown}{hint}", False
    if kw == "required":
        missing = re.findall(r"'([^']+)' is a required property", err.message)
        what = missing[0] if missing else err.message
        return path, f"missing required field '{what}'", True
    if kw in ("additionalProperties", "unevaluatedProperties"):
        known = list((err.schema.get("properties") or {}).keys()) + _ref_properties(err)
        extras = [k for k in value if k not in known] if isinstance(value, dict) else []
        return path, "; ".join(
            f"{key}: additional property not allowed{_suggest(key, known)}" for key in extras
        ) or err.message, True
    if kw == "enum":
        options = [str(o) for o in err.validator_value]
        return path, f"{name}: {shown} is not one of: {', '.join(options)}{_suggest(str(value), options)}", False
    if kw == "const":
        return path, f"{name}: must be {err.validator_value!r}, got {shown}", False
    if kw == "minLength" and err.validator_value == 1:
        return path, f"{name}: should be non-empty", False
    if kw == "format":
        return path, f"{name}: {_describe(value)} is not a valid date (use YYYY-MM-DD)", False
    if kw == "pattern":
        example = err.schema.get("examples") or []
        desc = err.schema.get("description", "")
        hint = f" (e.g. {example[0]})" if example else (f" ({desc})" if desc else "")
        return path, f"{name}: {_describe(value)} has the wrong form{hint}", False
    if kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        side = "at least" if "inimum" in kw else "at most"
        return path, f"{name}: {shown} must be {side} {err.validator_value}", False
    if kw == "uniqueItems":
        return path, f"{name}: has duplicate items", False
    return path, f"{name or 'frontmatter'}: {err.message}", False


def _ref_properties(err: jsonschema.ValidationError) -> list[str]:
    ref = err.schema.get("$ref")
    if not ref:
        return []
    try:
        resolved = _builtin_registry().resolver(base_uri="https://vaultsync.dev/schemas/").lookup(ref)
    except Exception:  # noqa: BLE001 - a suggestion is best effort
        return []
    return list((resolved.contents.get("properties") or {}).keys())


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
        rx = re.compile(sub["pattern"])
        tests.append(lambda v: not isinstance(v, str) or rx.search(v) is not None)
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


def _quick_check(validator: jsonschema.protocols.Validator) -> Any:
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


def validate_frontmatter(note: Note, data: dict[str, Any], validator: jsonschema.protocols.Validator) -> list[Diagnostic]:
    """Validate ``data`` (the note's frontmatter, possibly normalised) and locate each error."""
    quick = _quick_check(validator)
    if quick is not None and quick(data):
        return []
    out: list[Diagnostic] = []
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    seen: set[tuple[Any, ...]] = set()
    for err in errors:
        if err.validator in ("$ref", "allOf"):
            continue
        path, message, at_key = _message(err, note)
        if err.validator in ("additionalProperties", "unevaluatedProperties") and isinstance(err.instance, dict):
            for part in message.split("; "):
                key = part.split(":", 1)[0]
                line, col = note.position(path + (key,), key=True)
                out.append(Diagnostic(note.path, line, col, "SC003", part))
            continue
        if (path, message) in seen:
            continue
        seen.add((path, message))
        line, col = note.position(path, key=at_key) if path else (1, 1)
        code = {"required": "SC002", "additionalProperties": "SC003", "unevaluatedProperties": "SC003"}.get(
            str(err.validator), "SC001"
        )
        if err.validator == "format":
            code = "DT001"
        out.append(Diagnostic(note.path, line, col, code, message))
    return out
