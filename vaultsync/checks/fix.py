"""``vaultsync check --fix``: complete a declared supersession, nothing else: the missing
back-reference (``superseded_by`` or ``supersedes``) and, on the older note, ``status: superseded``
(SS004), which a supersession always asks for.

Only block-style frontmatter is edited. The status is written where ``status:`` holds one word,
quoted or not, on its own line (or is absent: a line is added). A reference is added in three
layouts: the key is absent (a line is added before the closing ``---``), the key holds a block list
(an item is added after its last item), or the key holds a one-line flow list
with nothing after it (an item is added before ``]``). Anything else — flow
mappings, multi-line flow lists, comments after the list, broken YAML — is
reported as "not fixed" and left alone. Every edit is verified by parsing the new
text (the field must hold exactly the old items plus the new one, and nothing
else may change) before the file is replaced atomically; BOM, CRLF, comments and
key order are kept.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from vaultsync.checks.lifecycle import (
    back_reference,
    cycle_edges,
    extra_successors,
    status_superseded,
    supersession_edges,
    unresolved_fields,
)
from vaultsync.vault.fields import lifecycle_field_of
from vaultsync.vault.note import parse_text
from vaultsync.vault.vault import Vault

_BLOCK_ITEM = re.compile(r"^(\s*)-\s")
_TOP_KEY = re.compile(r"^[^\s#-][^:]*:")
# words (or nothing, ~, null), plain or quoted, maybe a comment after them
_STATUS_LINE = re.compile(r"""^(status:[ \t]*)(["']?)(?:[A-Za-z][\w-]*(?: [\w-]+)*|~)?\2([ \t]+#.*)?[ \t]*$""")


@dataclass(frozen=True)
class Fix:
    """Add ``ref`` to ``field`` of the note at ``path``."""

    path: str
    field: str
    ref: str | None  # None: no reference that resolves can be written (the fix is dropped)


def plan_fixes(vault: Vault, only: set[str] | None = None) -> list[Fix]:
    """The back-references missing on one side of a declared supersession (in ``only`` paths, if given)."""
    edges, problems = supersession_edges(vault)
    broken = unresolved_fields(problems)
    in_cycle = cycle_edges(edges)
    extra = extra_successors(vault, edges)
    fixes: list[Fix] = []
    for e in edges:
        if e in in_cycle or e.older in extra:
            continue  # a cycle (SS003) or a second successor (SS005): for a person to resolve
        if e.declared_by_newer and not e.declared_by_older:
            fixes.append(Fix(e.older, "superseded_by", back_reference(vault, e.newer, e.older)))
        elif e.declared_by_older and not e.declared_by_newer:
            fixes.append(Fix(e.newer, "supersedes", back_reference(vault, e.older, e.newer)))
        if not status_superseded(vault.notes[e.older].frontmatter) and Fix(e.older, "status", "superseded") not in fixes:
            fixes.append(Fix(e.older, "status", "superseded"))  # SS004
    return [f for f in fixes if f.ref is not None and (f.path, f.field) not in broken and (only is None or f.path in only)]


def apply_fix(root: Path, vault: Vault, fix: Fix) -> bool:
    """Edit one file; False (file untouched) when its layout is not one we can edit safely. The file is
    read again, so that several fixes of one note (a back-reference, then its status) each see the last."""
    if vault.notes[fix.path].fm_state != "mapping":
        return False
    file = root / fix.path
    raw = file.read_bytes()
    bom = raw.startswith(b"\xef\xbb\xbf")
    text = raw[3:].decode("utf-8") if bom else raw.decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    note = parse_text(fix.path, text.replace("\r\n", "\n"))
    if note.fm_state != "mapping":
        return False
    lines = text.split(newline)
    close = note.body_line - 2  # 0-based index of the closing '---'
    if close < 1 or close >= len(lines) or lines[close].rstrip() != "---" or not _TOP_KEY.match(lines[1]):
        return False
    edited = _edit(lines, close, note, fix)
    if edited is None:
        return False
    new_text = newline.join(edited)
    if not _verified(new_text, note.frontmatter, fix):
        return False
    data = (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8")
    fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".vaultsync-fix-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, file.stat().st_mode & 0o7777)
        os.replace(tmp, file)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def _edit(lines: list[str], close: int, note: object, fix: Fix) -> list[str] | None:
    lines = list(lines)
    quoted = f'"{fix.ref}"'
    fm = note.frontmatter  # type: ignore[attr-defined]
    if fix.field == "status":
        return _edit_status(lines, close, note)
    if fix.field not in fm:
        value = quoted if fix.field == "superseded_by" else f"[{quoted}]"
        lines.insert(close, f"{fix.field}: {value}")
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
    after = parse_text("fix", new_text.replace("\r\n", "\n"))
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
