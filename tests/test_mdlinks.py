"""Markdown links as Obsidian reads them (WikiLinks off): ``[text](Note.md)`` is a link to a note, checked
and resolved like ``[[Note]]``; web addresses, code and escapes are not."""

from __future__ import annotations

import time
from urllib.parse import unquote

import pytest
from conftest import adr
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.vault.markdown import mask_code
from vaultsync.vault.mdlinks import _links, iter_markdown_links


def _targets(text: str) -> list[tuple[str, str | None, str | None, bool]]:
    return [(k.target, k.heading, k.block, k.embed) for k in iter_markdown_links(mask_code(text))]


@pytest.mark.parametrize("text, links", [
    ("[a](Note.md)", [("Note.md", None, None, False)]),
    ("[a](My%20note.md#Some%20heading)", [("My note.md", "Some heading", None, False)]),
    ("[a](<My note.md>)", [("My note.md", None, None, False)]), ("[a](Note.md#^blk)", [("Note.md", None, "blk", False)]),
    ("![alt](img.png)", [("img.png", None, None, True)]), ("[a](#Local)", [("", "Local", None, False)]),
    ('[a](Note "title") [b](x.md \'t\') [c](y.md (t))', [("Note", None, None, False), ("x.md", None, None, False),
                                                       ("y.md", None, None, False)]),
    ("[a](f(1).md)", [("f(1).md", None, None, False)]), ("[a](f\\(.md)", [("f(.md", None, None, False)]),
    ("[決定](決定記録.md)", [("決定記録.md", None, None, False)]), ("[[Note]](x.md)", []),  # WikiLink first
    ("[a [b](in.md)](out.md)", [("in.md", None, None, False)]),  # a link holds no link
    ("[![i](pic.png)](page.md)", [("page.md", None, None, False), ("pic.png", None, None, True)]),
    ("[a](My note.md)", []), ("[a](https://example.com/x.md)", []), ("[a](mailto:x@y)", []),
    ("[a](obsidian://open?file=x)", []), ("[a](//host/x.md)", []), ("[a]()", []), ("[a](#)", []),
    ("\\[a](x.md)", []), ("`[a](x.md)`", []), ("```\n[a](x.md)\n```", []), ("%% [a](x.md) %%", []),
    ("[a]\n(x.md)", []), ("[a](x.md", []), ("[a] (x.md)", []), ("[a][ref]", []), ("\\![a](x.md)", [("x.md", None, None, False)]),
])
def test_markdown_links_are_read_like_obsidian(text, links):
    assert _targets(text) == links


def test_positions_are_the_links_first_character():
    (link,) = iter_markdown_links(mask_code("x\n日本 ![a](b.png)\n"), first_line=7)
    assert (link.line, link.col, link.raw) == (8, 4, "![a](b.png)")


def test_check_reports_markdown_links_like_wikilinks(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", body="## Decision\nText.\n"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", body=(
        "[ok](ADR-0001.md) [ok](ADR-0001#Decision) [ok](../adrs/ADR-0001.md) [web](https://x.org/a.md)\n"
        "[gone](ADR-0404.md) [head](ADR-0001.md#Nope) ![pic](arch.png)\n")))
    res = vault.check()
    assert res.code == 1 and res.lines == [
        "docs/adrs/ADR-0002.md:9:1: WL001 [gone](ADR-0404.md) → no such note",
        "docs/adrs/ADR-0002.md:9:21: WL003 [head](ADR-0001.md#Nope) → heading not found in docs/adrs/ADR-0001.md: 'Nope'"
        " — its headings: '#Decision'",
        "docs/adrs/ADR-0002.md:9:46: WL006 ![pic](arch.png) → missing attachment 'arch.png'",
    ]


# --- differential: the link scanner against markdown-it-py on one-line paragraphs -------------------

_PIECE = st.sampled_from(["[", "]", "(", ")", "!", "\\", "a", " ", "<", ">", '"', "#", "%20", "x.md", "日本",
                          "[a](b.md)", "[a](<b c.md>)", '[a](b.md "t")', "![i](p.png)", "[a](b c)", "](", ")("])


def _markdown_it_destinations(text: str) -> list[tuple[str, bool]]:
    from markdown_it import MarkdownIt

    found = []
    todo = [child for tok in MarkdownIt("commonmark").parse(text) for child in tok.children or []]
    while todo:
        child = todo.pop()
        if child.type in ("link_open", "image"):
            found.append((unquote(str(child.attrs["href" if child.type == "link_open" else "src"])), child.type == "image"))
        todo.extend(child.children or [])
    return found


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(_PIECE, min_size=1, max_size=14).map("".join))
def test_the_scanner_agrees_with_markdown_it(line):
    line = line.strip() or "x"
    if line[0] in "#>-+*=|~<" or line[0].isdigit() or "[[" in line or "<" in line and ">" in line:
        return  # one paragraph, no WikiLink, no raw HTML or autolink: what both read alike (code spans,
        # masked first, are left out: a backtick in a destination is text to CommonMark)
    masked = mask_code(line)
    ours = sorted((unquote(dest), image) for _, _, dest, image in _links(masked))
    assert ours == sorted(_markdown_it_destinations(line)), line


@pytest.mark.parametrize("line", ["[a](" * 30_000, '[a](b "' * 30_000, "[" * 100_000 + "](x)", "](" * 50_000,
                                  "[" * 30_000 + "[a](b)" * 30_000, "[a](<" * 30_000, "[a](b (" * 30_000])
def test_pathological_lines_take_linear_time(vault, line):
    """WL-04's kind for Markdown links: each destination is parsed against per-line tables."""
    vault.write("docs/a.md", line + "\n")
    start = time.perf_counter()
    vault.check()
    assert time.perf_counter() - start < 30  # quadratic forms took minutes (a loaded CI machine took 5.4 s)


def test_a_markdown_link_gets_its_suggestion_as_a_markdown_link(vault):
    vault.write("docs/notes/Webhook retries.md", "# Webhook retries\n## Backoff\n")
    vault.write("docs/a.md", "[see](Webhook%20retry.md#Backoff) ![pic](ﬁle.png)\n")
    vault.write("docs/file.png", b"\x89PNG")
    lines = vault.check().lines
    assert lines[0].endswith("→ no such note — did you mean [see](Webhook%20retries.md#Backoff)?"), lines
    assert "did you mean ![pic](file.png)?" in lines[1] and "'ﬁ' and 'fi'" in lines[1], lines


def test_a_diagnostic_shows_the_link_as_written(vault):
    """The scanner reads masked text; the message and its suggestion quote the note (code spans too)."""
    vault.write("docs/Target.md", "# Target\n")
    vault.write("docs/a.md", 'See [the `Targt` note](Targt.md "a `b` c").\n')
    (line,) = vault.check().lines
    assert line == ('docs/a.md:1:5: WL001 [the `Targt` note](Targt.md "a `b` c") → no such note — did you mean '
                    "[the `Targt` note](Target.md)?")


@pytest.mark.parametrize("dest", ["./../Target.md", "../sub/../Target.md", "./../sub/../Target.md#Heading%20One"])
def test_dot_segments_are_the_path_they_name(vault, dest):
    vault.write("docs/Target.md", "# Target\n## Heading One\n")
    vault.write("docs/sub/X.md", f"[i]({dest})\n")
    assert vault.check().code == 0
