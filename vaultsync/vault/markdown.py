"""A fast, line-oriented Markdown scanner: what is code (and math), so that links there are not links.

Link checking must ignore ``[[...]]`` inside code (field case WL-02) and must
run over 10,000 notes in well under a second, so instead of a full CommonMark
parse this module implements the few block rules that decide what is code:

* fenced code blocks (```` ``` ```` / ``~~~``, closing fence of the same character,
  at least the same length and indented at most 3 columns; an unclosed fence runs to
  the end of its container: the document, a block quote, or a list item, which a line
  indented less than the item's content ends), also inside block quotes and list items;
* indented code blocks (4+ columns past their container's content: the document, a
  block quote, a list item), which cannot interrupt a paragraph;
* inline code spans (a backtick run closed by a run of the same length within the
  same paragraph: no span crosses a block start, such as a list item, heading,
  thematic break, setext underline or HTML block, nor a GFM table cell).

Math (``$…$``, ``$$…$$``) is masked too: Obsidian renders it with MathJax, so a ``[[`` there is
no link (:mod:`vaultsync.vault.math_spans`); and so are comments, ``%%…%%`` and ``<!--…-->``, whose
text is hidden (:mod:`vaultsync.vault.inline_spans`), and the lines of an HTML block that opens with
``<!--`` (CommonMark §4.6 kind 2), to the line holding ``-->``, and of a block comment that a line
opens with ``%%``, to the closing ``%%``.

Tabs among a line's leading spaces and ``>`` count to their tab stop (``>\tx`` leaves x
2 columns in). A block quote inside a list item may sit 4 or more columns in (``- x`` /
``    > ~~~``). Not modelled: a setext underline on a lazy line, a list inside a block quote
inside a list item, and what is raw HTML inside an HTML block (links there are still checked).

``mask_code`` replaces every code character with a space and keeps newlines, so
offsets and line numbers in the masked text equal those in the original; the
test suite checks it against markdown-it-py. Reference: CommonMark 0.31,
sections 4.4 (indented code), 4.5 (fenced code) and 6.1 (code spans).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from vaultsync.vault.block_starts import cell_ends, closed_html, html_start, is_thematic_break, table_cells
from vaultsync.vault.inline_spans import hidden_spans, percent_close, percent_marks
from vaultsync.vault.math_spans import math_spans

CONTAINER = re.compile(r"(?:[ ]{0,3}>[ ]?)*")
_QUOTE = re.compile(r"[ ]{0,3}>[ ]?")
_ITEM_QUOTE = re.compile(r"[ ]*>[ ]?")  # a quote inside a list item sits up to 3 columns past the item's content
_SETEXT = re.compile(r"[ ]{0,3}(?:=+|-+)[ \t]*$")  # under a paragraph line: a setext heading's underline
_ORDERED_NOT_ONE = re.compile(r"[ ]{0,3}(?!0*1[.)])[0-9]{1,9}[.)]")
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_WHITESPACE = re.compile(r"[ \t]*")
MAX_NESTED = 32  # list markers read on one line ("- - - x"): a bound keeps a pathological line linear
LIST_ITEM = re.compile(r"^[ ]{0,3}(?:[-+*]|[0-9]{1,9}[.)])(?:[ \t]|$)")
_ANY_ITEM = re.compile(r"[ ]*(?:[-+*]|[0-9]{1,9}[.)])(?:[ \t]|$)")  # its indentation judged apart (an item's content)
ATX = re.compile(r"[ ]{0,3}(#{1,6})(?:[ \t]+(.*))?$")  # the closing "#"s are cut in atx_heading
_LEAD = re.compile(r"[ \t>]*")
_COMMENT = "<!--"  # an open HTML comment block is held as a fence whose closer is a line holding "-->"
_PERCENT = "%%"  # and an Obsidian block comment as one that a "%%" closes, in any container
_MASK_MARKS = ("`", "~~~", "\t", "    ", "$", "%%", "<!--")  # without one of these, nothing is masked


def _blank(segment: str) -> str:
    """Spaces for every character of ``segment`` except newlines."""
    return re.sub(r"[^\n]", " ", segment)


def mask_code(text: str) -> str:
    """Return ``text`` with fenced, indented and inline code, comments and math replaced by spaces.

    Args:
        text: Markdown (LF line endings).
    Returns:
        A string of the same length; newlines are kept, code characters are spaces.
    """
    if not any(mark in text for mark in _MASK_MARKS):
        return text  # no backtick, tilde fence, tab, 4-space run, dollar or comment: nothing to mask
    out: list[str] = []
    breaks: list[int] = []  # offsets where a block starts: no code span crosses one
    offset = 0
    fence: _Fence | None = None
    inline_open = False  # an Obsidian comment opened inline ("text %% …") is still open
    items: list[int] = []  # content columns of the open list items, outermost first
    declined = False  # the quote inside an item holds a list: its lines are read as before (not modelled)
    item_depth = 0  # block quote depth of the open list items
    empty_item = False  # the last line opened a list item with nothing in it
    prev_para = False  # previous line is paragraph text (indented code cannot interrupt it) ...
    para_depth = 0  # ... inside this many block quotes
    table = 0  # 1 while a GFM table is open
    header, header_raw, header_start = "", "", 0  # the last text line: a table's header row when a delimiter follows
    for raw in text.split("\n"):
        line_start, offset = offset, offset + len(raw) + 1
        line = _expand_lead(raw)
        prefix, declined = _container_prefix(line, items, item_depth, fence is not None, declined)
        rest = line[len(prefix):]
        depth = prefix.count(">") if prefix else 0
        lazy_line = (prev_para and depth < para_depth and bool(rest.strip()) and _continues(rest)
                     and not LIST_ITEM.match(rest))  # continues a quoted paragraph: the quote goes on
        if items and depth < item_depth and not lazy_line:
            items.clear()  # the block quote holding the list ended, and the list with it
        if depth > para_depth:
            prev_para = False  # a block quote starts: no paragraph of it yet (lazy lines go the other way)
        if fence is not None and depth < fence.depth:
            fence = None  # the block quote holding the fence ended, and the fence with it (§5.1)
        if fence is not None and (col := fence.item_ended(line)) is not None:
            fence = None  # the list item holding the fence ended, and the fence with it (§5.2)
            _close_items(items, col)
        if fence is not None and fence.char == _PERCENT:
            end = percent_close(raw, 0)  # a "%%" closes the block comment; the rest of its line is text
            out.append(_blank(raw) if end is None else _blank(raw[:end]) + raw[end:])
            if end is not None:
                fence = None
                prev_para = False
                inline_open = percent_marks(raw[end:]) % 2 == 1
            continue
        if fence is not None:
            out.append(_blank(raw))
            if fence.closes(line):
                fence = None
                prev_para = False
            continue
        stripped = rest.strip()
        cols = _indent_cols(rest)
        # the column in the list's container, and ``past`` the content of the innermost item it reaches (where
        # block starts count: at most 3 columns in)
        lead = cols if not items or depth == item_depth else _indent_cols(_inside_quotes(line, item_depth))
        past = lead - max((c for c in items if c <= lead), default=0) if items and depth == item_depth else cols
        item = _ANY_ITEM.match(rest) if past < 4 and not is_thematic_break(stripped) else None  # "* * *": §4.1
        if item and prev_para and para_depth == depth and (not items or (depth == item_depth and lead >= items[-1])) \
                and (not rest[item.end():].strip() or _ORDERED_NOT_ONE.match(rest.lstrip(" "))):
            item = None  # a list interrupting a paragraph (the item's own, for a nested one) starts non-empty, at 1 (§5.2)
        was_empty, empty_item = empty_item, bool(item) and not rest[item.end():].strip()  # type: ignore[union-attr]
        if items and depth > item_depth and lead < items[-1]:
            _close_items(items, lead)  # a ">" left of the item's content: a new block quote, outside the item
            prev_para = False
        body, body_prefix = rest, prefix  # what follows the line's list markers, and the quotes before it
        opened = bool(item)
        code_first = False  # the item's content starts with indented code ("-     code")
        if item:
            _close_items(items, lead)  # a sibling or an outer item: the items right of its marker end
            at, col = lead - cols, len(prefix)  # ``body``'s column in the list's container, and in the line
            for _ in range(MAX_NESTED):  # "- - x": an item whose content starts with another item
                width, code_first = _content_cols(body, item.end(), col)
                items.append(at + width)
                step = _advance(col, body[:item.end()]) - col
                at, col, body = at + step, col + step, body[item.end():]
                item = LIST_ITEM.match(body) if body.strip() and not is_thematic_break(body.strip()) else None
                if not item:
                    break
            item_depth = depth
            quoted = CONTAINER.match(body).group(0)  # type: ignore[union-attr]
            if ">" in quoted:  # "- > ```": a block quote inside the item
                body, body_prefix, col = body[len(quoted):], prefix + quoted, _advance(col, quoted)
        lazy = False  # a paragraph line outside the quotes its paragraph sits in (§5.1 laziness)
        if opened or not (prev_para and depth <= para_depth and stripped and _continues(rest, past)):
            breaks.append(line_start)  # a new block: a blank line, an item, a heading, a deeper quote...
        else:
            lazy = depth < para_depth
        if table and (not stripped or "|" not in rest or opened):
            table = 0
        m = _FENCE_OPEN.match(body)
        if m and not (m.group("fence")[0] == "`" and "`" in m.group("info")):
            if not opened:
                _close_items(items, lead)  # a fence interrupts: it continues no paragraph lazily
            inside = items[-1] if items and body_prefix.count(">") == item_depth else 0
            indent = _advance(col, m.group("indent")) - col if opened else lead - inside if inside else cols
            if indent < 4:
                if breaks[-1:] != [line_start]:
                    breaks.append(line_start)  # a fence interrupts a paragraph: no code span crosses it
                fence = _Fence(m.group("fence")[0], len(m.group("fence")), body_prefix.count(">"), inside,
                               (items[-1], item_depth) if items else None)
                out.append(_blank(raw))
                prev_para = False
                continue
        if not stripped:
            if was_empty and items:
                items.pop()  # a list item may start with at most one blank line: this one stays empty (§5.2)
            out.append(raw)
            prev_para = False
            continue
        if items and not opened and (not prev_para or depth > item_depth or ATX.match(rest)
                                   or is_thematic_break(stripped) or html_start(rest)):
            _close_items(items, lead)  # no paragraph it lazily continues: the items right of it end
        if opened and code_first and body_prefix == prefix:
            out.append(raw[:len(raw) - len(body.lstrip(" \t"))] + _blank(body.lstrip(" \t")))  # "-     code"
            prev_para = False
            continue
        if not opened and not prev_para and (lead - items[-1] >= 4 if items and depth == item_depth else cols >= 4):
            out.append(_blank(raw))  # indented code, at the top level or inside a list item (§4.4, §5.2)
            prev_para = False
            continue
        inset = lead - items[-1] if items and not opened and depth == item_depth else _indent_cols(body)
        if inset < 4 and body.lstrip(" \t").startswith("<!--"):  # an HTML block of kind 2 (§4.6): raw HTML
            out.append(_blank(raw))
            if "-->" not in body[body.index("<!--") + 4:]:  # it runs on, like a fence: the same containers end it
                inside = items[-1] if items and body_prefix.count(">") == item_depth else 0
                fence = _Fence(_COMMENT, 0, body_prefix.count(">"), inside, (items[-1], item_depth) if items else None)
            prev_para = False
            continue
        marks = percent_marks(body) if _PERCENT in body else 0
        if inset < 4 and body.lstrip(" \t").startswith(_PERCENT) and marks == 1 and not inline_open:
            out.append(_blank(raw))  # an Obsidian block comment: its lines are hidden up to the closing "%%"
            fence = _Fence(_PERCENT, 0, 0, 0, None)
            prev_para = False
            continue
        inline_open ^= marks % 2 == 1  # a "%%" that starts a line may close a comment a line above opened
        if not table and prev_para and not opened and table_cells(stripped, delimiter=True) == table_cells(header) > 0:
            table = 1  # a GFM table: the header row above, this delimiter row, then rows up to a block start
            breaks.extend(header_start + i for i in cell_ends(header_raw))
        if table:
            breaks.extend(line_start + i for i in cell_ends(raw))  # a table cell is parsed on its own
        out.append(raw)
        header, header_raw, header_start = stripped, raw, line_start
        if opened and not body.strip():
            prev_para = False  # an empty item holds no paragraph
        else:
            head = body if opened else rest  # "- # Title": the item holds a heading, which nothing continues
            more = prev_para and not opened and past >= 4  # "    ***" under text: more of the paragraph
            prev_para = more or not (ATX.match(head) or is_thematic_break(head.strip()) or table
                                     or (prev_para and _SETEXT.match(rest)) or closed_html(stripped))
        if not lazy:
            para_depth = depth
    joined = "\n".join(out)
    masked = _blank_spans(joined, hidden_spans(joined, breaks))
    return _blank_spans(masked, math_spans(masked, breaks))  # math is MathJax's, not Markdown (Obsidian)


class _Fence(NamedTuple):
    """An open fenced code block: its ``char`` and ``length``, its block quote ``depth``, the column its
    content starts at in that quote (``inside``: a list item's content column, else 0), and the list
    item holding it (``item``: content column and block quote depth), which ends it when it ends.
    An open HTML comment block or Obsidian block comment is held as one too (``char`` ``<!--``, ``%%``)."""

    char: str
    length: int
    depth: int
    inside: int
    item: tuple[int, int] | None

    def item_ended(self, line: str) -> int | None:
        """The column of ``line`` in the list's container when it sits left of the holding item's
        content (so the item, and the fence, ended); else None."""
        if self.item is None:
            return None
        col, item_depth = self.item
        seen = _inside_quotes(line, item_depth) if item_depth else line
        at = _indent_cols(seen)
        return at if seen.strip() and at < col else None

    def closes(self, line: str) -> bool:
        """Whether ``line`` is the closing fence: the same character, at least as long, at most 3 columns
        into its container (§4.5). ``> ```` is content of a top-level fence, not its closer."""
        in_item = self.item is not None and self.depth > self.item[1]  # the quote holding it is inside the item
        inner = _inside_quotes(line, self.depth, _ITEM_QUOTE if in_item else _QUOTE) if self.depth else line
        if self.char == _COMMENT:
            return "-->" in inner
        bare = inner.strip()
        return bool(bare) and bare[0] == self.char and set(bare) == {self.char} and len(bare) >= self.length \
            and _indent_cols(inner) - self.inside <= 3


def _expand_lead(line: str) -> str:
    """``line`` with the tabs among its leading spaces and ``>`` expanded to their columns (stops every
    4): ``>\tx`` is ``>   x``, whose ``>`` takes one space and leaves x 2 columns in (§2.2, §5.1)."""
    if "\t" not in line:
        return line
    end = _LEAD.match(line).end()  # type: ignore[union-attr]
    return line[:end].expandtabs(4) + line[end:]


def _continues(rest: str, inset: int | None = None) -> bool:
    """Whether the non-blank line ``rest``, under paragraph text, continues that paragraph: it starts no
    heading, thematic break, setext underline, fence or HTML block (list items are judged apart).
    ``inset``: its columns past its container's content (default: its indentation); a block starts
    at most 3 columns in, so a line 4 or more in (``    ***``) is paragraph text."""
    inset = _indent_cols(rest) if inset is None else inset
    if inset >= 4:
        return True
    bare = rest.lstrip(" \t")
    fence = _FENCE_OPEN.match(bare)
    if fence and not (fence.group("fence")[0] == "`" and "`" in fence.group("info")):
        return False
    return not (ATX.match(bare) or is_thematic_break(bare.strip()) or _SETEXT.match(bare) or html_start(bare))


def _close_items(items: list[int], column: int) -> None:
    """End the open list items whose content starts right of ``column``."""
    while items and column < items[-1]:
        items.pop()


def _container_prefix(line: str, items: list[int], item_depth: int, in_fence: bool,
                      declined: bool) -> tuple[str, bool]:
    """(the block quote markers that start ``line``, with the spaces before them: at most 3 columns in, or
    at most 3 past the content column of an open list item (``- x`` / ``    > ~~~``: a quote inside the
    item, 2 columns past its content; §5.1, §5.2); whether such a quote was read as before). Not modelled:
    a list inside that quote (one block quote depth holds all open items): from its line on, while the
    quote goes on (``declined``), its lines are read as before. ``in_fence``: a fence is open, whose
    content the rest of the line may be."""
    prefix = CONTAINER.match(line).group(0)  # type: ignore[union-attr]
    if not items or prefix.count(">") != item_depth:
        return prefix, False
    rest = line[len(prefix):]
    cols = _indent_cols(rest)  # spaces only: the lead's tabs are expanded
    if cols < 4 or rest[cols:cols + 1] != ">" or cols - max((c for c in items if c <= cols), default=-4) > 3:
        return prefix, False
    quoted = prefix + rest[:cols] + CONTAINER.match(rest, cols).group(0)  # type: ignore[union-attr]
    if declined or (not in_fence and _ANY_ITEM.match(line, len(quoted))):
        return prefix, True
    return quoted, False


def _inside_quotes(line: str, depth: int, quote: re.Pattern[str] = _QUOTE) -> str:
    """``line`` after its first ``depth`` block quote markers (``quote``: how far in one may sit)."""
    at = 0
    for _ in range(depth):
        m = quote.match(line, at)
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


def _content_cols(rest: str, after_marker: int, col: int) -> tuple[int, bool]:
    """(the content column of the list item starting ``rest``, counted from ``rest``'s start, which sits
    at column ``col`` of the line; whether that content is indented code). ``after_marker``: the end of
    the marker and its first space. 1-4 columns of whitespace after the marker count, 5 or more mean
    1 and indented code (CommonMark §5.2); tabs stop at the line's multiples of 4 (§2.2)."""
    marker = rest[:after_marker].rstrip(" \t")
    start = _advance(col, marker)
    gap_end = len(marker) + len(_WHITESPACE.match(rest, len(marker)).group(0))  # type: ignore[union-attr]
    gap = _advance(start, rest[len(marker):gap_end]) - start
    if gap_end == len(rest):
        return start - col + 1, False  # nothing after the marker
    return start - col + (gap if 1 <= gap <= 4 else 1), gap > 4


def _advance(col: int, text: str) -> int:
    """The column after ``text`` written from column ``col`` (a tab stops at the next multiple of 4)."""
    if "\t" not in text:
        return col + len(text)
    for char in text:
        col = col + 4 - col % 4 if char == "\t" else col + 1
    return col


def _blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with the sorted, disjoint ``spans`` blanked (:func:`_blank`)."""
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
