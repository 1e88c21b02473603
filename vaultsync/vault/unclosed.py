"""Frontmatter that runs into the note's text (field case FM-09): never closed, or closed only by a
thematic break (``---``) further down the body.

Both leave the body's first lines inside the YAML block, where YAML reports them as errors about colons
or indentation: advice that cannot mend a missing ``---``. These helpers find where the text starts and
say so instead.
"""

from __future__ import annotations

import re
import unicodedata

from vaultsync.diagnostics import Diagnostic, cut

_HEADING = re.compile(r" {0,3}#{1,6}[ \t]+\S")  # an ATX heading: "# Title" — to YAML, a comment
_COMMENTED_KEY = re.compile(r"#+\s*[\w-]+\s*:(\s|$)")  # "# owner: x": a key commented out, not a heading
_KEY = re.compile(r"[^\s#:][^:]*?:(\s|$)")  # "key: value", "key:" — keys may hold spaces
_YAML_START = tuple("#[{\"'?%&!")  # a comment, a flow collection, a quoted key, a directive, a tag…


def invisible(ch: str) -> bool:
    """Whitespace, or an invisible format character (Unicode Cf: U+200B, U+FEFF, U+2060…)."""
    return ch.isspace() or unicodedata.category(ch) == "Cf"


def visible(line: str) -> str:
    """``line`` without the :func:`invisible` characters at its ends."""
    i, j = 0, len(line)
    while i < j and invisible(line[i]):
        i += 1
    while j > i and invisible(line[j - 1]):
        j -= 1
    return line[i:j]


def text_start(lines: list[str]) -> int | None:
    """Index in ``lines`` (a frontmatter block's lines, after the opening ``---``) of the first line that
    reads as the note's text rather than YAML, or None: a Markdown heading (not a key commented out), or
    the first of two or more unindented lines that are neither keys, list items, comments nor another
    YAML construct (prose, a code fence, a quote, a table row), or are keys that read as sentences. One
    such line alone is a broken key (``status accepted``), which YAML's own message serves better."""
    texts = [i for i, line in enumerate(lines) if _text_like(line)]
    headings = [i for i in texts if _HEADING.match(lines[i])]
    first = texts[0] if len(texts) > 1 else None
    return min((i for i in (first, *headings[:1]) if i is not None), default=None)


def _sentence_key(line: str) -> bool:
    """Whether ``line`` is a top-level key that reads as a sentence (four or more words, or a comma):
    ``We moved, after the outage: it was slow``."""
    key = _KEY.match(line)
    return key is not None and (len(key.group().split()) >= 4 or ", " in key.group())


def _text_like(line: str) -> bool:
    if _HEADING.match(line):
        return not _COMMENTED_KEY.match(line.lstrip(" "))
    if not line.strip() or line[0] in " \t" or line.startswith(_YAML_START):
        return False
    if _KEY.match(line):
        return _sentence_key(line)
    return not (line == "-" or line.startswith(("- ", "-\t", "...", "<<<<<<<", "=======", ">>>>>>>")))  # conflicts


def thematic_break(text: str) -> bool:
    """Whether a note's opening ``---`` that no line closes is a Markdown rule, not frontmatter: a blank line
    follows it, nothing but blank lines stands before the note's text starts (:func:`text_start`) or the
    file ends, and the text's first paragraph holds no key. No YAML: Obsidian shows such a note as a rule
    above its text, with no properties."""
    lines = text.split("\n")[1:]
    start = text_start(lines)
    head = lines if start is None else lines[:start]
    if not head or any(line.strip() for line in head):
        return False
    paragraph = [] if start is None else lines[start:lines.index("", start) if "" in lines[start:] else None]
    return not any(_KEY.match(line) and not _sentence_key(line) for line in paragraph)  # `# comment` over keys


def never_closed(path: str, text: str) -> Diagnostic:
    """FM004 for frontmatter with no closing ``---`` line. A line that reads ``---`` beside an invisible
    character or a space (a non-breaking space, U+FEFF) is named, as the opening one is; else, where the
    note's text appears to start (:func:`text_start`), the ``---`` is asked for above it."""
    lines = text.split("\n")
    for i, line in enumerate(lines[1:], start=2):
        if line != "---" and visible(line) == "---":
            hidden = sorted({f"U+{ord(ch):04X}" for ch in line if ch != "-"})
            return Diagnostic(path, i, 1, "FM004", f"frontmatter opened on line 1 is never closed: line {i} reads "
                                                   f"'---' beside {', '.join(hidden)} — it must read exactly '---'")
    start = text_start(lines[1:])
    if start is not None:
        return Diagnostic(path, start + 2, 1, "FM004", f"frontmatter opened on line 1 is never closed: the note's "
                                                       f"text seems to start on line {start + 2} "
                                                       f"({cut(visible(lines[start + 1]), 60)!r}) — add a '---' "
                                                       "line above it")
    return Diagnostic(path, 1, 1, "FM004", "frontmatter opened on line 1 is never closed (add a '---' line)")


def closed_in_body(path: str, yaml_text: str, closing_line: int, error_line: int | None = None) -> Diagnostic | None:
    """FM004 when the frontmatter's own ``---`` is missing and the one on ``closing_line``, a thematic
    break in the body, closed it: YAML failed at ``error_line`` (1-based, in the file) at or below a line
    that reads as the note's text (:func:`text_start`), or — YAML having read it all (``error_line``
    None) — a sentence below that line was read as a key (:func:`_sentence_key`), or that line is a
    heading with a blank line above it, no key under it, and a blank line before the closing ``---``. None otherwise,
    so a YAML mistake in real frontmatter keeps its own message, and a section comment stays one."""
    lines = yaml_text.split("\n")
    start = text_start(lines)
    if start is not None and error_line is None:  # YAML read it all: a sentence read as a key, or a heading
        # between a blank line and no key, and a blank line before the closing '---' (a thematic break's place)
        error_line = next((i + 2 for i in range(start, len(lines)) if _sentence_key(lines[i])), None)
        before, after = lines[start - 1] if start else "", lines[start + 1] if start + 1 < len(lines) else ""
        if error_line is None and _HEADING.match(lines[start]) and not before.strip() and not _KEY.match(after) \
                and len(lines) > 1 and not lines[-2].strip():  # a section comment ("# Lifecycle") has keys below
            error_line = closing_line
    if start is None or error_line is None or start + 2 > error_line:
        return None
    return Diagnostic(path, start + 2, 1, "FM004", f"frontmatter has no closing '---' before the note's text on line "
                                                   f"{start + 2} ({cut(visible(lines[start]), 60)!r}): the '---' "
                                                   f"on line {closing_line}, in the body, closed it — add a '---' "
                                                   f"line above line {start + 2}")
