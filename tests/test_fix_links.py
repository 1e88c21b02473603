"""``check --fix`` rewrites the links a rename broke (WL007), as WL007 names them, and nothing else.

A new user renamed a linked incident with ``git mv``: the commit was refused (WL007, naming the link to
write), and ``check --fix`` left every link as it was, so each had to be edited by hand."""

from __future__ import annotations

import pytest
from conftest import CONFIG, adr
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.checks.fix_links import LinkFix, fixed_links
from vaultsync.vault.note import parse_text

TARGET = adr("ADR-0001", body="# ADR-0001\n## Decision\nUse SQLite. ^why\n")


@pytest.fixture
def committed(make_vault):  # type: ignore[no-untyped-def]
    """``make_vault``, with the files committed (no hooks installed)."""
    def build(files):  # type: ignore[no-untyped-def]
        vault = make_vault(files)
        vault.commit("init")
        return vault
    return build


def _links(text: str) -> list[str]:
    return [link.raw for link in parse_text("docs/x.md", text).links]


# (link as written, the link --fix writes after `git mv docs/adrs/ADR-0001.md docs/adrs/ADR-0001-sqlite.md`)
FORMS = [
    ("[[ADR-0001]]", "[[ADR-0001-sqlite]]"),
    ("[[ADR-0001#Decision|why we chose]]", "[[ADR-0001-sqlite#Decision|why we chose]]"),
    ("[[ADR-0001#^why]]", "[[ADR-0001-sqlite#^why]]"),
    ("![[ADR-0001]]", "![[ADR-0001-sqlite]]"),
    ("[[adrs/ADR-0001]]", "[[ADR-0001-sqlite]]"),
    # a Markdown link with a relative path keeps one: other renderers than Obsidian read it as a path
    ("[the decision](../adrs/ADR-0001.md)", "[the decision](../adrs/ADR-0001-sqlite.md)"),
    ("[d](<../adrs/ADR-0001.md>)", "[d](../adrs/ADR-0001-sqlite.md)"),
    ("[e](./../adrs/ADR-0001.md#Decision)", "[e](../adrs/ADR-0001-sqlite.md#Decision)"),
    ("[f](ADR-0001.md)", "[f](ADR-0001-sqlite.md)"),
]


def _source(line_end: str = "\n", bom: bool = False) -> bytes:
    body = "".join(f"{i}. 日本語の前置き — {raw} and after.\n" for i, (raw, _) in enumerate(FORMS))
    text = ('---\ntitle: Links\nrelated: ["[[ADR-0001]]"]\nsee:\n  - "[[ADR-0001#Decision]]"\n'
            "  - '[[ADR-0002]]'\n---\n" + body + "Two on a line: [[ADR-0001]] then [[ADR-0001|again]].\n")
    return (b"\xef\xbb\xbf" if bom else b"") + text.replace("\n", line_end).encode("utf-8")


@pytest.mark.parametrize("line_end, bom", [("\n", False), ("\r\n", False), ("\n", True), ("\r\n", True)])
def test_fix_rewrites_every_link_a_git_mv_broke_and_nothing_else(committed, line_end, bom):
    vault = committed({".vaultsync.yaml": CONFIG, "docs/adrs/ADR-0001.md": TARGET,
                        "docs/adrs/ADR-0002.md": adr("ADR-0002"), "docs/notes/links.md": _source(line_end, bom)})
    vault.git("mv", "docs/adrs/ADR-0001.md", "docs/adrs/ADR-0001-sqlite.md")
    assert vault.check("--staged").code == 1
    res = vault.check("--fix")
    assert res.code == 0 and not [line for line in res.lines if "WL00" in line], res.lines
    assert res.err.count("fixed: docs/notes/links.md:") == len(FORMS) + 4 and "not fixed" not in res.err, res.err
    assert "stage the fixed notes before committing: git add -- docs/notes/links.md" in res.err, res.err
    want = _source(line_end, bom).decode("utf-8")
    for old, new in [*FORMS, ("[[ADR-0001#Decision]]", "[[ADR-0001-sqlite#Decision]]"),
                     ("[[ADR-0001|again]]", "[[ADR-0001-sqlite|again]]"), ("[[ADR-0001]]", "[[ADR-0001-sqlite]]")]:
        want = want.replace(old, new)
    assert (vault.root / "docs/notes/links.md").read_bytes() == want.encode("utf-8")  # BOM, CRLF, the rest kept
    vault.git("add", "-A")
    assert vault.check("--staged").code == 0


def test_fix_follows_a_rename_made_without_git_and_a_move_to_another_folder(committed):
    vault = committed({".vaultsync.yaml": CONFIG, "docs/adrs/ADR-0001.md": TARGET,
                        "docs/notes/a.md": "See [[ADR-0001#Decision]].\n", "docs/notes/b.md": "See [[ADR-0002]].\n",
                        "docs/adrs/ADR-0002.md": adr("ADR-0002")})
    (vault.root / "docs/archive").mkdir()
    (vault.root / "docs/adrs/ADR-0001.md").rename(vault.root / "docs/archive/ADR-0001.md")  # plain mv
    (vault.root / "docs/adrs/ADR-0002.md").rename(vault.root / "docs/adrs/ADR-0002 the second.md")
    res = vault.check("--fix")
    assert res.code == 0, res.out + res.err
    assert (vault.root / "docs/notes/a.md").read_text() == "See [[ADR-0001#Decision]].\n"  # resolves again: kept
    assert (vault.root / "docs/notes/b.md").read_text() == "See [[ADR-0002 the second]].\n"


def test_a_deleted_note_and_a_path_not_asked_for_are_left_alone(committed):
    vault = committed({".vaultsync.yaml": CONFIG, "docs/adrs/ADR-0001.md": TARGET,
                        "docs/adrs/ADR-0002.md": adr("ADR-0002"),
                        "docs/notes/a.md": "See [[ADR-0001]] and [[ADR-0002]].\n",
                        "docs/notes/b.md": "See [[ADR-0002]].\n"})
    vault.git("rm", "-q", "docs/adrs/ADR-0001.md")
    vault.git("mv", "docs/adrs/ADR-0002.md", "docs/adrs/ADR-0002-two.md")
    res = vault.check("--fix", "docs/notes/a.md")
    assert (vault.root / "docs/notes/a.md").read_text() == "See [[ADR-0001]] and [[ADR-0002-two]].\n"
    assert (vault.root / "docs/notes/b.md").read_text() == "See [[ADR-0002]].\n"
    assert res.code == 1 and any("WL007 [[ADR-0001]] → target removed in this commit" in line for line in res.lines)


@pytest.mark.parametrize("name, before, after", [
    ("Bob's decision", "'[[ADR-0001]]'", "'[[Bob''s decision]]'"),
    ('The "new" one', '"[[ADR-0001]]"', '"[[The \\"new\\" one]]"'),
    ("Bob's decision", "['[[ADR-0001|it''s canary]]', \"[[ADR-0002]]\"]", "['[[Bob''s decision|it''s canary]]', \"[[ADR-0002]]\"]"),
    ("canary releases", "'[[ADR-0001|it''s canary]]'", "'[[canary releases|it''s canary]]'"),
    ("canary releases", '"[[ADR-0001|the \\"canary\\"]]"', '"[[canary releases|the \\"canary\\"]]"'),
    ("Ödeme 'v2'", "\"[[ADR-0001]]\"", "\"[[Ödeme 'v2']]\""),
])
def test_a_link_in_a_quoted_yaml_string_is_rewritten_escaped_as_its_quotes_escape(committed, name, before, after):
    """A rename to ``Bob's decision.md`` left a single-quoted link refused ("a quoted YAML string cannot hold
    it"), and a link whose alias held ``''`` was "no longer as written there", with WL007 then advising --fix
    again (an attacker's finding): the link is found as YAML escapes it, and written escaped the same way."""
    text = f"---\ntitle: T\nrelated: {before}\n---\nSee [[ADR-0001]] and [md](../adrs/ADR-0001.md).\n"
    vault = committed({".vaultsync.yaml": CONFIG, "docs/adrs/ADR-0001.md": TARGET, "docs/adrs/ADR-0002.md": adr("ADR-0002"),
                       "docs/notes/a.md": text})
    vault.git("mv", "docs/adrs/ADR-0001.md", f"docs/adrs/{name}.md")
    res = vault.check("--fix")
    got = (vault.root / "docs/notes/a.md").read_text()
    assert got.startswith(f"---\ntitle: T\nrelated: {after}\n---\nSee [[{name}]] and [md]("), got
    assert "not fixed" not in res.err and res.code == 0, res.out + res.err


@pytest.mark.parametrize("link, fixed", [("[[ADR-0001\\|ledger]]", "[[ADR-0001-sqlite\\|ledger]]"),
                                         ("[[ADR-0001#Decision\\|why]]", "[[ADR-0001-sqlite#Decision\\|why]]"),
                                         ("[[ADR-0001|plain]]", "[[ADR-0001-sqlite|plain]]")])
def test_a_link_in_a_table_row_keeps_its_escaped_bar(committed, link, fixed):
    """`[[X\\|alias]]` in a table row was rewritten `[[new|alias]]`: the bare bar split the cell in two."""
    row = f"| x | {link} |"
    vault = committed({".vaultsync.yaml": CONFIG, "docs/adrs/ADR-0001.md": TARGET,
                       "docs/notes/t.md": f"# T\n\n| a | b |\n|---|---|\n{row}\n"})
    vault.git("mv", "docs/adrs/ADR-0001.md", "docs/adrs/ADR-0001-sqlite.md")
    assert f"update the link to {fixed}," in vault.check("--staged").out
    assert vault.check("--fix").code == 0
    assert (vault.root / "docs/notes/t.md").read_text().splitlines()[-1] == f"| x | {fixed} |"


def test_a_link_not_where_the_plan_says_is_not_touched():
    text = "See [[a]].\n"
    assert fixed_links("docs/x.md", text, [LinkFix("docs/x.md", 1, 6, "[[a]]", "[[b]]")]) is None  # one off
    assert fixed_links("docs/x.md", text, [LinkFix("docs/x.md", 1, 5, "[[a]]", "[[b]]")]) == "See [[b]].\n"


_TEXT = st.text(st.characters(blacklist_characters="[]()!`\\|#^%$<>\n\r&*{}:'\"-~=_", blacklist_categories=("Cs",)),
                max_size=12)


@settings(max_examples=150, deadline=None)
@given(before=_TEXT, between=_TEXT, after=_TEXT, alias=st.one_of(st.none(), _TEXT.filter(lambda t: t.strip())),
       heading=st.sampled_from([None, "Decision", "Ünïcode heading", "見出し"]), new=st.sampled_from(
           ["b", "B two", "日本語のノート", "Ünïcode", "folder/b"]))
def test_a_rewrite_changes_the_links_and_only_them(before, between, after, alias, heading, new):
    """Property: around any text (any script, combining marks, emoji) on the same line, rewriting two links
    changes exactly those characters: every other character and every other link is kept."""
    sub = f"#{heading}" if heading else ""
    tail = f"|{alias}" if alias else ""
    old = f"[[a{sub}{tail}]]"
    text = f"# Title\n{before}{old}{between}[[other]]{between}{old}{after}\n"
    plan = [LinkFix("docs/x.md", link.line, link.col, link.raw, f"[[{new}{sub}{tail}]]")
            for link in parse_text("docs/x.md", text).links if link.raw == old]
    if len(plan) != 2:  # the generated text made the link something else (a heading, a code span)
        return
    got = fixed_links("docs/x.md", text, plan)
    assert got == text.replace(old, f"[[{new}{sub}{tail}]]")
    assert sorted(_links(got)) == sorted([f"[[{new}{sub}{tail}]]"] * 2 + ["[[other]]"])


@pytest.mark.parametrize("text", [
    "A\rB\nSee [[ADR-0001]]\nSe `[[ADR-0001]]` in code.\n",  # a lone CR above: the code span is a line lower
    "---\rtitle: Old Mac\r---\rIntro\rSee [[ADR-0001]] now\r`[[ADR-0001]]`\r",  # every line ended by CR
    "x\r\ny\rSee [[ADR-0001]]\n`[[ADR-0001]]` and [[ADR-0001|again]]\r\n",  # all three ends mixed
])
def test_fix_counts_lines_as_the_checker_does_and_never_touches_code(committed, text):
    """A lone CR is a line break to the checker, not to --fix: it rewrote the link in the code span of the next
    line, said "fixed", and left the real link dangling."""
    vault = committed({".vaultsync.yaml": CONFIG, "docs/adrs/ADR-0001.md": TARGET, "docs/notes/m.md": text.encode()})
    vault.git("mv", "docs/adrs/ADR-0001.md", "docs/adrs/ADR-0001-sqlite.md")
    res = vault.check("--fix")
    assert res.code == 0 and "not fixed" not in res.err, res.out + res.err
    want = text.replace("See [[ADR-0001]]", "See [[ADR-0001-sqlite]]").replace("[[ADR-0001|", "[[ADR-0001-sqlite|")
    assert (vault.root / "docs/notes/m.md").read_bytes() == want.encode()  # code kept, every line end kept


@pytest.mark.parametrize("front", [
    'supersedes: ["[[ADR-0001]]"]\nrelated: ["[[ADR-0001]]"]\n',
    'related: ["[[ADR-0001]]", "[[ADR-0001]]"]\n',
    "see: '[[ADR-0001]]'\nalso: \"[[ADR-0001]]\"\n",
    'related:\n  - "[[ADR-0001#Decision]]"\n  - "[[ADR-0001]]"\nsee: "[[ADR-0001]]"\n',
])
def test_one_link_named_twice_in_the_frontmatter_is_fixed_in_both_places(committed, front):
    """``supersedes`` and ``related`` naming one note: each fix alone was refused ("a quoted YAML string cannot
    hold it"), because YAML reads the other place back unchanged."""
    text = f"---\ntitle: T\n{front}---\nBody [[ADR-0001]].\n"
    vault = committed({".vaultsync.yaml": CONFIG, "docs/adrs/ADR-0001.md": TARGET, "docs/notes/a.md": text})
    vault.git("mv", "docs/adrs/ADR-0001.md", "docs/adrs/ADR-0001-sqlite.md")
    res = vault.check("--fix")
    assert res.code == 0 and "not fixed" not in res.err, res.out + res.err
    assert (vault.root / "docs/notes/a.md").read_text() == text.replace("[[ADR-0001", "[[ADR-0001-sqlite")


@pytest.mark.parametrize("name, shown", [("ADR-0001 a|b", "ADR-0001 a\\|b"), ("ADR [1]", "ADR \\[1\\]"),
                                         ("RULE #1", "RULE #1")])
def test_a_name_a_wikilink_cannot_hold_becomes_a_markdown_link_whose_text_keeps_a_table_row(committed, name, shown):
    """A rename to ``ADR-0001 a|b.md`` rewrote ``[[ADR-0001]]`` in a table cell as ``[ADR-0001 a|b](…)``: its bare
    bar split the cell, so the row had three cells and no link, and the check passed."""
    vault = committed({".vaultsync.yaml": CONFIG, "docs/adrs/ADR-0001.md": TARGET,
                       "docs/notes/t.md": "# T\n\n| a | b |\n|---|---|\n| [[ADR-0001]] | two |\n"})
    vault.git("mv", "docs/adrs/ADR-0001.md", f"docs/adrs/{name}.md")
    assert vault.check("--fix").code == 0
    row = (vault.root / "docs/notes/t.md").read_text().splitlines()[-1]
    assert row.startswith(f"| [{shown}](") and row.endswith(") | two |"), row
    assert row.count("|") - row.count("\\|") == 3  # the row's own bars only
