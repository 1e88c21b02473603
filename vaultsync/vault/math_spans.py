"""Obsidian math: ``$$…$$`` (display) and ``$…$`` (inline) are MathJax, not Markdown, so a ``[[`` in
them (``$x \\in [[1, n]]$``, an integer interval) is no WikiLink (https://help.obsidian.md/syntax#Math).

Inline math follows Pandoc's rule, which Obsidian shares: the opening ``$`` is not followed by a space,
the closing one is not preceded by a space nor followed by a digit, so ``costs $5 and $10`` holds no
math. A backslash escapes a ``$``. Math never crosses a block start (``breaks``: the code scanner's
offsets, blank lines among them). Whichever opens first wins: a ``$`` in a WikiLink or Markdown link
that opened before any math (``[[Plan US$]] … [[Plan CA$]]``, ``[US$](a.md) … [CA$](b.md)``) is the
link's text, as markdown-it's inline rules read it at the link's ``[``, while math that opened first
holds the links in it. Both passes visit each ``$`` once: O(n log n) in the text.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from vaultsync.vault.mdlinks import link_spans
from vaultsync.vault.wikilinks import WIKILINK

_DOLLARS = re.compile(r"(?<!\\)(?:\\\\)*(\$\$?)")


def math_spans(text: str, breaks: Sequence[int]) -> list[tuple[int, int]]:
    """``(start, end)`` of every math span in ``text`` (code already masked), display first."""
    if "$" not in text:
        return []
    marks = [(m.start(1), m.end(1)) for m in _DOLLARS.finditer(text)]
    links = _union(([m.span() for m in WIKILINK.finditer(text)] if "[[" in text else []) + link_spans(text))
    link_starts = [a for a, _ in links]

    def in_link(pos: int) -> bool:
        k = bisect.bisect_right(link_starts, pos) - 1
        return k >= 0 and pos < links[k][1]

    def same_block(a: int, b: int) -> bool:
        k = bisect.bisect_right(breaks, a)
        return k >= len(breaks) or breaks[k] >= b

    display: list[tuple[int, int]] = []
    pairs = [(a, b) for a, b in marks if b - a == 2]
    i = 0
    while i + 1 < len(pairs):  # $$ pairs in order
        (a, _), (c, d) = pairs[i], pairs[i + 1]
        if same_block(a, c) and not in_link(a):
            display.append((a, d))
            i += 2
        else:
            i += 1
    starts = [a for a, _ in display]
    spans = list(display)
    opener: int | None = None
    for a, b in marks:
        if b - a == 2:
            opener = None  # inline math never holds display math: the spans stay disjoint
            continue
        k = bisect.bisect_right(starts, a) - 1
        if (k >= 0 and a < display[k][1]) or (opener is None and in_link(a)):
            continue
        before, after = text[a - 1:a], text[b:b + 1]
        if opener is not None and not before.isspace() and not after.isdigit() and same_block(opener, a):
            spans.append((opener, b))
            opener = None
        elif after and not after.isspace():
            opener = a
    return sorted(spans)


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, disjoint cover of ``spans`` (a Markdown link may hold a WikiLink)."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out
