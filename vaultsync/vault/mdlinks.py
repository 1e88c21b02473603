"""Markdown links to notes and files, as Obsidian reads them: ``[text](Note.md)``,
``[text](My%20note.md#Heading)``, ``[text](<My note.md>)``, ``![alt](image.png)``.

Obsidian writes these instead of WikiLinks when "Use [[Wikilinks]]" is off, and resolves their
destination as a WikiLink target (https://help.obsidian.md/links): percent-decoded, with
``#Heading`` or ``#^block`` after it as the subpath, and ``#Heading`` alone naming the same note.

The syntax is CommonMark 0.31's inline links and images (§6.3, §6.4): brackets in the link text
only escaped or in matched pairs; a link holds no other link (the inner one wins); the destination
is ``<…>`` or a run without spaces whose parentheses balance; an optional title (``"…"``,
``'…'``, ``(…)``) follows a space; backslash escapes in the destination are read. Read on code-masked
text (:func:`vaultsync.vault.markdown.mask_code`), with WikiLinks taking precedence, and one line at
a time: a link across a line break is not read. A destination with a URI scheme (``https:``,
``mailto:``, ``obsidian:``) or ``//`` is no note, and neither is an empty one; reference links
(``[text][ref]``) are not read.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from urllib.parse import unquote

from vaultsync.vault.wikilinks import WIKILINK, WikiLink

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{1,31}:|//")  # CommonMark §6.5's scheme, or a network path
_ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_TITLE_CLOSE = {'"': '"', "'": "'", "(": ")"}


def iter_markdown_links(text: str, first_line: int = 1, original: str | None = None) -> Iterator[WikiLink]:
    """Yield the Markdown links of code-masked ``text`` that may name a note or file, as
    :class:`~vaultsync.vault.wikilinks.WikiLink` values (``raw`` as written, ``alias`` None).

    Args:
        text: a note body with code masked (LF line endings).
        first_line: the file line number of ``text``'s first line.
        original: the body before masking (same length), where ``raw`` is read: a code span in
            the link text shows as written.
    """
    if "](" not in text:
        return
    written = (original if original is not None else text).split("\n")
    for n, line in enumerate(text.split("\n")):
        if "](" not in line:
            continue
        for start, end, dest, image in _links(_mask_wikilinks(line)):
            link = _as_link(dest)
            if link is not None:
                target, heading, block = link
                yield WikiLink(written[n][start:end], target, heading, block, None, image, first_line + n, start + 1)


def link_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets in ``text`` of every inline link and image, whatever its destination:
    the text a link holds (:mod:`vaultsync.vault.math_spans` lets a link that opened first keep its ``$``)."""
    if "](" not in text:
        return []
    spans, offset = [], 0
    for line in text.split("\n"):
        if "](" in line:
            spans += [(offset + start, offset + end) for start, end, _, _ in _links(_mask_wikilinks(line))]
        offset += len(line) + 1
    return spans


def _mask_wikilinks(line: str) -> str:
    """WikiLinks take precedence: their brackets are no Markdown link's."""
    return WIKILINK.sub(lambda m: "x" * len(m.group()), line) if "[[" in line else line


def _links(line: str) -> Iterator[tuple[int, int, str, bool]]:
    """``(start, end, destination, is_image)`` of each inline link or image of one line, in order.

    CommonMark's bracket matching: each ``]`` takes the last ``[``; a link spends every ``[`` before
    it. Each destination is parsed against tables built once per line (:class:`_Scan`): linear time
    even on ``[a](`` repeated 30,000 times."""
    scan = _Scan(line)
    openers: list[tuple[int, bool]] = []  # "[" offsets and whether a "!" makes them an image
    spent = 0  # openers below this index are spent (a link followed them)
    found: list[tuple[int, int, str, bool]] = []
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "[" and not scan.escaped[i]:
            openers.append((i, i > 0 and line[i - 1] == "!" and not scan.escaped[i - 1]))
        elif ch == "]" and openers and not scan.escaped[i]:
            at, image = openers.pop()
            active = len(openers) >= spent
            spent = min(spent, len(openers))
            parsed = scan.destination(i + 2) if active and line.startswith("(", i + 1) else None
            if parsed is not None:
                dest, end = parsed
                found.append((at - 1 if image else at, end, dest, image))
                if not image:
                    spent = len(openers)  # a link holds no link (§6.3)
                i = end
                continue
        i += 1
    yield from sorted(found)


class _Scan:
    """One line's lookup tables: which characters a backslash escapes, where the next space or control
    character is, and the parenthesis depth before each offset with, for each offset, the first later
    one where the depth falls below it (a monotonic stack), so a bare destination's end is a lookup."""

    def __init__(self, line: str) -> None:
        n = len(line)
        self.line = line
        self.escaped = [False] * (n + 1)
        i = 0
        while i < n:
            if line[i] == "\\" and i + 1 < n and line[i + 1] in _ESCAPABLE:
                self.escaped[i + 1] = True
                i += 2
            else:
                i += 1
        self.next_space = [n] * (n + 1)
        for i in range(n - 1, -1, -1):
            self.next_space[i] = i if line[i] <= " " or line[i] == "\x7f" else self.next_space[i + 1]
        self.depth = depth = [0] * (n + 1)
        for i, ch in enumerate(line):
            depth[i + 1] = depth[i] + (0 if self.escaped[i] else 1 if ch == "(" else -1 if ch == ")" else 0)
        self.drop = [n + 1] * (n + 1)  # first k > i with depth[k] < depth[i]
        stack: list[int] = []
        for k in range(n + 1):
            while stack and depth[k] < depth[stack[-1]]:
                self.drop[stack.pop()] = k
            stack.append(k)
        self._last: dict[str, tuple[int, int]] = {}

    def find(self, chars: str, pos: int) -> int:
        """The first unescaped character of ``chars`` at or after ``pos`` (the line's length: none).
        The last answer holds for any query between its start and it, so forward queries stay linear."""
        start, at = self._last.get(chars, (-1, -1))
        if start <= pos <= at:
            return at
        at, line = pos, self.line
        while at < len(line) and (line[at] not in chars or self.escaped[at]):
            at += 1
        self._last[chars] = (pos, at)
        return at

    def destination(self, at: int) -> tuple[str, int] | None:
        """Parse ``destination "title")`` from ``at`` (just past ``(``): the unescaped destination and
        the offset after ``)``, or None when it is no inline link."""
        line, n = self.line, len(self.line)
        i = _skip_space(line, at)
        if line.startswith("<", i):
            close = self.find("<>", i + 1)
            if close >= n or line[close] != ">":
                return None
            raw, i = line[i + 1:close], close + 1
        else:
            space, drop = self.next_space[i], self.drop[i] - 1
            if drop < space:  # an unbalanced ")" ends it: the link's closer
                raw, i = line[i:drop], drop
            elif self.depth[space] != self.depth[i]:
                return None  # unbalanced parentheses
            else:
                raw, i = line[i:space], space
        after = _skip_space(line, i)
        if after > i and after < n and line[after] in _TITLE_CLOSE:
            closer = _TITLE_CLOSE[line[after]]
            end = self.find(closer + "(" if closer == ")" else closer, after + 1)
            if end >= n or line[end] != closer:
                return None
            after = _skip_space(line, end + 1)
        if after >= n or line[after] != ")":
            return None
        return _unescape(raw), after + 1


def _as_link(dest: str) -> tuple[str, str | None, str | None] | None:
    """A destination as ``(target, heading, block)``, or None when it names no note or file."""
    if not dest.strip() or _SCHEME.match(dest):
        return None
    path, hashed, sub = dest.partition("#")
    path = unquote(path).strip()
    if "/." in path or path.startswith("./"):  # "./../x.md", "a/b/../c.md": the path they name
        relative = path.startswith(("./", "../"))
        path = posixpath.normpath(path)
        if relative and not path.startswith("../"):
            path = "./" + path  # still relative to the linking note: "./x.md", "./a/../x.md"
    if not hashed:
        return path, None, None
    sub = unquote(sub).strip()
    if not path and not sub:
        return None  # "(#)": the top of this note
    if sub.startswith("^"):
        return path, None, sub[1:].strip()
    return path, sub, None


def _skip_space(line: str, i: int) -> int:
    while i < len(line) and line[i] in " \t":
        i += 1
    return i


def _unescape(raw: str) -> str:
    """Backslash escapes of ASCII punctuation read (CommonMark §2.4)."""
    if "\\" not in raw:
        return raw
    return re.sub(r"\\(.)", lambda m: m.group(1) if m.group(1) in _ESCAPABLE else m.group(0), raw)
