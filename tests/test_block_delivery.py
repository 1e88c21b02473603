"""Search delivers the best blocks of its hits, not whole chunks (ADR-0116): where each block lies in
its chunk, the stored block vectors, the choice of blocks, and the whole path through a real sync."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest
from conftest import adr, run_cli, synced_searcher
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.index import block_vectors
from vaultsync.index.chunking import chunk_note
from vaultsync.index.format import DDL
from vaultsync.search import deliver as delivery
from vaultsync.search.deliver import ELISION, deliver
from vaultsync.search.results import Hit

WORDS = st.sampled_from(["alpha", "Straße", "日本語", "x", "**bold**", "`code`", "[[Link]]", "42", "é"])
LINE = st.lists(WORDS, min_size=1, max_size=6).map(" ".join)
PARAGRAPH = st.lists(LINE, min_size=1, max_size=3).map("\n".join)
FENCE = st.lists(st.sampled_from(["x = 1", "", "  y"]), min_size=1, max_size=4).map(lambda ls: "```\n" + "\n".join(ls) + "\n```")
ITEMS = st.lists(LINE, min_size=1, max_size=3).map(lambda ls: "\n".join(f"- {s}" for s in ls))
BLOCK = st.one_of(PARAGRAPH, FENCE, ITEMS, LINE.map(lambda s: s + " ^t1"))


@settings(max_examples=60, deadline=None)
@given(st.lists(BLOCK, min_size=1, max_size=8), st.sampled_from(["", "\n", "\n\n"]), st.sampled_from(["\n\n", "\n\n\n"]),
       st.booleans(), st.integers(8, 200))
def test_spans_are_the_blocks_of_each_chunk(blocks, lead, gap, heading, target):  # type: ignore[no-untyped-def]
    body = lead + ("## Part\n\n" if heading else "") + gap.join(blocks) + "\n"
    for chunk in chunk_note("n.md", "Title", body, target_tokens=target):
        assert chunk.spans, chunk.text
        ends = [0]
        for start, end, ids in chunk.spans:
            piece = chunk.text[start:end]
            assert start >= ends[-1] and piece == piece.strip() and piece  # in order, whole, no white space around
            assert chunk.text[ends[-1]:start].strip() == ""  # nothing between blocks but white space
            assert set(ids) <= set(chunk.blocks)
            ends.append(end)
        assert chunk.text[ends[-1]:].strip() == ""
        shifted = block_vectors.embed_spans(chunk)  # the same characters in what the embedder reads
        assert [chunk.embed_text[a:b] for a, b in shifted] == [chunk.text[s:e] for s, e, _ in chunk.spans]


def test_a_comment_or_math_across_blank_lines_stays_one_block():
    body = ("Tag it.\n\n<!-- TODO: the rollout\n\nstill needs a canary -->\n\nPublish.\n\n$$\nx = 1\n\ny\n$$\n\n"
            "%% hidden\n\nmore %%\n\nWrap math in `$$`, comments in ``%%``.\n\nNotify.\n\n<!-- never closed\n\nto the end\n")
    (chunk,) = chunk_note("n.md", "T", body, target_tokens=500)
    assert [chunk.text[s:e] for s, e, _ in chunk.spans] == [
        "Tag it.", "<!-- TODO: the rollout\n\nstill needs a canary -->", "Publish.", "$$\nx = 1\n\ny\n$$",
        "%% hidden\n\nmore %%", "Wrap math in `$$`, comments in ``%%``.", "Notify.", "<!-- never closed\n\nto the end"]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 6), st.integers(1, 40), st.floats(1e-6, 1e3), st.integers(0, 2**31 - 1))
def test_block_vectors_round_trip_within_half_a_step(n, dim, size, seed):  # type: ignore[no-untyped-def]
    m = (np.random.default_rng(seed).standard_normal((n, dim)) * size).astype(np.float32)
    back = block_vectors.decode(block_vectors.encode(m), dim)
    assert back.shape == (n, dim)
    step = np.abs(m).max(axis=1, initial=0.0) / 127.0
    assert (np.abs(back - m) <= step[:, None] * 0.5 + 1e-6 * size).all()
    with pytest.raises(ValueError):
        block_vectors.decode(b"\0" * (dim + 5), dim)


def _db(rows: dict[str, tuple[list, np.ndarray]]) -> sqlite3.Connection:  # type: ignore[type-arg]
    db = sqlite3.connect(":memory:")
    db.executescript(DDL)
    db.executemany("INSERT INTO blocks VALUES (?,?,?,?,?)",
                   [(cid, cid.split("#")[0], "h", json.dumps(spans), block_vectors.encode(v))
                    for cid, (spans, v) in rows.items()])
    return db


@pytest.mark.parametrize("spans", [
    "not json", '{"a": 1}', "[]", "[[0, 1, 1, []], [2, 3, 1, []], [4, 5, 1, []]]", "[[5, 2, 1, []]]", "[[-1, 2, 1, []]]",
    '[[0, 2, 1, "x"]]', "[[0, 2, 1, [3]]]", "[[0, 2.5, 1, []]]", "[[0, 2, true, []]]", "[[0, 2, 1]]", "[null]",
])
def test_a_block_row_of_another_shape_is_skipped_and_its_hit_comes_whole(spans):
    """A pulled team index is written by whoever can publish it: rows are checked, never trusted."""
    hit, good = _hit("a.md#0", ["one", "two"])
    db = _db({"a.md#0": (good, np.stack([_unit(0), _unit(1)]))})
    db.execute("UPDATE blocks SET spans = ?", (spans,))
    assert block_vectors.read(db, ["a.md#0"], 8) == {}
    assert deliver(db, [hit], _unit(0), "one") == [hit]
    db.execute("UPDATE blocks SET spans = ?, vectors = ?", (json.dumps(good), b"\0" * 7))  # not rows of 12 bytes
    assert deliver(db, [hit], _unit(0), "one") == [hit]


def _hit(cid: str, paragraphs: list[str]) -> tuple[Hit, list]:  # type: ignore[type-arg]
    text = "\n\n".join(paragraphs)
    spans, at = [], 0
    for i, p in enumerate(paragraphs):
        spans.append([at, at + len(p), 10 + i, [f"{cid[0]}{i}"]])
        at += len(p) + 2
    hit = Hit(cid, cid.split("#")[0], "T", "", text, 1.0, 1, 9, [s[3][0] for s in spans], [],
              tokens=sum(s[2] for s in spans))
    return hit, spans


def _unit(i: int, dim: int = 8, w: float = 1.0) -> np.ndarray:
    v = np.zeros(dim, np.float32)
    v[i] = w
    v[-1] = np.sqrt(max(0.0, 1 - w * w))
    return v


def test_the_best_blocks_of_all_hits_are_delivered_in_their_notes_order():
    q = _unit(0)
    a, a_spans = _hit("a.md#0", ["a zero", "a one", "a two", "a three"])
    b, b_spans = _hit("b.md#0", ["b zero", "b one"])
    c, c_spans = _hit("c.md#0", ["c zero"])
    d = Hit("d.md#0", "d.md", "D", "", "no rows", 0.5, 1, 1, [], [], tokens=3)
    vec = {"a": [_unit(0, w=0.9), _unit(1), _unit(0, w=0.95), _unit(0, w=0.5)], "b": [_unit(2), _unit(0, w=0.99)],
           "c": [_unit(3)]}
    db = _db({h.chunk_id: (s, np.stack(vec[h.path[0]])) for h, s in ((a, a_spans), (b, b_spans), (c, c_spans))})
    got = deliver(db, [a, b, c, d], q, "")
    # scores: b1 .99-.03, a2 .95, a0 .9, a3 .5 (4th: outside the margin), c0 ~0: c keeps its place, no text
    assert [h.chunk_id for h in got] == ["a.md#0", "b.md#0", "c.md#0", "d.md#0"]
    assert (got[2].text, got[2].tokens, got[2].blocks, got[2].left_out) == ("", 0, [], 1)
    assert got[0].text == "a zero" + ELISION + "a two" and got[0].left_out == 2
    assert got[0].blocks == ["a0", "a2"] and got[0].tokens == 10 + 12 + 1
    assert got[1].text == "b one" and got[1].blocks == ["b1"] and got[1].tokens == 11 and got[1].left_out == 1
    assert got[3] is d  # delivered whole, taking no place
    assert deliver(db, [a, b], None, "") == [a, b]  # no query vector (BM25 alone): whole chunks


def test_blocks_within_the_margin_fill_up_to_five_and_adjacent_ones_join_plainly():
    q = _unit(0)
    a, spans = _hit("a.md#0", [f"p{i}" for i in range(7)])
    weights = [0.9, 0.89, 0.88, 0.87, 0.86, 0.85, 0.1]
    db = _db({"a.md#0": (spans, np.stack([_unit(0, w=w) for w in weights]))})
    (got,) = deliver(db, [a], q, "")
    assert got.text == "\n\n".join(f"p{i}" for i in range(delivery.MAX_BLOCKS)) and got.left_out == 2


def test_the_query_words_a_block_holds_bring_it_within_the_margin():
    q = _unit(0)
    a, spans = _hit("a.md#0", ["nothing in common", "Caroline adopted a GREYHOUND", "other", "more", "rest"])
    db = _db({"a.md#0": (spans, np.stack([_unit(0, w=w) for w in (0.80, 0.66, 0.79, 0.78, 0.1)]))})
    assert "Caroline" not in deliver(db, [a], q, "a dog")[0].text  # 4th, 0.14 below the best: outside the margin
    (got,) = deliver(db, [a], q, "greyhound, caroline… adopted?")  # case, punctuation and order aside
    assert "Caroline adopted a GREYHOUND" in got.text and got.left_out == 1


def test_every_format_says_what_a_hit_left_out_and_an_empty_hit_prints_no_text():
    from vaultsync.search.render import render
    from vaultsync.search.results import SearchResult

    narrowed = Hit("a.md#0", "a.md", "A", "", "first" + ELISION + "third", 0.9, 3, 9, ["x"], [], tokens=5, left_out=2)
    empty = Hit("b.md#1", "b.md", "B", "H", "", 0.5, 4, 4, [], ["c.md"], tokens=0, left_out=1)
    result = SearchResult("q", [narrowed, empty], [], None, None, "estimate", None, {})
    text = render(result, "text").splitlines()
    assert text[0].endswith("(lines 3-9; 2 more blocks left out)") and text[3] == "   first […] third"
    assert text[4].endswith("(lines 4-4; its only block left out)") and len(text) == 7  # no blank text line
    markdown = render(result, "markdown")
    assert "_2 more blocks of this chunk (lines 3-9) left out_" in markdown and "\n\n\n" not in markdown
    assert "_its only block of this chunk (lines 4-4) left out_" in markdown and "<!-- 2 hits, 5 tokens" in markdown
    hits = json.loads(render(result, "json"))["hits"]
    assert [(h["text"], h["left_out"], h["blocks"]) for h in hits] == [("first" + ELISION + "third", 2, ["x"]),
                                                                       ("", 1, [])]


def test_a_real_sync_stores_block_vectors_and_search_delivers_blocks(vault, model_env):
    turns = ["**Mia**: I finally adopted a greyhound from the shelter last week. ^d1-1",
             "**Jon**: 週末はずっと家でパンを焼いていました。 ^d1-2",
             "**Mia**: My sister moved to Lisbon and works at a bakery there. ^d1-3",
             "**Jon**: The marathon training is going well, 30 km on Sunday. ^d1-4",
             "**Mia**: We repainted the kitchen a pale green. ^d1-5",
             "**Jon**: My laptop died, so I bought a refurbished one. ^d1-6"]
    vault.write("docs/chats/session-01.md", "# Session 1\n\n" + "\n\n".join(turns) + "\n")
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", title="Postgres", body="# Postgres\n\nWe use Postgres for "
                                             "orders.\n\nBackups run nightly at 02:00 UTC.\n\nReplicas serve reads.\n"))
    steps = "Restart the queue worker first.\n\nThen clear the dead letter queue.\n\nFinally page the on-call engineer.\n"
    # the same text under a heading and after a first line of the heading's words: one hash, other spans
    vault.write("docs/runbook.md", f"---\ntitle: Runbook\n---\nSummary\n{steps}\n## Summary\n\n{steps}")
    long = "\n".join(" ".join(f"lantern{i}x{j}" for j in range(45)) for i in range(10))
    vault.write("docs/long.md", f"# Long\n\nIntro.\n\n{long} ^old\n")  # pieces that carry an id outside their text
    vault.commit("notes")
    searcher = synced_searcher(vault.root)
    try:
        rows = dict(searcher.db.execute("SELECT id, spans FROM blocks"))
        chunks = dict(searcher.db.execute("SELECT id, text FROM chunks"))
        assert set(rows) == set(chunks)  # every chunk with text has its blocks' row
        for cid, text in chunks.items():  # each row's spans are the blocks of its own chunk's text
            ends = [0]
            for start, end, *_ in json.loads(rows[cid]):
                assert text[ends[-1]:start].strip() == "" and text[start:end] == text[start:end].strip() != ""
                ends.append(end)
            assert text[ends[-1]:].strip() == "", cid
        chat_chunks = sorted(c for c in chunks if c.startswith("docs/chats/"))
        spans = [s for c in chat_chunks for s in json.loads(rows[c])]
        assert [chunks[c][s:e] for c in chat_chunks for s, e, *_ in json.loads(rows[c])] == turns
        assert [ids for *_, ids in spans] == [[f"d1-{i}"] for i in range(1, 7)]

        from vaultsync.engine import options_for
        from vaultsync.vault.config import Config

        result = searcher.search("Which dog did Mia adopt?", options_for(Config(), top_k=5))
        delivered = [b for h in result.hits for b in h.blocks]
        assert "d1-1" in delivered and sum(h.left_out for h in result.hits) > 0
        for h in result.hits:  # each hit: some of its chunk's blocks, whole, in order, its counts narrowed
            pieces = h.text.replace(ELISION, "\n\n").split("\n\n") if h.text else []  # none: its place only
            chosen = [s for s in json.loads(rows[h.chunk_id]) if chunks[h.chunk_id][s[0]:s[1]] in pieces]
            assert [chunks[h.chunk_id][s[0]:s[1]] for s in chosen] == pieces
            assert len(chosen) + h.left_out == len(json.loads(rows[h.chunk_id]))
            assert h.left_out == 0 or h.tokens == sum(s[2] for s in chosen) + h.text.count(ELISION)
            assert h.blocks == [i for s in chosen for i in s[3]]
        whole = searcher.search("Which dog did Mia adopt?", options_for(Config(), top_k=5, blocks=False))
        assert all(h.left_out == 0 and h.text == chunks[h.chunk_id] for h in whole.hits)
        named = searcher.search("ADR-0001 which dog did Mia adopt?", options_for(Config(), top_k=5)).hits
        assert named[0].path == "docs/adrs/ADR-0001.md" and named[0].left_out == 0  # asked for by name: whole
        assert any(h.left_out for h in named[1:])  # the others are still narrowed
        from vaultsync.search.render import render

        for fmt, said in (("text", "left out)"), ("markdown", "left out_"), ("json", '"left_out": ')):
            assert said in render(result, fmt), fmt
    finally:
        searcher.close()
    res = run_cli(["search", "--no-daemon", "--format", "json", "--whole-chunks", "Which dog did Mia adopt?"],
                  vault.root)
    assert res.code == 0 and all(h["left_out"] == 0 for h in json.loads(res.out)["hits"])
    vault.write("docs/long.md", f"# Long\n\nIntro.\n\n{long} ^new\n")  # the pieces' text and spans stay
    vault.commit("rename the block id")
    vault.synced()
    db = sqlite3.connect(vault.root / ".git/vaultsync/index.sqlite")
    for spans, ids in db.execute("SELECT b.spans, c.blocks FROM blocks b JOIN chunks c USING (id) WHERE c.path = ?",
                                 ("docs/long.md",)):
        assert list(dict.fromkeys(i for *_, block_ids in json.loads(spans) for i in block_ids)) == json.loads(ids)
    incremental = sorted(db.execute("SELECT id, path, hash, spans, vectors FROM blocks"))
    db.close()
    res = run_cli(["index", "--rebuild"], vault.root)  # chunk vectors from the cache, blocks encoded again
    assert res.code == 0, res.err
    db = sqlite3.connect(vault.root / ".git/vaultsync/index.sqlite")
    assert sorted(db.execute("SELECT id, path, hash, spans, vectors FROM blocks")) == incremental
    db.close()
