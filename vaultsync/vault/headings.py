"""Headings and block ids of a note: what ``[[note#Heading]]`` and ``[[note#^id]]`` link to.

Both read the code-masked body (:func:`vaultsync.vault.markdown.mask_code`), so a ``#`` line or a
``^id`` inside code is neither. ATX headings (CommonMark 0.31 §4.2), also inside block quotes
(callouts) and list items (also on a later line, up to 3 columns past the item's content: ``1. Step`` /
``    ## Details``, also in a block quote there: ``    > ## Details``), and setext headings (§4.3: a
paragraph underlined with ``=`` or ``-``), also inside block quotes. Not read: a setext heading inside
a list item, and a list inside a block quote inside a list item.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from vaultsync.vault.block_starts import closed_html, html_start, is_thematic_break, table_cells
from vaultsync.vault.inline_spans import without_comments
from vaultsync.vault.markdown import ATX, CONTAINER, LIST_ITEM, MAX_NESTED

_UNDERLINE = re.compile(r"[ ]{0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"[ ]{0,3}(?:`{3,}|~{3,})")
_ORDERED_NOT_ONE = re.compile(r"[ ]{0,3}(?!0*1[.)])[0-9]{1,9}[.)]")
# a "#" 4+ columns in, also in a block quote there ("- x" / "    > ## y")
# the quote markers are taken as CommonMark takes them, each with its one optional space, and never given
# back (possessive): a space between two markers could otherwise be matched two ways, and a line of
# nested quotes that fails took 2^depth tries (27 levels: 16 s)
_INDENTED_HASH = re.compile(r"^(?:[ ]{0,3}>[ ]?)*+[ ]{0,3}(?:\t|[ ]{4})[ \t]*(?:>[ \t]*)*#", re.MULTILINE)
_ITEM = re.compile(r"[ ]*(?:[-+*]|[0-9]{1,9}[.)])(?:[ ]|$)")  # after tab expansion; its indentation judged apart

_NEW_BLOCK = re.compile(r"[ \t]*(?:$|#{1,6}(?:[ \t]|$)|[-*+](?:[ \t]|$)|[0-9]{1,9}[.)](?:[ \t]|$)|>|\||```|~~~|"
                        r"\^[A-Za-z0-9][A-Za-z0-9-]*[ \t]*$|(?:[-*_][ \t]*){3,}$|=+[ \t]*$)")
_BLOCK_ID = re.compile(r"(?:^|\s|\]\])\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*$")


class Heading(NamedTuple):
    """A heading: ``level`` 1-6, ``text`` without markers, 1-based ``line`` in the body (a setext
    heading's first text line)."""

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
    """ATX and setext headings in document order (see the module docstring).

    ``masked`` (from :func:`mask_code`) decides which lines are outside code;
    the heading text is taken from ``text`` so inline code in a heading survives, and its comments
    are cut out (``## Plan %% draft %%`` is "Plan", as Obsidian shows it).
    """
    found: list[Heading] = []
    original = text.split("\n")
    lines = masked.split("\n")
    # a "#" 4 or more columns in is a heading only inside a list item: the items are followed only then
    nested = _nested_atx(lines, original) if _INDENTED_HASH.search(masked) else set()
    for i, line in enumerate(lines):
        if "#" not in line:
            continue
        if i in nested:
            written = _in_quotes(_in_quotes(without_comments(original[i])).expandtabs(4).lstrip(" "))
        elif ATX.match(_in_containers(line)):
            written = _in_containers(without_comments(original[i]))
        else:
            continue
        heading = atx_heading(written)
        if heading is not None:
            found.append(Heading(heading[0], heading[1], i + 1))
    if "=" in masked or "-" in masked:
        found = sorted(found + _setext_headings(lines, original), key=lambda h: h.line)
    return found


def _nested_atx(lines: list[str], original: list[str]) -> set[int]:
    """Indices of the ATX heading lines 4 or more columns in that sit 0-3 columns past an open list item's
    content (``1. Step`` / ``    ## Details``, §5.2). The list structure is read from the text as written
    (a code span indents nothing), code lines from ``lines`` (masked); lazy lines keep an item open."""
    found: set[int] = set()
    items: list[int] = []  # content columns of the open list items (a blank line keeps them open) ...
    item_depth = 0  # ... in this many block quotes
    para = False  # the last line was paragraph text, which a lazy line continues
    for i, line in enumerate(lines):
        quotes = CONTAINER.match(original[i]).group(0)  # type: ignore[union-attr]
        inner = original[i][len(quotes):].expandtabs(4)
        if not inner.strip():
            para = False
            continue
        quoted = _quote_in_item(original[i].expandtabs(4), items) if items and not item_depth else None
        if quoted is not None:  # a block quote inside the item ("- x" / "    > ## y"): the items stay open
            _close(items, quoted[0])
            para = bool(line.strip()) and not ATX.match(quoted[1])  # a masked line: a fence or code
            if line.strip() and ATX.match(quoted[1]) and quoted[0] >= 4:
                found.add(i)
            continue
        if quotes.count(">") != item_depth:
            items, item_depth = [], quotes.count(">")  # another block quote: the items ended
        lead = len(inner) - len(inner.lstrip(" "))
        if not line.strip():  # a fence or indented code line: a block at its own column
            _close(items, lead)
            para = False
            continue
        starts = bool(_ITEM.match(inner) or ATX.match(inner) or is_thematic_break(inner.strip()) or _FENCE.match(inner))
        if items and lead < items[-1] and para and not starts:
            continue  # a lazy line: the item's paragraph goes on
        # an item here starts a list: outside any list, or inside the open item (else it is a sibling)
        new_list = not items or lead >= items[-1]
        _close(items, lead)
        inset = lead - items[-1] if items else lead
        item = _ITEM.match(inner) if inset < 4 and not is_thematic_break(inner.strip()) else None
        if item and para and new_list and (not inner[item.end():].strip() or _ORDERED_NOT_ONE.match(inner.lstrip())):
            item = None  # a list interrupting a paragraph starts non-empty, and at 1 if ordered (§5.2)
        if item is not None:
            items.extend(_content_columns(inner, item))
        nested = items and item is None and 4 <= lead and inset < 4
        # nested: a block quote may start there too, inside the item (§5.1)
        bare = _in_containers(line) if not nested else _in_quotes(line[len(quotes):].expandtabs(4).lstrip(" "))
        heading = bool(ATX.match(bare))
        para = not (heading or is_thematic_break(inner.strip()) or (item and not inner[item.end():].strip()))
        if nested and heading:
            found.add(i)
    return found


def _quote_in_item(line: str, items: list[int]) -> tuple[int, str] | None:
    """(the column of the ``>``, the text after the line's block quote markers) when ``line`` starts a block
    quote 0-3 columns past an open top-level list item's content (``items``); else None."""
    lead = len(line) - len(line.lstrip(" "))
    inside = max((c for c in items if c <= lead), default=None)
    text = _in_quotes(line[lead:])
    if line[lead:lead + 1] != ">" or inside is None or lead - inside > 3 or not text.strip() or _ITEM.match(text):
        return None  # not modelled: a list inside the quote (read as before)
    return lead, text


def _close(items: list[int], lead: int) -> None:
    """End the open list items whose content starts right of column ``lead``."""
    while items and lead < items[-1]:
        items.pop()


def _content_columns(inner: str, item: re.Match[str]) -> list[int]:
    """Content columns of the list items opening ``inner`` (``- - x`` opens two): past the marker's
    spaces, or one column past it when the content is empty or indented code (§5.2)."""
    columns: list[int] = []
    for _ in range(MAX_NESTED):
        end = item.end()
        content = inner[end:]
        spaces = len(content) - len(content.lstrip(" "))
        marker_end = end - (inner[end - 1:end] == " ")
        if not content.strip() or spaces >= 4:
            columns.append(marker_end + 1)
            break
        columns.append(end + spaces)
        nxt = _ITEM.match(inner, end)
        if nxt is None or is_thematic_break(content.strip()):
            break
        item = nxt
    return columns


def setext_headings(text: str, masked: str) -> list[tuple[Heading, int]]:
    """The setext headings of ``text`` (``masked`` from :func:`mask_code`), each with the 0-based index of
    its underline (``===`` or ``---``): the lines from ``heading.line - 1`` to it are the heading."""
    if "=" not in masked and "-" not in masked:
        return []
    lines = masked.split("\n")
    out = []
    for h in _setext_headings(lines, text.split("\n")):
        under = next((j for j in range(h.line, len(lines)) if _UNDERLINE.match(CONTAINER.sub("", lines[j], 1))), h.line)
        out.append((h, under))
    return out


def _setext_headings(lines: list[str], original: list[str]) -> list[Heading]:
    """Paragraphs underlined with ``=`` (level 1) or ``-`` (level 2) in the same block quotes (§4.3).

    One pass that follows the open paragraph: a line in the same or (lazily, §5.1) fewer block quotes
    that starts no block continues it; a paragraph that a list item opened is that item's, never read."""
    found: list[Heading] = []
    start, depth, in_item = -1, 0, False  # the open paragraph: first line, block quote depth, an item's
    items: list[int] = []  # content columns of the open list items
    html = -1  # the block quote depth of an open HTML block, read as running to a blank line (§4.6 kinds 6, 7)
    for i, line in enumerate(lines):
        lead = CONTAINER.match(line).group(0)  # type: ignore[union-attr]
        rest, quotes = line[len(lead):], lead.count(">")
        if html >= 0 and (quotes < html or not line[len(lead) if quotes == html else 0:].strip()):
            html = -1  # its blank line (or the end of its block quote)
        elif html >= 0 or html_start(rest):  # kinds 1-6, which also interrupt a paragraph
            if html < 0:
                html = -1 if closed_html(rest.strip()) else quotes
            start = -1
            continue
        under = _UNDERLINE.match(rest)
        if start >= 0 and under and quotes == depth and not in_item:
            if not any(table_cells(_in_quotes(lines[j]), delimiter=True) for j in range(start, i)):  # GFM table
                text = " ".join(_in_quotes(without_comments(original[j])).strip() for j in range(start, i))
                found.append(Heading(1 if under.group(1)[0] == "=" else 2, text, start + 1))
            start = -1
            continue
        block = not rest.strip() or bool(ATX.match(rest) or is_thematic_break(rest.strip()) or _FENCE.match(rest)
                                         or _opens_item(rest))
        if start >= 0 and not block and (quotes == depth or (quotes < depth and not (under and rest.strip()[0] == "-"))):
            continue  # the paragraph goes on (lazily in fewer quotes: "===" as text, "-" an empty item)
        start = -1
        if not rest.strip():
            shown = _in_quotes(original[i])  # masked code (a fence line) or an empty quote line (">")
            if quotes or shown.strip():  # a block left of an open item's content ends the item
                left = len(line) - len(line.lstrip(" ")) if quotes else len(shown) - len(shown.lstrip(" "))
                items = [col for col in items if col <= left]
            continue
        indent = len(rest) - len(rest.lstrip(" "))
        while items and indent < items[-1]:
            items.pop()
        item = LIST_ITEM.match(rest) if not is_thematic_break(rest.strip()) else None
        if item is not None:
            content = rest[item.end():]
            marker_end = item.end() - (rest[item.end() - 1:item.end()] in (" ", "\t"))
            # content starts after the spaces past the marker; an empty item's one column past it (§5.2)
            items.append(item.end() + len(content) - len(content.lstrip(" ")) if content.strip() else marker_end + 1)
            start, depth, in_item = (i, quotes, True) if content.strip() else (-1, 0, False)
        elif not block and indent < (items[-1] if items else 0) + 4:  # 4 more columns: indented code
            start, depth, in_item = i, quotes, bool(items)
    return found


def _opens_item(rest: str) -> bool:
    """Whether ``rest`` starts a list item that may interrupt a paragraph: not empty, and an ordered
    one numbered 1 (§5.2)."""
    item = LIST_ITEM.match(rest)
    return bool(item) and bool(rest[item.end():].strip()) and not _ORDERED_NOT_ONE.match(rest)  # type: ignore[union-attr]


def _in_quotes(line: str) -> str:
    """``line`` after its block quote markers."""
    return line[len(CONTAINER.match(line).group(0)):]  # type: ignore[union-attr]


def _in_containers(line: str) -> str:
    """``line`` after its block quote markers and list markers: ``> ## Plan`` in a callout and
    ``- # Step`` in a list item are headings too (§5.1, §5.2)."""
    rest = _in_quotes(line)
    for _ in range(MAX_NESTED):
        item = LIST_ITEM.match(rest)
        if item is None:
            break
        rest = rest[item.end():]
    return rest


def block_ids(masked: str) -> set[str]:
    """Obsidian block ids of code-masked Markdown: ``^id`` at the end of a block, i.e. of a line the next one does
    not continue (``line one ^mid`` followed by ``line two`` of the same paragraph names no block)."""
    lines = masked.split("\n")
    return {m.group(1) for i, line in enumerate(lines) if "^" in line for m in [_BLOCK_ID.search(line)]
            if m and (i + 1 == len(lines) or not _continues(line, lines[i + 1]))}


def _continues(line: str, after: str) -> bool:
    """Whether ``after`` is more text of the paragraph ``line`` ends (a lazy continuation line), not a blank line
    or the start of another block (heading, list item, quote, table row, fence, rule, a lone ``^id``)."""
    if line.lstrip().startswith(">") and after.lstrip().startswith(">"):  # inside one quote: judge its content
        line, after = _in_quotes(line), _in_quotes(after)
    return not _NEW_BLOCK.match(after)
