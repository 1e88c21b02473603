"""A query that names a note by ``memory_id`` gets that note first (:mod:`vaultsync.search.named`): an
identifier is no meaning an embedding holds, and the notes citing it outrank the note itself in BM25."""

from __future__ import annotations

import datetime as dt

from conftest import adr, run_cli
from hypothesis import assume, given
from hypothesis import strategies as st

from vaultsync.search.named import NAMED_RELEVANCE, named_notes, query_names

TODAY = dt.date.today().isoformat()
CITING = "Unlike ADR-0002, ADR-0002 said retries; see ADR-0002 and ADR-0002 again. ADR-0002 ADR-0002.\n"


def _vault(vault) -> None:  # type: ignore[no-untyped-def]
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", title="Webhook retries",
                                             body="# Webhook retries\n\nRetry webhooks five times.\n\n## Later\n\nMore.\n"))
    for i in range(3, 7):  # more important and newer than the named note: the blend must not put them first
        vault.write(f"docs/adrs/ADR-000{i}.md", adr(f"ADR-000{i}", title=f"Citing {i}", body=CITING,
                                                    extra=f'importance: 10\nlast_validated: "{TODAY}"\n'))
    vault.write("docs/rules/RULE-0001.md", "---\nmemory_id: rule_7\ntype: rule\ntitle: Freeze\nstatus: active\n"
                                           "created: \"2024-03-01\"\n---\nNo deploys on Friday.\n")
    vault.write("docs/adrs/ADR-0008.md", adr("ADR-0008", status="superseded", extra='superseded_by: "[[ADR-0009]]"\n'))
    vault.write("docs/adrs/ADR-0009.md", adr("ADR-0009", title="The successor", extra="supersedes: [ADR-0008]\n"))
    vault.commit("notes")
    res = run_cli(["sync", "--wait", "60"], vault.root)
    assert res.code == 0, res.err


def _search(vault, query: str, **opts):  # type: ignore[no-untyped-def]
    from vaultsync.cli.common import committed_config
    from vaultsync.engine import open_searcher, options_for
    from vaultsync.git import open_repo

    repo = open_repo(vault.root)
    searcher, head = open_searcher(repo, committed_config(repo), rerank="none")
    try:
        return searcher.search(query, options_for(committed_config(repo), **opts), head=head)
    finally:
        searcher.close()


QUERIES = ["ADR-0002", "adr-0002", "[[ADR-0002]]", "ADR-0002?", "What did ADR-0002 decide?", "ADR-0002について教えて",
           "Was sagt «ADR-0002»", "retries (ADR-0002)", "_ADR-0002_", "docs/adrs/ADR-0002.md", "ADR\u20110002",
           "ＡＤＲ－０００２", "ADR-0002,ADR-0003"]


def test_a_note_named_by_memory_id_comes_first(vault, hashed_models):
    """In every form a query may name it (one vault, one sync, every form searched)."""
    _vault(vault)
    for query in QUERIES:
        first = _search(vault, query).hits[0]
        assert first.path == "docs/adrs/ADR-0002.md", query
        assert first.relevance is not None and first.relevance >= NAMED_RELEVANCE, query
        if query.strip("[]?_").casefold() == "adr-0002":  # nothing but the name: the note from its start
            assert first.chunk_id.endswith("#0"), query


def test_names_in_the_query_order_and_the_filters_still_apply(vault, hashed_models):
    _vault(vault)
    assert [h.path for h in _search(vault, "RULE_7 ADR-0002").hits[:2]] == ["docs/rules/RULE-0001.md",
                                                                          "docs/adrs/ADR-0002.md"]
    typed = _search(vault, "rule_7", types=["adr"])
    assert "docs/rules/RULE-0001.md" not in [h.path for h in typed.hits]
    assert "docs/rules/RULE-0001.md" in [n["path"] for n in typed.hidden.get("notes", [])]
    # a superseded note named: its successor stands in for it, and the result says what it hid
    for query in ("ADR-0008", "what did ADR-0008 decide?"):
        old = _search(vault, query, top_k=1)
        assert old.hits[0].path == "docs/adrs/ADR-0009.md" and old.hits[0].replaces == "docs/adrs/ADR-0008.md"
        assert old.hits[0].relevance is not None and old.hits[0].relevance >= NAMED_RELEVANCE, query
    assert _search(vault, "ADR-0008", include_superseded=True).hits[0].path == "docs/adrs/ADR-0008.md"


def test_a_query_of_several_names_gets_each_note_from_its_start_before_any_second_chunk(vault, hashed_models):
    _vault(vault)
    hits = _search(vault, "ADR-0006 ADR-0005 ADR-0004 ADR-0003 ADR-0002", top_k=5).hits
    assert [h.chunk_id for h in hits] == [f"docs/adrs/ADR-000{i}.md#0" for i in (6, 5, 4, 3, 2)]


def test_an_unknown_or_partial_name_names_nothing(vault, hashed_models):
    _vault(vault)
    for query in ("ADR-00", "ADR-0002x", "ADR-99999"):
        assert all(h.path != "docs/adrs/ADR-0002.md" or (h.relevance or 0) < NAMED_RELEVANCE
                   for h in _search(vault, query).hits), query


ids = st.from_regex(r"[A-Za-zÄÖ]{1,6}[-_][0-9]{1,5}", fullmatch=True)
text = st.text(alphabet=st.sampled_from(list("abc xyz,.?!")), max_size=12)


@given(ids, text, text, st.sampled_from(["{}", "[[{}]]", "({})", "«{}»", "{}?", "{}について", "memory_id:{}", "ref:{}",
                                        "{};ADR-1", "x;{}", "über:{}", "{},ADR-1"]))
def test_a_name_is_found_wherever_the_query_holds_it(memory_id, before, after, form):
    """Property: a ``memory_id`` written in any case, in brackets, quotes or before CJK text, between any
    words, names its note; the table is read only because a word could be a name."""
    assume(form != "{}について" or memory_id.isascii())  # a run of ASCII is what a text without spaces gives
    table = {memory_id.casefold(): ["docs/x.md"]}
    query = f"{before} {form.format(memory_id.swapcase())} {after}"
    assert named_notes(query, lambda: table)[0] == ["docs/x.md"]
    assert memory_id.casefold() in query_names(query)


def test_a_query_without_a_word_that_could_be_a_name_reads_no_table():
    def boom() -> dict[str, list[str]]:
        raise AssertionError("read")

    assert named_notes("why do we retry webhooks", boom) == ([], False)
    assert named_notes("ADR-0002 ADR-0003", lambda: {"adr-0002": ["a.md"], "adr-0003": ["b.md"]}) == (["a.md", "b.md"], True)
    assert named_notes("ADR-0002 retries", lambda: {"adr-0002": ["a.md"]}) == (["a.md"], False)
    # a link's alias and heading are part of the name: a query of links alone is names only
    assert named_notes("[[ADR-0002|the retries one]] [[adr-0003#Why]]",
                       lambda: {"adr-0002": ["a.md"], "adr-0003": ["b.md"]}) == (["a.md", "b.md"], True)


LINKED = {"docs/adrs/ADR-0050-empty-body.md": adr("ADR-0050", title="Qzw decision", body="",
                                                 extra="aliases: [Project Kestrel, Vogel-Plan 2]\n"),
          "docs/notes/On call rotation.md": "# Pages\n\nWho answers pages at night.\n\n## Handover\n\nNotes.\n",
          "docs/notes/on-call.md": "Short pointer.\n",
          "docs/notes/Ünïcode Näme.md": "Text.\n", "docs/notes/glossary.md": "# Terms we use\n\nWords.\n"}


def test_a_note_named_by_its_wikilink_or_file_name_comes_first(vault, hashed_models):
    """`[[ADR-0050-empty-body]]`, the form a WikiLink writes (README: a link names a note by its file
    name), returned three unrelated notes: only a memory_id was a name."""
    _vault(vault)
    for path, content in LINKED.items():
        vault.write(path, content)
    vault.commit("linked")
    assert run_cli(["sync", "--wait", "60"], vault.root).code == 0
    for query, path in [
        ("[[ADR-0050-empty-body]]", "docs/adrs/ADR-0050-empty-body.md"),
        ("ADR-0050-empty-body", "docs/adrs/ADR-0050-empty-body.md"),
        ("what did [[ADR-0050-empty-body|the qzw one]] decide?", "docs/adrs/ADR-0050-empty-body.md"),
        ("[[adrs/ADR-0050-empty-body.md]]", "docs/adrs/ADR-0050-empty-body.md"),
        ("docs/adrs/ADR-0050-empty-body.md", "docs/adrs/ADR-0050-empty-body.md"),
        ("[[On call rotation]]", "docs/notes/On call rotation.md"),
        ("who takes pages in [[on call rotation#Handover]]", "docs/notes/On call rotation.md"),
        ("on-call", "docs/notes/on-call.md"),
        ("[[ünïcode näme]]", "docs/notes/Ünïcode Näme.md"),
        ("[[Unicode Name]] ADR-0002", "docs/adrs/ADR-0002.md"),  # no such note: the id is the name
        ("[[project kestrel]]", "docs/adrs/ADR-0050-empty-body.md"),  # an alias: links resolve by it
        ("was sagt [[Vogel-Plan 2|der Plan]]?", "docs/adrs/ADR-0050-empty-body.md"),
        ("[[../adrs/ADR-0050-empty-body]]", "docs/adrs/ADR-0050-empty-body.md"),  # relative: its tail names
        ("what is in glossary.md?", "docs/notes/glossary.md"),  # a word written as a file names it, digits or not
        ("Glossary.md", "docs/notes/glossary.md"), ("notes/glossary.md", "docs/notes/glossary.md"),
    ]:
        first = _search(vault, query).hits[0]
        assert first.path == path and (first.relevance or 0) >= NAMED_RELEVANCE, (query, first.path)
    whole = _search(vault, "[[On call rotation]]").hits  # nothing but a link: the note from its start, together
    assert [h.chunk_id for h in whole[:2]] == ["docs/notes/On call rotation.md#0", "docs/notes/On call rotation.md#1"]
    for query in ("[[On call rotation#Handover]]", "[[on call rotation#handover|who hands over]]",
                  "[[On call rotation#Pages#Handover]]"):  # a heading in the link: the note from that heading
        hits = _search(vault, query).hits
        assert hits[0].chunk_id == "docs/notes/On call rotation.md#1" and "Handover" in hits[0].heading, query
    assert _search(vault, "[[On call rotation#No such heading]]").hits[0].chunk_id == "docs/notes/On call rotation.md#0"
    for query in ("on call rotation", "rotation", "[[Rotation]]", "[[]] pages", "project kestrel", "[[..]] x",
                  "glossary", ".md"):
        assert all((h.relevance or 0) < NAMED_RELEVANCE for h in _search(vault, query).hits), query


@given(st.text(st.characters(blacklist_characters="[]|#\n\r", blacklist_categories=("Cs", "Cc")), min_size=1,
               max_size=20), text, st.sampled_from(["[[{}]]", "[[{}|alias]]", "[[{}#Heading]]", "![[{}]]",
                                                    "[[{}.md]]", "[[notes/{}]]"]))
def test_a_link_names_its_note_whatever_the_name_holds(stem, before, form):
    """Property: a ``[[link]]`` to a note's file name, in any case, with an alias, a heading or ``.md``,
    names that note; words outside it do not stop it."""
    from vaultsync.vault.resolve import id_key as name_key

    assume(stem.strip() and stem.strip() == stem and not stem.endswith(".md"))
    table = {name_key(stem): ["docs/notes/x.md"], name_key("notes/" + stem): ["docs/notes/x.md"]}
    shown = stem.upper() if name_key(stem.upper()) == name_key(stem) else stem  # `ı`.upper() is `I`: another name
    assert named_notes(f"{before} {form.format(shown)}", lambda: table)[0] == ["docs/notes/x.md"]


def test_a_note_named_alone_comes_whole_past_the_chunks_per_note(vault, hashed_models):
    """"A query that names a note by memory_id gets it whole" (README): a note of four sections named
    alone gave its first two (chunks per note) and then other notes' chunks."""
    body = "".join(f"## Part {n}\n\n{word} paragraph of the long decision.\n\n" for n, word in
                   enumerate(["Alpha", "Bravo", "Charlie", "Delta"]))
    vault.write("docs/adrs/ADR-0042.md", adr("ADR-0042", title="Long decision", body=body))
    vault.write("docs/adrs/ADR-0043.md", adr("ADR-0043", title="Other", body="## Part 0\n\nAnother paragraph.\n"))
    vault.commit("notes")
    assert run_cli(["sync", "--wait", "60"], vault.root).code == 0
    for query in ("ADR-0042", "[[ADR-0042]]"):
        hits = _search(vault, query, top_k=5).hits
        assert [h.chunk_id for h in hits[:4]] == [f"docs/adrs/ADR-0042.md#{n}" for n in range(4)], query
    assert [h.chunk_id for h in _search(vault, "ADR-0042", top_k=2).hits] == \
        ["docs/adrs/ADR-0042.md#0", "docs/adrs/ADR-0042.md#1"]  # k still bounds it
    mixed = _search(vault, "what does ADR-0042 say about Charlie?", top_k=5).hits  # not names alone: per note
    assert sum(h.path == "docs/adrs/ADR-0042.md" for h in mixed) <= 2
