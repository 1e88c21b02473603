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
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource

from vaultsync.checks import keywords
from vaultsync.checks.ecma_regex import is_ecma_regex
from vaultsync.checks.quickschema import quick_check
from vaultsync.checks.schema_shape import dangling_ref, ecma_pattern_properties, json_depth
from vaultsync.diagnostics import Diagnostic, advise, closest, cut, shown
from vaultsync.lfs import LFS_POINTER
from vaultsync.resources import data_dir
from vaultsync.vault.config import SCHEMA_LINKED
from vaultsync.vault.fields import parse_vault_date
from vaultsync.vault.note import Note
from vaultsync.vault.schema_words import branch_errors
from vaultsync.vault.wikilinks import link_texts
from vaultsync.vault.yamlquote import flow_item, quote

_JSON_TYPES = {
    "string": "string", "number": "number", "integer": "integer", "boolean": "boolean",
    "array": "list", "object": "mapping", "null": "null",
}


_FORMATS = jsonschema.FormatChecker()
MAX_SCHEMA_DEPTH = 64  # JSON nesting of a schema file: far past any real one, far below Python's recursion limit
_SCHEMA_FORMATS = jsonschema.Draft202012Validator.FORMAT_CHECKER  # what a schema itself is checked with ...
_SCHEMA_FORMATS = jsonschema.FormatChecker({**_SCHEMA_FORMATS.checkers})
_SCHEMA_FORMATS.checks("regex")(is_ecma_regex)  # ... its patterns read as ECMA-262, as validation reads them


_Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator,
                                        {"pattern": keywords.pattern, "uniqueItems": keywords.unique_items})


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
def load_validator(name_or_path: str, repo_root: str = ".", text: str | None = None,
                   on_disk: bool = True) -> jsonschema.protocols.Validator:
    """A compiled validator for a built-in schema name or a repo-relative schema file.

    Args:
        text: the schema file's content when it was read from a snapshot (the index
            or a commit) rather than from disk.
        on_disk: whether a file without ``text`` is read from the working tree; False for a snapshot,
            whose notes must never be judged by a schema it does not hold.
    Raises:
        FileNotFoundError: no such built-in schema or file (or, with ``on_disk=False``, not in the snapshot).
        ValueError: the file is not valid JSON / not a valid schema.
    """
    builtin = data_dir("schemas") / f"{name_or_path}.schema.json"
    if builtin.is_file():
        schema = json.loads(builtin.read_text(encoding="utf-8"))
    else:
        path = Path(repo_root) / name_or_path
        if text is None and on_disk and (path.is_symlink() or not path.resolve().is_relative_to(Path(repo_root).resolve())):
            raise FileNotFoundError(f"schema {name_or_path!r} is {SCHEMA_LINKED}")
        if text is None and not on_disk:
            raise FileNotFoundError(f"schema {name_or_path!r} is not committed (only the working tree has it: "
                                    "git add it)")
        if text is None and not path.is_file():
            raise FileNotFoundError(
                f"schema {name_or_path!r} is neither built in ({', '.join(builtin_schema_names())}) nor a file"
            )
        try:
            raw = text if text is not None else path.read_bytes().decode("utf-8")
            if raw.startswith(LFS_POINTER.decode()):  # git-lfs did not smudge it
                raise ValueError("a Git LFS pointer, its content not checked out: run `git lfs pull`")
            schema = json.loads(raw)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValueError) as exc:
            raise ValueError(f"schema {name_or_path}: {exc}") from None
        except RecursionError:
            raise ValueError(f"schema {name_or_path}: nested more than {MAX_SCHEMA_DEPTH} levels deep") from None
        if not isinstance(schema, dict):
            raise ValueError(f"schema {name_or_path}: a schema file must hold a JSON object")
        if json_depth(schema) > MAX_SCHEMA_DEPTH:  # what validation recurses through: bounded before it does
            raise ValueError(f"schema {name_or_path}: nested more than {MAX_SCHEMA_DEPTH} levels deep")
    try:
        jsonschema.Draft202012Validator.check_schema(schema, format_checker=_SCHEMA_FORMATS)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"schema {name_or_path}: {exc.message}") from None
    problem = dangling_ref(schema, _builtin_registry())
    if problem is not None:  # a schema error now, not a crash on the first note that reaches it
        raise ValueError(f"schema {name_or_path}: {problem}")
    try:
        schema = ecma_pattern_properties(schema)
    except ValueError as exc:
        raise ValueError(f"schema {name_or_path}: {exc}") from None
    return _Validator(flatten(schema), registry=_builtin_registry(), format_checker=_FORMATS)


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
        if not isinstance(sub, dict) or not isinstance(properties.get(key, {}), dict):  # a boolean schema
            properties[key] = {"allOf": [properties[key], sub]} if key in properties else sub
        elif key in properties and set(properties[key]) & set(sub):
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




def _unquoted_link(value: Any) -> str | None:
    """``[[target]]`` when ``value`` is what YAML makes of an unquoted WikiLink: ``[["target"]]`` (a
    block item ``- [[target]]``) or ``["target"]`` (an item of a flow list ``[[target]]``); else None."""
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
        if isinstance(value, str):
            return f"[[{value}]]"
    return None


def _scalar_hint(raw: str, kind: str) -> str:
    """How to write a bool or number as the string the schema asks for: quote it, or, when an explicit tag
    (``!!int "12"``) made it one, drop the tag: quoting the whole would keep the tag as text."""
    tag, _, rest = raw.partition(" ")
    rest = rest.strip()
    if raw.startswith("!") and rest:
        fixed = rest if rest[0] in "'\"" else quote(rest)
        return f" — the tag {tag} makes it a {kind}: drop the tag: {fixed}"
    return f" — YAML reads it as a {kind}: {advise('quote it', quote(raw))}"


def _describe(value: Any, raw: str | None = None) -> str:
    """How to show ``value`` in a message: the author's ``raw`` text for numbers and booleans, when known."""
    if raw is not None and isinstance(value, (bool, int, float)):
        return cut(raw)
    if value is None:
        return "null (empty value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "a nested list" if value and all(isinstance(v, list) for v in value) else "a list"
    if isinstance(value, dict):
        return "a mapping"
    return shown(value)


def _expected(schema_type: Any) -> str:
    if isinstance(schema_type, list):
        return " or ".join(_JSON_TYPES.get(t, t) for t in schema_type)
    return _JSON_TYPES.get(schema_type, str(schema_type))


def _suggest(word: str, choices: list[str]) -> str:
    close = closest(word, choices)
    return f" (did you mean '{close}'?)" if close else ""


def _extra_key(note: Note, path: tuple[Any, ...], key: str, known: list[str], mapping: dict[str, Any]) -> str:
    """SC003 for ``key``: where it is a second spelling (:func:`_spells`) of a key the note sets too, that
    the two are one field written twice (renaming would make a duplicate key); else the nearest known key
    the note does not set, as a did-you-mean. A key merely like one the note sets (``subtitle`` beside
    ``title``, ``superseded`` beside ``supersedes``) is its own."""
    folded = {k.casefold(): k for k in reversed(known)}  # `TITLE` is as close to `title` as `Title` is
    close = [folded[k] for k in difflib.get_close_matches(key.casefold(), list(folded), n=3, cutoff=0.6)]
    shown = cut(flow_item(key))  # `"a: b": additional…` reads as one key
    if twice := next((c for c in close if c in mapping and _spells(key, c)), None):
        line, _ = note.position((*path, twice), key=True)
        return (f"{shown}: additional property not allowed — a second spelling of '{twice}', which this note "
                f"sets on line {line}: keep one of the two")
    unset = next((c for c in close if c not in mapping), None)
    return f"{shown}: additional property not allowed" + (f" (did you mean '{unset}'?)" if unset else "")


def _spells(key: str, field: str) -> bool:
    """Whether ``key`` writes ``field`` another way: the same letters in another case or with ``-``, ``_`` or
    blanks between words (``Superseded-By``), or, for words of 3+ letters, one letter added or dropped, or
    two neighbours swapped (``titel``, ``ownr``, ``tag``). A changed letter makes another word as often as
    a typo (``expired``, ``superseded``), so it is none."""
    a, b = (re.sub(r"[-_\s]", "", k.casefold()) for k in (key, field))
    if a == b:
        return True
    if min(len(a), len(b)) < 3 or abs(len(a) - len(b)) > 1:
        return False
    i = next((n for n, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return a[i:] == b[i + 1:] or a[i + 1:] == b[i:] \
        or (len(a) == len(b) and a[i + 2:] == b[i + 2:] and a[i:i + 2] == b[i:i + 2][::-1])


def _extra_keys(err: jsonschema.ValidationError, note: Note) -> list[tuple[Any, str]]:
    """``(key, SC003 message)`` per key an ``additionalProperties``/``unevaluatedProperties`` error refuses."""
    if not isinstance(err.instance, dict):
        return []
    path = tuple(err.absolute_path)
    known = list((err.schema.get("properties") or {}).keys()) + _ref_properties(err)
    return [(key, _extra_key(note, path, str(key), known, err.instance)) for key in err.instance if key not in known]


def _message(err: jsonschema.ValidationError, note: Note) -> tuple[tuple[Any, ...], str, bool]:
    """(path, message, at_key) for one validation error."""
    path = tuple(err.absolute_path)
    name = field_name(path) or "frontmatter"
    value = err.instance
    kw = err.validator
    raw = note.raw(path) if isinstance(value, (bool, int, float)) else None
    shown = _describe(value, raw)
    if kw is None:  # a false schema (``"tags": false``)
        return path, f"{name}: the schema allows no value here", False
    if kw == "type":
        expected = _expected(err.validator_value)
        link = _unquoted_link(value)
        if link is not None and r"\[\[" in str(err.schema.get("pattern", "")):  # `[[note]]` unquoted: lists in YAML
            fix = f"write one value: {quote(link[2:-2])}" if link.startswith("[[[[") and link.endswith("]]]]") \
                else f"quote wikilinks in YAML: {quote(link)}"  # the first: `["[[note]]"]`, a quoted link in a list
            return path, f'{name}: expected "[[note]]" string, got {shown} — {fix}', False
        hint = " (use true/false)" if expected == "boolean" and isinstance(value, str) else ""
        if expected == "string" and raw is not None and raw[:1] not in "'\"":
            hint = _scalar_hint(raw, "boolean" if isinstance(value, bool) else "number")
        if expected == "list" and isinstance(value, str) and value.strip():  # `tags: orders`: one item, written bare
            items = [v.strip() for v in value.split(",") if v.strip()] if "[[" not in value else \
                link_texts(value) or [value.strip()]
            hint = f" — write a list: [{', '.join(map(flow_item, items))}]"
        return path, f"{name}: expected {expected}, got {shown}{hint}", False
    if kw == "required":
        missing = re.findall(r"'([^']+)' is a required property", err.message)
        what = missing[0] if missing else err.message
        return path, f"missing required field '{what}'", True
    if kw in ("additionalProperties", "unevaluatedProperties"):
        return path, "; ".join(message for _, message in _extra_keys(err, note)) or err.message, True
    if kw == "enum":
        options = [str(o) for o in err.validator_value]
        return path, f"{name}: {shown} is not one of: {', '.join(options)}{_suggest(str(value), options)}", False
    if kw == "const":
        return path, f"{name}: must be {err.validator_value!r}, got {shown}", False
    if kw == "minLength" and err.validator_value == 1:
        return path, f"{name}: should be non-empty", False
    if kw == "format":
        fmt = err.validator_value
        if fmt in ("vault-date", "date"):
            return path, f"{name}: {_describe(value)} is not a valid date (use YYYY-MM-DD)", False
        if fmt == "date-time":
            return path, f"{name}: {_describe(value)} is not a valid date-time (RFC 3339: 2024-01-31T09:30:00Z)", False
        return path, f"{name}: {_describe(value)} is not a valid {fmt}", False
    if kw == "pattern" and err.message.startswith(keywords.GAVE_UP):
        return path, f"{name}: {err.message}", False
    if kw == "pattern" and value == "":
        return path, f"{name}: should be non-empty", False
    if kw == "pattern":
        example = err.schema.get("examples") or []
        desc = err.schema.get("description", "")
        hint = f" (e.g. {example[0]})" if example else (f" ({desc})" if desc else "")
        return path, f"{name}: {_describe(value)} has the wrong form{hint}", False
    if kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        side = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than",
                "exclusiveMaximum": "less than"}[str(kw)]
        return path, f"{name}: {shown} must be {side} {err.validator_value}", False
    if kw == "uniqueItems":
        return path, f"{name}: has duplicate items", False
    if kw in ("anyOf", "oneOf") and all(isinstance(b, dict) and "type" in b for b in err.validator_value):
        expected = " or ".join(dict.fromkeys(_expected(b["type"]) for b in err.validator_value))
        return path, f"{name}: expected {expected}, got {shown}", False
    said = repr(value)  # jsonschema's messages open with the value's repr: a list may run for pages
    message = shown + err.message[len(said):] if err.message.startswith(said) else err.message
    return path, f"{name or 'frontmatter'}: {message}", False


def _ref_properties(err: jsonschema.ValidationError) -> list[str]:
    ref = err.schema.get("$ref")
    if not ref:
        return []
    try:
        resolved = _builtin_registry().resolver(base_uri="https://vaultsync.dev/schemas/").lookup(ref)
    except Exception:  # noqa: BLE001 - a suggestion is best effort
        return []
    return list((resolved.contents.get("properties") or {}).keys())


# keywords that judge a value of the right type: moot once the value's type is refused at the same place
_VALUE_KEYWORDS = frozenset({"enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                             "multipleOf", "pattern", "format", "minLength", "maxLength"})


def validate_frontmatter(note: Note, data: dict[str, Any], validator: jsonschema.protocols.Validator) -> list[Diagnostic]:
    """Validate ``data`` (the note's frontmatter, possibly normalised) and locate each error."""
    quick = quick_check(validator)
    try:
        if quick is not None and quick(data):
            return []
        errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    except RecursionError:  # a $ref loop the load-time check (schema_shape.dangling_ref) did not see
        return [Diagnostic(note.path, 1, 1, "SC001", "the type's schema recursed without end on this note: "
                                                      "a $ref in it loops back on the same value")]
    out: list[Diagnostic] = []
    seen: set[tuple[Any, ...]] = set()
    found = [e for top in errors for e in branch_errors(top)]
    mistyped = {tuple(e.absolute_path) for e in found if e.validator == "type"}
    for err in found:
        if err.validator in ("$ref", "allOf"):
            continue
        if err.validator in _VALUE_KEYWORDS and tuple(err.absolute_path) in mistyped:
            continue  # one error per value: "expected string, got a list" says it, not also "not one of: …"
        if extras := (_extra_keys(err, note) if err.validator in ("additionalProperties", "unevaluatedProperties")
                      else []):
            for key, message in extras:  # each refused key at its own line
                line, col = note.position((*err.absolute_path, key), key=True)
                out.append(Diagnostic(note.path, line, col, "SC003", message))
            continue
        path, message, at_key = _message(err, note)
        if "propertyNames" in err.absolute_schema_path and isinstance(err.instance, str):  # a key, at the key
            path, at_key = path + (err.instance,), True
            message = (f"{field_name(path[:-1])}: " if path[:-1] else "") + "key " + message.split(": ", 1)[-1]
        if (path, message) in seen:
            continue
        seen.add((path, message))
        line, col = note.position(path, key=at_key) if path else (1, 1)
        code = {"required": "SC002", "additionalProperties": "SC003", "unevaluatedProperties": "SC003"}.get(
            str(err.validator), "SC001"
        )
        if err.validator == "format" and err.validator_value in ("vault-date", "date", "date-time"):
            code = "DT001"
        out.append(Diagnostic(note.path, line, col, code, message))
    return out
