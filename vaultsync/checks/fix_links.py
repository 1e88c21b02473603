"""``vaultsync check --fix`` for links a rename broke (WL007): each link that resolved at HEAD to a note
since renamed, and resolves to nothing now, is rewritten to the link WL007 names
(:meth:`vaultsync.checks.suggest.Suggester.link_to`: the shortest that resolves to the new path, its
heading, block and alias kept; a Markdown link stays one).

Only the link's own characters change. An edit is made only where the link stands as written at its
line and column, and it is verified by parsing the new text: the note's links must be the old ones with
exactly these rewritten, and its frontmatter the old one with the same rewrites inside its strings (a new
name that a quoted YAML string cannot hold as it is is left, and named with the reason). A note's link
edits that pass are made in one atomic write; BOM and CRLF line ends are kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultsync.checks.fix import write_note
from vaultsync.checks.links import renamed_link, resolve_links
from vaultsync.checks.suggest import Suggester
from vaultsync.vault.note import parse_text
from vaultsync.vault.resolve import LinkIndex
from vaultsync.vault.vault import Vault


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
    """``text`` (a note's, LF or CRLF line ends, no BOM) with ``fixes`` made, or None where one link does not
    stand as written at its place or the parsed result differs from the old note by more than the rewrites."""
    lines = text.split("\n")
    for fix in sorted(fixes, key=lambda f: (f.line, f.col), reverse=True):  # the last first: earlier places hold
        row = fix.line - 1
        if not 0 <= row < len(lines) or lines[row][fix.col - 1:fix.col - 1 + len(fix.old)] != fix.old:
            return None
        lines[row] = lines[row][:fix.col - 1] + fix.new + lines[row][fix.col - 1 + len(fix.old):]
    new_text = "\n".join(lines)
    before, after = parse_text(path, text.replace("\r\n", "\n")), parse_text(path, new_text.replace("\r\n", "\n"))
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
    why = {fix: _refusal(text, fix) for fix in fixes}
    made = [fix for fix in fixes if why[fix] is None]
    new_text = fixed_links(fixes[0].path, text, made) if made else None
    if new_text is None:  # each reads back alone, not together: none is made
        return {fix: why[fix] or "the note would not read back as intended with all its fixes" for fix in fixes}
    write_note(file, (b"\xef\xbb\xbf" if bom else b"") + new_text.encode("utf-8"))
    return why


def _refusal(text: str, fix: LinkFix) -> str | None:
    """Why ``fix`` alone cannot be made in ``text``, or None."""
    line = text.split("\n")[fix.line - 1] if 0 < fix.line <= text.count("\n") + 1 else ""
    if line[fix.col - 1:fix.col - 1 + len(fix.old)] != fix.old:
        return "the link no longer stands as written there"
    if fixed_links(fix.path, text, [fix]) is not None:
        return None
    return (f"frontmatter '{fix.field}' would not read back with it: a quoted YAML string cannot hold it as it is"
            if fix.field is not None else "the note would not read back with it as written")


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
