"""The search policy at the pipeline's heart: per-query leg weights, fusion, the WikiLink graph hop,
and the --type/--tag/--scope filters, over a real index of a small vault."""

from __future__ import annotations

import ast

import sqlite3
import unicodedata

import pytest
from conftest import Vault, adr, git
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.search.fusion import convex, rrf
from vaultsync.search.query import parse_query

NOTES = {
    "docs/adrs/ADR-0001.md": adr("ADR-0001", "Ledger in PostgreSQL", extra="tags: [database]\n",
                                 body="The payments ledger lives in PostgreSQL. See [[ADR-0002]].\n"),
    "docs/adrs/ADR-0002.md": adr("ADR-0002", "Nightly reconciliation", extra="tags: [ops]\n",
                                 body="A batch job compares balances every night.\n"),
    "docs/adrs/ADR-0003.md": adr("ADR-0003", "Webhook signing", extra="tags: [security]\n",
                                 body="Outgoing webhooks carry an HMAC signature header.\n"),
    "docs/rules/RULE-0001.md": ("---\nmemory_id: RULE-0001\ntype: rule\ntitle: Rotate signing keys\n"
                                'status: accepted\ncreated: "2024-03-01"\ntags: [security]\n---\n'
                                "Rotate the webhook signing keys every quarter.\n"),
}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    import subprocess

    from conftest import CONFIG, factory_with

    from vaultsync.git import open_repo
    from vaultsync.index.sync import sync
    from vaultsync.engine import open_searcher
    from vaultsync.vault.config import Config

    root = tmp_path_factory.mktemp("policy") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    v = Vault(root)
    v.write(".vaultsync.yaml", CONFIG)
    for path, text in NOTES.items():
        v.write(path, text)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    git(root, "commit", "-qm", "init")
    sync(open_repo(root), embedder_factory=factory_with(embedder), wait=60)
    searcher, _ = open_searcher(open_repo(root), Config(), rerank="none", embedder=embedder)
    yield searcher
    searcher.close()


def _weights(searcher, text: str, mode: str = "convex"):  # type: ignore[no-untyped-def]
    from vaultsync.search.options import SearchOptions
    from vaultsync.search.weights import leg_weights

    return leg_weights(searcher.db, parse_query(text), mode, ["dense", "dense2"], SearchOptions())


def test_bm25_weighs_by_how_much_of_the_query_the_vault_covers(indexed) -> None:  # type: ignore[no-untyped-def]
    covered = _weights(indexed, "ledger reconciliation")
    assert covered["bm25"] == pytest.approx(1.0) and covered["dense"] == 1.0
    assert covered["dense2"] == pytest.approx(0.5)  # secondary_weight on a query the vault's words cover
    half = _weights(indexed, "ledger zyxwvut")
    assert 0.1 < half["bm25"] < 0.9 and 0.5 < half["dense2"] < 1.0
    german = _weights(indexed, "Wöchentliche Abstimmung der Kontostände")
    assert german["bm25"] < 0.05 and german["dense2"] == pytest.approx(1.0, abs=0.05)  # leans on the vectors
    assert _weights(indexed, "ledger", mode="rrf") == {"bm25": 1.0, "dense": 1.0, "dense2": 1.0}


def test_the_secondary_leg_votes_only_in_its_scripts(indexed) -> None:  # type: ignore[no-untyped-def]
    assert _weights(indexed, "台帳はどこにありますか")["dense2"] > 0  # Japanese: a USE language
    for text in ("ការផ្ទៀងផ្ទាត់ប្រចាំយប់", "რეკონსილაცია ღამით", "ರಾತ್ರಿ ಸಮನ್ವಯ"):  # Khmer, Georgian, Kannada
        assert _weights(indexed, text)["dense2"] == 0.0, text


@settings(deadline=None)  # the first example loads the language identifier
@given(st.text(alphabet=st.characters(whitelist_categories=("Lu", "Ll", "Lo")), min_size=1, max_size=40))
def test_secondary_weight_is_zero_or_the_configured_weight(text: str) -> None:
    from vaultsync.search.options import SearchOptions
    from vaultsync.search.weights import secondary_weight
    from vaultsync.search.query import QueryError

    try:
        query = parse_query(text)
    except QueryError:
        return
    assert secondary_weight(query, SearchOptions(secondary_weight=0.7)) in (0.0, 0.7)


@given(st.dictionaries(st.sampled_from(["bm25", "dense", "dense2"]),
                       st.lists(st.integers(0, 30), unique=True, max_size=12), min_size=1))
def test_rrf_is_the_weighted_sum_of_reciprocal_ranks(legs) -> None:  # type: ignore[no-untyped-def]
    weights = {name: (i + 1) / 2 for i, name in enumerate(sorted(legs))}
    fused = dict(rrf(legs, weights, k=60))
    for key, score in fused.items():
        want = sum(weights[n] / (60 + keys.index(key) + 1) for n, keys in legs.items() if key in keys)
        assert score == pytest.approx(want)
    scores = [s for _, s in rrf(legs, weights)]
    assert scores == sorted(scores, reverse=True)


def test_convex_fusion_normalises_each_leg_and_drops_a_zero_weight() -> None:
    legs = {"bm25": {"a": 30.0, "b": 10.0, "c": 20.0}, "dense": {"a": 0.1, "b": 0.9}}
    fused = dict(convex(legs, {"bm25": 1.0, "dense": 1.0}))
    assert fused["a"] == pytest.approx(1.0) and fused["b"] == pytest.approx(1.0) and fused["c"] == pytest.approx(0.5)
    only_dense = [k for k, _ in convex(legs, {"bm25": 0.0, "dense": 1.0})]
    assert only_dense[0] == "b" and "c" not in only_dense


def test_the_graph_hop_brings_a_linked_note_and_decays_its_score(indexed) -> None:  # type: ignore[no-untyped-def]
    from vaultsync.search import graph

    found = graph.neighbours(indexed.db, {"docs/adrs/ADR-0001.md": 1.0}, hops=1, decay=0.5)
    assert found["docs/adrs/ADR-0002.md"][0] == pytest.approx(0.5) and found["docs/adrs/ADR-0002.md"][2] == 1
    back = graph.neighbours(indexed.db, {"docs/adrs/ADR-0002.md": 0.8}, hops=1, decay=0.5)
    assert back["docs/adrs/ADR-0001.md"][0] == pytest.approx(0.4)  # backlinks count too
    assert graph.neighbours(indexed.db, {"docs/adrs/ADR-0001.md": 1.0}, hops=0) == {}


def _paths(searcher, query: str, **options) -> list[str]:  # type: ignore[no-untyped-def]
    from vaultsync.search.options import SearchOptions

    options.setdefault("min_relevance", 0.0)  # the stages' mechanics, not the relevance floor
    return [h.path for h in searcher.search(query, SearchOptions.from_config({}, **options)).hits]


def test_the_graph_hop_in_the_pipeline(indexed) -> None:  # type: ignore[no-untyped-def]
    with_hop = _paths(indexed, "payments ledger PostgreSQL", legs=("bm25",), graph_hops=1)
    without = _paths(indexed, "payments ledger PostgreSQL", legs=("bm25",), graph_hops=0)
    assert with_hop[0] == without[0] == "docs/adrs/ADR-0001.md"
    assert "docs/adrs/ADR-0002.md" in with_hop and "docs/adrs/ADR-0002.md" not in without


def test_tag_type_and_scope_filters(indexed) -> None:  # type: ignore[no-untyped-def]
    query = "webhook signing keys"
    assert set(_paths(indexed, query, tags=("security",))) <= {"docs/adrs/ADR-0003.md", "docs/rules/RULE-0001.md"}
    assert _paths(indexed, query, tags=("security",))
    assert _paths(indexed, query, types=("rule",)) == ["docs/rules/RULE-0001.md"]
    assert set(_paths(indexed, query, scope="docs/adrs/")) <= {f"docs/adrs/ADR-000{i}.md" for i in (1, 2, 3)}
    assert _paths(indexed, query, tags=("nonexistent-tag",)) == []
    assert _paths(indexed, "ledger", scope="docs/rules/", legs=("bm25",), graph_hops=1) == []  # no hop escapes


def test_bm25_on_an_empty_vault_index_is_safe(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from vaultsync.index.sqlite_store import SqliteStore
    from vaultsync.search.options import SearchOptions
    from vaultsync.search.weights import leg_weights

    store = SqliteStore(tmp_path / "i.sqlite")
    store.close()
    db = sqlite3.connect(tmp_path / "i.sqlite")
    w = leg_weights(db, parse_query("anything at all"), "convex", ["dense"], SearchOptions())
    assert w["bm25"] == 0.0 and w["dense"] == 1.0


_NOISE = st.one_of(st.characters(categories=["P", "Sk", "Zs"]), st.sampled_from("$+<=>|~^`"))


@settings(max_examples=300, deadline=None)
@given(st.text(_NOISE, min_size=1, max_size=12), st.sampled_from(["", "a", "7", "猫", "🔒", "É", "€", "∑", "≤", "¥"]))
def test_a_query_is_searchable_when_it_holds_a_letter_digit_symbol_or_emoji(noise, word):
    """Punctuation and ASCII symbols alone match every note by chance: the query is refused, never answered.
    A currency or math symbol beyond ASCII (``€``, ``∑``) is what a reader looks for."""
    from vaultsync.search.query import QueryError

    if word:
        assert parse_query(noise + word + noise).text
    else:
        with pytest.raises(QueryError):
            parse_query(noise)


@settings(max_examples=200, deadline=None)
@given(st.characters(categories=["Sc", "Sm"]).filter(lambda ch: not unicodedata.normalize("NFKC", ch).isascii()))
def test_any_currency_or_math_symbol_beyond_ascii_is_a_query(symbol):
    """(NFKC first: ``⁺`` and ``＄`` are ASCII's ``+`` and ``$``.)"""
    assert parse_query(symbol).terms


@settings(max_examples=100, deadline=None)
@given(st.text(st.sampled_from("ab0xé猫"), min_size=65, max_size=3000))
def test_a_term_is_matched_by_its_first_64_characters(word):
    """An FTS5 trigram phrase costs its length times its trigrams' positions: a term's first 64 characters
    are matched (a 2,000-character run against a 300 KB note of it took 30 s)."""
    from vaultsync.index.format import fold
    from vaultsync.search.query import MAX_TERM_CHARS

    terms = parse_query(f"find {word} now").terms
    assert all(len(t) <= MAX_TERM_CHARS for t in terms) and fold(word)[:MAX_TERM_CHARS] in terms


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(codec="ascii", categories=["P", "S", "Zs"]), min_size=1, max_size=6))
def test_property_a_query_of_ascii_symbols_says_which_characters_it_ignores(text):
    """`+` alone was "no letter, digit, symbol or emoji", while `±` and `€` are searched: the error says
    it is punctuation and ASCII symbols that find nothing alone, and a symbol beyond ASCII is a query."""
    from vaultsync.search.query import QueryError

    with pytest.raises(QueryError) as refused:
        parse_query(text)
    assert "empty query" in str(refused.value) or "punctuation and ASCII symbols alone" in str(refused.value)
    assert parse_query(text + " ±").terms and parse_query(text + " €").terms


@pytest.mark.parametrize("query, what", [
    ("\u0301", "a combining mark (U+0301) with no letter to sit on"),
    ("  \u0308  ", "a combining mark (U+0308) with no letter to sit on"),
    ("\u093e \u0301", "combining marks (U+0301, U+093E) with no letter to sit on"),  # Devanagari vowel sign
    ("\u05b4", "a combining mark (U+05B4) with no letter to sit on"),  # a Hebrew point
    (": \u0301", "punctuation, ASCII symbols and a combining mark (U+0301) with no letter to sit on"),
    ("\U0001d165", "a combining mark (U+1D165) with no letter to sit on"),  # musical symbol stem, past the BMP
])
def test_a_lone_combining_mark_is_not_called_punctuation(query, what):
    """`vaultsync search "\u0301"` was refused as "punctuation and ASCII symbols alone": U+0301 is an accent
    with nothing to sit on. The error names it as a combining mark, and shows it escaped (alone it would sit
    on the quote)."""
    from vaultsync.search.query import QueryError

    with pytest.raises(QueryError) as refused:
        parse_query(query)
    message = str(refused.value)
    assert f"holds no word: {what} would match notes by chance" in message and "punctuation and" not in \
        message.replace("punctuation, ASCII", ""), message
    assert all(unicodedata.category(ch)[0] != "M" for ch in message)
    shown = message.split(" holds no word")[0].removeprefix("query ")
    assert ast.literal_eval(shown) == unicodedata.normalize("NFKC", query).strip()  # the escapes read back as the query (\U0001d165, not \u1d165)


@settings(max_examples=150, deadline=None)
@given(st.text(st.characters(categories=["Mn", "Mc", "Me"]), min_size=1, max_size=4),
       st.text(st.characters(codec="ascii", categories=["P", "Zs"]), max_size=3))
def test_property_combining_marks_alone_are_named_as_such(marks, punctuation):
    """Property: a query of combining marks (and maybe ASCII punctuation) is refused naming each mark it
    holds as a combining mark, never as punctuation alone, and a letter before them makes it a query."""
    from vaultsync.search.query import QueryError

    text = marks + punctuation
    try:
        parse_query(text)
    except QueryError as refused:
        message = str(refused)
        left = unicodedata.normalize("NFKC", text)
        shown = {f"U+{ord(ch):04X}" for ch in left if unicodedata.category(ch)[0] == "M"}
        assert "empty query" in message or (shown and all(u in message for u in shown) and "combining mark" in message)
    else:  # NFKC may compose marks into a searchable character of their own
        assert any(unicodedata.category(ch)[0] in "LNS" for ch in unicodedata.normalize("NFKC", text))
    assert parse_query("e" + marks).terms
