"""A custom schema's shape, checked and adjusted before any note meets it.

- :func:`json_depth`: how deep the file nests (validation recurses as deep; bounded before it does).
- :func:`dangling_ref`: a ``$ref``/``$dynamicRef`` that resolves nowhere, or to a value that is no schema,
  or that loops back to itself on the same value (``{"$ref": "#"}``: validation would never end).
- :func:`ecma_pattern_properties`: ``patternProperties`` keys rewritten as ECMA-262 reads them, since
  jsonschema matches them (and ``additionalProperties`` beside them) with Python's ``re``.

Only what JSON Schema 2020-12 reads as a subschema is walked: a ``$ref`` inside ``enum``, ``const``,
an annotation or an unknown keyword (``x-meta``) is data, and a property named ``enum`` is a schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from vaultsync.checks.ecma_regex import translate

_ONE = ("additionalProperties", "unevaluatedProperties", "items", "contains", "propertyNames", "not", "if", "then",
        "else", "unevaluatedItems", "additionalItems", "contentSchema")
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def json_depth(value: Any) -> int:
    """How deep ``value``'s JSON nests (a scalar 0, ``{}`` 1), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is not None:
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest


def subschemas(schema: Any) -> Iterator[dict[str, Any]]:
    """Every schema object in ``schema`` (itself included), depth first."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue  # a boolean schema holds nothing
        yield node
        stack += _children(node)


def dangling_ref(schema: dict[str, Any], registry: Any) -> str | None:
    """What is wrong with the first reference of ``schema`` that does not resolve to a schema, in words;
    None when all do. ``registry`` (a ``referencing.Registry``) holds the built-in schemas; JSON Schema's
    own meta-schemas are known too. Nothing is fetched, and no other file is read."""
    from urllib.parse import urljoin

    from jsonschema_specifications import REGISTRY as META_SCHEMAS
    from referencing.jsonschema import DRAFT202012

    root = schema.get("$id") if isinstance(schema.get("$id"), str) else ""
    try:
        known = registry.combine(META_SCHEMAS).with_resource(root, DRAFT202012.create_resource(schema)).crawl()
    except Exception as exc:  # noqa: BLE001 - a shape check_schema lets through but referencing cannot crawl
        return f"cannot read its $id and $ref: {type(exc).__name__}: {exc}"
    bases = {id(schema): root}
    same: dict[int, list[tuple[int, str | None]]] = {}  # node → the schemas it applies to the same value
    for node in subschemas(schema):
        same[id(node)] = [(id(c), None) for c in _same_value(node)]
        base = bases.get(id(node), root)
        if isinstance(node.get("$id"), str):
            base = urljoin(base, node["$id"])
        for child in _children(node):
            bases[id(child)] = base
        for key in ("$ref", "$dynamicRef"):
            ref = node.get(key)
            if not isinstance(ref, str):
                continue
            try:
                target = known.resolver(base_uri=base).lookup(ref).contents
            except Exception as exc:  # noqa: BLE001 - referencing raises several unrelated types
                where = ref.split("#", 1)[0]
                hint = f" (no other file is read: put what {where!r} defines under $defs here)" if where else ""
                return f"cannot resolve {key} {ref!r}: {type(exc).__name__}{hint}"
            if not isinstance(target, (dict, bool)):
                return f"{key} {ref!r} names a value that is no schema"
            if isinstance(target, dict):
                same[id(node)].append((id(target), ref))
    loop = _ref_loop(same)
    return None if loop is None else (f"$ref {loop!r} loops back to a schema it came from on the same value: "
                                      "validation would never end (a recursive $ref must go through "
                                      "properties or items)")


def _same_value(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The subschemas that apply to the value ``node`` applies to (not to a property or an item of it)."""
    out = [node[k] for k in ("not", "if", "then", "else") if isinstance(node.get(k), dict)]
    out += [c for k in ("allOf", "anyOf", "oneOf") if isinstance(node.get(k), list) for c in node[k]
            if isinstance(c, dict)]
    if isinstance(node.get("dependentSchemas"), dict):
        out += [c for c in node["dependentSchemas"].values() if isinstance(c, dict)]
    return out


def _ref_loop(same: dict[int, list[tuple[int, str | None]]]) -> str | None:
    """The ``$ref`` that closes a cycle of :func:`_same_value` and ``$ref`` edges, or None (iterative
    depth-first search; only the schema's own nodes, so a meta-schema's recursion is never followed)."""
    state: dict[int, int] = {}  # 1: on the current path, 2: done
    for start in same:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(same[start]))]
        while stack:
            node, edges = stack[-1]
            step = next(edges, None)
            if step is None:
                state[node] = 2
                stack.pop()
                continue
            child, ref = step
            if child not in same or state.get(child) == 2:
                continue
            if state.get(child) == 1:
                return ref or "#"
            state[child] = 1
            stack.append((child, iter(same[child])))
    return None


def _children(node: dict[str, Any]) -> list[Any]:
    return ([node[k] for k in _ONE if k in node] + [s for k in _MANY if isinstance(node.get(k), list) for s in node[k]]
            + [s for k in _NAMED if isinstance(node.get(k), dict) for s in node[k].values()])


def ecma_pattern_properties(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``patternProperties`` key as ECMA-262 reads it (:func:`translate`), rewritten in
    place of a copy. Raises ValueError for a key Python's ``re`` cannot hold (``\\p{…}``: say it with a
    class there, or use ``propertyNames``)."""
    import copy

    if not any("patternProperties" in node for node in subschemas(schema)):
        return schema
    schema = copy.deepcopy(schema)
    for node in subschemas(schema):
        if isinstance(node.get("patternProperties"), dict):
            rewritten = {}
            for key, sub in node["patternProperties"].items():
                source = translate(key)
                try:
                    re.compile(source)
                except re.error as exc:
                    raise ValueError(f"patternProperties {key!r}: {exc} (\\p{{…}} works in pattern, not here)") from None
                rewritten[source] = sub
            node["patternProperties"] = rewritten
    return schema
