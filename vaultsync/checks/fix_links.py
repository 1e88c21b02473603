"""``vaultsync check --fix`` for links a rename broke (WL007): each link that resolved at HEAD to a note
since renamed, and resolves to nothing now, is rewritten to the link WL007 names
(:meth:`vaultsync.checks.suggest.Suggester.link_to`: the shortest that resolves to the new path, its
heading, block and alias kept; a Markdown link stays one).

Only the link's own characters change. An edit is made only where the link stands as written at its
line and column, and it is verified by parsing the new text: the note's links must be the old ones with
exactly these rewritten, and its frontmatter the old one with the same rewrites inside its strings (a new
name that a quoted YAML string cannot hold as it is is left, and named with the reason). A note's link
edits that pass are made in one atomic write; a BOM and every line end (LF, CRLF, CR) are kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultsync.checks.fix import write_note
from vaultsync.checks.links import renamed_link, resolve_links
from vaultsync.checks.suggest import Suggester
from vaultsync.vault.note import line_feeds, parse_text
from vaultsync.vault.resolve import LinkIndex
from vaultsync.vault.vault import Vault

_BREAK = re.compile(r"(\r\n|\r|\n)")  # a line end, kept by split


@dataclass(frozen=True)
class LinkFix:
    """Rewrite ``old`` (a link as written, at 1-based ``line``/``col`` of ``path``) as ``new``."""

    path: str
    line: int
    col: int
    old: str
    new: str
    field: str | None = None  # the frontmatter field the link stands in; None in the body


def plan_link_fixes(vault: Vault, previous: LinkIndex | None, renamed: dict[str, str],
                    only: set[str] | None = None) -> list[LinkFix]:
    """The links (in ``only`` paths, if given) that resolved at HEAD (``previous``) to a note ``renamed``
    since, and resolve to nothing now, each with the link to write; [] without a rename."""
    if previous is None or not renamed:
        return []
    suggester = Suggester(vault)
    out = []
    for o in resolve_links(vault):
        if o.status != "dangling" or (only is not None and o.source not in only):
            continue
        found = renamed_link(vault, previous, renamed, suggester, o)
        if found is not None and found[1] is not None:
            out.append(LinkFix(o.source, o.link.line, o.link.col, o.link.raw, found[1], o.link.field))
    return out


def fixed_links(path: str, text: str, fixes: list[LinkFix]) -> str | None:
    """``text`` (a note's, no BOM) with ``fixes`` made, or None where one link does not stand as written at its
    place or the parsed result differs from the old note by more than the rewrites. Lines are counted as the
    checker counts them (LF, CRLF and a lone CR each end one), and each line's own end is kept."""
    parts = _BREAK.split(text)
    lines, ends = parts[0::2], parts[1::2]
    for fix in sorted(fixes, key=lambda f: (f.line, f.col), reverse=True):  # the last first: earlier places hold
        row = fix.line - 1
        written = _as_written(lines[row], fix) if 0 <= row < len(lines) else None
        if written is None:
            return None
        at, old, new = written
        lines[row] = lines[row][:at] + new + lines[row][at + len(old):]
    new_text = "".join(line + end for line, end in zip(lines, [*ends, ""], strict=True))
    before, after = parse_text(path, line_feeds(text)), parse_text(path, line_feeds(new_text))
    rewrite = {f.old: f.new for f in fixes if f.field is not None}  # a body link changes no frontmatter
    made = {(f.line, f.col): f.new for f in fixes}
    expected = sorted(made.get((link.line, link.col), link.raw) for link in before.links)
    if sorted(link.raw for link in after.links) != expected or after.fm_state != before.fm_state \
            or after.frontmatter != _rewritten(before.frontmatter, rewrite):
        return None
    return new_text


def apply_link_fixes(root: Path, fixes: list[LinkFix]) -> dict[LinkFix, str | None]:
    """Make those of one note's ``fixes`` that :func:`fixed_links` takes, each alone and all together, in one
    atomic write; each fix with None (made) or why it was not (the file untouched by it)."""
    file = root / fixes[0].path
    raw = file.read_bytes()
    bom = raw.startswith(b"\xef\xbb\xbf")
    text = (raw[3:] if bom else raw).decode("utf-8")
    why = {fix: _refusal(text, fix, fixes) for fix in fixes}
    made = [fix for fix in fixes if why[fix] is None]
    new_text = fixed_links(fixes[0].path, text, made) if made else None
    if new_text is None:  # each reads back alone, not together: none is made
        return {fix: why[fix] or "the note would not read back as intended with all its fixes" for fix in fixes}
    write_note(file, (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8"))
    return why


def _refusal(text: str, fix: LinkFix, fixes: list[LinkFix]) -> str | None:
    """Why ``fix`` cannot be made in ``text``, or None: alone, or in the frontmatter with the fixes of the same
    link elsewhere in it (``supersedes`` and ``related`` naming one note: YAML reads both back rewritten)."""
    lines = _BREAK.split(text)[0::2]
    line = lines[fix.line - 1] if 0 < fix.line <= len(lines) else ""
    if _as_written(line, fix) is None:
        return "the link no longer stands as written there"
    alike = [f for f in fixes if f.field is not None and f.old == fix.old] if fix.field is not None else [fix]
    if fixed_links(fix.path, text, alike) is not None:
        return None
    return (f"frontmatter '{fix.field}' would not read back with it: a quoted YAML string cannot hold it as it is"
            if fix.field is not None else "the note would not read back with it as written")


def _as_written(line: str, fix: LinkFix) -> tuple[int, str, str] | None:
    """``(index, old, new)`` as ``line`` holds the link at ``fix.col``: in a frontmatter string escaped as its quotes
    escape (``it''s`` in single quotes, ``\\"`` in double), the new link escaped alike; None where the link
    does not stand there."""
    at = fix.col - 1
    if fix.field is not None and line[at:at + 1] in ("'", '"'):
        at += 1  # a string that YAML unescaped is placed at its opening quote
    escape = {"'": _single, '"': _double}.get(_quote_at(line, at) if fix.field is not None else "", str)
    old, new = escape(fix.old), escape(fix.new)
    return (at, old, new) if line[at:at + len(old)] == old else None


def _quote_at(line: str, at: int) -> str:
    """The quote (``'``, ``"``) of the YAML string ``line[at]`` stands in, or ``""`` outside quotes."""
    quote, i = "", 0
    while i < at:
        ch = line[i]
        if not quote and ch in "'\"" and line[:i].rstrip()[-1:] in ("", ":", "-", "[", ",", "{", "?"):
            quote = ch  # (a quote opens a string only where a value starts: `Bob's` is plain text)
        elif quote == "'" and ch == "'":
            if line[i + 1:i + 2] == "'" and i + 1 < at:
                i += 1  # '' is one quote inside the string
            else:
                quote = ""
        elif quote == '"' and ch == "\\":
            i += 1
        elif quote == '"' and ch == '"':
            quote = ""
        i += 1
    return quote


def _single(text: str) -> str:
    return text.replace("'", "''")


def _double(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _rewritten(value: Any, rewrite: dict[str, str]) -> Any:
    """``value`` (parsed frontmatter) with each ``old`` link text in its strings written as ``new``."""
    if isinstance(value, str):
        for old, new in rewrite.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_rewritten(v, rewrite) for v in value]
    if isinstance(value, dict):
        return {k: _rewritten(v, rewrite) for k, v in value.items()}
    return value
