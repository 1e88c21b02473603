"""A fast, line-oriented Markdown scanner: code masking, headings and block ids.

Link checking must ignore ``[[...]]`` inside code (field case WL-02) and must
run over 10,000 notes in well under a second, so instead of a full CommonMark
parse this module implements the few block rules that decide what is code:

* fenced code blocks (```` ``` ```` / ``~~~``, closing fence of the same character,
  at least the same length and indented at most 3 columns; an unclosed fence runs to
  the end of its container: the document, a block quote, or a list item, which a line
  indented less than the item's content ends), also inside block quotes and list items;
* indented code blocks (4+ columns), which cannot interrupt a paragraph and do
  not exist inside list items;
* inline code spans (a backtick run closed by a run of the same length within
  the same paragraph).

``mask_code`` replaces every code character with a space and keeps newlines, so
offsets and line numbers in the masked text equal those in the original; the
test suite checks it against markdown-it-py. Reference: CommonMark 0.31,
sections 4.4 (indented code), 4.5 (fenced code) and 6.1 (code spans).
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from typing import NamedTuple

_CONTAINER = re.compile(r"(?:[ ]{0,3}>[ ]?)*")
_QUOTE = re.compile(r"[ ]{0,3}>[ ]?")
_SETEXT = re.compile(r"[ ]{0,3}(?:=+|-+)[ \t]*$")  # under a paragraph line: a setext heading's underline
_ORDERED_NOT_ONE = re.compile(r"[ ]{0,3}(?!0*1[.)])[0-9]{1,9}[.)]")
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_LIST_ITEM = re.compile(r"^[ ]{0,3}(?:[-+*]|[0-9]{1,9}[.)])(?:[ \t]|$)")
_ATX = re.compile(r"[ ]{0,3}(#{1,6})(?:[ \t]+(.*))?$")  # the closing "#"s are cut in atx_heading
_BLOCK_ID = re.compile(r"(?:^|\s|\]\])\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*$")
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t>]*\n")
_ATX_LINE = re.compile(r"^[ ]{0,3}#{1,6}(?:[ \t].*)?$", re.M)


def _blank(segment: str) -> str:
    """Spaces for every character of ``segment`` except newlines."""
    return re.sub(r"[^\n]", " ", segment)


def mask_code(text: str) -> str:
    """Return ``text`` with fenced, indented and inline code replaced by spaces.

    Args:
        text: Markdown (LF line endings).
    Returns:
        A string of the same length; newlines are kept, code characters are spaces.
    """
    if "`" not in text and "~~~" not in text and "\t" not in text and "    " not in text:
        return text  # no backtick, tilde fence, tab or 4-space run: no code at all
    lines = text.split("\n")
    out: list[str] = []
    fence: tuple[str, int, str, int] | None = None  # (char, length, container prefix, list item indent)
    items: list[int] = []  # content columns of the open list items, outermost first
    item_depth = 0  # block quote depth of the open list items
    empty_item = False  # the last line opened a list item with nothing in it
    prev_para = False  # previous line is paragraph text (indented code cannot interrupt it) ...
    para_depth = 0  # ... inside this many block quotes
    for line in lines:
        prefix = _CONTAINER.match(line).group(0)  # type: ignore[union-attr]
        rest = line[len(prefix):]
        depth = prefix.count(">") if prefix else 0
        if items and depth < item_depth:
            items.clear()  # the block quote holding the list ended, and the list with it
        if fence is not None and depth < fence[2].count(">"):
            fence = None  # the block quote holding the fence ended, and the fence with it (CommonMark §5.1)
        if fence is not None:  # the line as its container sees it: "> ```" is content in a top-level fence
            inner = _inside_quotes(line, fence[2].count(">")) if fence[2] else line
            bare = inner.strip()
            at = _indent_cols(inner) if bare else 0
            if bare and at < fence[3]:
                fence = None  # the list item holding the fence ended, and the fence with it (§5.2)
                _close_items(items, at)
        if fence is not None:
            char, length, _, inside = fence
            out.append(_blank(line))
            if bare and bare[0] == char and set(bare) == {char} and len(bare) >= length and at - inside <= 3:
                fence = None  # a closing fence is indented at most 3 columns in its container (§4.5)
                prev_para = False
            continue
        stripped = rest.strip()
        cols = _indent_cols(rest)
        item = _LIST_ITEM.match(rest)
        if item and prev_para and para_depth == depth and not items and (
                not rest[item.end():].strip() or _ORDERED_NOT_ONE.match(rest)):
            item = None  # a list interrupting a paragraph starts non-empty, and at 1 if ordered (§5.2)
        was_empty, empty_item = empty_item, bool(item) and not rest[item.end():].strip()  # type: ignore[union-attr]
        # the column in the list's container
        lead = cols if not items or depth == item_depth else _indent_cols(_inside_quotes(line, item_depth))
        if item:
            _close_items(items, lead)  # a sibling or an outer item: the items right of its marker end
            items.append(_content_cols(rest, item.end()) + (lead - cols))
            item_depth = depth
        m = _FENCE_OPEN.match(rest[item.end():] if item else rest)  # `- ```` opens a fence in the item
        if m and not (m.group("fence")[0] == "`" and "`" in m.group("info")):
            if not item:
                _close_items(items, lead)  # a fence interrupts: it continues no paragraph lazily
            inside = items[-1] if items else 0
            indent = len(m.group("indent").expandtabs(4)) if item else lead - inside
            if indent < 4 or prefix:
                fence = (m.group("fence")[0], len(m.group("fence")), prefix, inside)
                out.append(_blank(line))
                prev_para = False
                continue
        if not stripped:
            if was_empty and items:
                items.pop()  # a list item may start with at most one blank line: this one stays empty (§5.2)
            out.append(line)
            prev_para = False
            continue
        if items and not item and (not prev_para or depth > item_depth or _ATX.match(rest)
                                   or _is_thematic_break(stripped)):
            _close_items(items, lead)  # no paragraph it lazily continues: the items right of it end
        if cols >= 4 and not items and not prev_para:
            out.append(_blank(line))
            prev_para = False
            continue
        out.append(line)
        prev_para = not (_ATX.match(rest) or _is_thematic_break(stripped) or (prev_para and _SETEXT.match(rest)))
        para_depth = depth
    return _mask_code_spans("\n".join(out))


def _close_items(items: list[int], column: int) -> None:
    """End the open list items whose content starts right of ``column``."""
    while items and column < items[-1]:
        items.pop()


def _inside_quotes(line: str, depth: int) -> str:
    """``line`` after its first ``depth`` block quote markers."""
    at = 0
    for _ in range(depth):
        m = _QUOTE.match(line, at)
        if m is None:
            break
        at = m.end()
    return line[at:] if at else line


def _indent_cols(rest: str) -> int:
    """Columns of ``rest``'s leading spaces and tabs (a tab stops at the next multiple of 4)."""
    if rest[:1] not in (" ", "\t"):
        return 0
    n = len(rest) - len(rest.lstrip(" \t"))
    return len(rest[:n].expandtabs(4)) if "\t" in rest[:n] else n


def _content_cols(rest: str, after_marker: int) -> int:
    """The content column of the list item starting ``rest`` (``after_marker``: the end of the marker and
    its first space): 1–4 spaces after the marker count, 5 or more mean 1 (CommonMark §5.2)."""
    marker = len(rest[:after_marker].rstrip(" \t").expandtabs(4))
    tail = rest[len(rest[:after_marker].rstrip(" \t")):]
    spaces = _indent_cols(tail) if tail.strip() else 1
    return marker + (spaces if 1 <= spaces <= 4 else 1)


def _is_thematic_break(stripped: str) -> bool:
    if stripped[:1] not in ("-", "*", "_"):
        return False
    compact = stripped.replace(" ", "").replace("\t", "")
    return len(compact) >= 3 and len(set(compact)) == 1 and compact[0] in "-*_"


def _mask_code_spans(text: str) -> str:
    """Mask inline code spans; a span never crosses a blank line (paragraph end), the start of a block
    quote or an ATX heading's edge.

    O(n log n) in the number of backtick runs: every run is visited once and the
    matching closer (the next run of the same length) is found by bisection, so a
    note full of unmatched backticks cannot make a check quadratic.
    """
    if "`" not in text:
        return text
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    by_length: dict[int, list[int]] = defaultdict(list)
    for i, (a, b) in enumerate(runs):
        by_length[b - a].append(i)
    paragraph_ends = [m.start() for m in _BLANK_LINE.finditer(text)]
    if ">" in text:  # a block quote starting interrupts the paragraph before it
        depth, pos = 0, 0
        for line in text.split("\n"):
            deeper = _CONTAINER.match(line).group(0).count(">")  # type: ignore[union-attr]
            if deeper > depth:
                paragraph_ends.append(pos)
            depth, pos = deeper, pos + len(line) + 1
        paragraph_ends.sort()
    if "#" in text:  # an ATX heading is a block of its own: no code span enters or leaves it
        for m in _ATX_LINE.finditer(text):
            paragraph_ends.extend((m.start(), m.end()))
        paragraph_ends.sort()
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        start, end = runs[i]
        length = end - start
        if start > 0 and _odd_backslashes(text, start):  # `\`` is a literal backtick
            start, length = start + 1, length - 1
            if length == 0:
                i += 1
                continue
        k = bisect.bisect_left(paragraph_ends, end)
        limit = paragraph_ends[k] if k < len(paragraph_ends) else len(text)
        candidates = by_length.get(length, [])
        j = bisect.bisect_right(candidates, i)
        if j < len(candidates) and runs[candidates[j]][0] < limit:
            close = candidates[j]
            spans.append((start, runs[close][1]))
            i = close + 1
        else:
            i += 1
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for a, b in spans:
        out.append(text[pos:a])
        out.append(_blank(text[a:b]))
        pos = b
    out.append(text[pos:])
    return "".join(out)


def _odd_backslashes(text: str, at: int) -> bool:
    count = 0
    i = at - 1
    while i >= 0 and text[i] == "\\":
        count += 1
        i -= 1
    return count % 2 == 1


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
    m = _ATX.match(line)
    if m is None:
        return None
    content = (m.group(2) or "").rstrip(" \t")
    bare = content.rstrip("#")
    if len(bare) < len(content) and bare[-1:] in (" ", "\t"):
        content = bare.rstrip(" \t")
    return len(m.group(1)), content.strip()


def headings(text: str, masked: str) -> list[Heading]:
    """ATX headings in document order.

    ``masked`` (from :func:`mask_code`) decides which lines are outside code;
    the heading text is taken from ``text`` so inline code in a heading survives.
    """
    found: list[Heading] = []
    original = text.split("\n")
    for i, line in enumerate(masked.split("\n")):
        if "#" not in line or not _ATX.match(line):
            continue
        heading = atx_heading(original[i])
        if heading is not None:
            found.append(Heading(heading[0], heading[1], i + 1))
    return found


def block_ids(masked: str) -> set[str]:
    """Obsidian block ids (``^id`` at the end of a line) of code-masked Markdown."""
    return {m.group(1) for line in masked.split("\n") if "^" in line for m in [_BLOCK_ID.search(line)] if m}
