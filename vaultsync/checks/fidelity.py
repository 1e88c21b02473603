"""FM017: a frontmatter value that YAML stores differently from the text the author wrote.

Rule (ADR-0050), applied to the findings of :mod:`vaultsync.vault.scalars`:

* ``colon_key``, ``comment``, ``comment_key``, ``comment_line``, ``empty_item``, ``escape``, ``indent``, ``merge``, ``block``, ``anchor``,
  ``portable``, ``tab`` and ``wikilink`` findings are always errors: text is
  lost, or another YAML reader (Obsidian, a site generator, PyYAML) gets a
  different value from the same file.
* ``number`` findings (``1.10``, ``0.80``, ``+5``, ``0x1F``) are errors unless the
  field is declared numeric only (``number``/``integer``) by the note's schema:
  there the number *is* what the author meant and ``0.80`` = ``0.8`` loses
  nothing. In a string field the schema check reports the type, quoting the text.

Every message quotes the author's text and gives the quoted form to write.
"""

from __future__ import annotations

import math
import unicodedata
from typing import Any

from vaultsync.checks.schema import field_name
from vaultsync.diagnostics import Diagnostic, advise, cut, shown
from vaultsync.vault.note import Note
from vaultsync.vault.scalars import Finding, canonical_number, odd_escape
from vaultsync.vault.wikilinks import link_texts
from vaultsync.vault.yamlquote import plain_number, quote

CODE = "FM017"
_NUMERIC = {"number", "integer"}


def check_fidelity(note: Note, schema: dict[str, Any] | None) -> list[Diagnostic]:
    """FM017 diagnostics for ``note`` (``schema``: the note type's flattened JSON Schema, or None)."""
    out: list[Diagnostic] = []
    for f in note.scalar_findings:
        message = _message(f, types_at(schema, f.path) if schema else None)
        if message:
            where = f"{field_name(f.path)}: " if f.path else ""
            out.append(Diagnostic(note.path, f.line + 2, f.col + 1, CODE, where + message))
    return out


def _message(f: Finding, types: set[str] | None) -> str | None:
    numeric = bool(types is not None and types and types <= _NUMERIC | {"null"})  # quoting would fail the schema
    if f.kind == "comment":
        kept = "an empty value (null)" if f.stored is None else f"'{cut(str(f.stored))}'"
        if not numeric:
            fix = advise("quote it", quote(f.written))
        elif f.stored is not None:
            fix = "write '# ' with a space if it is a comment, or remove it"
        else:
            fix = "write the number (a comment after it takes '# ' with a space)"
        return f"YAML reads ' #' as the start of a comment and stores {kept}, not '{cut(f.written)}' — {fix}"
    if f.kind == "escape":  # the text as typed (`\\srv` is a share), but `\"` can only have meant a quote
        single = "'" + f.written[1:-1].replace('\\"', '"').replace("'", "''") + "'"
        found = odd_escape(f.written)
        what = f"U+{ord(found[2]):04X} ({unicodedata.name(found[2], 'a control character')})" if found else \
            "a control character"
        where = f"{found[1]} in {cut(f.written)}" if found else cut(f.written)
        return (f"inside double quotes YAML reads backslash escapes, so {where} stores {what} "
                f"— {advise('use single quotes for backslashes', single)}")
    said = cut(f.written)
    if f.kind == "indent" and isinstance(f.path[-1], int):
        return (f"the line '{said}' is indented deeper than the item above it, so YAML reads it as more "
                f"text of that item and stores {shown(f.stored)} — line its '-' up with the one above")
    if f.kind == "indent":
        return (f"the line '{said}' continues the value above it, so YAML reads it as more text and "
                f"stores {shown(f.stored)} — quote the value, or start the list on the line after the key")
    if f.kind == "comment_line":
        key, sep, value = f.written.partition(": ") if f.stored == "mapping" else ("", "", "")
        fix = f"{quote(key)}: {value}" if sep else quote(f.written)
        return f"YAML reads '{said}' as a comment, so the {f.stored or 'list'} leaves it out — {advise('quote it', fix)}"
    if f.kind == "comment_key":
        return (f"YAML reads '{said}' as a comment and takes the indented lines below as the value "
                f"({shown(f.stored)}) — write '# ' with a space if it is a comment; if it is the value, "
                f"{advise('quote it', quote(f.written), ' ({})')} and move the lines below out")
    if f.kind == "colon_key":
        key, _, rest = f.written.partition(":")
        return f"YAML reads '{said}' as one key with no value — {advise('put a space after the colon', f'{key}: {rest.lstrip(chr(58))}')}"
    if f.kind == "merge":
        return ("YAML 1.1 readers (PyYAML, many site generators) merge the mapping given after '<<:' into this "
                "one, while vaultsync (YAML 1.2) stores a key named '<<' — write the keys out instead")
    if f.kind == "empty_item":
        return (f"this list item holds only the comment '{said}', so YAML stores an empty (null) item "
                f"— remove the '-', or {advise('write the value', quote(f.written), ' (quoted: {})')}")
    if f.kind == "block":
        return (f"'{said}' starts a block of text on the indented lines below it, and none follow, so the "
                f"value is empty — {advise('quote it if you meant the character', quote(f.written))}")
    if f.kind == "anchor":
        stored = "an empty value (null)" if f.stored is None else shown(f.stored)
        if isinstance(f.stored, (list, dict)):  # `&t [payments]`: the collection is meant, the name is not
            fix = advise("drop the anchor", f.written.split(None, 1)[-1] if " " in f.written.strip() else "")
        elif not numeric:
            fix = advise("quote it", quote(f.written))
        else:
            fix = f"drop the anchor: {_plain(f.stored, types)}" if isinstance(f.stored, (int, float)) else \
                "write the number"
        return f"YAML reads the leading '&…' of {shown(f.written)} as an anchor name and stores {stored} — {fix}"
    if f.kind == "tab" and not f.written:
        return ("a line of only blanks holds a tab: vaultsync (YAML 1.2) and Obsidian read it as a blank line, "
                "YAML 1.1 readers (PyYAML, many site generators) refuse the whole frontmatter — delete the tab")
    if f.kind == "tab":
        return ("a tab outside quotes: vaultsync (YAML 1.2) and Obsidian read it, YAML 1.1 readers (PyYAML, many "
                "site generators) refuse the whole frontmatter — write a space instead (or quote the value, if "
                "the tab belongs to it)")
    if f.kind == "wikilink":
        links = link_texts(f.written) or [f.written]  # `[[[A]]]`: a flow list of one unquoted link
        fix = f"[{', '.join(map(quote, links))}]" if types and "array" in types and "string" not in types \
            else quote(f.written)
        return f"YAML reads the unquoted {said} as a list inside a list — {advise('quote it', fix if said == f.written else '')}"
    if f.kind == "portable":
        other = cut(_yaml11_reading(f.written))
        ours = "the text" if isinstance(f.stored, str) else f"the number {cut(canonical_number(f.stored))}"
        is_number = isinstance(f.stored, (int, float))
        if numeric:  # quoting would fail the schema: only the number to write
            fix = f"write {_plain(f.stored, types)}" if is_number else \
                "write it as a plain number (digits, one '.', a leading '-')"
        else:
            fix = advise("quote it", quote(f.written)) + (f", or write {canonical_number(f.stored)}" if is_number else "")
        return (f"YAML readers disagree on {said}: vaultsync (YAML 1.2) stores {ours}, YAML 1.1 readers "
                f"{other} — {fix}")
    if f.kind == "number":
        if numeric:
            return None
        if types is not None and "string" in types and not types & _NUMERIC:
            return None  # the schema check says "expected string, got <text>"
        plain = f", or write {canonical_number(f.stored)}" if math.isfinite(f.stored) else ""  # not `inf`: text
        return (f"YAML reads {said} as the number {cut(canonical_number(f.stored))} — "
                f"{advise('quote it to keep the text', quote(f.written))}{plain}")
    return None


def _plain(value: int | float, types: set[str] | None) -> str:
    """``value`` as a plain YAML number every reader keeps: no exponent (``0.00005``, not ``5e-05``), and a
    whole number where the field takes integers and no other numbers."""
    if isinstance(value, float) and value.is_integer() and types and "integer" in types and "number" not in types:
        value = int(value)
    text = canonical_number(value)
    return plain_number(value) if "e" in text.lower() and math.isfinite(value) else text


def _yaml11_reading(text: str) -> str:
    """What a YAML 1.1 reader makes of a ``portable`` text (https://yaml.org/type/int.html, float.html)."""
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-").replace("_", "")
    if ":" in body:
        whole, _, frac = body.partition(".")
        value = 0
        for part in whole.split(":"):
            value = value * 60 + int(part)
        return f"read the number {sign * value}{'.' + frac if frac else ''}"
    if body.startswith("0b"):
        return f"read the binary number {sign * int(body[2:], 2)}"
    if body.startswith("0o") or "e" in body.lower():  # an exponent 1.1 can read needs '.' and a sign
        return "read text"
    if body.startswith("0") and body[1:2].isdigit():
        return f"read the octal number {sign * int(body, 8)}" if set(body) <= set("01234567") else "read text"
    return f"read the number {text.replace('_', '')}"


def types_at(schema: dict[str, Any], path: tuple[Any, ...]) -> set[str] | None:
    """The JSON types a schema allows at ``path`` (None when the schema does not say); local ``$ref`` values are
    followed (``referencing``), and an ``anyOf``/``oneOf`` allows the types of its branches."""
    resolver = _resolver(schema)
    node: Any = schema
    for part in path:
        if not isinstance(node, dict):
            return None
        node = _merged(_resolved(node, resolver))
        if isinstance(part, int):
            node = node.get("items")
        else:
            node = (node.get("properties") or {}).get(part)
        if node is None:
            return None
    return _types(node, resolver) if isinstance(node, dict) else None


def _types(node: dict[str, Any], resolver: Any, depth: int = 0) -> set[str] | None:
    node = _merged(_resolved(node, resolver))
    declared = node.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {str(t) for t in declared}
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches and depth < 16:  # a committed schema may nest them without end
            found = [_types(b, resolver, depth + 1) if isinstance(b, dict) else None for b in branches]
            return set().union(*found) if all(t is not None for t in found) else None  # type: ignore[arg-type]
    return None


_SCHEMA_URI = "urn:vaultsync:checked-schema"


def _resolver(schema: dict[str, Any]) -> Any:
    """A ``referencing`` resolver of the schema's own references (nothing else is read)."""
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    return Registry().with_resource(_SCHEMA_URI, DRAFT202012.create_resource(schema)).resolver(base_uri=_SCHEMA_URI)


def _resolved(node: dict[str, Any], resolver: Any) -> dict[str, Any]:
    """``node``, or what its local ``$ref`` (``#/$defs/x``) names, followed up to 16 times."""
    for _ in range(16):
        ref = node.get("$ref")
        if not (isinstance(ref, str) and ref.startswith("#")):
            return node
        try:
            target = resolver.lookup(ref).contents
        except Exception:  # noqa: BLE001 - referencing raises several types; an unresolved $ref says nothing here
            return node
        if not isinstance(target, dict):
            return node
        node = target
    return node


def _merged(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with its ``allOf`` parts folded in (enough to read ``type``, ``properties``, ``items``)."""
    parts = node.get("allOf")
    if not isinstance(parts, list):
        return node
    merged = {k: v for k, v in node.items() if k != "allOf"}
    for part in parts:
        if isinstance(part, dict):
            for key, value in _merged(part).items():
                merged.setdefault(key, value)
    return merged
