"""Schema errors in the author's words: shapes as YAML names them, fields as ``a.b[0]``, and an
``anyOf``/``oneOf`` error told as the errors of the branch the value meant.

jsonschema reports ``aliases: [[a]]`` against ``anyOf: [list of strings, string]`` as one error whose
message is the whole value's repr "is not valid under any of the given schemas". The value is a list, so
only the list branch can be meant: its own errors (``aliases[0]: expected string``) say what to fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # jsonschema loads only where a value failed
    import jsonschema

    from vaultsync.diagnostics import Diagnostic


def dotted(where: tuple[Any, ...]) -> str:
    """A value's place as an author writes it: ``("index", "embedders", 1)`` is ``index.embedders[1]``."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in where)[1:]


_SHAPES = {"object": "a mapping", "array": "a list", "string": "a string", "number": "a number",
           "integer": "a whole number", "boolean": "true or false", "null": "nothing"}


def expected_shape(schema: dict[str, Any]) -> str:
    """What a config schema node accepts, in words (``a string or a list``)."""
    options = schema.get("anyOf") or schema.get("oneOf") or [schema]
    kinds = [k for o in options if isinstance(o, dict) for k in ([o["type"]] if isinstance(o.get("type"), str)
                                                                else o.get("type") or [])]
    return " or ".join(dict.fromkeys(_SHAPES.get(k, k) for k in kinds)) or "another value"


def yaml_shape(value: Any) -> str:
    """A config value in YAML's words, for a message: ``5``, ``true``, ``nothing (null)``, ``'x'``, a mapping,
    a list (never Python's ``True``/``None``)."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value) if isinstance(value, str) else str(value)


def section_of(diagnostic: Diagnostic) -> str:
    """The top-level config section a CF002 names (``search`` for ``search.rerank: …``)."""
    return diagnostic.message.split(":", 1)[0].split(".", 1)[0]


def ignored_setting(diagnostic: Diagnostic) -> str:
    """A warning for a committed value left out of a section no index is built from (``Config.ignored``;
    ADR-0119, ADR-0129): ``… — using the default search settings``."""
    return f"{diagnostic.render()} — using the default {section_of(diagnostic)} settings"


def branch_errors(err: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    """``err`` as the errors of the one branch whose ``type`` its value has, recursively (a branch's own
    ``anyOf`` too); ``[err]`` when it is no ``anyOf``/``oneOf`` error, or when no single branch takes the
    value's type (then "expected A or B" says it all)."""
    if err.validator not in ("anyOf", "oneOf") or not isinstance(err.validator_value, list):
        return [err]
    typed = [i for i, branch in enumerate(err.validator_value)
             if isinstance(branch, dict) and _has_type(err.instance, branch.get("type"))]
    if len(typed) != 1:
        return [err]
    inner = [e for e in err.context or [] if e.relative_schema_path and e.relative_schema_path[0] == typed[0]]
    return [e for sub in inner for e in branch_errors(sub)] or [err]


def _has_type(value: object, types: object) -> bool:
    from jsonschema import Draft202012Validator

    checker = Draft202012Validator.TYPE_CHECKER
    names = types if isinstance(types, list) else [types]
    return any(isinstance(t, str) and t in checker._type_checkers and checker.is_type(value, t) for t in names)
