"""The MCP server end to end: the real `vaultsync mcp` process driven by the MCP SDK's stdio client,
in a temporary git repository — tools, search in English and Japanese, get, write (+ commit),
refusals, supersede, the review queue, concurrent writers and the resources."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from conftest import REPO_ROOT, Vault, factory_with, run_cli

pytest.importorskip("mcp")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

TODAY = dt.date.today()


def _today_now() -> set[str]:
    """The date at import and the date now: a run that crosses midnight writes the later one."""
    return {TODAY.isoformat(), dt.date.today().isoformat()}
CONFIG = """vault: docs
types:
  adr: {folder: docs/adrs}
  incident: {folder: docs/incidents}
  rule: {folder: docs/rules}
vocabulary:
  tags: [payments, webhooks, deploys, database]
ephemeral: ["**/scratch/**"]
review:
  max_age_days: {rule: 90, adr: 365}
"""


def note(mid: str, typ: str, title: str, body: str, status: str = "accepted", extra: str = "") -> str:
    return (f"---\nmemory_id: {mid}\ntype: {typ}\ntitle: {title}\nstatus: {status}\n"
            f'created: "2024-03-01"\nlast_validated: "{TODAY.isoformat()}"\n{extra}---\n# {title}\n\n{body}\n')


def seed(v: Vault) -> None:
    v.write(".vaultsync.yaml", CONFIG)
    v.write("docs/adrs/ADR-0001-retry-webhooks-in-process.md", note(
        "ADR-0001", "adr", "Retry webhooks in process", "The API worker retries merchant webhooks with backoff.",
        status="superseded", extra='superseded_by: "[[ADR-0002-durable-webhook-queue]]"\n'))
    v.write("docs/adrs/ADR-0002-durable-webhook-queue.md", note(
        "ADR-0002", "adr", "Deliver webhooks from a durable queue",
        "Webhook delivery goes through an outbox table and a durable queue with retries, "
        "replacing [[ADR-0001-retry-webhooks-in-process]].",
        extra='supersedes: ["[[ADR-0001-retry-webhooks-in-process]]"]\ntags: [webhooks]\n'))
    v.write("docs/incidents/INC-0001-duplicate-charges.md", note(
        "INC-0001", "incident", "Duplicate charges after a retry storm",
        "Retries without idempotency keys charged customers twice. "
        "Fixed by [[ADR-0002-durable-webhook-queue]].", status="resolved", extra="severity: SEV2\n"))
    v.write("docs/rules/RULE-0001-japanese.md", note(
        "RULE-0001", "rule", "金曜日の午後はデプロイしない",
        "本番環境へのデプロイは金曜日の午後には行わない。週末に障害対応できる人が少ないため。", status="active"))


@pytest.fixture
def repo(vault: Vault, embedder) -> Vault:  # type: ignore[no-untyped-def]
    """The seeded vault, committed and indexed (with the session's embedder)."""
    from vaultsync.git import open_repo
    from vaultsync.index.sync import sync

    seed(vault)
    vault.commit("seed")
    sync(open_repo(vault.root), wait=60, embedder_factory=factory_with(embedder))
    return vault


def server_env() -> dict[str, str]:
    keep = ("HOME", "PATH", "VAULTSYNC_CACHE_DIR", "GIT_AUTHOR_NAME", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(PYTHONPATH=str(REPO_ROOT), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    return env


Session = Callable[[ClientSession], Awaitable[Any]]


def with_server(root: Path, *bodies: Session) -> list[Any]:
    """Run each body against its own `vaultsync mcp` process, concurrently; their results in order."""
    results: list[Any] = [None] * len(bodies)

    async def one(i: int, body: Session) -> None:
        params = StdioServerParameters(command=sys.executable, args=["-m", "vaultsync", "mcp"], cwd=str(root),
                                       env=server_env())
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            results[i] = await body(session)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i, body in enumerate(bodies):
                tg.start_soon(one, i, body)

    anyio.run(main)
    return results


async def call(session: ClientSession, tool: str, **args: Any) -> dict[str, Any]:
    """A successful tool call's structured result (fails the test on a tool error)."""
    res = await session.call_tool(tool, args)
    assert not res.is_error, res.content[0].text  # type: ignore[union-attr]
    return res.structured_content  # type: ignore[return-value]


async def refused(session: ClientSession, tool: str, **args: Any) -> str:
    """The error text of a tool call that must fail."""
    res = await session.call_tool(tool, args)
    assert res.is_error, res.structured_content
    return res.content[0].text  # type: ignore[union-attr]


def test_tools_have_schemas_and_descriptions(vault: Vault) -> None:
    seed(vault)
    vault.commit("seed")

    async def body(s: ClientSession) -> Any:
        return (await s.list_tools()).tools, (await s.list_resource_templates()).resource_templates

    tools, templates = with_server(vault.root, body)[0]
    by_name = {t.name: t for t in tools}
    assert set(by_name) == {"search", "get", "write", "supersede", "promote", "review"}
    from vaultsync.cli.main import COMMANDS

    listed = COMMANDS["mcp"][1].rsplit(": ", 1)[1].split(", ")  # `vaultsync --help` names every tool
    assert sorted(listed) == sorted(by_name), listed
    for t in tools:
        assert t.description and t.input_schema["type"] == "object"
    props = by_name["search"].input_schema["properties"]
    assert {"query", "top_k", "budget", "types", "tags", "scope", "include_expired", "include_superseded",
            "min_confidence", "min_relevance", "rerank"} <= set(props)
    assert by_name["search"].input_schema["required"] == ["query"]
    assert set(by_name["write"].input_schema["required"]) == {"type", "title", "body"}
    assert [t.uri_template for t in templates] == ["vault://note/{memory_id}"]


def test_search_english_and_japanese_and_get_with_backlinks_and_chain(repo: Vault) -> None:
    async def body(s: ClientSession) -> Any:
        en = await call(s, "search", query="how are merchant webhooks delivered?", top_k=3)
        ja = await call(s, "search", query="金曜日にデプロイしてもいいですか", top_k=3)
        old = await call(s, "search", query="retry webhooks in the API worker", include_superseded=True, top_k=5,
                         min_relevance=0)
        got = await call(s, "get", note="ADR-0001")
        by_link = await call(s, "get", note="[[ADR-0002-durable-webhook-queue]]")
        missing = await refused(s, "get", note="ADR-9999")
        empty = await refused(s, "search", query="   ")
        return en, ja, old, got, by_link, missing, empty

    en, ja, old, got, by_link, missing, empty = with_server(repo.root, body)[0]
    top = en["hits"][0]
    assert top["memory_id"] == "ADR-0002" and top["type"] == "adr" and top["status"] == "accepted"
    assert "durable queue" in top["text"] and top["score"] > 0 and 0.006 <= top["relevance"] <= 1
    assert top["links_to"] == []  # ADR-0001 is superseded: hidden notes are never named in a hit's links
    assert next(h for h in old["hits"] if h["memory_id"] == "ADR-0002")["links_to"] == ["ADR-0001"]
    assert ja["hits"][0]["memory_id"] == "RULE-0001" and "金曜日" in ja["hits"][0]["text"]
    assert "ADR-0001" in {h["memory_id"] for h in old["hits"]}
    assert got["status"] == "superseded" and got["frontmatter"]["superseded_by"]
    assert [s["memory_id"] for s in got["superseded_by"]] == ["ADR-0002"] and got["current"]["memory_id"] == "ADR-0002"
    assert {b["memory_id"] for b in got["backlinks"]} == {"ADR-0002"}
    assert by_link["memory_id"] == "ADR-0002"
    assert got["search_hides"] == [{"reason": "superseded", "show_with": {"include_superseded": True}}]
    assert by_link["search_hides"] == []
    assert [s["memory_id"] for s in by_link["supersedes"]] == ["ADR-0001"]
    assert {b["memory_id"] for b in by_link["backlinks"]} == {"ADR-0001", "INC-0001"}
    assert {link["memory_id"] for link in by_link["links"]} == {"ADR-0001"}
    assert "no note 'ADR-9999'" in missing
    assert "query" in empty.lower()


def test_hidden_notes_say_which_tool_arguments_show_them(repo: Vault) -> None:
    """The report named CLI flags (``--include-superseded``) where an MCP client needs the tool's arguments;
    calling the search again with the named arguments returns the hidden note."""
    async def body(s: ClientSession) -> Any:
        first = await call(s, "search", query="retry webhooks in the API worker", top_k=5, min_relevance=0)
        hidden = first["hidden"]["notes"]
        again = [await call(s, "search", query="retry webhooks in the API worker", top_k=5, min_relevance=0,
                            **{k: v for k, v in n["show_with"].items() if v is not None}) for n in hidden]
        return hidden, again

    hidden, again = with_server(repo.root, body)[0]
    assert any(n["memory_id"] == "ADR-0001" and n["show_with"] == {"include_superseded": True} for n in hidden)
    assert not any("--" in n["reason"] for n in hidden), hidden  # the tool's argument names, not the CLI's
    for note, result in zip(hidden, again):
        assert note["path"] in {h["path"] for h in result["hits"]}


@pytest.mark.parametrize("text, wording", [
    ("superseded by docs/b.md, itself hidden (expired 2026-06-01; --include-expired)",
     "superseded by docs/b.md, itself hidden (expired 2026-06-01; include_expired)"),
    ("superseded by docs/b.md, itself hidden (expired 2026-06-01; confidence 0.3 < 0.5; --include-expired "
     "--min-confidence 0.3)", "superseded by docs/b.md, itself hidden (expired 2026-06-01; confidence 0.3 < 0.5; "
     "include_expired min_confidence 0.3)"),
    ("no note is under --scope 'x/' (folders: docs/)", "no note is under scope 'x/' (folders: docs/)"),
    ("type adr (not --type incident); no tag of --tag ops", "type adr (not types incident); no tag of tags ops"),
    ("run `vaultsync index --rebuild`, over --budget 1200", "run `vaultsync index --rebuild`, over budget 1200"),
])
def test_reasons_and_warnings_name_the_tools_arguments(text, wording) -> None:
    from vaultsync.mcp_server.warm_search import tool_wording

    assert tool_wording(text) == wording


@pytest.mark.parametrize("flag, arguments", [
    ("--include-expired", {"include_expired": True}), ("--include-superseded", {"include_superseded": True}),
    ("--min-confidence 0.3", {"min_confidence": 0.3}), ("--min-confidence 0", {"min_confidence": 0.0}),
    ("without --scope", {"scope": ""}), ("without --type", {"types": []}), ("without --tag", {"tags": []}),
    ("--include-superseded --include-expired", {"include_superseded": True, "include_expired": True}),
    ("--min-confidence 0.35 without --scope", {"min_confidence": 0.35, "scope": ""}),
    ("without --type --include-expired --min-confidence 0", {"types": [], "include_expired": True,
                                                              "min_confidence": 0.0}),
    # a filter the config's `search:` set: null left it in force, an empty value lifts it
    ("without search.types", {"types": []}), ("without search.tags --include-expired", {"tags": [],
                                                                                         "include_expired": True}),
    ("without search.scope", {"scope": ""}),
])
def test_every_flag_the_report_names_is_a_search_tool_argument(flag, arguments) -> None:
    from vaultsync.mcp_server.warm_search import tool_arguments

    assert tool_arguments(flag) == arguments


def test_write_then_commit_then_search_finds_it(repo: Vault) -> None:
    async def body(s: ClientSession) -> Any:
        written = await call(s, "write", type="rule", title="Never log card numbers",
                             body="Card numbers (PAN) are masked before any log line. See [[INC-0001-duplicate-charges]].",
                             fields={"tags": ["payments"], "confidence": 0.9}, commit=True)
        found = await call(s, "search", query="may we log card numbers PAN?", top_k=3)
        return written, found

    written, found = with_server(repo.root, body)[0]
    assert written["memory_id"] == "RULE-0002" and written["path"] == "docs/rules/RULE-0002-never-log-card-numbers.md"
    assert written["commit"] and repo.git("log", "-1", "--format=%H").stdout.strip() == written["commit"]
    assert repo.git("status", "--porcelain").stdout == ""
    text = (repo.root / written["path"]).read_text(encoding="utf-8")
    assert any(f'created: "{d}"' in text and f'last_validated: "{d}"' in text for d in _today_now())
    assert "status: draft" in text
    assert found["hits"][0]["memory_id"] == "RULE-0002"
    assert repo.check().code == 0 and "note" not in written


def test_a_write_without_commit_says_search_will_not_find_it_yet(repo: Vault) -> None:
    async def body(s: ClientSession) -> Any:
        return await call(s, "write", type="rule", title="Disk alerts at 75 percent", body="Alert at 75 %.")

    written = with_server(repo.root, body)[0]
    assert written["commit"] is None and "search finds it once it is committed" in written["note"]
    assert "commit: true" in written["note"]


def test_bad_field_or_dangling_link_is_refused_and_leaves_no_file(repo: Vault) -> None:
    before = sorted(p.relative_to(repo.root).as_posix() for p in (repo.root / "docs").rglob("*"))

    async def body(s: ClientSession) -> Any:
        bad_field = await refused(s, "write", type="incident", title="Replica lag", body="Lag.",
                                  fields={"severity": "SEV9"})
        dangling = await refused(s, "write", type="adr", title="Use Kafka", body="Replaces [[ADR-0042-nothing]].")
        allocated = await refused(s, "write", type="adr", title="Mine", body="x", fields={"memory_id": "ADR-0100"})
        unknown = await refused(s, "write", type="memo", title="x", body="x")
        return bad_field, dangling, allocated, unknown

    bad_field, dangling, allocated, unknown = with_server(repo.root, body)[0]
    assert "docs/incidents/INC-0002-replica-lag.md:" in bad_field and "SC001 severity: 'SEV9'" in bad_field
    assert "docs/adrs/ADR-0003-use-kafka.md:" in dangling and "WL001 [[ADR-0042-nothing]]" in dangling
    assert "memory_id is set by vaultsync" in allocated
    assert "unknown memory type 'memo'" in unknown and "adr, incident, rule" in unknown
    after = sorted(p.relative_to(repo.root).as_posix() for p in (repo.root / "docs").rglob("*"))
    assert after == before
    assert repo.git("status", "--porcelain").stdout == ""


def test_a_required_enum_field_is_never_guessed(repo: Vault) -> None:
    """An incident's severity is a judgement: a write without it is refused, naming the values; a
    successor of the same type keeps its predecessor's unless it gives its own."""
    async def body(s: ClientSession) -> Any:
        missing = await refused(s, "write", type="incident", title="Replica lag", body="Lag.")
        kept = await call(s, "supersede", old="INC-0001", title="Duplicate charges, revisited", body="Again.")
        return missing, kept

    missing, kept = with_server(repo.root, body)[0]
    assert "severity: the incident schema requires it, one of SEV1, SEV2, SEV3, SEV4" in missing
    old_severity = next(line for line in (repo.root / "docs/incidents/INC-0001-duplicate-charges.md").read_text(
        encoding="utf-8").splitlines() if line.startswith("severity:"))
    assert old_severity in (repo.root / kept["path"]).read_text(encoding="utf-8").splitlines()
    assert repo.check().code == 0


def test_a_committed_write_is_checked_against_what_the_commit_holds(repo: Vault) -> None:
    """commit=true commits the written files only: a link to a note not yet committed is refused there, as
    it would dangle in the commit; the same write left uncommitted passes. ``supersede`` takes an existing
    note or a title with a body, nothing in between (a title alone made a successor of empty sections)."""
    repo.write("docs/adrs/ADR-0003-draft.md", note("ADR-0003", "adr", "A draft", "Not committed yet."))

    async def body(s: ClientSession) -> Any:
        dangling = await refused(s, "write", type="rule", title="Follow the draft", body="See [[ADR-0003-draft]].",
                                 commit=True)
        kept = await call(s, "write", type="rule", title="Follow the draft", body="See [[ADR-0003-draft]].")
        halves = [await refused(s, "supersede", old="ADR-0002", **args) for args in (
            {"title": "Only a title"}, {"body": "Only a body"}, {"new": "INC-0001", "title": "Both"},
            {"new": "INC-0001", "body": "Both"}, {})]
        return dangling, kept, halves

    dangling, kept, halves = with_server(repo.root, body)[0]
    assert "WL001 [[ADR-0003-draft]]" in dangling, dangling
    assert repo.git("log", "--format=%s").stdout.splitlines() == ["seed"]
    assert kept["memory_id"] == "RULE-0002" and "not committed" in kept["note"]
    assert all("give either `new` (an existing note) or `title` and `body` (a new note)" in h for h in halves), halves
    assert "superseded" not in (repo.root / "docs/adrs/ADR-0002-durable-webhook-queue.md").read_text(encoding="utf-8")


def test_supersede_updates_both_notes_and_passes_check(repo: Vault) -> None:
    async def body(s: ClientSession) -> Any:
        new = await call(s, "supersede", old="INC-0001", title="Duplicate charges: the full analysis",
                         body="A longer analysis of [[ADR-0002-durable-webhook-queue]].", fields={"severity": "SEV2"})
        again = await refused(s, "supersede", old="INC-0001", new="ADR-0002")
        chain = await call(s, "get", note="INC-0001")
        return new, again, chain

    new, again, chain = with_server(repo.root, body)[0]
    assert new["memory_id"] == "INC-0002" and sorted(new["changed"]) == sorted(
        [new["path"], "docs/incidents/INC-0001-duplicate-charges.md"])
    old_text = (repo.root / "docs/incidents/INC-0001-duplicate-charges.md").read_text(encoding="utf-8")
    assert "status: superseded\n" in old_text
    assert 'superseded_by: "[[INC-0002-duplicate-charges-the-full-analysis]]"' in old_text
    assert 'supersedes: ["[[INC-0001-duplicate-charges]]"]' in (repo.root / new["path"]).read_text(encoding="utf-8")
    assert "already superseded" in again
    assert chain["current"]["memory_id"] == "INC-0002"
    diff = repo.git("diff", "--", "docs/incidents/INC-0001-duplicate-charges.md").stdout
    assert [ln for ln in diff.splitlines() if ln.startswith(("+", "-")) and not ln.startswith(("+++", "---"))] == [
        "-status: resolved", "+status: superseded",
        '+superseded_by: "[[INC-0002-duplicate-charges-the-full-analysis]]"']
    check = repo.check()
    assert check.code == 0, check.out


def test_supersede_refused_leaves_both_notes_unchanged(repo: Vault) -> None:
    async def body(s: ClientSession) -> Any:
        return await refused(s, "supersede", old="ADR-0002", title="Use Kafka", body="See [[nowhere]].")

    msg = with_server(repo.root, body)[0]
    assert "WL001 [[nowhere]]" in msg
    assert repo.git("status", "--porcelain").stdout == ""


def test_review_queue_of_planted_notes(make_vault) -> None:  # type: ignore[no-untyped-def]
    soon = (TODAY + dt.timedelta(days=5)).isoformat()
    far = (TODAY + dt.timedelta(days=60)).isoformat()
    old = (TODAY - dt.timedelta(days=200)).isoformat()
    v = make_vault({".vaultsync.yaml": CONFIG})
    v.write("docs/rules/RULE-0001.md", note("RULE-0001", "rule", "Due soon", "x", status="active",
                                            extra=f'expires: "{soon}"\nimportance: 3\n'))
    v.write("docs/rules/RULE-0002.md", note("RULE-0002", "rule", "Stale rule", "x", status="active",
                                            extra="importance: 9\n").replace(TODAY.isoformat(), old))
    v.write("docs/adrs/ADR-0001.md", note("ADR-0001", "adr", "Old but within a year", "x").replace(
        TODAY.isoformat(), old))
    v.write("docs/adrs/ADR-0002.md", note("ADR-0002", "adr", "Unsure", "x", extra="confidence: 0.3\n"))
    v.write("docs/adrs/ADR-0003.md", note("ADR-0003", "adr", "Fine", "x", extra=f'expires: "{far}"\n'))
    v.commit("planted")

    async def body(s: ClientSession) -> Any:
        queue = await call(s, "review")
        confirmed = await call(s, "review", confirm="RULE-0002")
        after = await call(s, "review")
        return queue, confirmed, after

    queue, confirmed, after = with_server(v.root, body)[0]
    assert [(i["memory_id"], i["kind"]) for i in queue["items"]] == [
        ("RULE-0002", "stale"), ("ADR-0002", "low_confidence"), ("RULE-0001", "expiring")]
    assert queue["items"][2]["due"] == soon
    assert confirmed["confirmed"] == "docs/rules/RULE-0002.md"
    assert f'-last_validated: "{old}"' in confirmed["diff"]
    assert any(f'+last_validated: "{d}"' in confirmed["diff"] for d in _today_now())
    assert [i["memory_id"] for i in after["items"]] == ["ADR-0002", "RULE-0001"]


def test_review_renews_an_expired_note_only_with_a_new_expires(make_vault) -> None:  # type: ignore[no-untyped-def]
    """Confirming an expired note alone is refused (search would go on hiding it); with `expires` both fields
    are set in one edit. A malformed date, or `expires` without `confirm`, is refused too."""
    later = (TODAY + dt.timedelta(days=30)).isoformat()
    v = make_vault({".vaultsync.yaml": CONFIG})
    v.write("docs/rules/RULE-0001.md", note("RULE-0001", "rule", "Lapsed", "x", status="active",
                                            extra='expires: "2021-01-01"\n'))
    v.commit("planted")
    before = (v.root / "docs/rules/RULE-0001.md").read_bytes()

    async def body(s: ClientSession) -> Any:
        alone = await refused(s, "review", confirm="RULE-0001")
        bad = await refused(s, "review", confirm="RULE-0001", expires="2027-02-30")
        lone = await refused(s, "review", expires=later)
        unchanged = (v.root / "docs/rules/RULE-0001.md").read_bytes() == before
        renewed = await call(s, "review", confirm="RULE-0001", expires=later)
        return alone, bad, lone, unchanged, renewed

    alone, bad, lone, unchanged, renewed = with_server(v.root, body)[0]
    assert "expired on 2021-01-01" in alone and "`expires`" in alone and unchanged
    assert "expected a date as YYYY-MM-DD, got '2027-02-30'" in bad and "goes with `confirm`" in lone
    assert f'+expires: "{later}"' in renewed["diff"] and renewed["still_hidden"] is None
    assert renewed["still_queued"] == []  # renewed: nothing left to settle


@pytest.mark.parametrize("extra, kind, said", [
    ("confidence: 0.35\n", "low_confidence", "confidence 0.35 is below the search threshold 0.5"),
    ('expires: "{soon}"\n', "expiring", "expires in {n} day(s) ({soon}): renew `expires`"),
    ('expires: "{soon}"\nconfidence: 0.2\n', "expiring", "expires in {n} day(s) ({soon}): renew `expires`"),
])
def test_review_confirm_says_what_stays_queued_as_the_cli_does(make_vault, extra, kind, said) -> None:  # type: ignore[no-untyped-def]
    """MCP `review confirm` of a low-confidence rule answered `still_hidden: null` and nothing more, while
    search went on hiding it (the CLI said "stays in the queue (low_confidence)")."""
    today = dt.date.today()  # not the module's TODAY: a run that crosses midnight counts from the day it is
    soon = (today + dt.timedelta(days=3)).isoformat()
    v = make_vault({".vaultsync.yaml": CONFIG})
    v.write("docs/rules/RULE-0001.md", note("RULE-0001", "rule", "Unsure", "x", status="active",
                                            extra=extra.format(soon=soon)))
    v.commit("planted")

    async def body(s: ClientSession) -> Any:
        return await call(s, "review", confirm="RULE-0001")

    confirmed = with_server(v.root, body)[0]
    days = (dt.date.fromisoformat(soon) - dt.date.today()).days  # the day the server counted from, +0/-1 at midnight
    assert confirmed["still_hidden"] is None
    assert any(item["kind"] == kind and said.format(n=n, soon=soon) in item["reason"]
               for item in confirmed["still_queued"] for n in (days, days + 1)), confirmed


def test_a_retried_write_is_refused_while_its_twin_is_uncommitted(repo: Vault) -> None:
    """An agent that retries a write (a timeout, a lost answer) must not leave two notes: the same type
    and title (case and spacing aside) is refused while the first is uncommitted; once committed, a
    note may share a title (two incidents called "Database outage"), and another type never clashes."""
    async def body(s: ClientSession) -> Any:
        first = await call(s, "write", type="rule", title="Page on archive failures", body="Page the on-call.")
        again = await refused(s, "write", type="rule", title="page on  ARCHIVE failures", body="Page the on-call.")
        wide = await refused(s, "write", type="rule", title="Ｐａｇｅ on archive failures", body="x")  # full width
        other_type = await call(s, "write", type="adr", title="Page on archive failures", body="Decided.")
        return first, again, wide, other_type

    first, again, wide, other_type = with_server(repo.root, body)[0]
    assert f"refused, nothing written: {first['path']} ({first['memory_id']}), a note of type rule titled " \
           "'Page on archive failures', is written and not committed yet" in again
    assert first["memory_id"] in wide
    assert len(list((repo.root / "docs/rules").glob("*page-on-archive*"))) == 1 and other_type["memory_id"]
    assert not any("ID002" in w for w in other_type["warnings"])  # another type never clashes
    repo.commit("the first two")
    res = run_cli(["new", "rule", "--title", "Page on archive failures"], repo.root)
    assert res.code == 0  # committed twins may share a title, and are named (a repeated write is seen)
    (warning,) = [line for line in (res.out + res.err).splitlines() if "ID002" in line]
    assert f"another rule has this title: {first['memory_id']} ({first['path']})" in warning, warning


def test_two_concurrent_writers_get_distinct_ids(repo: Vault) -> None:
    def writer(name: str) -> Session:
        async def body(s: ClientSession) -> list[str]:
            ids = []
            for i in range(4):
                w = await call(s, "write", type="adr", title=f"Parallel decision {name} {i}", body="Body.")
                ids.append(w["memory_id"])
            return ids
        return body

    first, second = with_server(repo.root, writer("a"), writer("b"))
    ids = first + second
    assert len(set(ids)) == 8 and set(ids) == {f"ADR-{n:04d}" for n in range(3, 11)}
    assert not list((repo.root / "docs").rglob(".vaultsync-*"))
    assert repo.check().code == 0


def test_promote_and_resources(repo: Vault) -> None:
    repo.write("docs/scratch/idea.md", "# Canary every deploy\n\nShip to 5 % of traffic first.\n")

    async def body(s: ClientSession) -> Any:
        outside = await refused(s, "promote", path="docs/adrs/ADR-0002-durable-webhook-queue.md", type="rule")
        promoted = await call(s, "promote", path="docs/scratch/idea.md", type="rule")
        listing = await s.read_resource("vault://notes")
        one = await s.read_resource("vault://note/ADR-0002")
        return outside, promoted, listing, one

    outside, promoted, listing, one = with_server(repo.root, body)[0]
    assert "not a scratch note" in outside
    assert promoted["memory_id"] == "RULE-0002" and promoted["path"] == "docs/rules/RULE-0002-canary-every-deploy.md"
    assert not (repo.root / "docs/scratch/idea.md").exists()
    assert "title: Canary every deploy" in (repo.root / promoted["path"]).read_text(encoding="utf-8")
    assert "RULE-0002" in {n["memory_id"] for n in json.loads(listing.contents[0].text)}
    assert one.contents[0].text.startswith("---\nmemory_id: ADR-0002\n")


# --- the same write path through the CLI ---------------------------------------------------------

def test_cli_new_show_supersede_promote_review(vault: Vault) -> None:
    seed(vault)
    vault.commit("seed")
    guess = run_cli(["new", "incident", "--title", "Replica lag at month end"], vault.root)
    assert guess.code == 2 and guess.err == ("vaultsync new: severity: the incident schema requires it, one of SEV1, "
                                             "SEV2, SEV3, SEV4; vaultsync does not guess it — give it: --set "
                                             "severity=SEV1 (MCP: fields)\n") and not list((vault.root / "docs/incidents").glob(
                                                 "INC-0002*"))
    made = run_cli(["new", "incident", "--title", "Replica lag at month end", "--set", "severity=SEV3"], vault.root)
    assert made.code == 0, made.err
    path = made.out.strip()
    assert path == "docs/incidents/INC-0002-replica-lag-at-month-end.md"
    text = (vault.root / path).read_text(encoding="utf-8")
    assert "severity: SEV3" in text and "status: open" in text and "## Root cause" in text
    fields = run_cli(["show", "INC-0002"], vault.root).out.splitlines()[2]  # what the note is weighed by, in text too
    assert "severity: SEV3" in fields.split("   ") and fields.startswith("created: ") and "status" not in fields
    assert vault.check().code == 0
    args = ["new", "adr", "--title", "Queue with a dead-letter topic", "--supersedes", "ADR-0002",
            "--set", "tags=[webhooks]", "--set", "status=accepted", "--commit"]
    empty = run_cli(args, vault.root)  # empty sections would hide ADR-0002 behind nothing, committed
    assert empty.code == 2 and "needs --body or --edit" in empty.err, empty.err
    sup = run_cli([*args, "--body", "Failed deliveries go to a dead-letter topic."], vault.root)
    assert sup.code == 0, sup.err
    assert vault.git("show", "--stat", "--format=%s", "HEAD").stdout.startswith("ADR-0003: Queue with")
    shown = run_cli(["show", "ADR-0002"], vault.root)
    assert shown.code == 0 and "status: superseded" in shown.out and "superseded by: ADR-0003" in shown.out
    as_json = json.loads(run_cli(["show", "ADR-0003", "--format", "json"], vault.root).out)
    assert [s["memory_id"] for s in as_json["supersedes"]] == ["ADR-0002", "ADR-0001"]
    bad = run_cli(["new", "rule", "--title", "x", "--set", "enforcement=always"], vault.root)
    assert bad.code == 1 and "SC001 enforcement: 'always'" in bad.err and "Traceback" not in bad.err
    assert run_cli(["supersede", "ADR-0003", "ADR-0003"], vault.root).code == 2
    vault.write("docs/scratch/n.md", "---\ntitle: From scratch\ntags: [deploys]\n---\nDeploy notes.\n")
    prom = run_cli(["promote", "docs/scratch/n.md", "--type", "rule"], vault.root)
    assert prom.code == 0 and prom.out.split()[0] == "docs/rules/RULE-0002-from-scratch.md"
    assert not (vault.root / "docs/scratch/n.md").exists()
    assert run_cli(["promote", "docs/rules/RULE-0001-japanese.md", "--type", "rule"], vault.root).code == 2
    rev = run_cli(["review", "--format", "github"], vault.root)
    assert rev.code == 0
    assert vault.check().code == 0


def test_closing_the_warm_search_drops_its_searcher(repo: Vault) -> None:
    """``WarmSearch.close`` called a method that does not exist (AttributeError)."""
    from vaultsync.mcp_server.warm_search import WarmSearch

    warm = WarmSearch(repo.root)
    assert warm.search("how are merchant webhooks delivered?", {"top_k": 1})["hits"]
    warm.close()
    assert warm.search("how are merchant webhooks delivered?", {"top_k": 1})["hits"]  # opens again on use
    warm.close()


def raw_session(root: Path, lines: list[str | bytes], ids: set[int], timeout: float = 120) -> dict[int, dict[str, Any]]:
    """Send raw JSON-RPC lines (after initialize; a ``bytes`` line as it is, a ``str`` one as UTF-8) to
    `vaultsync mcp` and read until every id in ``ids`` is answered (stdin stays open: a client that hangs up
    first gets no answers); the replies by id."""
    head = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    proc = subprocess.Popen([sys.executable, "-m", "vaultsync", "mcp"], cwd=root, env=server_env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    timer = threading.Timer(timeout, proc.kill)  # a reply that never comes fails the test, not the run
    timer.start()
    replies: dict[int, dict[str, Any]] = {}
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in [*head, *lines]) + b"\n")
        proc.stdin.flush()
        for out in proc.stdout:
            reply = json.loads(out)
            replies[reply.get("id")] = reply
            if ids <= replies.keys():
                break
    finally:
        timer.cancel()
        proc.kill()
        proc.wait()
    return replies


BAD_BYTES = [b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\x80abc"]


def test_bytes_that_are_not_utf8_are_refused_by_name_and_never_written(repo: Vault) -> None:
    """A `write` whose title held the bytes FF FE was read with U+FFFD in their place and written into a note
    (the server decoded its input with `errors="replace"`). Such a request is now refused, naming the argument;
    four byte sequences in one session, and the request after them is answered."""
    lines: list[str | bytes] = [
        b'{"jsonrpc": "2.0", "id": ' + str(i).encode() + b', "method": "tools/call", "params": {"name": "write", '
        b'"arguments": {"type": "rule", "title": "bad ' + bad + b' bytes", "body": "b"}}}'
        for i, bad in enumerate(BAD_BYTES, 1)]
    lines.append(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                             "params": {"name": "get", "arguments": {"note": "ADR-0001"}}}))
    replies = raw_session(repo.root, lines, {1, 2, 3, 4, 9})
    for i, bad in enumerate(BAD_BYTES, 1):
        text = replies[i]["result"]["content"][0]["text"]
        assert replies[i]["result"]["isError"] and text.startswith(
            f"argument title is not valid Unicode: a byte that is not UTF-8 (0x{bad[0]:02X})"), text
    assert not replies[9]["result"].get("isError")
    assert repo.git("status", "--porcelain").stdout == ""


def test_a_lone_surrogate_in_any_argument_is_refused_by_name_and_never_hangs(repo: Vault) -> None:
    """JSON may escape a lone surrogate; the SDK's parser drops such a line unanswered, so the agent
    waited forever. Each is now a tool error naming the argument; a surrogate pair, an escaped
    backslash before `u` and the requests after it are untouched."""
    calls = [("get", '{"note": "\\ud800"}'), ("write", '{"type": "rule", "title": "x", "body": "b", '
                                                        '"fields": {"tags": ["pay\\udc80"]}}'),
             ("write", '{"type": "rule", "title": "x", "body": "b", "fields": {"t\\uDBFF": 1}}'),
             ("search", '{"query": "\\\\ud800 \\ud83d\\ude00 lock"}'), ("get", '{"note": "ADR-0001"}')]
    lines = [f'{{"jsonrpc": "2.0", "id": {i}, "method": "tools/call", "params": {{"name": "{tool}", '
             f'"arguments": {args}}}}}' for i, (tool, args) in enumerate(calls, 1)]
    replies = raw_session(repo.root, lines, {1, 2, 3, 4, 5})
    text = {i: replies[i]["result"]["content"][0]["text"] for i in range(1, 6)}
    assert replies[1]["result"]["isError"] and text[1].startswith(
        "argument note is not valid Unicode: a lone surrogate (U+D800) at character 1")
    assert "argument fields.tags[0] is not valid Unicode: a byte that is not UTF-8 (0x80) or a lone surrogate " \
           "(U+DC80) at character 4" in text[2]
    assert "argument name fields.t\\uDBFF is not valid Unicode" in text[3]
    assert not replies[4]["result"].get("isError") and not replies[5]["result"].get("isError")
    assert repo.git("status", "--porcelain").stdout == ""


@given(st.lists(st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr), st.just("\\"), st.just("u"),
                          st.just("\ufdd0"), st.sampled_from(["ud800", "udc00", "\\ud800", "FDD0", "D800", "fdd0"])),
                max_size=30).map("".join), st.booleans())
@example("\\ud800\udc00", True)  # an escaped backslash and the text "ud800", then a lone low surrogate
@example("\\\\ud800\udc00", True)
@example("\ufdd0D800", True)  # a U+FDD0 the client sent, then hex digits: no lone surrogate
@example("\ufdd0D800", False)
@example("\ufdd0\ufdd0FDD0\udc00", False)
def test_marking_lone_surrogates_keeps_every_other_json_text(text: str, ascii_only: bool) -> None:
    """Any string, as JSON with every non-ASCII character escaped or not: the marked line parses with the
    SDK's own parser, is the line sent where it held no lone surrogate (a U+FDD0 it holds, followed by hex
    digits or not, included), and flags exactly those, at their place."""
    import mcp.types as types

    from vaultsync.mcp_server.transport import lone_surrogate, mark_lone_surrogates

    line = json.dumps({"jsonrpc": "2.0", "method": "x", "params": {"v": text}}, ensure_ascii=ascii_only)
    sent = line.encode("utf-8", "surrogatepass").decode("utf-8", "replace")  # as the server's stdin reads it
    marked = mark_lone_surrogates(sent)
    value = types.jsonrpc_message_adapter.validate_json(marked, by_name=False).params["v"]  # type: ignore[union-attr]
    read = json.loads(line)["params"]["v"]  # Python's reader joins the pairs; what is left is lone
    if not ascii_only:  # a raw lone surrogate cannot travel as UTF-8: the server reads U+FFFD
        read = read.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    lone = [i for i, ch in enumerate(read) if "\ud800" <= ch <= "\udfff"]
    found = lone_surrogate(value)
    assert (found is not None) == bool(lone)
    if lone:
        assert found is not None and found[1] == lone[0] and found[0] == ord(read[lone[0]])
    else:
        assert marked == sent and value == read


def test_a_client_that_hangs_up_at_once_still_gets_every_answer(repo: Vault) -> None:
    """`printf requests | vaultsync mcp`: stdin ends right after the requests; the SDK ended the session there
    and cancelled the calls still running, so their answers were lost. A cancelled request gets none."""
    def line(rid: Any, method: str, params: dict[str, Any] | None = None) -> str:
        return json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params else {})})

    lines = [line(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "t", "version": "1"}}),
             json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             line(1, "tools/list"),
             line("s", "tools/call", {"name": "search", "arguments": {"query": "deploy on Friday"}}),
             line(2, "tools/call", {"name": "get", "arguments": {"note": "ADR-0001"}}),
             line(3, "tools/call", {"name": "write", "arguments": {"type": "rule", "title": "", "body": "b"}}),
             line(4, "tools/call", {"name": "no_such_tool", "arguments": {}}),
             line("c", "tools/call", {"name": "search", "arguments": {"query": "cancelled"}}),
             json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c"}})]
    res = subprocess.run([sys.executable, "-m", "vaultsync", "mcp"], cwd=repo.root, env=server_env(), text=True,
                         input="\n".join(lines) + "\n", capture_output=True, timeout=180)
    replies = {r["id"]: r for r in map(json.loads, res.stdout.splitlines())}
    assert res.returncode == 0 and {0, 1, "s", 2, 3, 4} <= replies.keys() and "c" not in replies, res.stdout
    hits = json.loads(replies["s"]["result"]["content"][0]["text"])["hits"]
    assert hits and not replies["s"]["result"].get("isError")
    assert replies[3]["result"]["isError"] and replies[4]["result"]["isError"]


def test_arguments_are_read_strictly_and_unknown_ones_are_refused(repo: Vault) -> None:
    """`commit: "yes"` committed, `top_k: true` ran as 1, a misspelt `include_expire` was ignored: an agent's
    mistake did something other than it said. Each is now a tool error naming the argument, on one line
    (not the validator's report with its type codes and links)."""
    calls = [("write", {"type": "rule", "title": "Strict", "body": "x", "commit": "yes"}, "commit"),
             ("write", {"type": "rule", "title": "Strict", "body": "x", "commit": 1}, "commit"),
             ("search", {"query": "deploy", "top_k": True}, "top_k"),
             ("search", {"query": "deploy", "top_k": 2.5}, "top_k"),
             ("search", {"query": "deploy", "include_expire": True}, "'include_expire'"),
             ("search", {"query": "deploy", "min_confidence": "NaN"}, "min_confidence"),
             ("search", {"query": "deploy", "include_superseded": "false"}, None),  # JSON text: the SDK reads it
             ("review", {"days": "7"}, None),
             ("get", {"note": "ADR-0001", "verbose": True}, "'verbose'"),
             ("search", {"top_k": 3}, "query")]
    lines = [json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": t, "arguments": a}})
             for i, (t, a, _) in enumerate(calls, 1)]
    replies = raw_session(repo.root, lines, set(range(1, len(calls) + 1)))
    for i, (tool, args, named) in enumerate(calls, 1):
        result = replies[i]["result"]
        if named is None:
            continue
        text = result["content"][0]["text"]
        assert result.get("isError") and named in text and "\n" not in text and "pydantic" not in text, (tool, args)
    assert replies[1]["result"]["content"][0]["text"] == (
        "invalid argument(s) for write: commit: input should be a valid boolean, got \"yes\"")
    assert replies[len(calls)]["result"]["content"][0]["text"] == "invalid argument(s) for search: query: field required"
    assert repo.git("status", "--porcelain").stdout == "" and "Strict" not in repo.git("log", "--format=%s").stdout


def test_refusals_are_their_own_words_and_repeat_at_most_a_few_characters_of_the_input(repo: Vault) -> None:
    """A refusal raised inside a tool came back as "Error executing tool get: …", unlike the argument
    checks; a 100,000-character note reference came back whole; list items were named `types.0` here and
    `types[1]` there; a 300,000-character title was written. A U+FDD0 followed by hex digits was taken for
    a lone surrogate and refused."""
    long_ref, title = "N" * 100_000, "Mark \ufdd0D800 kept"
    calls = [("search", {"query": "deploy", "rerank": "bogus"}),
             ("get", {"note": long_ref}),
             ("search", {"query": "deploy", "types": ["adr", 7]}),
             ("search", {"query": "deploy", "top_k": "x" * 1000}),
             ("write", {"type": "rule", "title": "T" * 301, "body": "x"}),
             ("write", {"type": "rule", "title": title, "body": "b \ufdd0dc00"})]
    lines = [json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": t, "arguments": a}},
                        ensure_ascii=i % 2 == 0) for i, (t, a) in enumerate(calls, 1)]
    replies = raw_session(repo.root, lines, set(range(1, len(calls) + 1)))
    text = {i: replies[i]["result"]["content"][0]["text"] for i in replies if i}
    assert all(replies[i]["result"].get("isError") for i in range(1, 6))
    assert text[1].startswith("unknown rerank stage 'bogus' (one of: none, maxsim, cross-encoder")
    assert text[2].startswith("no note 'NNNN") and "… (100,000 characters) in the vault" in text[2] and len(text[2]) < 250
    assert text[3] == "invalid argument(s) for search: types[1]: input should be a valid string, got 7"
    assert text[4].endswith("… (1,000 characters)") and len(text[4]) < 200
    assert text[5] == "title: must be at most 300 characters, but it has 301 — put the detail in the body"
    assert not replies[6]["result"].get("isError"), text[6]
    written = repo.root / json.loads(text[6])["path"]
    assert f"\n# {title}\n\nb \ufdd0dc00\n" in written.read_text(encoding="utf-8")
    assert all("Error executing tool" not in t for t in text.values())


def test_a_u_fdd0_anywhere_in_a_request_comes_back_as_sent(repo: Vault) -> None:
    """U+FDD0 is the first character of the server's lone-surrogate mark: marking the ones a client sent
    changed a request id with one (the reply could not be matched, the client waited), a tool name in its
    error, and took a backslash before a raw one for a valid escape."""
    calls = [("id\ufdd0x", "get", {"note": "ADR-0001"}, False), ("idesc\ufdd0D800y", "get", {"note": "ADR-0001"}, True),
             ("name", "g\ufdd0t", {}, False), ("key", "search", {"query": "x", "k" * 500: 1}, True)]
    lines = [json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": t, "arguments": a}},
                        ensure_ascii=escape) for i, t, a, escape in calls]
    invalid = '{"jsonrpc": "2.0", "id": "bad", "method": "tools/call", "params": {"name": "get", ' \
              '"arguments": {"note": "ADR-0001\\\ufdd0"}}}'  # a backslash before a raw U+FDD0: no JSON escape
    replies = raw_session(repo.root, [invalid, *lines], {i for i, *_ in calls})
    assert not replies["id\ufdd0x"]["result"].get("isError") and not replies["idesc\ufdd0D800y"]["result"].get("isError")
    assert replies["name"]["result"]["content"][0]["text"].startswith("unknown tool 'g\\ufdd0t' (tools: search, get, ")
    assert replies["key"]["result"]["content"][0]["text"].startswith(
        "unknown argument(s) for search: '" + "k" * 80 + "… (500 characters) (known: query, ")
    bad = replies.get("bad")
    assert bad is None or "error" in bad, bad  # refused as the SDK refuses invalid JSON, never run


def test_a_lone_surrogate_outside_the_arguments_never_shows_the_mark(repo: Vault) -> None:
    """The SDK echoes a request's id, method and names: a lone surrogate there came back as the server's
    internal mark (U+FDD0 and its nonce). It comes back as the escape that was sent, as text; a tool name
    holding one is refused as arguments are."""
    lines = ['{"jsonrpc": "2.0", "id": "x\\ud800y", "method": "tools/call", "params": {"name": "get", '
             '"arguments": {"note": "ADR-0001"}}}',
             '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "g\\ud800et", "arguments": {}}}',
             '{"jsonrpc": "2.0", "id": 3, "method": "no/such\\udc00"}']
    replies = raw_session(repo.root, lines, {"x\\uD800y", 2, 3})
    assert not replies["x\\uD800y"]["result"].get("isError")
    assert replies[2]["result"]["content"][0]["text"] == (
        "the tool name is not valid Unicode: a lone surrogate (U+D800) at character 2; send text as UTF-8")
    assert "error" in replies[3] and all("\ufdd0" not in json.dumps(r, ensure_ascii=False) for r in replies.values())


def test_a_line_the_sdk_cannot_read_is_answered_with_a_json_rpc_error(repo: Vault) -> None:
    """The SDK's parser refuses a 5,000-digit number, lists nested 300 deep and text that is no JSON, and
    dropped such a line without an answer: the client waited until its own timeout. Each now gets the
    JSON-RPC error, under its id where one can be read (else null, as JSON-RPC 2.0 says); a blank line gets
    none; the requests after them are answered."""
    call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "search", "arguments": {"query": "deploy"}}}
    lines = [json.dumps({**call, "id": 1})[:-1] + ', "extra": ' + "9" * 5000 + "}",
             json.dumps({**call, "id": "deep", "params": {"name": "search", "arguments": {"query": "x", "tags": [
                 json.loads("[" * 300 + "]" * 300)]}}}),
             "this is not JSON", "   ",
             json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"})]
    replies = raw_session(repo.root, lines, {1, "deep", None, 4})
    assert replies[1]["error"]["code"] == -32600 and replies[1]["error"]["message"].startswith(
        "the server cannot read this request: ")
    assert replies["deep"]["error"]["code"] == -32600
    assert replies[None]["error"]["code"] == -32700 and replies[None]["error"]["message"].startswith(
        "the line is not JSON the server can read")
    assert replies[4]["result"] == {}


@pytest.mark.parametrize("bad_id", [None, 1.5, {"a": 1}, [2], True])
def test_a_request_with_an_id_of_another_kind_is_answered_not_dropped(repo: Vault, bad_id: Any) -> None:
    """The SDK read `"id": null` (or 1.5, an object) as a notification and dropped the request: the client
    waited for an answer that never came. JSON-RPC 2.0 answers -32600 with a null id; `arguments` that is no
    object got "Invalid request parameters" with nothing said."""
    call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "search", "arguments": "deploy"}}
    replies = raw_session(repo.root, [json.dumps({"jsonrpc": "2.0", "id": bad_id, "method": "tools/list"}),
                                      json.dumps({**call, "id": 5}),
                                      json.dumps({**call, "id": 6, "params": {"name": "get", "arguments": [1]}}),
                                      json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"})], {None, 4, 5, 6})
    assert replies[None]["error"]["code"] == -32600, replies
    assert replies[None]["error"]["message"] == f"a request's id must be a string or an integer, got {json.dumps(bad_id)}"
    assert replies[5]["error"]["code"] == -32602 and replies[5]["error"]["message"].endswith("got a string")
    assert replies[6]["error"]["message"].endswith("got an array") and replies[4]["result"] == {}


@pytest.mark.parametrize("tail, answered", [
    ([(7, "tools/call", {"name": "search", "arguments": {"query": "deploy"}}), ("cancel", "7")], None),  # "7" is 7
    ([(8, "tools/call", {"name": "search", "arguments": {"query": "deploy"}}), ("cancel", 8)], None),
    ([(5, "tools/call", {"name": "search", "arguments": {"query": "deploy"}}), (5, "tools/list", None)], [5, 5]),
    ([("x", "tools/list", None), ("x", "tools/call", {"name": "get", "arguments": {"note": "ADR-0001"}})], ["x", "x"]),
])
def test_the_end_of_input_waits_for_each_answer_owed_and_no_more(repo: Vault, tail, answered) -> None:
    """A cancel naming request 7 as "7" left the server waiting 600 s after stdin closed; two requests sharing an
    id lost one answer (the first settled both)."""
    lines = [json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    for rid, method, params in ((*t, None)[:3] for t in tail):
        if rid == "cancel":
            lines.append(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                     "params": {"requestId": method}}))
        else:
            lines.append(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params else {})}))
    res = subprocess.run([sys.executable, "-m", "vaultsync", "mcp"], cwd=repo.root, env=server_env(), text=True,
                         input="\n".join(lines) + "\n", capture_output=True, timeout=120)
    ids = [json.loads(x)["id"] for x in res.stdout.splitlines()]
    assert res.returncode == 0, res.stderr  # within the timeout: never the 600 s wait
    if answered is None:  # cancelled: answered only if it finished before the cancel was read
        assert len(ids) <= 2, res.stdout
    else:
        assert sorted(map(str, ids[1:])) == sorted(map(str, answered)), res.stdout


@pytest.mark.parametrize("search_config, asked", [
    ("search:\n  types: [rule]\n", {}),                   # only rules, by the team's default
    ("search:\n  tags: [webhooks]\n", {}),
    ("search:\n  scope: docs/rules\n", {}),
    ("", {"types": ["rule"]}),                              # the same filter asked for, for comparison
])
def test_a_filter_the_config_sets_is_named_as_such_and_its_arguments_lift_it(vault: Vault, embedder, search_config,
                                                                             asked) -> None:
    """``search: {types: [rule]}`` in the config: the report said "without --type", which no flag does for a
    config's filter, and its MCP arguments ``{"types": null}`` left the filter in force: following them
    showed nothing. The report names ``search.types``; ``{"types": []}`` lifts it, and ``show_all`` shows
    every listed note."""
    from vaultsync.git import open_repo
    from vaultsync.index.sync import sync

    seed(vault)
    vault.write(".vaultsync.yaml", CONFIG + search_config)
    vault.commit("seed")
    sync(open_repo(vault.root), wait=60, embedder_factory=factory_with(embedder))
    query = "retries of merchant webhooks and duplicate charges"

    async def body(s: ClientSession) -> Any:
        first = await call(s, "search", query=query, top_k=5, min_relevance=0, **asked)
        again = await call(s, "search", query=query, top_k=5, min_relevance=0,
                           **{**asked, **first["hidden"]["show_all"]})
        return first["hidden"], again

    hidden, again = with_server(vault.root, body)[0]
    assert hidden["notes"], hidden
    assert {n["path"] for n in hidden["notes"]} <= {h["path"] for h in again["hits"]}, (hidden, again["hits"])
    text = run_cli(["search", query, "--no-daemon", "--min-relevance", "0",
                    *[f"--type={t}" for t in asked.get("types", [])]], vault.root).out
    named = "without search." if search_config else "without --type"
    assert named in text and ("without --" not in text if search_config else True), text


_UNREADABLE_WITHOUT_ID = [
    ("this is not JSON", "the line is not JSON the server can read: Expecting value: line 1 column 1 (char 0)"),
    ('{"jsonrpc": "2.0", "id": 3', "the line is not JSON the server can read: Expecting ',' delimiter"),
    ("[1, 2]", "the server cannot read this request: a JSON-RPC message is an object, got an array"),
    ('"ping"', "the server cannot read this request: a JSON-RPC message is an object, got a string"),
]
_UNREADABLE_WITH_ID = [  # {id} is filled in: one server answers them all
    ('{{"id": {id}, "method": "ping"}}', 'the server cannot read this request: a JSON-RPC message holds "jsonrpc": "2.0"'),
    ('{{"jsonrpc": "1.0", "id": {id}, "method": "ping"}}', 'a JSON-RPC message holds "jsonrpc": "2.0"'),
    ('{{"jsonrpc": "2.0", "id": {id}}}', 'the server cannot read this request: a request names its "method"'),
    ('{{"jsonrpc": "2.0", "id": {id}, "method": 5}}', '"method" must be a string, got a number'),
    ('{{"jsonrpc": "2.0", "id": {id}, "result": 5, "error": {{}}}}', 'a response holds "result" or "error", not both'),
    ('{{"jsonrpc": "2.0", "id": {id}, "error": 5}}', '"error" must be an object with "code" and "message", got a number'),
    ('{{"jsonrpc": "2.0", "id": {id}, "method": "ping", "params": [1]}}', '"params" must be an object, got an array'),
]


@pytest.mark.parametrize("line, said", _UNREADABLE_WITHOUT_ID + [("with ids", "")])
def test_an_unreadable_line_is_told_in_the_protocols_words(repo: Vault, line: str, said: str) -> None:
    """A new user's non-JSON line was answered "1 validation error for union[JSONRPCRequest,
    JSONRPCNotification,JSONRPCResponse,JSONRPCError]": the SDK's validator, not what was wrong (or, for
    some lines, the URL of pydantic's help). Each is told in the protocol's words, under its id where one
    can be read."""
    cases = ([(line.format(id=100 + i), text, 100 + i) for i, (line, text) in enumerate(_UNREADABLE_WITH_ID)]
             if line == "with ids" else [(line, said, None)])
    ping = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"})
    replies = raw_session(repo.root, [c[0] for c in cases] + [ping], {c[2] for c in cases} | {4})
    for _, text, key in cases:
        error = replies[key]["error"]
        assert text in error["message"] and "validation error" not in error["message"], error
        assert "pydantic" not in error["message"], error
    assert replies[4]["result"] == {}
    assert replies[4]["result"] == {}


def test_the_example_client_in_the_readme_searches_through_the_server(repo: Vault) -> None:
    """`examples/mcp_client.py`, the README's way to try the server without an agent, lists the tools and
    prints a search's hits, and says when there is none or the answer is weak (a four-note vault answers a
    made-up question weakly)."""
    import subprocess

    script = str(REPO_ROOT / "examples" / "mcp_client.py")
    done = subprocess.run([sys.executable, script, "webhook retries"], cwd=repo.root, env=server_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "tools: search, get, write, supersede, promote, review"
    assert any("docs/adrs/ADR-0002-durable-webhook-queue.md#" in line for line in lines[1:]), done.stdout
    done = subprocess.run([sys.executable, script, "zxqv wombat carburettor"], cwd=repo.root, env=server_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and ("no hits:" in done.stdout or "weak answer:" in done.stdout), done.stdout


def test_a_resource_read_with_a_broken_config_says_why(repo: Vault) -> None:
    """Reading a resource after `.vaultsync.yaml` broke mid-session gave "Error reading resource" (and a traceback
    in the server's log), where the tools said `.vaultsync.yaml:2:24: FM005 …`. The resources say it too."""
    from mcp.shared.exceptions import MCPError

    async def body(s: ClientSession) -> Any:
        (repo.root / ".vaultsync.yaml").write_text("vault: docs\ntypes: {rule: {folder: [x\n")
        said = []
        for uri in ("vault://notes", "vault://note/ADR-0001"):
            try:
                await s.read_resource(uri)
                said.append("read")
            except MCPError as exc:
                said.append(str(exc))
        return said

    for said in with_server(repo.root, body)[0]:
        assert ".vaultsync.yaml:2:24: FM005 the '[' opened here is never closed" in said, said


def test_supersede_with_a_blank_body_is_refused_and_writes_nothing(repo: Vault) -> None:
    """`supersede {"old": …, "title": …, "body": ""}` committed a successor holding only its heading, and search
    hid the old note behind it."""
    async def run(s: ClientSession) -> Any:
        return [await refused(s, "supersede", old="RULE-0001", title="Empty successor", body=body,
                              fields={"status": "active"}, commit=True) for body in ("", "  \n")]

    for said in with_server(repo.root, run)[0]:
        assert said.startswith("`body` is empty: a new note replacing 'RULE-0001' needs its text"), said
    assert repo.git("status", "--porcelain").stdout == ""
