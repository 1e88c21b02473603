"""A question about what only filtered-out notes hold gets "nothing relevant here" and is told where
the answer is (ADR-0088): another team's folder (``--scope``), another type, an expired note. The real
models, a real git vault and index; variants across filters, languages and the position of the words."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import adr, init_vault, synced_searcher

pytestmark = pytest.mark.slow

TEAM_A = {  # two teams with notes on the same subjects, told apart by names and systems
    "ADR-0101": ("Signing key rotation", "Priya rotates the Halcyon signing keys every quarter with the vault CLI.\n"),
    "ADR-0102": ("Deploy freeze", "Deploys freeze on Fridays; Priya approves exceptions for the Halcyon ledger.\n"),
    "ADR-0103": ("Database failover", "The Halcyon ledger database fails over to the Dublin replica in 30 s.\n"),
}
TEAM_B = {
    "ADR-0201": ("Signing key rotation", "Tomasz rotates the Orchard signing keys every month with a cron job.\n"),
    "ADR-0202": ("Deploy freeze", "Deploys freeze during the holiday season; Tomasz approves exceptions.\n"),
    "ADR-0203": ("Database failover", "The Orchard catalogue database fails over to the Oslo replica.\n"),
}


@pytest.fixture(scope="module")
def teams(tmp_path_factory, embedder):  # type: ignore[no-untyped-def]
    vault = init_vault(tmp_path_factory.mktemp("teams"))
    for team, notes in (("team-a", TEAM_A), ("team-b", TEAM_B)):
        for mid, (title, body) in notes.items():
            vault.write(f"docs/adrs/{team}/{mid}.md", adr(mid, title=title, body=body))
    vault.write("docs/incidents/INC-0001.md", "---\nmemory_id: INC-0001\ntype: incident\ntitle: Lost pager\n"
                'status: resolved\ncreated: "2024-03-01"\n---\nThe Zephyrine pager rotation lost its schedule.\n')
    vault.commit("init")
    s = synced_searcher(vault.root)
    yield vault, s
    s.close()


def _search(s, query: str, **kw):  # type: ignore[no-untyped-def]
    from vaultsync.search.options import SearchOptions

    return s.search(query, SearchOptions(**kw))


@pytest.mark.parametrize("query", [
    "When does Priya rotate the Halcyon signing keys?",
    "Who approves deploy freeze exceptions for Halcyon?",
    "halcyon ledger failover",                                  # keywords, the names first
    "Wann rotiert Priya die Halcyon-Signaturschlüssel?",         # German, the names kept
    "Halcyon の署名鍵は誰がローテーションしますか",                  # Japanese, one name
])
def test_a_question_about_another_teams_folder_loses_relevance_and_names_where_the_answer_is(teams, query):
    _, s = teams
    inside = _search(s, query, scope="docs/adrs/team-a/")
    assert inside.hits and inside.hits[0].path.startswith("docs/adrs/team-a/"), query
    outside = _search(s, query, scope="docs/adrs/team-b/", min_relevance=0.0)
    free = {h.chunk_id: h.relevance for h in _search(s, query, min_relevance=0.0, top_k=10).hits}
    # what the scope leaves out lowers every in-scope hit below what it scores unfiltered (a relevance is
    # written to four places, so a hit already at 0 unfiltered stays there)
    assert outside.hits and outside.hits[0].relevance < free[outside.hits[0].chunk_id]
    assert all(h.relevance <= free[h.chunk_id] for h in outside.hits if h.chunk_id in free)
    assert outside.hits[0].trace["relevance"]["filtered_out"] > 0.1
    hidden = {n["memory_id"]: n["show_with"] for n in outside.hidden["notes"]}
    assert any(mid in hidden and hidden[mid] == "without --scope" for mid in TEAM_A), outside.hidden


def test_the_same_question_in_its_own_folder_keeps_its_relevance(teams):
    """Only what is filtered out counts: a scope that holds every word of the question costs nothing."""
    _, s = teams
    query = "When does Priya rotate the Halcyon signing keys?"
    scoped = _search(s, query, scope="docs/adrs/team-a/").hits[0]
    free = _search(s, query).hits[0]
    assert scoped.chunk_id == free.chunk_id and scoped.relevance == pytest.approx(free.relevance, abs=1e-6)


def test_a_type_filter_that_leaves_out_the_answer_abstains(teams):
    _, s = teams
    result = _search(s, "Zephyrine pager rotation schedule", types=("adr",))
    assert result.hits == [], [(h.path, h.relevance) for h in result.hits]
    assert {n["memory_id"]: n["show_with"] for n in result.hidden["notes"]}.get("INC-0001") == "without --type"
    assert _search(s, "Zephyrine pager rotation schedule", types=("incident",)).hits[0].memory_id == "INC-0001"


def test_words_absent_from_the_whole_vault_are_not_blamed_on_the_filter(teams):
    """A scoped question whose other words are nowhere in the vault: the scope is not what hides them."""
    _, s = teams
    result = _search(s, "Tomasz Orchard signing keys quetzalcoatl", scope="docs/adrs/team-b/")
    assert result.hits and result.hits[0].memory_id == "ADR-0201"
    assert result.hits[0].trace["relevance"]["filtered_out"] == 0.0


def test_the_cli_says_where_to_look(teams):
    from conftest import run_cli

    vault, _ = teams
    out = run_cli(["search", "When does Priya rotate the Halcyon signing keys?", "--no-daemon",
                   "--scope", "docs/adrs/team-b/"], Path(vault.root))
    assert out.code == 0 and "ADR-0101" in out.out and "without --scope" in out.out, out.out


@pytest.mark.parametrize("top_k", [1, 2, 3])
@pytest.mark.parametrize("query", ["kafka disk", "signing keys rotation", "deploy freeze exceptions", "pager",
                                   "failover replica", "Priya", "Datenbank Failover"])
def test_the_hidden_report_names_the_notes_the_search_itself_ranks_first(teams, query, top_k):
    """With ``--top-k 1`` the report's unfiltered pass took 2 candidates per leg, and named another note
    than the unfiltered search ranks first: it names the search's own top notes that the filter removed,
    at least ``HIDDEN_MIN_NOTES`` of them whatever ``--top-k`` (one place let a superseded note push out
    its successor)."""
    from vaultsync.search.hidden import HIDDEN_MIN_NOTES

    _, s = teams
    unfiltered = []
    for hit in _search(s, query, top_k=20, min_relevance=0.0).hits:
        if hit.path not in unfiltered:
            unfiltered.append(hit.path)
    hidden = _search(s, query, top_k=top_k, min_relevance=0.0, types=("nosuch",)).hidden
    assert [n["path"] for n in hidden["notes"]] == unfiltered[:max(top_k, HIDDEN_MIN_NOTES)]
