"""Chunking: long sections split between blocks; a block too long for the embedder is cut into pieces."""

from __future__ import annotations

import pytest
from conftest import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.index.chunking import MAX_BLOCK_FACTOR, chunk_note, estimate_tokens


def _words(text: str) -> list[str]:
    return [w for w in text.split() if not w.startswith("```")]


@pytest.mark.parametrize("body", [
    " ".join(f"w{i}" for i in range(4000)) + " needleword\n",                       # one long line
    "\n".join(f"- 10:{i:02d} step {i} restarted the worker pool" for i in range(240)) + "\n",  # a list, no blank
    "```\n" + "\n".join(f"x = {i} + y * z  # retry loop" for i in range(300)) + "\n```\n",   # generated code
    "> " + "\n> ".join(f"quoted log line {i} with some words" for i in range(200)) + "\n",   # a long quote
    "東京" * 3000 + "\n",                                                                # CJK: a token per character
])
def test_a_block_too_long_for_the_embedder_is_cut_and_nothing_is_lost(body):
    chunks = chunk_note("a.md", "A", body, target_tokens=100)
    assert len(chunks) > 1
    assert all(estimate_tokens(c.text) <= MAX_BLOCK_FACTOR * 100 for c in chunks)
    assert "".join(w for c in chunks for w in _words(c.text)) == "".join(_words(body))
    lines = body.split("\n")
    for c in chunks:  # each piece lies within its chunk's lines
        span = "\n".join(lines[c.start_line - 1:c.end_line])
        assert all(w in span for w in _words(c.text)[:3] + _words(c.text)[-3:])


def test_a_blob_without_spaces_is_cut_by_characters():
    blob = "QUJD" * 50_000  # 200 KB of base64: few estimated tokens, far more real ones
    chunks = chunk_note("a.md", "A", f"{blob}\n", target_tokens=100)
    assert len(chunks) == 2000 and "".join(c.text for c in chunks) == blob


def test_a_block_under_the_cap_stays_whole():
    body = " ".join(f"w{i}" for i in range(150)) + "\n\nnext paragraph\n"  # 300 estimated tokens
    chunks = chunk_note("a.md", "A", body, target_tokens=100)
    assert chunks[0].text == body.split("\n\n")[0]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(
    # a line of dashes alone under text is a setext heading's underline: markup, not a word (test below)
    st.text(st.sampled_from("ab é猫 .,-"), min_size=0, max_size=60).filter(lambda t: t.strip(" -") or not t.strip()),
    st.integers(50, 900).map(lambda n: " ".join(["word"] * n)), st.integers(50, 900).map(lambda n: "猫" * n),
    st.integers(50, 900).map(lambda n: "QUJD" * n + " tail"),
    st.just(""), st.just("```"), st.just("- item"),
), min_size=1, max_size=12), st.sampled_from([20, 50, 100]))
def test_chunks_keep_every_word_in_order_and_stay_under_the_cap(lines, target):
    body = "\n".join(lines) + "\n"
    chunks = chunk_note("a.md", "A", body, target_tokens=target)
    assert "".join("".join(c.text.split()) for c in chunks) == "".join(body.split()) or body.strip() == ""
    assert all(estimate_tokens(c.text) <= MAX_BLOCK_FACTOR * target + 2 for c in chunks)


def test_the_end_of_a_long_line_is_found_and_the_budget_holds(vault):
    words = " ".join(f"filler{i % 97}" for i in range(3000))
    vault.write("docs/log.md", f"# Log\n\n{words} the culprit was quuxlemming\n")
    vault.write("docs/other.md", "# Other\n\nNothing here.\n")
    vault.commit("init")
    vault.synced()
    res = run_cli(["search", "--no-daemon", "quuxlemming", "--budget", "150", "--format", "json"], vault.root)
    assert res.code == 0, res.err
    import json

    hits = json.loads(res.out)["hits"]
    assert hits and hits[0]["path"] == "docs/log.md" and "quuxlemming" in hits[0]["text"]
    assert sum(estimate_tokens(h["text"]) for h in hits) <= 150


def test_a_first_hit_over_the_budget_is_kept_and_said(vault):
    import json

    vault.write("docs/a.md", "# A\n\n" + " ".join(f"quokka{i}" for i in range(60)) + "\n")
    vault.commit("init")
    vault.synced()
    res = run_cli(["search", "--no-daemon", "quokka1", "--budget", "5", "--format", "json"], vault.root)
    answer = json.loads(res.out)
    assert len(answer["hits"]) == 1 and any(w.startswith("the best hit alone holds ") and "over --budget 5" in w
                                            for w in answer["warnings"]), answer["warnings"]


@pytest.mark.parametrize("body, owned", [
    # a paragraph cut in pieces: its ^id, on the last line, names every piece
    ("\n".join(f"line {i} of one long paragraph about retries" for i in range(120)) + " ^para\n", {"para"}),
    # one long line
    (" ".join(f"w{i}" for i in range(3000)) + " ^long\n", {"long"}),
    # in a quote
    ("> " + "\n> ".join(f"quoted {i} words words" for i in range(200)) + " ^q1\n", {"q1"}),
])
def test_a_cut_blocks_id_names_every_piece(body, owned):
    """Obsidian's ``^id`` after a paragraph names the whole paragraph: each piece of it is that block."""
    chunks = chunk_note("a.md", "A", body, target_tokens=100)
    assert len(chunks) > 2 and all(set(c.blocks) == owned for c in chunks), [c.blocks for c in chunks]


def test_a_cut_lists_ids_stay_with_their_items():
    """In a list, each item's ``^id`` names that item only: a piece holds the ids of the items in it."""
    items = [f"- item {i} " + "word " * 12 + (f"^i{i}" if i % 10 == 0 else "") for i in range(200)]
    chunks = chunk_note("a.md", "A", "\n".join(items) + "\n", target_tokens=100)
    assert len(chunks) > 2
    for c in chunks:
        held = {f"i{i}" for i in range(0, 200, 10) if f"- item {i} " in c.text}
        assert set(c.blocks) == held, (c.text[:60], c.blocks)
    assert sorted({b for c in chunks for b in c.blocks}) == sorted(f"i{i}" for i in range(0, 200, 10))


@settings(max_examples=100, deadline=None)
@given(st.integers(30, 400), st.sampled_from([20, 50, 100]), st.from_regex(r"[A-Za-z0-9][A-Za-z0-9-]{0,8}", fullmatch=True))
def test_every_piece_of_a_paragraph_carries_its_id(n, target, block_id):
    body = "\n".join(f"sentence {i} about the queue" for i in range(n)) + f" ^{block_id}\n"
    chunks = chunk_note("a.md", "A", body, target_tokens=target)
    assert all(c.blocks == (block_id,) for c in chunks)


@pytest.mark.parametrize("body, heading, line", [
    ("# Only qzwhthree\n", "Only qzwhthree", 1),                                   # a note that is one heading
    ("# T\n\nText.\n\n## Open qzwtwo\n", "Open qzwtwo", 5),                         # a last heading, nothing under it
    ("## Alpha qzw\n## Beta\n\nbody\n", "Alpha qzw", 1),                             # followed by a sibling
    ("# T\n\n### Deep qzw\n## Up\n\nx\n", "Deep qzw", 3),                            # followed by a higher level
    ("# T\n\n## Ünïcode 見出し\n", "Ünïcode 見出し", 3),
    ("# T\n\n## Closed qzw ##\n", "Closed qzw", 3),                                   # a closing sequence
])
def test_a_heading_with_nothing_under_it_is_indexed_at_its_line(body, heading, line):
    """A heading with no text under it was dropped: its words were in no chunk, so search never found
    them (a note of one heading was indexed as its file name)."""
    (chunk,) = [c for c in chunk_note("a.md", "T", body) if heading in c.heading.split(" > ")]
    assert heading in chunk.text and heading in chunk.embed_text and chunk.start_line == chunk.end_line == line


def test_a_parent_heading_is_not_a_chunk_of_its_own():
    """``# Title`` then ``## Context``: the H1 travels in every child's heading path, so it adds no chunk."""
    chunks = chunk_note("a.md", "Title", "# Title\n\n## Context\n\nWhy.\n\n## Decision\n\nWhat.\n")
    assert [(c.heading, c.text) for c in chunks] == [("Context", "Why."), ("Decision", "What.")]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.from_regex(r"[a-z]{3,8}", fullmatch=True), st.booleans()),
                min_size=1, max_size=10))
def test_every_headings_words_reach_a_chunk(sections):
    """Whatever the nesting and whichever sections are empty, each heading's text is in some chunk: in its
    heading path (a parent, or one with text under it) or in its text (one with nothing under it)."""
    body = "".join(f"{'#' * level} h{i}{word}\n\n" + (f"text {i}\n\n" if filled else "")
                   for i, (level, word, filled) in enumerate(sections))
    chunks = chunk_note("a.md", "Title", body)
    for i, (_, word, _) in enumerate(sections):
        assert any(f"h{i}{word}" in c.heading or f"h{i}{word}" in c.text for c in chunks), (body, chunks)


@pytest.mark.parametrize("body, sections", [
    ("Sorrel Protocol\n===\n\nRefunds in twelve days.\n\nFennel Procedure\n---\n\nEscalate above 700 EUR.\n",
     [("Sorrel Protocol", "Refunds in twelve days."), ("Sorrel Protocol > Fennel Procedure", "Escalate above 700 EUR.")]),
    ("Intro.\n\nA two\nline title\n----------\nUnder it.\n",  # a paragraph of two lines, text right after
     [("", "Intro."), ("A two line title", "Under it.")]),
    ("# Top\n\nAlpha.\n\nΣύνοψη\n------\n\nΒήτα.\n",  # setext under ATX, another script
     [("Top", "Alpha."), ("Top > Σύνοψη", "Βήτα.")]),
    ("Para.\n\n---\n\nAfter a rule.\n", [("", "Para.\n\n---\n\nAfter a rule.")]),  # a rule after a blank: no heading
    ("```\nnot a heading\n===\n```\n\nText.\n", [("", "```\nnot a heading\n===\n```\n\nText.")]),  # in a fence
    ("> Quoted\n> ===\n> inside\n", [("", "> Quoted\n> ===\n> inside")]),  # in a block quote: as ATX there
])
def test_setext_headings_start_sections_as_atx_ones_do(body, sections):
    """A setext heading (a paragraph underlined with === or ---) was chunk text: "Fennel Procedure" found
    the Sorrel section, and the sentence under it was left out as a second block."""
    got = [(c.heading, c.text) for c in chunk_note("n.md", "Note", body)]
    assert got == sections, got
    assert all("===" not in c.heading and "---" not in c.heading for c in chunk_note("n.md", "Note", body))
