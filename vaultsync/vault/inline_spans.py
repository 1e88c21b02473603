"""Inline spans that hide their text from Markdown, read left to right: code spans and comments.

* Code spans (CommonMark 0.31 §6.1): a backtick run opens, the next run of the same length closes;
  a backslash before a run escapes its first backtick.
* Obsidian comments, ``%%…%%``: inline or across lines, blank lines included; an unclosed ``%%``
  hides the rest of the note, as Obsidian renders it (https://help.obsidian.md/syntax#Comments).
  One whose ``%%`` starts a line and closes on a later one is a block, which the block scanner
  masks, fences and all.
* Inline HTML comments (§6.6): ``<!-->``, ``<!--->``, or ``<!--`` … ``-->``; an unclosed one is text.
  One that starts a line opens an HTML block, which the block scanner masks whole
  (:func:`vaultsync.vault.markdown.mask_code`).

Whichever opens first wins, so a ``%%`` in a code span is code and a backtick in a comment is
comment. Only ``%%`` comments cross a block start (``breaks``). Every backtick run and comment mark is
visited once and a code span's closer is found by bisection: O(n log n), so a text full of unmatched
backticks cannot make a check quadratic.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Sequence

_BACKTICKS = re.compile(r"`+")
_COMMENT = re.compile(r"(?<!\\)(?:\\\\)*(%%|<!--)")  # a backslash escapes the mark's first character
_PERCENTS = re.compile(r"(?<!\\)(?:\\\\)*(%%)")


def hidden_spans(text: str, breaks: Sequence[int] = ()) -> list[tuple[int, int]]:
    """``(start, end)`` of every code span and comment of ``text``, sorted and disjoint.

    Args:
        text: Markdown with its code blocks already masked (LF line endings).
        breaks: sorted offsets where a block or a table cell starts: no code span or inline HTML
            comment crosses one.
    """
    return [(a, b) for a, b, _ in _spans(text, breaks, comments=True)]


def code_spans(text: str, breaks: Sequence[int] = ()) -> list[tuple[int, int, int]]:
    """The inline code spans of ``text`` as ``(start, end, run length)`` (comments are not read)."""
    return _spans(text, breaks, comments=False)


def _spans(text: str, breaks: Sequence[int], comments: bool) -> list[tuple[int, int, int]]:
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)] if "`" in text else []
    marks = ([m.span(1) for m in _COMMENT.finditer(text)]
             if comments and ("%%" in text or "<!--" in text) else [])
    by_length: dict[int, list[int]] = defaultdict(list)
    for i, (a, b) in enumerate(runs):
        by_length[b - a].append(i)
    spans: list[tuple[int, int, int]] = []
    i = m = pos = 0
    while True:
        while i < len(runs) and runs[i][0] < pos:
            i += 1
        while m < len(marks) and marks[m][0] < pos:
            m += 1
        if m < len(marks) and (i == len(runs) or marks[m][0] < runs[i][0]):
            start, after = marks[m]
            end = _comment_end(text, start, after, breaks)
            if end is None:
                m += 1  # an unclosed inline "<!--" is text
            else:
                spans.append((start, end, 0))
                pos = end
            continue
        if i == len(runs):
            return spans
        start, end = runs[i]
        length = end - start
        if start > 0 and _odd_backslashes(text, start):  # `\`` is a literal backtick
            start, length = start + 1, length - 1
        k = bisect.bisect_left(breaks, end)
        limit = breaks[k] if k < len(breaks) else len(text)
        candidates = by_length.get(length, [])
        j = bisect.bisect_right(candidates, i)
        if length and j < len(candidates) and runs[candidates[j]][0] < limit:
            spans.append((start, runs[candidates[j]][1], length))
            pos = runs[candidates[j]][1]
        else:
            pos = end


def percent_marks(line: str) -> int:
    """How many ``%%`` marks one line holds, read left to right with its code spans: 2 for a comment
    that closes on the line, 1 for one left open."""
    if "%%" not in line:
        return 0
    return sum(1 + (percent_close(line, a + 2) is not None)
               for a, _, run in _spans(line, (), comments=True) if run == 0 and line.startswith("%%", a))


def without_comments(line: str) -> str:
    """One line with its comments cut out and its code spans kept (a heading's name as shown)."""
    if "%%" not in line and "<!--" not in line:
        return line
    spans = [(a, b) for a, b, run in _spans(line, (), comments=True) if run == 0]
    for a, b in reversed(spans):
        line = line[:a] + line[b:]
    return line


def percent_close(text: str, pos: int) -> int | None:
    """The end of the first unescaped ``%%`` at or after ``pos``, which closes an Obsidian comment."""
    close = _PERCENTS.search(text, pos)
    return None if close is None else close.end()


def _comment_end(text: str, start: int, after: int, breaks: Sequence[int]) -> int | None:
    if text[start] == "%":
        end = percent_close(text, after)
        return len(text) if end is None else end
    if text.startswith(">", after) or text.startswith("->", after):  # "<!-->", "<!--->": empty comments
        return text.index(">", after) + 1
    close = text.find("-->", after)  # no escapes in raw HTML
    k = bisect.bisect_right(breaks, after)
    if close < 0 or (k < len(breaks) and breaks[k] <= close):
        return None  # unclosed, or closed past a block start, which inline raw HTML never crosses
    return close + 3


def _odd_backslashes(text: str, at: int) -> bool:
    count = 0
    i = at - 1
    while i >= 0 and text[i] == "\\":
        count += 1
        i -= 1
    return count % 2 == 1
