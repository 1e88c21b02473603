"""Scalar fidelity: where YAML stores something other than the text the author wrote.

A plain (unquoted) YAML scalar is read by rules most authors never learnt
(YAML 1.2, https://yaml.org/spec/1.2.2/ sections 6.6 comments, 7.3.3 plain
style, 10.3 core schema). :func:`scalar_findings` compares each plain scalar's
source text with what the loader made of it and returns a :class:`Finding` for
each of these kinds:

``comment``
    `` #`` followed by a non-space character cuts the value (``title: INC #42 db``
    stores ``INC``; ``- #tag`` and a lone ``#`` store null). A comment written
    ``# like this`` (hash, space) is taken as an intended comment.
``portable``
    Text that YAML 1.1 parsers (PyYAML's ``safe_load``, many static-site
    generators) and YAML 1.2 read as different values: leading-zero integers
    (``010`` is 8 in 1.1, 10 in 1.2), base 60 (``1:30`` is 90 in 1.1), digit
    separators (``1_000``), exponents without a dot (``1e3`` is a string in 1.1),
    ``0o`` octal.
``number``
    A number whose text is not how the number is written back (``1.10`` → 1.1,
    ``+5``, ``0x1F``, ``.5``). Whether that loses anything depends on the field:
    the caller decides (see :mod:`vaultsync.checks.fidelity`).
``wikilink``
    ``[[Note]]`` written unquoted, which YAML reads as a list inside a list.
``escape``
    A double-quoted value holding an escape that stores a control, format or separator
    character (§5.7): ``"C:\\temp"`` stores a tab, ``"C:\\Program Files"`` U+2029. Nobody
    types such a character into frontmatter on purpose; a Windows path wants single
    quotes. (``\\n`` and escapes of printable characters are left alone: they can be meant.)
``block``
    ``|`` or ``>`` with nothing indented below: a block scalar (§8.1) that stores ``""``.
``anchor``
    A value starting with an anchor that no alias uses: ``&co update``
    stores ``update`` (``&co`` names an anchor, §6.9.2) — almost surely meant as text.
``indent``
    A ``- item`` line indented deeper than the item above it: YAML reads it as more
    text of that item (``- a`` / `` - b`` stores ``a - b``, §7.3.3).
``comment_line``
    A ``#word`` line inside a flow collection written over several lines: a comment,
    so the item the author meant is not in the list.
``merge``
    A ``<<`` key: YAML 1.1 readers merge the mapping after it into this one (the
    merge-key type), YAML 1.2 keeps a key named ``<<``.
``comment_key``
    ``key: #word`` with indented lines below: the ``#word`` is a comment, and the lines
    below are the value.
``colon_key``
    ``{b:c}``: in a flow mapping a colon needs a space after it too, else YAML stores
    one key ``b:c`` with no value.
``empty_item``
    A list item holding only a comment (``- # later``): YAML stores an empty (null) item.
``tab``
    A tab between tokens (``title:<TAB>x``): YAML 1.1 readers refuse it (:mod:`vaultsync.vault.tabs`).

Findings carry 0-based positions relative to the YAML text.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, NamedTuple

import yaml

from vaultsync.vault.tabs import tab_separators

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_NULL = "tag:yaml.org,2002:null"

# YAML 1.1 forms that the 1.2 core schema reads differently (https://yaml.org/type/int.html, float.html)
_PORTABLE = re.compile(
    r"""^[-+]?(?:
        0[0-9]+                                  # leading zero: octal in 1.1
      | [0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?   # base 60
      | [0-9][0-9_]*_[0-9_]*(?:\.[0-9_]*)?       # digit separators
      | [0-9]+[eE][-+]?[0-9]+ | [0-9]*\.[0-9]*[eE][0-9]+   # exponent: 1.1 reads text unless '1.0e+3'
      | 0o[0-7]+
      | 0x[0-9a-fA-F]*_[0-9a-fA-F_]*             # hex with separators: a number in 1.1, text in 1.2
      | 0b[01_]+                                 # binary: a number in 1.1, text in 1.2
    )$""",
    re.X,
)
_SAME_OCTAL = re.compile(r"^[-+]?0+[0-7]?$")  # "07", "-00": octal and decimal agree, only the spelling is odd
_PORTABLE_FIRST = frozenset("-+0123456789.")
# YAML 1.2 §5.7 escapes; \\n, \\", \\\\ and \\/ store what they say and are left alone
_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*(\\(?:[tbfave0rNLP_\t]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}))")
_NAMED_ESCAPES = {"t": "\t", "\t": "\t", "b": "\b", "f": "\f", "a": "\a", "v": "\v", "e": "\x1b", "0": "\0",
                  "r": "\r", "N": "\x85", "L": "\u2028", "P": "\u2029", "_": "\xa0"}


def odd_escape(raw: str) -> tuple[int, str, str] | None:
    """The first escape of a double-quoted ``raw`` text that stores a control, format or separator
    character (``C:\\temp`` → TAB, ``\\Program`` → U+2029): (offset, escape as written, character)."""
    for m in _ESCAPE.finditer(raw):
        escape = m.group(1)
        char = _NAMED_ESCAPES.get(escape[1]) or chr(int(escape[2:], 16))
        if unicodedata.category(char)[0] in "CZ" and char != " ":
            return m.start(1), escape, char
    return None


class Finding(NamedTuple):
    """One scalar whose stored value differs from its text.

    ``path`` is the value's key/index path; ``line``/``col`` (0-based) locate the
    problem (the ``#`` for a comment, else the value); ``written`` is the text the
    author meant; ``stored`` the value YAML produces.
    """

    kind: str
    path: tuple[Any, ...]
    line: int
    col: int
    written: str
    stored: Any


def canonical_number(value: int | float) -> str:
    """How a number is written back (JSON, the index, a YAML dump): ``1.1``, ``1000.0``, ``31``."""
    return repr(value)


# a "- " line indented deeper than a line that opens no block (not ending in ':'), or right after a line
# that is neither a key nor an item (more text of a value): maybe more text of that value
_DEEPER_ITEM = re.compile(r"^( *)\S[^\n]*[^:\s]\s*\n\1 +-(?:[ \t]|$)|^ *[^\s\-#][^\n:]*\n *-(?:[ \t]|$)", re.M)
_TRIGGERS = re.compile(r"[#&\\]|\[\[|[|>][-+0-9]*[ \t]*$|\.(?:inf|Inf|INF|nan|NaN|NAN)\b", re.M)
_NUMBER_TOKEN = re.compile(r"(?:^[ \t]*|[:\-][ \t]+|[\[,{][ \t]*)([-+.0-9][-+.0-9A-Za-z_:]*)[ \t]*(?=$|[,\]}]| #)",
                           re.M)
_CORE_NUMBER = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)"
                          r"(?:[eE][-+]?[0-9]+)?)$")


def odd_number_text(text: str, stored: Any) -> bool:
    """Whether a plain scalar written ``text`` and stored as ``stored`` gives a ``portable`` or ``number``
    finding; the loader asks it of every plain scalar that starts like a number (see :func:`_may_have_findings`)."""
    if _PORTABLE.match(text):
        return True
    return isinstance(stored, (int, float)) and not isinstance(stored, bool) and canonical_number(stored) != text


def _may_have_findings(text: str, odd_numbers: bool | None = None) -> bool:
    """A fast text-level screen: False only when no scalar of ``text`` can give a finding.

    Findings need a ``#``, ``&``, backslash, ``[[``, tag or block indicator, or a
    number-like token whose text is not its canonical spelling; most frontmatter
    has none, and skipping the node walk for it keeps the check fast. ``odd_numbers``
    is the loader's own answer for numbers (:func:`odd_number_text` over every plain
    scalar); None when it has none to give, and the text is searched for number tokens.
    """
    if "#" in text or "&" in text or "\\" in text or "[[" in text or "!" in text or "\t" in text:  # "!": a tag
        return True
    if "<<" in text or "{" in text or ("-" in text and _DEEPER_ITEM.search(text)):  # "<<": merge key; "{": `{b:c}`
        return True
    low = text.lower()
    if ("|" in text or ">" in text or ".inf" in low or ".nan" in low) and _TRIGGERS.search(text):
        return True
    if odd_numbers is not None:
        return odd_numbers
    for m in _NUMBER_TOKEN.finditer(text):
        token = m.group(1)
        if _PORTABLE.match(token):
            return True
        if _CORE_NUMBER.match(token) and len(token) <= 1000:  # longer: no number (yamlload says so)
            number: int | float = float(token) if any(c in token for c in ".eE") and not token.startswith("0x") \
                else int(token, 0) if token.startswith(("0x", "0o")) else int(token)
            if canonical_number(number) != token:
                return True
    return False


def scalar_findings(root: yaml.Node, text: str, data: Any, screen: bool = True,
                    odd_numbers: bool | None = None) -> list[Finding]:
    """Every fidelity finding of the composed document ``root`` of YAML ``text``, constructed as ``data``.

    ``screen=False`` walks the nodes even when the text screen says there is nothing to find (tests);
    ``odd_numbers``: see :func:`_may_have_findings`.
    """
    if screen and not _may_have_findings(text, odd_numbers):
        return []
    lines = text.split("\n")
    has_hash = "#" in text
    has_backslash = "\\" in text
    aliased = _aliased(root) if "&" in text else None
    out: list[Finding] = []
    stack: list[tuple[yaml.Node, tuple[Any, ...]]] = [(root, ())]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if id(node) in seen:  # an alias: checked where its anchor is
            continue
        seen.add(id(node))
        if aliased is not None and path and id(node) not in aliased and _starts_with_anchor(node, lines):
            start = node.start_mark
            written = _source(lines, start, node.end_mark) if isinstance(node, yaml.ScalarNode) else \
                lines[start.line][start.column:].split(" #", 1)[0].rstrip()
            stored = _lookup(data, path)
            out.append(Finding("anchor", path, start.line, start.column, written, stored))
            continue
        if getattr(node, "flow_style", False) and has_hash and node.start_mark.line < node.end_mark.line:
            out.extend(_comment_lines(node, path, lines))
        if isinstance(node, yaml.MappingNode):
            stack.extend((v, path + (str(k.value),)) for k, v in node.value if isinstance(k, yaml.ScalarNode))
            out.extend(Finding("merge", path + ("<<",), k.start_mark.line, k.start_mark.column, "<<", None)
                       for k, _ in node.value if isinstance(k, yaml.ScalarNode) and k.value == "<<" and not k.style)
            for k, _ in node.value if has_backslash else ():  # `"k\Px": v` stores U+2029 in the key
                if isinstance(k, yaml.ScalarNode) and k.style == '"' and odd_escape(_source(lines, k.start_mark, k.end_mark)):
                    raw = _source(lines, k.start_mark, k.end_mark)
                    out.append(Finding("escape", path + (str(k.value),), k.start_mark.line, k.start_mark.column, raw,
                                       k.value))
            for k, v in node.value if node.flow_style else ():  # `{b:c}`: one key `b:c` with no value
                if isinstance(k, yaml.ScalarNode) and not k.style and ":" in k.value.strip(":") \
                        and isinstance(v, yaml.ScalarNode) and v.tag == _NULL and not v.value:
                    out.append(Finding("colon_key", path + (str(k.value),), k.start_mark.line, k.start_mark.column,
                                       k.value, None))
            for k, v in node.value if has_hash else ():  # `key: #tag`, the value on the lines below
                if isinstance(k, yaml.ScalarNode) and v.start_mark.line > k.end_mark.line:
                    found = _comment_after_key(k, path, lines, data)
                    if found is not None:
                        out.append(found)
        elif isinstance(node, yaml.SequenceNode):
            if node.flow_style and _is_unquoted_wikilink(node, lines):
                start = node.start_mark
                end = node.end_mark
                out.append(Finding("wikilink", path, start.line, start.column, _source(lines, start, end), None))
                continue
            stack.extend((v, path + (i,)) for i, v in enumerate(node.value))
        elif isinstance(node, yaml.ScalarNode) and node.style in ("|", ">") and not node.value and path:
            start = node.start_mark
            out.append(Finding("block", path, start.line, start.column, node.style, ""))
        elif isinstance(node, yaml.ScalarNode) and node.style == '"' and has_backslash and path:
            start, end = node.start_mark, node.end_mark
            raw = _source(lines, start, end)
            found = odd_escape(raw)
            if found is not None:  # on the value's line, or at its opening quote when it spans lines
                col = start.column + found[0] if start.line == end.line else start.column
                out.append(Finding("escape", path, start.line, col, raw, node.value))
        elif isinstance(node, yaml.ScalarNode) and not node.style and path:
            _check_plain(node, path, lines, has_hash, data, out)
    if "\t" in text:
        out += [Finding("tab", path, line, col, "\t" if lines[line].strip(" \t") else "", None)
                for path, line, col in tab_separators(root, lines)]  # written "": a line of blanks
    out.sort(key=lambda f: (f.line, f.col))
    return [f for i, f in enumerate(out) if i == 0 or (out[i - 1].line, out[i - 1].col) != (f.line, f.col)]


def _check_plain(node: yaml.ScalarNode, path: tuple[Any, ...], lines: list[str], has_hash: bool, data: Any,
                 out: list[Finding]) -> None:
    start, end = node.start_mark, node.end_mark
    value: str = node.value
    if has_hash:
        rest = lines[end.line][end.column:] if end.line < len(lines) else ""
        stripped = rest.lstrip(" \t")
        if stripped.startswith("#") and (rest[:1] in (" ", "\t") or not value) and \
                (stripped == "#" or not stripped[1].isspace()):
            hash_col = end.column + len(rest) - len(stripped)
            head = lines[end.line][start.column:end.column] if start.line == end.line else value
            written = (head + rest[: len(rest) - len(stripped)] + stripped).strip() if head else stripped.strip()
            stored = None if node.tag == _NULL else value
            out.append(Finding("comment", path, end.line, hash_col, written, stored))
            return
        if not value and stripped.startswith("#") and path and isinstance(path[-1], int):
            hash_col = end.column + len(rest) - len(stripped)  # `- # later`: an item holding only a comment
            out.append(Finding("empty_item", path, end.line, hash_col, stripped.strip(), None))
            return
        cut = _comment_below(lines, start.line, end) if value else None
        if cut is not None:  # "title: Retries for" / "  #webhooks and queues": the line below is a comment
            line, col = cut
            out.append(Finding("comment", path, line, col, f"{value} {lines[line][col:].strip()}", value))
            return
    for line in range(start.line + 1, min(end.line, len(lines) - 1) + 1):
        text = lines[line].lstrip(" ")
        if text == "-" or text.startswith(("- ", "-\t")):  # a list item indented too deep: more text
            written = text.split(" #", 1)[0].rstrip()
            out.append(Finding("indent", path, line, len(lines[line]) - len(text), written, value))
            return
    if not value or value[0] not in _PORTABLE_FIRST:
        return
    raw = lines[start.line][start.column:end.column] if start.line == end.line else value
    if node.tag == _STR and raw.startswith("!"):
        return  # `!!str 010`: a string in every YAML version
    if _PORTABLE.match(value) and not _SAME_OCTAL.match(value):
        out.append(Finding("portable", path, start.line, start.column, raw, _lookup(data, path)))
    elif node.tag in (_INT, _FLOAT):
        stored = _lookup(data, path)
        if isinstance(stored, (int, float)) and not isinstance(stored, bool) and canonical_number(stored) != value:
            out.append(Finding("number", path, start.line, start.column, raw, stored))


def _comment_below(lines: list[str], first: int, end: yaml.Mark) -> tuple[int, int] | None:
    """``(line, column)`` of a ``#word`` line right below a plain scalar ending at ``end``, indented
    as more of it would be (deeper than the line it starts on): YAML reads it as a comment that ends
    the value (§6.6), though the author wrote it as the value's next line. A scalar followed by more
    on its line (``[x, y]``: a closed flow collection) could not go on below."""
    if end.line >= len(lines) or lines[end.line][end.column:].strip():
        return None
    base = len(lines[first]) - len(lines[first].lstrip(" "))
    for line in range(end.line + 1, len(lines)):
        text = lines[line].lstrip(" ")
        if not text.strip():
            continue
        indent = len(lines[line]) - len(text)
        if indent > base and text.startswith("#") and text[1:2] not in ("", " ", "\t", "#"):
            return line, indent
        return None
    return None


def _source(lines: list[str], start: yaml.Mark, end: yaml.Mark) -> str:
    """A scalar's source text as written; the lines of one spanning several are joined by a space,
    as YAML folds them."""
    if start.line == end.line:
        return lines[start.line][start.column:end.column]
    parts = [lines[start.line][start.column:].rstrip()] + [line.strip() for line in lines[start.line + 1:end.line]]
    if end.line < len(lines):
        parts.append(lines[end.line][:end.column].strip())
    return " ".join(part for part in parts if part)


def _comment_after_key(key: yaml.ScalarNode, path: tuple[Any, ...], lines: list[str], data: Any) -> Finding | None:
    """A ``#word`` comment right after ``key:`` whose value starts on a later line."""
    end = key.end_mark
    if end.line >= len(lines):
        return None
    rest = lines[end.line][end.column:].lstrip(" \t")
    rest = rest[1:].lstrip(" \t") if rest.startswith(":") else rest
    if not rest.startswith("#") or rest[1:2] in ("", " ", "\t"):
        return None
    col = len(lines[end.line]) - len(rest)
    child = path + (str(key.value),)
    return Finding("comment_key", child, end.line, col, rest.rstrip(), _lookup(data, child))


def _comment_lines(node: yaml.Node, path: tuple[Any, ...], lines: list[str]) -> list[Finding]:
    """``#word`` comments inside a flow collection written over several lines (at a line's start or after an
    item): each drops the text the author meant as an item. ``stored`` says "list" or "mapping"."""
    out = []
    kind = "mapping" if isinstance(node, yaml.MappingNode) else "list"
    for line in range(node.start_mark.line, min(node.end_mark.line + 1, len(lines))):
        text = lines[line]
        at = text.find("#", node.start_mark.column if line == node.start_mark.line else 0)
        while at >= 0:
            if (at == 0 or text[at - 1] in " \t") and text[at + 1:at + 2] not in ("", " ", "\t") \
                    and text.count('"', 0, at) % 2 == 0 and text.count("'", 0, at) % 2 == 0:
                written = text[at:].rstrip().rstrip(",]}").rstrip()
                out.append(Finding("comment_line", path, line, at, written, kind))
                break
            at = text.find("#", at + 1)
    return out


def _lookup(data: Any, path: tuple[Any, ...]) -> Any:
    """The constructed value at ``path`` (None when the data has no such path)."""
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _aliased(root: yaml.Node) -> set[int]:
    """Ids of the nodes reached more than once: those an alias refers to."""
    counts: dict[int, int] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        counts[id(node)] = counts.get(id(node), 0) + 1
        if counts[id(node)] > 1:
            continue
        if isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in node.value for n in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return {key for key, n in counts.items() if n > 1}


def _starts_with_anchor(node: yaml.Node, lines: list[str]) -> bool:
    start = node.start_mark
    return start.line < len(lines) and lines[start.line].startswith("&", start.column)


def _is_unquoted_wikilink(node: yaml.SequenceNode, lines: list[str]) -> bool:
    """``[[x]]`` / ``[[x|y]]`` written without quotes: a flow list holding one flow list of one scalar."""
    if len(node.value) != 1:
        return False
    inner = node.value[0]
    if not (isinstance(inner, yaml.SequenceNode) and len(inner.value) == 1):
        return False
    start = node.start_mark
    return start.line < len(lines) and lines[start.line].startswith("[[", start.column)

