"""Block starts a line-oriented Markdown scanner needs beyond lists, quotes and fences (CommonMark
0.31 §4.1 thematic breaks, §4.6 HTML blocks; GFM tables): each decides where a paragraph, and so an
inline code span, ends."""

from __future__ import annotations

import re

_HTML_START = re.compile(  # an HTML block of CommonMark's kinds 1-6: it may interrupt a paragraph (§4.6)
    r"[ ]{0,3}(?:<(?:script|pre|style|textarea)(?:\s|>|$)|<!--|<\?|<![A-Za-z]|<!\[CDATA\[|</?(?:address|article|aside|"
    r"base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|"
    r"figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|"
    r"noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|thead|title|tr|track|ul)"
    r"(?:\s|/?>|$))", re.IGNORECASE)
_HTML_ENDS = (("<!--", "-->"), ("<?", "?>"), ("<![CDATA[", "]]>"), ("<!", ">"))  # kinds 2, 3, 5, 4
_DELIMITER_CELL = re.compile(r"[ \t]*:?-+:?[ \t]*")
_PIPE = re.compile(r"(?<!\\)(?:\\\\)*\|")


def html_start(rest: str) -> bool:
    """Whether ``rest`` starts an HTML block of kinds 1-6, which may interrupt a paragraph."""
    return _HTML_START.match(rest) is not None


def closed_html(stripped: str) -> bool:
    """Whether ``stripped`` is an HTML block of kinds 2-5 that ends on its own line (``<!-- x -->``)."""
    for start, end in _HTML_ENDS:
        if stripped.startswith(start):
            return end in stripped[len(start):]
    return False


def table_cells(row: str, delimiter: bool = False) -> int:
    """Cells of a GFM table row holding a ``|`` (of a delimiter row: ``|---|:-:|``), else 0."""
    if "|" not in row:
        return 0
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if cell_ends(inner)[-1:] == [len(inner) - 1] else inner
    cells = _PIPE.split(inner)
    if delimiter and not all(_DELIMITER_CELL.fullmatch(c) for c in cells):
        return 0
    return len(cells)


def cell_ends(raw: str) -> list[int]:
    """Offsets of the unescaped ``|`` in ``raw``: where a table cell ends."""
    return [m.end() - 1 for m in _PIPE.finditer(raw)]


def is_thematic_break(stripped: str) -> bool:
    """Whether the stripped line is a thematic break: 3 or more of one of ``-*_``, spaces between (§4.1)."""
    if stripped[:1] not in ("-", "*", "_"):
        return False
    compact = stripped.replace(" ", "").replace("\t", "")
    return len(compact) >= 3 and len(set(compact)) == 1 and compact[0] in "-*_"
