"""Field cases WL-01..WL-09: WikiLink extraction and resolution with Obsidian semantics."""

from __future__ import annotations

import json
import re
import time
from collections import Counter, defaultdict

import pytest
from conftest import adr, require_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.diagnostics import visible
from vaultsync.checks.links import resolve_links
from vaultsync.git import WorktreeSnapshot
from vaultsync.vault.config import Config
from vaultsync.vault.headings import atx_heading
from vaultsync.vault.markdown import mask_code
from vaultsync.vault.note import parse_note
from vaultsync.vault.resolve import LinkIndex
from vaultsync.vault.vault import load_vault
from vaultsync.vault.wikilinks import iter_links

LINKS_ONLY = "vault: docs\n"  # no type folders: these tests are about links, not frontmatter


@pytest.fixture
def vault(vault):
    vault.write(".vaultsync.yaml", LINKS_ONLY)
    return vault


ADR1 = adr("ADR-0001", body="# ADR-0001\n## Context\n## Decision\nWe keep a 50 ms budget. ^perf-budget\n")


def test_wl01_link_syntax_variants(vault):
    body = ("[[ADR-0001]] [[ADR-0001|first]] [[ADR-0001#Decision]] [[ADR-0001#^perf-budget]]\n"
            "[[adrs/ADR-0001]] [[ADR-0001.md]] ![[ADR-0001#Decision]] [[#Context]] [[ADR-0001#Decision|why]]\n")
    vault.write("docs/adrs/ADR-0001.md", ADR1)
    vault.write("docs/adrs/ADR-0009.md", adr("ADR-0009", body="## Context\n" + body))
    note = parse_note("docs/adrs/ADR-0009.md", (vault.root / "docs/adrs/ADR-0009.md").read_bytes())
    parsed = [(k.target, k.heading, k.block, k.alias, k.embed) for k in note.links]
    assert parsed == [
        ("ADR-0001", None, None, None, False), ("ADR-0001", None, None, "first", False),
        ("ADR-0001", "Decision", None, None, False), ("ADR-0001", None, "perf-budget", None, False),
        ("adrs/ADR-0001", None, None, None, False), ("ADR-0001.md", None, None, None, False),
        ("ADR-0001", "Decision", None, None, True), ("", "Context", None, None, False),
        ("ADR-0001", "Decision", None, "why", False),
    ]
    assert not any(c in k.target for k in note.links for c in "|#^")
    index = LinkIndex(["docs/adrs/ADR-0001.md", "docs/adrs/ADR-0009.md"], root="docs")
    resolved = {index.resolve(k.target, "docs/adrs/ADR-0009.md").path for k in note.links}
    assert resolved == {"docs/adrs/ADR-0001.md", "docs/adrs/ADR-0009.md"}
    assert vault.check().code == 0


def test_wl01_table_escaped_pipe():
    links = list(iter_links("| [[ADR-0001\\|first]] | [[b#H\\|x]] |"))
    assert [(k.target, k.heading, k.alias) for k in links] == [("ADR-0001", None, "first"), ("b", "H", "x")]


def test_wl02_links_in_code_are_ignored(vault):
    body = ('```bash\nif [[ ! -f "$JSFILE" ]]; then exit 1; fi\n```\n~~~\n[[not-a-note]]\n~~~\n'
            "    [[indented-code]]\nUse `[[inline-code]]` or ``[[double-tick]]`` syntax. Real: [[ADR-0001]]\n")
    vault.write("docs/adrs/ADR-0001.md", ADR1)
    vault.write("docs/rules/RULE-0003.md", body)
    note = parse_note("r.md", body.encode())
    assert [k.target for k in note.links] == ["ADR-0001"]
    assert "[[not-a-note]]" in note.body  # the text itself is kept for the index
    assert vault.check().code == 0


def test_wl02_unclosed_fence_runs_to_the_end():
    note = parse_note("r.md", b"[[a]]\n```\n[[b]]\n\n[[c]]\n")
    assert [k.target for k in note.links] == ["a"]


def test_wl02_fences_in_lists_and_quotes():
    text = "- item\n\n    ```\n    [[in-list-fence]]\n    ```\n> ```\n> [[in-quote]]\n> ```\n[[real]]\n"
    assert [k.target for k in iter_links(mask_code(text))] == ["real"]


@pytest.mark.parametrize("text, real", [
    ("> ```\n> [[in-quote]]\nAfter the quote [[real]]\n", ["real"]),  # the quote ends, and its fence with it
    ("> > ~~~\n> > [[deep]]\n> back in the outer quote [[real]]\n", ["real"]),
    ("> ```md\n> [[in]]\n> ```\n[[real]] and `[[code]]`\n", ["real"]),
])
def test_wl02_a_fence_in_a_block_quote_ends_with_the_quote(text, real):
    assert [k.target for k in iter_links(mask_code(text))] == real


@pytest.mark.parametrize("text, real", [
    ("- ```\n  [[incode]]\n  ```\n\n[[real]]\n", ["real"]),   # a fence opened on the item's own line
    ("1. ~~~\n   [[in]]\n   ~~~\n[[real]]\n", ["real"]),
    ("> - ```\n>   [[in]]\n>   ```\n\n[[real]]\n", ["real"]),
    ("- item [[a]]\n- `code` [[b]]\n", ["a", "b"]),
])
def test_wl02_a_fence_opened_on_a_list_item_line(text, real):
    assert [k.target for k in iter_links(mask_code(text))] == real


@pytest.mark.parametrize("text", ["[[]]", "[[ ]]", "[[|alias]]", "[[\u3000|x]]", "![[\t]]", "[[\u200b]]",
                                  "[[\u200f|x]]", "[[\u00ad]]", "[[\u2060 \ufeff]]"])
def test_wl04_empty_links_warn(vault, text):
    vault.write("docs/a.md", text + "\n")
    res = vault.check()
    assert res.code == 0
    assert res.lines == [f"docs/a.md:1:1: WL005 warning: empty wikilink {visible(text)}"]  # U+3000 as \u3000
    assert "dangling" not in res.out


def test_wl04_an_empty_subpath_is_the_note_itself(vault):
    """Obsidian resolves ``[[#]]`` to the note it is written in (the help vault's link oracle says so);
    ``[[#^]]`` is the same link, not a missing block "^"."""
    vault.write("docs/b.md", "# B\n")
    vault.write("docs/a.md", "[[b#]] [[b#^]] [[b#^ ]] [[#]] [[#^]] [[#^ |x]] ![[#^]] [[ #^\t]]\n")
    res = vault.check()
    assert res.code == 0 and res.lines == [], res.out


def test_wl04_unclosed_multiline_and_pathological(vault):
    vault.write("docs/a.md", "[[ADR-0001\nand later]]\n[[multi\nline]]\n" + "[[" * 500_000 + "\n")
    start = time.perf_counter()
    res = vault.check()
    assert time.perf_counter() - start < 5  # generous bound on a loaded CI box; WL-04 asks < 1 s locally
    assert res.code == 0 and res.lines == []


@pytest.mark.parametrize("heading, link", [
    ("a" + " ." * 50_000 + "x", "[[#y]]"), ("[" * 100_000, "[[#x]]"), ("<" * 100_000, "[[#x]]"), ("<a " * 30_000, "[[#x]]"),
    ("`" * 50_000, "[[#x]]"), ("``a" * 30_000, "[[#x]]"), ("[a](" * 30_000, "[[#x]]"), ("見出し。" * 25_000, "[[#x]]"),
    ("x", "[[#" + ". " * 50_000 + "y]]"), ("x", "[[#" + "\u3000!" * 50_000 + "]]"),
    ("h\n" + "## y\n" * 3000, "[[#h#" + "`!" * 50_000 + "]]"),  # a nested subpath, held against each heading
])
def test_wl04_long_headings_and_subpaths_take_linear_time(vault, heading, link):
    """Heading matching on 100-200 KB headings or link subpaths (WL-04: no catastrophic backtracking)."""
    vault.write("docs/a.md", f"# {heading}\n{link}\n")
    start = time.perf_counter()
    res = vault.check()
    assert time.perf_counter() - start < 5  # quadratic forms took 20-100 s here
    assert res.code == 1 and "WL003" in res.out


@pytest.mark.parametrize("prefix", ["> ", " > ", ">  ", ">> ", "> >  ", ">\t> ", "   >   "])
@pytest.mark.parametrize("tail", ["quoted reply", "    # indented hash", "## heading"])
def test_wl04_deeply_nested_block_quotes_take_linear_time(vault, prefix, tail):
    """A pasted e-mail thread: 27 levels of ``> `` took 16 s and 5,000 did not end, in every check mode
    (a space between two quote markers could be matched two ways). Now 5,000 levels, 20 lines, a second."""
    vault.write("docs/a.md", f"# Thread\n\n{(prefix * 5000 + tail + chr(10)) * 20}\n[[#Thread]]\n")
    start = time.perf_counter()
    res = vault.check()
    assert time.perf_counter() - start < 5
    assert res.code == 0, res.out


_BACKTRACKING_GATE = re.compile(r"^(?:[ ]{0,3}>[ ]?)*[ ]{0,3}(?:\t|[ ]{4})[ \t]*(?:>[ \t]*)*#", re.MULTILINE)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from([">", " ", "  ", "    ", "\t", "- ", "1. ", "#", "## h", "x", "```"]),
                         max_size=9).map("".join), min_size=1, max_size=6).map("\n".join))
def test_headings_are_those_of_the_backtracking_gate(text):
    """The possessive gate finds every heading the backtracking one did, and only those."""
    from vaultsync.vault import headings

    masked = mask_code(text)
    ours = headings.find_headings(text, masked)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(headings, "_INDENTED_HASH", _BACKTRACKING_GATE)
        assert ours == headings.find_headings(text, masked)


def test_wl06_ambiguity_case_and_no_suffix_guessing(vault):
    for rel in ("docs/adrs/README.md", "docs/incidents/README.md", "docs/rules/todo.md",
                "docs/rules/another-todo.md", "docs/adrs/ADR-0001-use-sqlite.md"):
        vault.write(rel, "# x\n")
    vault.write("docs/rules/links.md", "[[README]] [[adrs/README]] [[todo]] [[adr-0001-use-sqlite]] [[another]]\n")
    res = vault.check()
    assert res.code == 1
    assert res.lines == [
        "docs/rules/links.md:1:1: WL002 [[README]] → ambiguous link; candidates: docs/adrs/README.md, "
        "docs/incidents/README.md (write the folder: [[folder/name]])",
        "docs/rules/links.md:1:61: WL001 [[another]] → no such note",
    ]


def test_wl06_same_folder_candidate_wins_like_obsidian():
    index = LinkIndex(["docs/adrs/README.md", "docs/incidents/README.md"], root="docs")
    assert index.resolve("README", "docs/adrs/x.md").path == "docs/adrs/README.md"
    assert index.resolve("README", "docs/rules/x.md").status == "ambiguous"


@pytest.mark.parametrize("name, code", [
    ("Release v1.final", "WL001"), ("notes.backup", "WL001"), ("Q3.summary", "WL001"), ("会議.議事録", "WL001"),
    ("v2.0", "WL001"), ("spec.draft", "WL001"), ("photo.jpeg", "WL006"), ("deck.pptx", "WL006"),
    ("board.canvas", "WL006"), ("flow.drawio", "WL006"), ("song.MP3", "WL006"), ("a.7z", "WL006"),
    ("node.js", "WL001 file"), ("config.yaml", "WL001 file"), ("ADR-0050-target.v2", "WL001 file"),
    ("schema.json", "WL001 file"), ("見積.txt", "WL001 file"),
])
def test_wl07_a_missing_name_with_a_dot_is_a_note_unless_the_suffix_names_a_file_kind(vault, name, code):
    """`[[Release v1.final]]` is the note `Release v1.final.md` to Obsidian (it creates that on click), not an
    attachment: a suffix names an attachment only when it is a format one attaches (`.png`, `.docx`, `.canvas`);
    `[[node.js]]` is then no note or file."""
    vault.write("docs/a.md", f"see [[{name}]]\n")
    code, _, file = code.partition(" ")  # a suffix no attachment has: a note *or* a file of that name
    what = f"no such note{' or file' if file else ''}" if code == "WL001" else f"missing attachment '{name}'"
    assert vault.check().lines == [f"docs/a.md:1:5: {code} [[{name}]] → {what}"]


def test_wl07_dots_and_extensions(vault):
    for rel in ("docs/incidents/B.H. Liddell Hart.md", "docs/rules/v1.2 release rules.md", "docs/adrs/ADR-0001.md"):
        vault.write(rel, "# x\n")
    vault.write("docs/assets/arch.png", b"\x89PNG\r\n\x1a\n\x00")
    vault.write("docs/a.md", "[[B.H. Liddell Hart]] [[v1.2 release rules]] [[ADR-0001]]\n"
                             "[[ADR-0001.md]] [[arch.png]] [[missing.png]]\n")
    assert vault.check().lines == ["docs/a.md:2:30: WL006 [[missing.png]] → missing attachment 'missing.png'"]


@pytest.mark.parametrize("name", ["foo.md", "Notes.MD", "v1.2.md", "日本.md", "a b.md"])
def test_wl07_a_name_ending_in_md_finds_its_note_by_the_name_then_with_md(vault, name):
    """A note whose name itself ends in ".md" (``foo.md.md``): ``[[foo.md]]`` tried ``foo.md`` only."""
    vault.write(f"docs/x/{name}.md", "# x\n")
    vault.write("docs/y/a.md", f"[[{name}]] [[docs/x/{name}]] [[../x/{name}]] [[x/{name}]]\n")
    assert vault.check().lines == []


@pytest.mark.parametrize("target", ["v1.2", "release 2.0", "v1.2.3", "3.14"])
def test_wl07_a_number_after_a_dot_is_no_file_extension(vault, target):
    vault.write("docs/a.md", f"[[{target}]]\n")
    assert vault.check().lines == [f"docs/a.md:1:1: WL001 [[{target}]] → no such note"]


def test_wl09_embeds_and_attachments(vault):
    vault.write("docs/adrs/ADR-0001.md", ADR1)
    vault.write("docs/assets/arch.png", b"\x89PNG\r\n\x1a\n\x00")
    vault.write("docs/incidents/INC-0003.md",
                "![[arch.png]] ![[arch.png|300]] ![[docs/assets/arch.png]] ![[missing.png]]\n"
                "![[ADR-0001]] ![[ADR-0001#Decision]] ![[ADR-0001#Nope]] [[arch.png]]\n")
    assert vault.check().lines == [
        "docs/incidents/INC-0003.md:1:59: WL006 ![[missing.png]] → missing attachment 'missing.png'",
        "docs/incidents/INC-0003.md:2:38: WL003 ![[ADR-0001#Nope]] → heading not found in docs/adrs/ADR-0001.md: 'Nope'"
        " — its headings: '#ADR-0001', '#Context', '#Decision'",
    ]


def test_block_and_heading_anchors(vault):
    vault.write("docs/adrs/ADR-0001.md", ADR1)
    vault.write("docs/a.md", "[[ADR-0001#^perf-budget]] [[ADR-0001#^nope]] [[ADR-0001#decision]] [[#Missing]]\n")
    assert vault.check().lines == [
        "docs/a.md:1:27: WL004 [[ADR-0001#^nope]] → block ^nope not found in docs/adrs/ADR-0001.md — its block ids: '^perf-budget'",
        "docs/a.md:1:68: WL003 [[#Missing]] → heading not found in docs/a.md: 'Missing' — the note has no headings",
    ]


@pytest.mark.parametrize("body, named", [
    ("line one ^mid\nline two\n", False),                  # mid-paragraph: the paragraph goes on
    ("line one ^mid\n  indented more text\n", False),
    ("- item ^mid\n  lazy continuation\n", False),
    ("> quoted ^mid\n> more of the quote\n", False),
    ("line one\nline two ^mid\n", True),                   # the paragraph's end
    ("line one ^mid\n\nnext paragraph\n", True),
    ("line one ^mid", True),                                # end of the file
    ("- item ^mid\n- next item\n", True),                   # each list item is a block
    ("1. item ^mid\n2) next\n", True),
    ("> quoted ^mid\n>\n> next\n", True),
    ("para ^mid\n## Heading\n", True),
    ("| a | b |\n|---|---|\n| 1 | 2 |\n\n^mid\n", True),   # a table's id on its own line after it
    ("text ^mid\n---\n", True),
    ("日本語の段落 ^mid\n\n", True),
])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_block_id_names_a_block_only_at_its_end(vault, body, named, eol):
    """Obsidian reads ``^id`` at the end of a block: at the end of a line the same paragraph goes on after, it
    names nothing, and a link to it dangles."""
    vault.write("docs/n.md", "# N\n\n" + body.replace("\n", eol))
    vault.write("docs/a.md", "see [[n#^mid]]\n")
    lines = [line for line in vault.check().lines if line.startswith("docs/a.md")]
    assert lines == ([] if named else ["docs/a.md:1:5: WL004 [[n#^mid]] → block ^mid not found in docs/n.md — the note has no block ids"]), lines


@pytest.mark.parametrize("link, hint", [
    ("[[n#Rollbak plan]]", " — did you mean '#Rollback plan'?"),                # a letter short
    ("[[n#rollback]]", " — did you mean '#Rollback plan'?"),                    # a word short, case
    ("[[n#Étape de déploiement]]", " — did you mean '#Étape du déploiement'?"),  # accents, another word
    ("[[n#Runbook#Rollbak plan]]", " — did you mean '#Rollback plan'?"),       # a nested subpath: its last part
    ("[[n#^perf-budgte]]", " — did you mean '^perf-budget'?"),                   # a block id
    ("[[n#C tipz]]", " — did you mean '#C tips'?"),                             # as a link can write it:
    ("[[n#C# tips]]", " — did you mean '#C tips'?"),                            # '#' would split the subpath
    ("[[n#AB choice]]", " — did you mean '#A B choice'?"),                      # '|' would start an alias
    ("[[n#Minecraft the video gam]]", " — did you mean '#Minecraft The Video Game'?"),
    ("[[n#Kubernetes]]", ""),                                                    # nothing close: no guess
    ("[[n#^zzz]]", ""),
])
def test_a_missing_heading_or_block_names_the_closest_one(vault, link, hint):
    """The hint is written as a link can name the heading (never the text that just failed), and
    following it resolves."""
    vault.write("docs/n.md", "# Runbook\n## Rollback plan\nSteps.\n## Étape du déploiement\nx\n"
                             "Budget: 200 ms. ^perf-budget\n## C# tips\n## A|B choice\n## Minecraft: The Video Game\n")
    vault.write("docs/a.md", f"{link}\n")
    lines = vault.check().lines
    assert len(lines) == 1 and lines[0].startswith("docs/a.md:1:1: WL00"), lines
    assert lines[0].endswith(hint) if hint else "did you mean" not in lines[0], lines
    if hint:
        fixed = link.split("#")[0] + "#" + hint.split("'")[1].lstrip("#")  # [[n#C tips]], [[n#^perf-budget]]
        vault.write("docs/a.md", f"{fixed}]]\n")
        assert vault.check().lines == [], fixed


def test_links_resolve_through_aliases(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra="aliases: [Search engine choice]\n"))
    vault.write("docs/a.md", "[[Search engine choice]]\n")
    assert vault.check().code == 0


@pytest.mark.parametrize("aliases, link, ok", [
    ("aliases: Solo", "Solo", True),                         # one string: one alias (Obsidian reads it)
    ("aliases: Solo, Duo", "Duo", True),                     # a string of comma-separated names
    ("aliases: '  Padded  '", "Padded", True),
    ("aliases: [Solo, 7, null]", "Solo", True),              # names only
    ("aliases: 7", "7", False), ("aliases: ''", "x", False),
])
def test_aliases_written_as_one_string_are_names_too(vault, aliases, link, ok):
    vault.write(".vaultsync.yaml", "vault: docs\n")
    vault.write("docs/n.md", f"---\n{aliases}\n---\n# N\n")
    vault.write("docs/a.md", f"[[{link}]]\n")
    res = vault.check()
    assert (res.code == 0) is ok, res.out


def test_a_string_alias_is_a_name_vector_and_a_link_edge_in_the_index(vault, model_env):
    from conftest import index_state

    vault.write(".vaultsync.yaml", "vault: docs\n")
    vault.write("docs/n.md", "---\naliases: Solo, Duo\n---\n# N\nBody.\n")
    vault.write("docs/a.md", "[[Duo]]\n")
    vault.commit("init")
    vault.synced()
    state = index_state(vault.root)
    assert ("docs/a.md", "Duo", None, "link", "docs/n.md", 1) in state["links"], state["links"]


# --- the code masker agrees with a real CommonMark parser -------------------------------------

def _markdown_it_code_lines(text: str) -> set[int]:
    from markdown_it import MarkdownIt
    lines: set[int] = set()
    for tok in MarkdownIt("commonmark").parse(text):
        if tok.type in ("fence", "code_block") and tok.map:
            start, end = tok.map
            lines.update(range(start + 1, end - (1 if tok.type == "fence" and _closed(text, end) else 0)))
    return lines


def _closed(text: str, end: int) -> bool:
    line = text.split("\n")[end - 1] if end - 1 < len(text.split("\n")) else ""
    return line.strip().startswith(("```", "~~~"))


_line = st.sampled_from([
    "text [[a]]", "", "```", "~~~", "    [[indented]]", "- item [[b]]", "  continued [[c]]", "# Head [[d]]",
    "`[[span]]` after [[e]]", "```python", "> quote [[f]]", "1. one", "\t[[tabbed]]", "---",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_line, min_size=1, max_size=12))
def test_mask_code_matches_commonmark_on_top_level_blocks(lines):
    text = "\n".join(lines) + "\n"
    if any(line.startswith((">", "-", "1.", "  ")) for line in lines):
        return  # containers are checked by the Obsidian oracle test, not here
    masked = mask_code(text)
    assert len(masked) == len(text) and masked.count("\n") == text.count("\n")
    code = _markdown_it_code_lines(text)
    for i, (orig, new) in enumerate(zip(text.split("\n"), masked.split("\n"), strict=True)):
        if i in code and orig.strip():
            assert not new.strip(), (text, i)


# --- the fast scanners against the plain regular expressions they replace ----------------------

# CommonMark's ATX heading as one regular expression (lazy text, optional closing "#"s), and the
# link pattern with the embed "!" inside it: slow on long texts, but obviously right.
_ATX_REFERENCE = re.compile(r"^[ ]{0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_LINK_REFERENCE = re.compile(r"(!?)\[\[([^\[\]\n]*)\]\]")


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=" \t#ab\\\u00a0\r", max_size=16))
def test_atx_heading_reads_every_line_as_the_commonmark_pattern(line):
    m = _ATX_REFERENCE.match(line)
    assert atx_heading(line) == (None if m is None else (len(m.group(1)), (m.group(2) or "").strip()))


@pytest.mark.parametrize("line, expected", [
    ("## Plan ##", (2, "Plan")), ("# C#", (1, "C#")), ("### ###", (3, "###")), ("#\tTabbed  #  ", (1, "Tabbed")),
    ("   ###### Six", (6, "Six")), ("####### seven", None), ("    # code", None), ("#hashtag", None),
    ("# Résumé \\#", (1, "Résumé \\#")),
])
def test_atx_heading_examples(line, expected):
    assert atx_heading(line) == expected


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="![]\\ab\n|#^", max_size=24))
def test_link_scanner_finds_what_the_plain_pattern_finds(text):
    found = [(link.embed, link.raw, link.line, link.col) for link in iter_links(text, markdown=False)]
    expected = []
    for m in _LINK_REFERENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        expected.append((bool(m.group(1)), m.group(0), line, m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1))
    assert found == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a/x.md", "b/x.md", "a/y.md", "A/X.md", "c/z.md", "z.png"]), unique=True, min_size=1),
       st.lists(st.tuples(st.sampled_from(["x", "X", "a/x", "y", "z", "./x.md", "nope", " ", "z.png"]),
                          st.sampled_from(["a/s.md", "b/s.md", "s.md", "c/deep/s.md"])), max_size=12))
def test_link_resolution_remembered_per_folder_equals_a_fresh_resolution(paths, asks):
    index = LinkIndex(paths)
    for target, source in asks:
        assert index.resolve(target, source) == LinkIndex(paths).resolve(target, source)


# --- the real Obsidian help vault against its link oracle ---------------------------------------

# Two links of the oracle sit in a fenced code block inside a block quote
# (`> ```md` ... `> ````). CommonMark, and Obsidian's reading view, render that as
# code, so vaultsync ignores them; the oracle counts them as links.
ORACLE_KNOWN_DIFFERENCES = {
    ("Editing and formatting/Advanced formatting syntax.md", 61, "[[Basic formatting syntax\\|Markdown syntax]]"),
    ("Editing and formatting/Advanced formatting syntax.md", 61, "![[Engelbart.jpg\\|200]]"),
}
_BOOKS = "![Example of a base showing a table view with a list of books](bases-noshadow.png#interface)"
MARKDOWN_LINKS = sorted([  # the help vault's Markdown links outside code (the oracle lists WikiLinks only)
    (_BOOKS, "dangling"), (_BOOKS, "dangling"),  # the evaluation copy ships no attachments
    ("[Custom name](Example.md)", "dangling"), ("[Section name](Example.md#Details)", "dangling"),  # as [[Example]]
])


@pytest.mark.eval
def test_link_checker_agrees_with_the_obsidian_oracle():
    base = require_eval("obsidian-help")
    root = base / "vault"
    oracle = [json.loads(line) for line in (base / "links.jsonl").read_text(encoding="utf-8").splitlines()]
    snapshot = WorktreeSnapshot(root)
    # The evaluation copy ships the Markdown only; its attachments are stood in for by their paths.
    attachments = sorted({o["resolved"] for o in oracle if o["kind"] == "attachment" and o.get("resolved")})

    class WithAttachments:
        def paths(self) -> list[str]:
            return snapshot.paths() + attachments

        def read(self, path: str) -> bytes:
            return snapshot.read(path)

        def symlinks(self) -> list[str]:
            return snapshot.symlinks()

    vault = load_vault(WithAttachments(), Config(), root)
    ours: dict[tuple[str, int], list] = defaultdict(list)
    for outcome in resolve_links(vault):
        ours[(outcome.source, outcome.link.line)].append(outcome)
    confusion: Counter[tuple[str, str]] = Counter()
    for expected in oracle:
        key = (expected["file"], expected["line"])
        if (key[0], key[1], expected["raw"]) in ORACLE_KNOWN_DIFFERENCES:
            confusion[(expected["status"], "ignored (code in quote)")] += 1
            continue
        # the oracle quotes a link holding a code span with the span blanked; we quote it as written
        same_raw = [o for o in ours[key] if expected["raw"] in (o.link.raw, mask_code(o.link.raw))]
        if expected["status"] == "ignored":
            real = sum(1 for e in oracle if (e["file"], e["line"], e["raw"]) == (*key, expected["raw"])
                       and e["status"] != "ignored")
            confusion[("ignored", "ignored" if len(same_raw) <= real else "extracted")] += 1
            continue
        assert same_raw, f"{key}: {expected['raw']} not extracted"
        got = same_raw.pop(0)
        ours[key].remove(got)
        confusion[(expected["status"], got.status)] += 1
        if expected.get("resolved") and got.status != "dangling":
            assert got.path == expected["resolved"], (key, expected["raw"])
    print("\nconfusion (oracle status, vaultsync status):", dict(confusion))
    assert all(a == b for (a, b) in confusion if not b.startswith("ignored (")), confusion
    assert confusion[("ok", "ok")] == 1774
    assert confusion[("heading_ok_normalised", "heading_ok_normalised")] == 28
    assert confusion[("dangling", "dangling")] == 4
    assert confusion[("heading_missing", "heading_missing")] == 1
    assert confusion[("ignored", "ignored")] == 80
    leftovers = [o.link.raw for outs in ours.values() for o in outs
                 if (o.source, o.link.line, o.link.raw) not in ORACLE_KNOWN_DIFFERENCES]
    markdown = sorted((o.link.raw, o.status) for outs in ours.values() for o in outs if not o.link.raw.endswith("]]"))
    assert [raw for raw in leftovers if raw.endswith("]]")] == []  # no WikiLink the oracle does not know
    assert markdown == MARKDOWN_LINKS  # the oracle lists WikiLinks only


NESTED = "# Target\n## H1\n### H2\n#### Deep\n## Other\n### Ünïcode `x`\n## H1\n### Only under the second\n"


@pytest.mark.parametrize("subpath, ok", [
    ("H1#H2", True), ("Target#H1#H2", True), ("H1#Deep", True), ("H2#Deep", True),  # levels between may be skipped
    ("H1#Only under the second", True),  # the second H1's section
    ("Other#ünïcode x", True), ("Target#Other", True), ("H2", True),
    ("Typo#H2", False), ("Other#H2", False), ("H2#H1", False), ("H1#H1", False), ("Deep#H2", False),
    ("H1#H2#Other", False), ("Other#Only under the second", False),
    ("H2#", True), ("H1#H2#", True), ("#H2", True), ("H1##H2", True), ("Typo#", False),  # empty parts name nothing
])
def test_nested_heading_paths_follow_the_sections(vault, subpath, ok):
    """``[[note#A#B]]`` names heading B inside A's section, as Obsidian's outline nests them; an empty
    part (``H#``, ``A##B``) is skipped."""
    vault.write("docs/Target.md", NESTED)
    vault.write("docs/src.md", f"[[Target#{subpath}]]\n")
    res = vault.check()
    assert (res.code == 0) is ok, res.out
    assert ok or "WL003" in res.out


@pytest.mark.parametrize("heading, link", [
    ("C++ & C#", "C++ & C#"), ("C++ & C#", "C++ & C"), ("C++ & C#", "C++ & C##"), ("Issue #42", "Issue  42"),
    ("F# notes", "F  notes"), ("Ends with ##", "Ends with"),
])
def test_a_heading_holding_a_hash_is_reached_as_obsidian_writes_it(vault, heading, link):
    """Obsidian writes a heading's ``#`` into a link as a space (the part after it is a sub-heading
    otherwise); the link as written with ``#`` at the end matches too, its empty last part skipped."""
    vault.write("docs/t.md", f"## {heading}\n")
    vault.write("docs/src.md", f"[[t#{link}]]\n")
    res = vault.check()
    assert res.code == 0, res.out


@pytest.mark.parametrize("link, ok", [
    ("[[./x]]", False), ("[t](./x.md)", False), ("[[./sub/y]]", True), ("[t](./sub/y.md)", True),
    ("[[./../x]]", True), ("[t](./../x.md)", True), ("[[./]]", False), ("[t](./sub/../sub/y.md)", True),
    ("[[sub/y]]", True), ("[[x]]", True),  # no dot: by name or vault path, as before
])
def test_a_dot_slash_link_is_relative_to_the_linking_note(vault, link, ok):
    """``./`` names the linking note's own folder (CommonMark destinations, Obsidian's relative links),
    as ``../`` names the one above: ``./x`` from ``a/src.md`` is ``a/x.md``, never a root ``x.md``."""
    vault.write("docs/x.md", "# root x\n")
    vault.write("docs/a/sub/y.md", "# y\n")
    vault.write("docs/a/src.md", f"{link}\n")
    res = vault.check()
    assert (res.code == 0) is ok, res.out
    assert ok or "WL001" in res.out


def test_a_dot_slash_link_reaches_the_heading_of_the_note_beside_it(vault):
    vault.write("docs/x.md", "# root x\n")
    vault.write("docs/a/x.md", "# a x\n\n## Only In A\n")
    vault.write("docs/a/src.md", "[t](./x.md#Only%20In%20A) [[./x#Only In A]]\n")
    res = vault.check()
    assert res.code == 0, res.out


@pytest.mark.parametrize("heading, link", [
    ("1\\. Intro", "1. Intro"), ("Fish &amp; Chips", "Fish & Chips"), ("Use \\# wisely", "Use wisely"),
    ("\\*Not\\* emphasis", "*Not* emphasis"), ("A &copy; B", "A © B"), ("&#35;42 fix", "42 fix"),
    ("Café &eacute;t&eacute;", "Café été"), ("1\\. Intro", "1\\. Intro"),  # as written still matches
])
def test_a_heading_is_reached_by_the_text_its_escapes_and_entities_show(vault, heading, link):
    """Backslash escapes (CommonMark §2.4) and entities (§2.5) in a heading show as their characters;
    a link may name the heading as shown."""
    vault.write("docs/t.md", f"## {heading}\n")
    vault.write("docs/src.md", f"[[t#{link}]]\n")
    res = vault.check()
    assert res.code == 0, res.out


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from("ab *_\\&#;.é`"), max_size=20))
def test_heading_display_never_raises_and_keeps_code_as_written(text):
    from vaultsync.vault.resolve import heading_display

    shown = heading_display(text)
    assert isinstance(shown, str) and "\0" not in shown


@pytest.mark.parametrize("aliases", ["aliases: Ledger DB, PG ledger", "aliases: [Ledger DB, PG ledger]"])
def test_the_shipped_schema_takes_aliases_in_either_form(tmp_path, aliases):
    """The bundled example vault's schemas accept the string form that link resolution reads."""
    import shutil

    from conftest import REPO_ROOT, run_cli

    root = tmp_path / "ex"
    shutil.copytree(REPO_ROOT / "examples/vault", root)
    adr_file = next((root / "docs/adr").glob("ADR-0002-*.md"))
    text = adr_file.read_text(encoding="utf-8")
    adr_file.write_text(text.replace("\ntitle:", f"\n{aliases}\ntitle:", 1), encoding="utf-8")
    with (root / "docs/incidents").joinpath("INC-0002-replica-lag-month-end.md").open("a", encoding="utf-8") as f:
        f.write("\nSee [[PG ledger]] and [[Ledger DB]].\n")
    res = run_cli(["check", "--root", str(root)], root)
    assert res.code == 0, res.out + res.err


@pytest.mark.parametrize("headings, says", [
    (["Context", "Decision", "Consequences"], " — its headings: '#Context', '#Decision', '#Consequences'"),
    (["背景", "決定"], " — its headings: '#背景', '#決定'"),
    ([], " — the note has no headings"),
    ([f"Step {i}" for i in range(7)], ""),  # too many to list, none close: nothing more
    (["Rollout", "Rollback"], " — did you mean '#Rollout'?"),  # one close: the did-you-mean alone
])
def test_a_missing_heading_names_what_the_note_has(vault, headings, says):
    """WL003 said only "heading not found": with nothing close, a note of a few headings has them listed,
    and one with none says so."""
    vault.write("docs/t.md", "".join(f"## {h}\n\nText.\n\n" for h in headings) or "Text only.\n")
    vault.write("docs/a.md", "See [[t#Rollouts plan]].\n")
    assert vault.check().lines == [f"docs/a.md:1:5: WL003 [[t#Rollouts plan]] → heading not found in docs/t.md: "
                                   f"'Rollouts plan'{says}"]


def test_a_long_heading_is_listed_cut_in_a_missing_heading_message(vault):
    vault.write("docs/t.md", f"## {'Long ' * 40}end\n\nText.\n")
    vault.write("docs/a.md", "See [[t#Rollouts plan]].\n")
    (line,) = vault.check().lines
    assert line.endswith(f" — its headings: '#{('Long ' * 40)[:60]}…'") and len(line) < 200, line


@pytest.mark.parametrize("link, advice", [
    ("[r](README.md)", "write its path, as [r](../misc/README.md)"),
    ("[r](readme.md#Setup)", "write its path, as [r](../misc/README.md#Setup)"),
    ("[[README]]", "write the folder: [[folder/name]]"),
])
def test_wl002_a_shared_file_name_is_no_alias_and_a_markdown_link_gets_a_path_from_its_note(vault, link, advice):
    """Two README.md files: the message called the name "an alias of more than one note", and advised
    [r](misc/README.md), a path that CommonMark renderers read from the linking note's folder."""
    vault.write("docs/misc/README.md", "# A\n## Setup\n")
    vault.write("docs/notes/README.md", "# B\n")
    vault.write("docs/other/l.md", f"See {link}.\n")
    [line] = vault.check().lines
    assert " WL002 " in line and line.endswith(f"({advice})"), line


@pytest.mark.parametrize("target, path, why", [
    ("ADR-0010-new", "docs/adrs/ADR-0010-new.md", "is on disk but not in what is checked: `git add` it"),
    ("scr", "docs/scratch/scr.md", "is ephemeral (`ephemeral:` in .vaultsync.yaml): a link may not name it"),
    ("draft", "docs/notes/draft.tmp.md", None),  # `draft.tmp` is its name: [[draft]] names nothing there
    ("Entwurf", "docs/notes/sub/Entwurf.md", "is on disk but not in what is checked: `git add` it"),
])
def test_wl001_says_why_a_file_on_disk_is_not_a_target(vault, target, path, why):
    """The target existed, not staged or ephemeral, and the message said only "no such note"."""
    vault.write(".vaultsync.yaml", LINKS_ONLY + 'ephemeral: ["**/scratch/**", "**/*.tmp.md"]\n')
    vault.write("docs/notes/a.md", "# A\n")
    vault.git("add", "-A")
    vault.write(path, "# T\n")
    vault.write("docs/notes/a.md", f"# A\nSee [[{target}]].\n")
    vault.git("add", "docs/notes/a.md")
    [line] = vault.check("--staged").lines
    assert f" WL001 [[{target}]] → no such note" in line, line
    assert (f"; {path} {why}" in line) if why else line.endswith("no such note"), line


def test_wl001_names_a_gitignored_file_in_the_working_tree(vault):
    vault.write(".gitignore", "docs/private/\n")
    vault.write("docs/private/secret.md", "# S\n")
    vault.write("docs/notes/a.md", "See [[secret]].\n")
    [line] = vault.check().lines
    assert line.endswith("; docs/private/secret.md is on disk but not in what is checked: `git add` it (or it is "
                         "ignored by git)"), line


def test_wl001_never_walks_a_vault_folder_that_a_committed_symlink_leads_out_of_the_repository(vault, tmp_path):
    """The on-disk hint walks the vault's folders: a committed `docs -> /elsewhere` must not make a dangling
    link list (or spend time on) files outside the repository."""
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "secret.md").write_text("# S\n")
    vault.write(".vaultsync.yaml", "vault: [docs, linked]\n")
    vault.write("docs/a.md", "See [[secret]].\n")
    (vault.root / "linked").symlink_to(outside, target_is_directory=True)
    lines = vault.check().lines
    assert not any("secret.md" in line.split("→", 1)[1] for line in lines if "→" in line), lines
