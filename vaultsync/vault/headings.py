"""Headings and block ids of a note: what ``[[note#Heading]]`` and ``[[note#^id]]`` link to.

Both read the code-masked body (:func:`vaultsync.vault.markdown.mask_code`), so a ``#`` line or a
``^id`` inside code is neither. ATX headings only (CommonMark 0.31 §4.2), also inside block quotes
(callouts) and list items.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from vaultsync.vault.markdown import ATX, CONTAINER, LIST_ITEM, MAX_NESTED

_BLOCK_ID = re.compile(r"(?:^|\s|\]\])\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*$")


class Heading(NamedTuple):
    """An ATX heading: ``level`` 1-6, ``text`` without markers, 1-based ``line`` in the body."""

    level: int
    text: str
    line: int


def atx_heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line (CommonMark 0.31 §4.2), or None.

    The text has its optional closing sequence (spaces, then ``#``s) and surrounding whitespace
    removed: ``## Plan ##`` → (2, "Plan"); ``# C#`` → (1, "C#"); ``# ##`` → (1, "##").
    """
    m = ATX.match(line)
    if m is None:
        return None
    content = (m.group(2) or "").rstrip(" \t")
    bare = content.rstrip("#")
    if len(bare) < len(content) and bare[-1:] in (" ", "\t"):
        content = bare.rstrip(" \t")
    return len(m.group(1)), content.strip()


def find_headings(text: str, masked: str) -> list[Heading]:
    """ATX headings in document order, also inside block quotes (callouts) and list items.

    ``masked`` (from :func:`mask_code`) decides which lines are outside code;
    the heading text is taken from ``text`` so inline code in a heading survives.
    """
    found: list[Heading] = []
    original = text.split("\n")
    for i, line in enumerate(masked.split("\n")):
        if "#" not in line or not ATX.match(_in_containers(line)):
            continue
        heading = atx_heading(_in_containers(original[i]))
        if heading is not None:
            found.append(Heading(heading[0], heading[1], i + 1))
    return found


def _in_containers(line: str) -> str:
    """``line`` after its block quote markers and list markers: ``> ## Plan`` in a callout and
    ``- # Step`` in a list item are headings too (§5.1, §5.2)."""
    rest = line[len(CONTAINER.match(line).group(0)):]  # type: ignore[union-attr]
    for _ in range(MAX_NESTED):
        item = LIST_ITEM.match(rest)
        if item is None:
            break
        rest = rest[item.end():]
    return rest


def block_ids(masked: str) -> set[str]:
    """Obsidian block ids (``^id`` at the end of a line) of code-masked Markdown."""
    return {m.group(1) for line in masked.split("\n") if "^" in line for m in [_BLOCK_ID.search(line)] if m}
