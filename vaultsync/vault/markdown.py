"""A fast, line-oriented Markdown scanner: code masking, headings and block ids.

Link checking must ignore ``[[...]]`` inside code (field case WL-02) and must
run over 10,000 notes in well under a second, so instead of a full CommonMark
parse this module implements the few block rules that decide what is code:

* fenced code blocks (```` ``` ```` / ``~~~``, closing fence of the same character
  and at least the same length; an unclosed fence runs to the end of the
  document, as CommonMark says), also inside block quotes and list items;
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
    fence: tuple[str, int, str] | None = None  # (char, length, container prefix)
    in_list = False
    prev_blank = True
    prev_para = False  # previous line is paragraph text (indented code cannot interrupt it)
    for line in lines:
        prefix = _CONTAINER.match(line).group(0)  # type: ignore[union-attr]
        rest = line[len(prefix):]
        stripped = rest.strip()
        if fence is not None and prefix.count(">") < fence[2].count(">"):
            fence = None  # the block quote holding the fence ended, and the fence with it (CommonMark §5.1)
        if fence is not None:
            char, length, _ = fence
            out.append(_blank(line))
            if stripped and set(stripped) == {char} and len(stripped) >= length:
                fence = None
                prev_blank, prev_para = False, False
            continue
        item = _LIST_ITEM.match(rest)
        m = _FENCE_OPEN.match(rest[item.end():] if item else rest)  # `- ```` opens a fence in the item
        if m and item:
            in_list = True
        if m and not (m.group("fence")[0] == "`" and "`" in m.group("info")):
            indent = len(m.group("indent").expandtabs(4))
            if indent < 4 or in_list or prefix:
                fence = (m.group("fence")[0], len(m.group("fence")), prefix)
                out.append(_blank(line))
                continue
        if not stripped:
            out.append(line)
            prev_blank, prev_para = True, False
            continue
        indent = len(rest) - len(rest.lstrip(" \t"))
        indent_cols = len(rest[:indent].expandtabs(4))
        if _LIST_ITEM.match(rest):
            in_list = True
        elif indent_cols == 0 and prev_blank and not prefix:
            in_list = False
        if indent_cols >= 4 and not in_list and not prev_para:
            out.append(_blank(line))
            prev_blank, prev_para = False, False
            continue
        out.append(line)
        prev_blank = False
        prev_para = not (_ATX.match(rest) or _is_thematic_break(stripped))
    return _mask_code_spans("\n".join(out))


def _is_thematic_break(stripped: str) -> bool:
    compact = stripped.replace(" ", "").replace("\t", "")
    return len(compact) >= 3 and len(set(compact)) == 1 and compact[0] in "-*_"


def _mask_code_spans(text: str) -> str:
    """Mask inline code spans; a span never crosses a blank line (paragraph end) or an ATX heading's edge.

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
