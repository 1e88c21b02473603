"""Obsidian WikiLink extraction.

Forms (https://help.obsidian.md/links): ``[[note]]``, ``[[note|alias]]``,
``[[note#Heading]]``, ``[[note#H1#H2]]``, ``[[note#^block]]``, ``[[#Heading]]``
(same note), ``![[embed]]``, ``![[image.png|300]]``, ``[[folder/note]]``,
``[[note.md]]``, and ``[[note\\|alias]]`` inside tables. Links inside code are
ignored (callers pass code-masked text, see :mod:`vaultsync.vault.markdown`).
A link never spans lines; ``[[`` without ``]]`` on the same line is text.
In Markdown, a backslash escapes the opening bracket (``\\[[note]]`` is text,
CommonMark 0.31 §2.4) and ``\\![[note]]`` is a plain link, not an embed;
frontmatter values have no escapes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple, Protocol

from vaultsync.vault.inline_spans import without_comments
from vaultsync.vault.unclosed import visible

# No nested brackets, no newline: linear time even on "[[[[[[..." (WL-04). The pattern starts
# with a literal so that the regex engine skips ahead to each "[["; an embed's "!" is looked up before it.
WIKILINK = re.compile(r"\[\[([^\[\]\n]*)\]\]")  # one line, no brackets inside


def link_texts(text: str) -> list[str]:
    """Every ``[[...]]`` of ``text`` as written, brackets included (to quote each in a fix)."""
    return [m.group(0) for m in WIKILINK.finditer(text)]


class WikiLink(NamedTuple):
    """One WikiLink occurrence, or a Markdown link read as one (:mod:`vaultsync.vault.mdlinks`).

    Attributes:
        raw: the link as written, ``![[a#b|c]]``.
        target: the note or file part, ``""`` for a link into the same note.
        heading: heading subpath (may hold ``A#B`` for nested headings) or None.
        block: block id without ``^`` or None.
        alias: display text after ``|`` or None.
        embed: True for ``![[...]]``.
        line, col: 1-based position of the link's first character in the file.
        field: None for a body link, else the frontmatter field it came from.
    """

    raw: str
    target: str
    heading: str | None
    block: str | None
    alias: str | None
    embed: bool
    line: int
    col: int
    field: str | None = None

    @property
    def is_empty(self) -> bool:
        """``[[]]``, ``[[ ]]``, ``[[|alias]]``, ``[[\u200b]]``: no visible target and no subpath (``[[#]]`` is
        the note itself, as Obsidian resolves it)."""
        return not visible(self.target) and self.heading is None and self.block is None

    @property
    def subpath(self) -> str | None:
        """``#Heading`` or ``#^block`` as written after the target, without the ``#``."""
        if self.block is not None:
            return "^" + self.block
        return self.heading


def parse_inner(inner: str) -> tuple[str, str | None, str | None, str | None]:
    """Split the text between ``[[`` and ``]]`` into (target, heading, block, alias)."""
    alias: str | None = None
    bar = inner.find("|")
    if bar >= 0:
        alias = inner[bar + 1:]
        inner = inner[:bar]
        if inner.endswith("\\"):  # `[[note\|alias]]` inside a table
            inner = inner[:-1]
    heading: str | None = None
    block: str | None = None
    hash_at = inner.find("#")
    if hash_at >= 0:
        sub = inner[hash_at + 1:].strip()
        inner = inner[:hash_at]
        if sub.startswith("^"):
            block = sub[1:].strip()
        else:
            heading = sub
    return inner.strip(), heading, block, alias


def iter_links(text: str, first_line: int = 1, field: str | None = None,
               markdown: bool = True, original: str | None = None) -> Iterator[WikiLink]:
    """Yield the WikiLinks of ``text`` (already code-masked for Markdown bodies).

    Args:
        text: the text to scan.
        first_line: the file line number of ``text``'s first line.
        field: frontmatter field name when scanning a frontmatter value.
        markdown: honour backslash escapes (body text); False for frontmatter values.
        original: ``text`` before masking (same length): a link holding a code span or math
            (``[[h#`code` head]]``) is read, and quoted, as written, not as its blanked mask; a comment
            in it (``[[target %%todo%%]]``) is still cut out of its target, as Obsidian hides it.
    """
    if "[[" not in text:
        return
    line = first_line
    line_start = 0
    scanned = 0
    for m in WIKILINK.finditer(text):
        start = m.start()
        embed = start > 0 and text[start - 1] == "!"
        if embed:
            start -= 1
        raw = text[start:m.end()]
        if markdown and start and text[start - 1] == "\\" and _escaped(text, start):
            if not embed:
                continue  # \[[x]]: text
            start, embed, raw = start + 1, False, raw[1:]  # \![[x]]: a link, not an embed
        newlines = text.count("\n", scanned, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", 0, start) + 1
        scanned = start
        inner = m.group(1)
        if original is not None and original[m.start():m.end()] != m.group(0):  # code or a comment inside
            raw, inner = original[start:start + len(raw)], without_comments(original[m.start(1):m.end(1)])
        yield WikiLink(raw, *parse_inner(inner), embed, line, start - line_start + 1, field)


def _escaped(text: str, at: int) -> bool:
    """An odd run of backslashes ends just before ``text[at]``."""
    run = 0
    while at - run - 1 >= 0 and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


class _Positions(Protocol):
    def position(self, path: tuple[Any, ...], key: bool = False) -> tuple[int, int]: ...

    def locate(self, path: tuple[Any, ...], needle: str, nth: int = 0) -> tuple[int, int] | None: ...


def frontmatter_links(data: dict[str, Any], where: _Positions) -> Iterator[WikiLink]:
    """Yield links written as string values anywhere in the frontmatter (FM-13).

    ``where.position(path)`` gives a value's 1-based (line, col) in the file, ``where.locate`` the
    place of a text inside it.
    """
    stack: list[tuple[tuple[Any, ...], Any]] = [((key,), value) for key, value in data.items()]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if "[[" in value:
                line, col = where.position(path)
                seen: dict[str, int] = {}
                for link in iter_links(value, line, field=str(path[0]), markdown=False):
                    nth = seen[link.raw] = seen.get(link.raw, -1) + 1
                    found = where.locate(path, link.raw, nth)  # past quotes, escapes and line breaks
                    yield link._replace(line=found[0], col=found[1]) if found else \
                        link._replace(line=line, col=col + link.col - 1)
        elif isinstance(value, list):
            stack.extend((path + (i,), item) for i, item in enumerate(value))
        elif isinstance(value, dict):
            stack.extend((path + (str(k),), v) for k, v in value.items())
