"""WL-02's kind, for comments: text an Obsidian ``%%`` comment or an HTML comment hides holds no link,
no heading and no block id, while the FTS index keeps the text."""

from __future__ import annotations

import pytest
from conftest import adr
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.index.chunking import chunk_note
from vaultsync.vault.headings import block_ids, find_headings
from vaultsync.vault.markdown import mask_code
from vaultsync.vault.wikilinks import iter_links


def _links(text: str) -> list[str]:
    return [k.target for k in iter_links(mask_code(text))]


@pytest.mark.parametrize("text, links", [
    ("%% [[a]] %% [[b]]\n", ["b"]),  # inline
    ("Keep [[b]].\n\n%%\n[[a]]\n\nStill hidden: [[c]]\n%%\nAfter [[d]]\n", ["b", "d"]),  # a block, blank lines in it
    ("[[b]] %% draft: [[a]]\n\n[[c]]\n", ["b"]),  # unclosed: hides the rest of the note
    ("\\%% [[b]] \\%%\n", ["b"]),  # escaped: no comment
    ("`%%` [[b]] `%%`\n", ["b"]),  # in code spans: code, not comment marks
    ("%% `[[a]] %% [[b]]`\n", ["b"]),  # the comment opens first: its backtick is comment, the last one is alone
    ("```\n%%\n```\n[[b]]\n", ["b"]),  # in a fence
    ("%%\n```\n[[a]]\n%% [[b]]\n", ["b"]), ("> %%\n> <!--\n> [[a]]\n> %%\n[[b]]\n", ["b"]),  # fence, HTML in one
    ("- item %% [[a]] %%\n  - [[b]]\n", ["b"]), ("> %% [[a]]\n> [[c]] %% [[b]]\n", ["b"]),
    ("日本語 %%[[メモ]]%% [[決定]]\n", ["決定"]), ("%%%% [[b]]\n", ["b"]),  # "%%%%": an empty comment
    ("x <!-- [[a]] --> [[b]]\n", ["b"]),  # inline HTML comment
    ("x <!-- [[a]]\nstill [[c]] --> [[b]]\n", ["b"]),  # across lines of one paragraph
    ("x <!-- [[a]]\n\n--> [[b]]\n", ["a", "b"]),  # never across a blank line: both are text
    ("x <!-- never closed [[a]]\n", ["a"]), ("<!--> [[a]]\n", []), ("x <!--> [[b]]\n", ["b"]),
    ("x <!---> [[b]]\n", ["b"]), ("\\<!-- [[a]] -->\n", ["a"]),
    ("<!--\n[[a]]\n\n```\n[[c]]\n-->\n[[b]]\n", ["b"]),  # a block: blank lines and fences are raw HTML
    ("<!-- note --> [[a]]\n[[b]]\n", ["b"]),  # an HTML block is the whole line (CommonMark §4.6)
    ("<!--\n    [[a]]\n-->\n    [[code]]\n", []),  # after the block, indented code may start
    ("- item\n  <!-- [[a]]\n- [[b]]\n", ["b"]),  # the list item ends the block
    ("> <!-- [[a]]\n> still\n[[b]]\n", ["b"]),  # the block quote ends it
    ("`<!-- [[a]] -->` [[b]]\n", ["b"]), ("`<!--` [[b]] `-->`\n", ["b"]),  # in code spans: code
])
def test_comments_hide_links(text, links):
    assert _links(text) == links


def test_comments_hide_headings_and_block_ids():
    body = "# Kept\n%%\n## Draft\nold ^old-id\n%%\n<!--\n## Html\n-->\nText ^kept-id\n"
    masked = mask_code(body)
    assert [h.text for h in find_headings(body, masked)] == ["Kept"]
    assert block_ids(masked) == {"kept-id"}


def test_comment_text_stays_searchable():
    chunks = chunk_note("docs/a.md", "A", "Visible.\n\n%% rollback plan: [[Gone]] %%\n", 5)
    assert "rollback plan" in " ".join(c.text for c in chunks)


def test_check_ignores_commented_links_but_not_heading_links_into_comments(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", body="## Kept\n%%\n## Draft\n%%\n"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", body=(
        "See [[ADR-0001#Kept]].\n%% old: [[ADR-0404]] %%\n<!-- [[ADR-0405]] -->\n"
        "<!--\n[[ADR-0406]]\n-->\n")))
    assert vault.check().code == 0
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003", body="See [[ADR-0001#Draft]].\n"))
    res = vault.check()
    assert res.code == 1 and res.lines == [
        "docs/adrs/ADR-0003.md:8:5: WL003 [[ADR-0001#Draft]] → heading not found in docs/adrs/ADR-0001.md: 'Draft'"
        " — its headings: '#Kept'"]


_TEXT = ["[[a]]", "![[b]]", "text", " ", "\n", "\n\n", "日本", "- ", "> ", "# "]
_MARKUP = ["`", "```", "~~~", "    ", "$", "<!--", "-->", "\\"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TEXT), max_size=12).map("".join),
       st.lists(st.sampled_from(_TEXT + _MARKUP), max_size=12).map("".join))
def test_a_closed_comment_hides_exactly_its_text(before, inside):
    """Wrapping any text (fences, HTML and all) in ``%%`` from a line's start removes every link in it
    and none after it; masking keeps every offset."""
    text = f"{before}\n\n%%{inside} %%\n\n[[after]]\n"
    assert len(mask_code(text)) == len(text)
    hidden = mask_code(text)[len(before) + 2:len(before) + 7 + len(inside)]
    assert "[[" not in hidden and hidden.strip(" \n") == ""
    assert _links(text)[-1] == "after"


@pytest.mark.parametrize("text, links", [
    ("Draft idea %% to do\n%%\n\n[v](Bad2.md) [[Bad3]]\n", ["Bad2.md", "Bad3"]),  # the line's "%%" closes the comment
    ("- a %%\n  x\n  %%\n[[after]]\n", ["after"]), ("> a %%\n> %%\n> [[q]]\n", ["q"]),
    ("Use `%%` to comment.\n%%\n[[hidden]]\n%%\n[[after]]\n", ["after"]),  # a "%%" in code is no mark
    ("a %% b %% c %%\n%%\n[[after]]\n", ["after"]),  # three marks: the fourth closes
    ("%%\nold\n%% a %%\nhidden [[x]]\n%%\n[[after]]\n", ["after"]),  # the closing line opens one more
])
def test_a_percent_line_that_closes_an_open_comment_opens_no_block(text, links):
    from vaultsync.vault.mdlinks import iter_markdown_links

    masked = mask_code(text)
    found = [k.target for k in iter_links(masked)] + [k.target for k in iter_markdown_links(masked)]
    assert sorted(found) == sorted(links)


def test_a_comment_in_a_heading_is_not_part_of_its_name():
    body = "## Other %% note to self %%\n## Title <!-- c -->\n## Code `%%` kept\n"
    assert [h.text for h in find_headings(body, mask_code(body))] == ["Other", "Title", "Code `%%` kept"]

