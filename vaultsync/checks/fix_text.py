"""The text of one ``--fix`` edit (:mod:`vaultsync.checks.fix`), and the line to write by hand where
it makes none: a pure function of a note's text, so that ``check`` can tell beforehand whether
``--fix`` will make the edit it advises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vaultsync.vault.fields import lifecycle_field_of
from vaultsync.vault.note import parse_text

_BLOCK_ITEM = re.compile(r"^(\s*)-\s")
_TOP_KEY = re.compile(r"^[^\s#-][^:]*:")
_EMPTY_VALUE = re.compile(r"^([\w-]+):[ \t]*(?:~|null|Null|NULL)?([ \t]+#.*)?[ \t]*$")  # a key, no value, a comment
# words (or nothing, ~, null), plain or quoted, maybe a comment after them
_STATUS_LINE = re.compile(r"""^(status:[ \t]*)(["']?)(?:[A-Za-z][\w-]*(?: [\w-]+)*|~)?\2([ \t]+#.*)?[ \t]*$""")


@dataclass(frozen=True)
class Fix:
    """Add ``ref`` to ``field`` of the note at ``path``."""

    path: str
    field: str
    ref: str | None  # None: no reference that resolves can be written (the fix is dropped)


def fixed_text(path: str, text: str, fix: Fix) -> str | None:
    """``text`` (a note's file, BOM removed; LF, CRLF or CR line ends kept) with ``fix`` made, or None when
    its layout is not one we can edit safely (see :mod:`vaultsync.checks.fix`)."""
    newline = _newline(text)
    note = parse_text(path, text.replace(newline, "\n"))
    if note.fm_state != "mapping":
        return None
    lines = text.split(newline)
    close = note.body_line - 2  # 0-based index of the closing '---'
    if close < 1 or close >= len(lines) or lines[close].rstrip() != "---" or not _TOP_KEY.match(lines[1]):
        return None
    edited = _edit(lines, close, note, fix)
    if edited is None:
        return None
    new_text = newline.join(edited)
    return new_text if _verified(new_text, note.frontmatter, fix) else None


def fixed_note(path: str, text: str, fixes: list[Fix]) -> str | None:
    """``text`` with every one of ``fixes`` (one note's) made, or None when one of them cannot be: a note is
    edited whole or not at all."""
    for fix in fixes:
        if (text := fixed_text(path, text, fix)) is None:  # type: ignore[assignment]
            return None
    return text


def _newline(text: str) -> str:
    """The line end of ``text``'s first line (the frontmatter's, which an edit writes): CRLF, a lone CR
    (classic Mac), else LF. A body may end its lines otherwise: it is kept as it is."""
    end = next((i for i, ch in enumerate(text) if ch in "\r\n"), -1)
    return "\n" if end < 0 or text[end] == "\n" else "\r\n" if text[end + 1:end + 2] == "\n" else "\r"


def by_hand(fix: Fix) -> str:
    """The frontmatter line that makes ``fix``, as ``--fix`` would write it (a WikiLink quoted)."""
    if fix.field == "status":
        return "status: superseded"
    quoted = f'"{fix.ref}"'
    return f"superseded_by: {quoted}" if fix.field == "superseded_by" else f"supersedes: [{quoted}] (one more item)"


def _edit(lines: list[str], close: int, note: object, fix: Fix) -> list[str] | None:
    lines = list(lines)
    quoted = f'"{fix.ref}"'
    fm = note.frontmatter  # type: ignore[attr-defined]
    if fix.field == "status":
        return _edit_status(lines, close, note)
    value = quoted if fix.field == "superseded_by" else f"[{quoted}]"
    if fix.field not in fm:
        lines.insert(close, f"{fix.field}: {value}")
        return lines
    if fm[fix.field] is None:  # `superseded_by:` left empty (or ~, null): the value is written after the key
        at = note.position((fix.field,), key=True)[0] - 1  # type: ignore[attr-defined]
        m = _EMPTY_VALUE.match(lines[at]) if 0 < at < close else None
        if m is None or m.group(1) != fix.field:
            return None
        lines[at] = f"{fix.field}: {value}{m.group(2) or ''}"
        return lines
    if fix.field != "supersedes" or not isinstance(fm.get("supersedes"), list):
        return None
    key_line = note.position(("supersedes",), key=True)[0] - 1  # type: ignore[attr-defined]
    head = lines[key_line]
    after_colon = head.split(":", 1)[1].strip() if ":" in head else ""
    if after_colon.startswith("["):
        if not after_colon.endswith("]"):
            return None  # a multi-line flow list or a trailing comment: not ours to rewrite
        end = head.rstrip().rfind("]")
        inner = head[head.index("[") + 1:end].strip()
        lines[key_line] = head[:end].rstrip() + (", " if inner else "") + quoted + head[end:]
        return lines
    if after_colon:
        return None
    last, indent = None, "  "
    for i in range(key_line + 1, close):
        m = _BLOCK_ITEM.match(lines[i])
        if m:
            last, indent = i, m.group(1)
        elif lines[i].strip() and not lines[i].startswith((" ", "\t")):
            break
    if last is None:
        return None
    lines.insert(last + 1, f"{indent}- {quoted}")
    return lines


def _edit_status(lines: list[str], close: int, note: object) -> list[str] | None:
    """``status: superseded`` in place of a one-line word, quoted or not (its quotes and a comment after it
    kept), or added."""
    keys = [k for k in note.frontmatter  # type: ignore[attr-defined]
            if k == "status" or lifecycle_field_of(k) == "status"]
    if keys != ["status"] and keys:
        return None  # `Status:` (SC003 says so): a second key would not fix it
    if not keys:
        lines.insert(close, "status: superseded")
        return lines
    at = note.position(("status",), key=True)[0] - 1  # type: ignore[attr-defined]
    m = _STATUS_LINE.match(lines[at]) if 0 < at < close else None
    if m is None:
        return None  # a block, a flow value, several lines: not ours to rewrite
    gap = " " if m.group(1).endswith(":") else ""  # `status:` with no value, or ~
    lines[at] = f"{m.group(1)}{gap}{m.group(2)}superseded{m.group(2)}{m.group(3) or ''}"
    return lines


def _verified(new_text: str, before: dict[str, object], fix: Fix) -> bool:
    """The edited text parses, the field gained exactly ``fix.ref`` and nothing else changed."""
    after = parse_text("fix", new_text.replace(_newline(new_text), "\n"))
    if after.fm_state != "mapping":
        return False
    expected = dict(before)
    if fix.field == "status":
        expected["status"] = "superseded"
    elif fix.field == "superseded_by":
        expected[fix.field] = fix.ref
    else:
        expected[fix.field] = [*(before.get(fix.field) or []), fix.ref]  # type: ignore[misc]
    return after.frontmatter == expected
