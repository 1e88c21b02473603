"""Tabs between YAML tokens: valid YAML 1.2, refused by YAML 1.1 readers.

YAML 1.2 lets a tab separate tokens on a line (``title:<TAB>Hello``, ``key<TAB>: v``,
``[a,<TAB>b]``, ``"x"<TAB># note``, a tab after or inside an unquoted value); PyYAML's ``safe_load``
and the site generators built on it stop at each with "found character '\\t' that cannot start any
token", so the same note reads in vaultsync and Obsidian and fails elsewhere (field case FM-06). A
tab inside quotes, in a block scalar's lines or in a comment is text and stays. Tabs used
for indentation never get here: the loader refuses them (FM006). A tab on a line of only blanks is
read as the blank line YAML 1.2 sees (:func:`compose_past_blank_tabs`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import yaml

MAX_RETRIES = 256  # lines of spaces then a tab read one parse each (a bound on the work)
# a block item's dash, tabs, then a flow node (a scalar, `[a]`): YAML 1.2 separates them by tabs as by spaces
# (spec example 6.3, `-<TAB>baz`); a mapping or a nested item after the tabs would be indented by them, which
# YAML 1.2 refuses too, so none is read (a key: a ': ' or a final ':' outside quotes and brackets is enough)
_DASH_TAB = re.compile(r"^ *-(\t[ \t]*)(?=\S)(?![-?] |[-?]\t|[-?]$)(?![^\"'\[{]*?(?::\s|:$))")  # (\S first: linear)


def tab_separators(root: yaml.Node, lines: list[str]) -> list[tuple[tuple[Any, ...], int, int]]:
    """``(path, line, col)`` (0-based) of the first tab outside quoted and block scalars and comments on each line of
    the YAML text ``lines`` composed as ``root``; ``path`` is the key or item that line starts."""
    inside: dict[int, list[tuple[int, int]]] = {}  # line → column spans held by scalars
    owner: dict[int, tuple[Any, ...]] = {}  # line → the path of the first key or item on it
    stack: list[tuple[yaml.Node, tuple[Any, ...]]] = [(root, ())]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if id(node) in seen:  # an alias
            continue
        seen.add(id(node))
        owner.setdefault(node.start_mark.line, path)
        if isinstance(node, yaml.ScalarNode):  # a plain value's later lines belong to it too
            for line in range(node.start_mark.line + 1, node.end_mark.line + 1):
                owner.setdefault(line, path)
        if isinstance(node, yaml.ScalarNode) and node.style:  # quoted or block: its tabs are text
            start, end = node.start_mark, node.end_mark
            first = start.line + 1 if node.style in "|>" else start.line  # a block's header line is not text
            for line in range(first, end.line + 1):
                inside.setdefault(line, []).append((start.column if line == start.line else 0,
                                                    end.column if line == end.line else 1 << 30))
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                child = path + (str(k.value),)
                owner.setdefault(k.start_mark.line, child)
                stack += [(k, child), (v, child)]
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((v, path + (i,)) for i, v in enumerate(node.value))
    out = []
    for number, text in enumerate(lines):
        col = text.find("\t")
        while col >= 0:
            if any(a <= col < b for a, b in inside.get(number, ())):
                col = text.find("\t", col + 1)
                continue
            before = text[:col]
            if "#" in before and _comment_starts(before, inside.get(number, ())):
                break
            out.append((owner.get(number, ()), number, col))
            break
    return out


def _comment_starts(before: str, spans: list[tuple[int, int]]) -> bool:
    """Whether a comment starts in ``before`` (a ``#`` at the line start or after a blank, outside scalars)."""
    for i, ch in enumerate(before):
        if ch == "#" and (i == 0 or before[i - 1] in " \t") and not any(a <= i < b for a, b in spans):
            return True
    return False


def compose_past_blank_tabs(text: str, compose: Callable[[str], tuple[Any, yaml.Node | None]],
                            blanked: list[tuple[int, int]]) -> tuple[Any, yaml.Node | None, str]:
    """``compose(text)`` (a loader and its node tree), reading a line of only spaces and tabs as the blank
    line YAML 1.2 and Obsidian take it for where PyYAML refuses its tab, and the tabs after a block item's
    dash (``-<TAB>ops``) as the spaces YAML 1.2 takes them for; ``(loader, node, text as parsed)``. Each
    line so read is appended to ``blanked`` as ``(line, column of its first tab, "" or "-")``, 0-based.

    A line whose first blank is a tab cannot be a block scalar's text (that is indented by spaces), so all
    of them are read as blank at the first refusal; a line of spaces then a tab may be text, so such lines
    are retried one at a time (PyYAML stops at the first), at most :data:`MAX_RETRIES` of them.

    Raises:
        yaml.MarkedYAMLError, yaml.reader.ReaderError: the text is not one YAML document.
    """
    retries = 0
    while True:
        try:
            loader, node = compose(text)
            return loader, node, text
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark
            lines = text.split("\n")
            if mark is None or not 0 <= mark.line < len(lines) or "\t" not in lines[mark.line] \
                    or retries >= MAX_RETRIES:
                raise
            dash = _DASH_TAB.match(lines[mark.line])
            if dash and dash.start(1) <= mark.column < dash.end(1):  # `-<TAB>ops`: YAML 1.2 reads the item
                row, retries = mark.line, retries + 1
                blanked.append((row, dash.start(1), "-"))
                lines[row] = lines[row][:dash.start(1)] + " " * (dash.end(1) - dash.start(1)) + lines[row][dash.end(1):]
                text = "\n".join(lines)
                continue
            if lines[mark.line].strip(" \t"):
                raise
            if lines[mark.line][:1] == "\t":
                rows = [i for i, line in enumerate(lines) if line[:1] == "\t" and not line.strip(" \t")]
            else:  # spaces, then a tab: maybe a block scalar's text elsewhere, so only this one
                rows, retries = [mark.line], retries + 1
            for row in rows:
                blanked.append((row, lines[row].index("\t"), ""))
                lines[row] = ""
            text = "\n".join(lines)
