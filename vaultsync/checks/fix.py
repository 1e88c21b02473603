"""``vaultsync check --fix``: write missing supersession back-references, nothing else.

Only the frontmatter lines that carry the back-reference are added or edited;
every other byte of the file (BOM, CRLF, comments, key order) is kept. Each
file is rewritten atomically (temp file + rename).
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from vaultsync.checks.lifecycle import supersession_edges
from vaultsync.vault.vault import Vault

_BLOCK_ITEM = re.compile(r"^(\s*)-\s")


@dataclass(frozen=True)
class Fix:
    """Add ``ref`` to ``field`` of the note at ``path``."""

    path: str
    field: str
    ref: str


def plan_fixes(vault: Vault) -> list[Fix]:
    """The back-references missing on one side of a declared supersession."""
    edges, _ = supersession_edges(vault)
    fixes: list[Fix] = []
    for e in edges:
        if e.declared_by_newer and not e.declared_by_older:
            fixes.append(Fix(e.older, "superseded_by", _ref_to(vault, e.newer, e.older)))
        elif e.declared_by_older and not e.declared_by_newer:
            fixes.append(Fix(e.newer, "supersedes", _ref_to(vault, e.older, e.newer)))
    return fixes


def _ref_to(vault: Vault, target: str, source: str) -> str:
    """A ``[[WikiLink]]`` to ``target`` that resolves uniquely from ``source``."""
    stem = target.rsplit("/", 1)[-1].removesuffix(".md")
    if vault.link_index.resolve(stem, source).path == target:
        return f"[[{stem}]]"
    root = vault.link_index.root
    rel = target[len(root):] if root and target.startswith(root) else target
    return f"[[{rel.removesuffix('.md')}]]"


def apply_fix(root: Path, vault: Vault, fix: Fix) -> bool:
    """Edit one file; returns False when its layout is not one we can edit safely."""
    note = vault.notes[fix.path]
    file = root / fix.path
    raw = file.read_bytes()
    bom = raw.startswith(b"\xef\xbb\xbf")
    text = raw[3:].decode("utf-8") if bom else raw.decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    close = note.body_line - 2  # 0-based index of the closing '---'
    if close < 1 or close >= len(lines) or lines[close].rstrip() != "---":
        return False
    quoted = f'"{fix.ref}"'
    if fix.field not in note.frontmatter:
        value = quoted if fix.field == "superseded_by" else f"[{quoted}]"
        lines.insert(close, f"{fix.field}: {value}")
    elif fix.field == "supersedes" and isinstance(note.frontmatter.get("supersedes"), list):
        key_line = note.position(("supersedes",), key=True)[0] - 1
        head = lines[key_line]
        if head.rstrip().endswith("]") and "[" in head:
            end = head.rstrip().rfind("]")
            inner = head[head.index("[") + 1:end].strip()
            lines[key_line] = head[:end].rstrip() + (", " if inner else "") + quoted + head[end:]
        else:
            last = key_line
            indent = "  "
            for i in range(key_line + 1, close):
                m = _BLOCK_ITEM.match(lines[i])
                if m:
                    last, indent = i, m.group(1)
                elif lines[i].strip() and not lines[i].startswith((" ", "\t")):
                    break
            lines.insert(last + 1, f"{indent}- {quoted}")
    else:
        return False
    data = (b"\xef\xbb\xbf" if bom else b"") + newline.join(lines).encode("utf-8")
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
