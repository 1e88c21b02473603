"""Field case FM-09: frontmatter whose closing ``---`` is missing, so that the note's text runs into the YAML
block — closed only by a thematic break further down the body, or never closed. The message must say where
the ``---`` belongs, not blame a colon or an indent on a line of prose."""

from __future__ import annotations

import pytest
from conftest import adr
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.vault.note import parse_text
from vaultsync.vault.unclosed import text_start

P = "docs/adrs/ADR-0001.md"
FIELDS = "memory_id: ADR-0001\ntype: adr\ntitle: A title\nstatus: accepted\ncreated: \"2024-03-01\"\n"

# the first line of the note's text, in several scripts and Markdown shapes
STARTS = ["# Use Postgres", "## Context", "### 決定の背景", "# Контекст", "## السياق", "Prose, with a colon: the time was 14:00.",
          "We chose Postgres, after a week of load tests.", "```python", "> A quote from the review.",
          "| field | meaning |", "1. First step", "* a bullet", "   # indented heading", "**Bold** lead-in."]


def _note(start: str, break_at: int | None) -> tuple[str, int]:
    """A note with its closing '---' left out; its text starts with ``start`` and has a thematic break
    after ``break_at`` paragraphs (None: no break). Returns the text and the line the text starts on."""
    paragraphs = [start + "\nMore text on the next line, with a colon: here.", "Second paragraph.", "Third one."]
    if break_at is not None:
        paragraphs.insert(break_at + 1, "---")
    return "---\n" + FIELDS + "\n" + "\n\n".join(paragraphs) + "\n", FIELDS.count("\n") + 3


@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("break_at", [0, 1, 2])
def test_a_thematic_break_in_the_body_closing_the_frontmatter_names_where_the_text_starts(start, break_at):
    text, line = _note(start, break_at)
    [diagnostic] = parse_text(P, text).diagnostics
    closing = text.split("\n").index("---", 1) + 1
    assert diagnostic.render() == (
        f"{P}:{line}:1: FM004 frontmatter has no closing '---' before the note's text on line {line} "
        f"({start.strip()!r}): the '---' on line {closing}, in the body, closed it — add a '---' line above line "
        f"{line}")


@pytest.mark.parametrize("start", STARTS)
def test_frontmatter_never_closed_asks_for_the_closing_line_above_the_text(start):
    text, line = _note(start, None)
    [diagnostic] = parse_text(P, text).diagnostics
    assert diagnostic.render() == (f"{P}:{line}:1: FM004 frontmatter opened on line 1 is never closed: the note's "
                                   f"text seems to start on line {line} ({start.strip()!r}) — add a '---' line "
                                   "above it")


@pytest.mark.parametrize("start", STARTS[:3])
def test_the_advice_mends_it(vault, start):
    text, line = _note(start, 1)
    lines = text.split("\n")
    vault.write(P, adr("ADR-0001"))
    vault.write(P, "\n".join(lines[:line - 1] + ["---"] + lines[line - 1:]))
    assert vault.check().code == 0, vault.check().lines


@pytest.mark.parametrize("yaml, line, code", [
    ("title: x\nstatus accepted\n", 3, "FM005"),  # one broken key: YAML's own message serves it
    ("title: x\n# owner: bob\nstatus: a\nfoo bar\n", 5, "FM005"),  # a key commented out is no heading
    ("title: x\ntags: [a\n\n# Heading\nProse.\n", 3, "FM005"),  # the YAML mistake lies above the text
])
def test_a_yaml_mistake_in_real_frontmatter_keeps_its_own_message(yaml, line, code):
    [diagnostic] = parse_text(P, f"---\n{yaml}---\n\nBody\n").diagnostics
    assert (diagnostic.line, diagnostic.code) == (line, code), diagnostic.render()


@pytest.mark.parametrize("yaml", ["# Identity\ntitle: x\n\n# Lifecycle\nstatus: a\n",
                                  "title: x\n\n# Lifecycle\nstatus: a\n\n", "title: x\n# Notes below\n\n"])
def test_section_comments_in_valid_frontmatter_stay_comments(yaml):
    note = parse_text(P, f"---\n{yaml}---\nBody\n")
    assert not note.diagnostics and note.frontmatter["title"] == "x"


@pytest.mark.parametrize("path", ["docs/notes/x.md", P])
@pytest.mark.parametrize("body, line", [
    ("\n# Heading\n\nNote: see [[nonexist]] for details\n\n---\n\nMore\n", 8),  # a short key under a heading
    ("\n## Kontext\n\n---\n\nText\n", 8),  # a heading alone before the break
    ("\n# 背景\n\nOwner: alice\nSee: the docs\n\n---\n", 8),
])
def test_a_body_yaml_reads_whole_is_still_named_when_a_heading_and_a_break_frame_it(vault, path, body, line):
    """YAML may read the body's first lines without an error (a heading is a comment to it, `Note: see` a
    key): the note then lost its text silently, or got SC003 for a key that is a sentence."""
    text = "---\n" + FIELDS + body
    vault.write(path, text)
    lines = vault.check().lines
    assert lines == [f"{path}:{line}:1: FM004 frontmatter has no closing '---' before the note's text on line {line} "
                     f"({text.split(chr(10))[line - 1]!r}): the '---' on line {text.split(chr(10)).index('---', 1) + 1}, "
                     f"in the body, closed it — add a '---' line above line {line}"], lines


_KEYS = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True)
_PROSE = st.from_regex(r"[A-Z][a-z]{2,8}( [a-z]{1,8}){1,6}[.!?]", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(_KEYS, min_size=1, max_size=6, unique=True), st.lists(_PROSE, min_size=2, max_size=5),
       st.booleans(), st.integers(0, 4))
def test_text_starts_at_the_first_paragraph_after_any_keys(keys, prose, heading, blank_lines):
    """Whatever the keys and the prose, the text is found at its first line, whether a heading or prose."""
    body = (["# " + prose[0]] if heading else []) + prose
    lines = [f"{k}: v" for k in keys] + [""] * blank_lines + body
    assert text_start(lines) == len(keys) + blank_lines


@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("blank", ["\n", "\n\n", "\n \n\t\n"])
def test_a_rule_above_a_notes_text_is_not_unclosed_frontmatter(vault, start, blank):
    """``---``, a blank line, then the text: Obsidian shows a rule and no properties; the check called it
    frontmatter never closed (FM004) even in a folder with no type."""
    text = "---\n" + blank + start + "\nMore text, with a colon: here.\n\nSecond paragraph.\n"
    note = parse_text("docs/notes/x.md", text)
    assert note.fm_state == "none" and note.body == text and not note.diagnostics
    vault.write("docs/notes/x.md", text)
    assert vault.check().code == 0


@pytest.mark.parametrize("text", ["---\ntitle: x\n\n# Heading\n\nText.\n", "---\n\ntitle: x\n\n# Heading\n\nText.\n",
                                  "---\n\n- a\n- b\n\n# Heading\n\nText.\n", "---\n\n# comment\ntitle: x\n\nProse. More prose.\n"])
def test_a_block_with_any_yaml_in_it_is_still_frontmatter_never_closed(text):
    assert parse_text("docs/notes/x.md", text).diagnostics[0].code == "FM004"
