"""Frontmatter as text: render a mapping as YAML 1.2 block style, and minimal line edits of a note.

Rendering quotes every string that YAML could read as something else (JSON string syntax
is valid YAML), so what is read back equals what was given; every edit is verified by
parsing the result. Edits touch only the lines of the changed key and keep the rest of
the file byte for byte (comments, key order, CRLF, BOM), and the comment that ends the key's
own line.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from vaultsync.diagnostics import shown
from vaultsync.memory.errors import MemoryWriteError
from vaultsync.vault.note import parse_text

_PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_PLAIN_TEXT = re.compile(r"^[^\W\d_][\w .,()/+'-]*[\w.)]$")  # a sentence YAML reads as the same string
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "nan", "inf"}
_UNPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")  # YAML rejects or re-reads these
_TOP_KEY = re.compile(r"^([^\s#\-][^:]*):(.*)$")
_COMMENT_START = re.compile(r"[ \t]+#")


def scalar(value: Any, flow: bool = False) -> str:
    """One YAML scalar (or a flow list/mapping) for ``value``; strings quoted unless plain words. ``flow``:
    an item of a flow list or mapping, where a comma or bracket would end the item (``[A,0]`` is two)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise MemoryWriteError(f"{value!r} is not a finite number")
        return repr(value)
    if isinstance(value, str):
        if (_PLAIN.fullmatch(value) or _PLAIN_TEXT.fullmatch(value)) and value.lower() not in _RESERVED \
                and ": " not in value and " #" not in value and not (flow and any(c in value for c in ",[]{}")):
            return value
        text = json.dumps(value, ensure_ascii=False)
        return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    if isinstance(value, list):
        return "[" + ", ".join(scalar(v, flow=True) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {scalar(v, flow=True)}" for k, v in value.items()) + "}"
    raise MemoryWriteError(f"cannot write a value of type {type(value).__name__} into frontmatter")


def render_note(frontmatter: dict[str, Any], body: str) -> str:
    """The note's full text: ``---``, one ``key: value`` line per field, ``---``, the body.

    Raises:
        MemoryWriteError: a key or value that cannot be written faithfully.
    """
    lines = ["---"]
    for key, value in frontmatter.items():
        if not isinstance(key, str) or not _PLAIN.fullmatch(key.replace(".", "_")):
            raise MemoryWriteError(f"field name {shown(key)} is not a plain identifier")
        lines.append(f"{key}: {scalar(value)}")
    lines.append("---")
    text = "\n".join(lines) + "\n" + body
    parsed = parse_text("new.md", text)
    if parsed.fm_state != "mapping" or parsed.frontmatter != frontmatter:
        raise MemoryWriteError("the frontmatter does not read back as written (a value YAML cannot hold?)")
    return text


def _inline_comment(line: str, key: str, old: Any) -> str:
    """The comment ending a key's line, with the blanks before it (``"  # why"``), or "": the first
    `` #`` after which the line's head still reads as ``key: old`` (a ``#`` inside a quoted value is text)."""
    rest = line.split(":", 1)[1]
    if rest.lstrip().startswith("#"):  # a block value: the comment stands alone after the colon
        return rest
    for m in _COMMENT_START.finditer(line):
        head = parse_text("comment.md", f"---\n{line[:m.start()]}\n---\n")
        if head.fm_state == "mapping" and head.frontmatter == {key: old}:
            return line[m.start():]
    return ""


_ITEM = re.compile(r"^[ \t]*-[ \t]+")


def _appended(block: list[str], old: Any, new: Any) -> list[str] | None:
    """A block list's lines (``block``: its key's line, then the value's) with the items ``new`` adds to
    ``old`` after its last item, written as its first item is: comments and layout stay. None where ``new``
    does not extend ``old`` or the value is no ``- item`` list (a flow list is rewritten on one line)."""
    if not (isinstance(old, list) and isinstance(new, list) and len(new) > len(old) and new[:len(old)] == old):
        return None
    first = next((m for text in block[1:] if (m := _ITEM.match(text))), None)
    if first is None:
        return None
    last = max(i for i, text in enumerate(block) if text.strip() and not text.lstrip().startswith("#"))
    return [*block[:last + 1], *(first.group(0) + scalar(v, flow=True) for v in new[len(old):]), *block[last + 1:]]


def set_fields(text: str, changes: dict[str, Any]) -> str:
    """``text`` with top-level frontmatter keys set to new values, each a one-line edit.

    A key held on one line is replaced in place; a missing key is added before the closing
    ``---``; a block list that the change extends (``supersedes:`` with ``- item`` lines) gets its new
    items after its last one, its comments kept; any other value spanning several lines is replaced
    with one line. Keeps BOM and CRLF.

    Raises:
        MemoryWriteError: no frontmatter mapping, or the edit does not read back as intended.
    """
    bom = text.startswith("\ufeff")
    body = text[1:] if bom else text
    newline = "\r\n" if "\r\n" in body else "\n"
    before = parse_text("edit.md", body.replace("\r\n", "\n"))
    if before.fm_state != "mapping":
        raise MemoryWriteError("the note has no frontmatter mapping to edit")
    lines = body.split(newline)
    close = before.body_line - 2
    for key, value in changes.items():
        line = f"{key}: {scalar(value)}"
        start = next((i for i in range(1, close) if (m := _TOP_KEY.match(lines[i])) and m.group(1).strip() == key),
                     None)
        if start is None:
            lines.insert(close, line)
            close += 1
            continue
        end = start + 1
        while end < close and (lines[end].startswith((" ", "\t", "-")) or not lines[end].strip()):
            end += 1  # continuation lines of a block value
        new_lines = _appended(lines[start:end], before.frontmatter.get(key), value) or \
            [line + _inline_comment(lines[start], key, before.frontmatter.get(key))]
        lines[start:end] = new_lines
        close += len(new_lines) - (end - start)
    new = newline.join(lines)
    after = parse_text("edit.md", new.replace("\r\n", "\n"))
    expected = {**before.frontmatter, **changes}
    if after.fm_state != "mapping" or after.frontmatter != expected or after.body != before.body:
        raise MemoryWriteError("this note's frontmatter layout cannot be edited safely: edit it by hand")
    return ("\ufeff" if bom else "") + new
