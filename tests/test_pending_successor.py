"""A successor that is not in force yet (``status`` draft, proposed or rejected) supersedes nothing: the
note it names stays in search, and ``check`` asks no back-reference or ``status: superseded`` of it
until the successor is in force (ADR-0114). The older note's own word (``superseded_by``, ``status:
superseded``) still hides it."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import adr, run_cli

from vaultsync.git import open_repo
from vaultsync.index.layout import layout_for
from vaultsync.index.sync import sync
from vaultsync.search.lifecycle import LifecyclePolicy, exclusions

OLD = "docs/adrs/ADR-0001.md"


def _hidden(vault) -> dict[str, str]:  # type: ignore[no-untyped-def]
    vault.commit("notes")
    repo = open_repo(vault.root)
    sync(repo, wait=60)
    with sqlite3.connect(layout_for(repo).sqlite) as db:
        return exclusions(db, LifecyclePolicy()).reasons


def _rule(mid: str, status: str, extra: str = "") -> str:
    return f"---\nmemory_id: {mid}\ntype: rule\ntitle: A rule\nstatus: {status}\ncreated: \"2024-03-01\"\n{extra}---\nBody.\n"


@pytest.mark.parametrize("kind, status", [("adr", "proposed"), ("adr", "rejected"), ("rule", "draft")])
@pytest.mark.parametrize("ref", ['["[[ADR-0001]]"]', "[ADR-0001]", '\n  - "[[docs/adrs/ADR-0001]]"'])
def test_a_successor_not_in_force_hides_nothing_and_asks_nothing(vault, hashed_models, kind, status, ref):
    vault.write(OLD, adr("ADR-0001"))
    new = f"docs/{kind}s/NEW-0002.md"
    note = adr("ADR-0002", status=status, extra=f"supersedes: {ref}\n") if kind == "adr" else \
        _rule("RULE-0002", status, extra=f"supersedes: {ref}\n")
    vault.write(new, note)
    res = vault.check()
    assert res.code == 0 and "SS00" not in res.out, res.out
    assert vault.check("--fix").code == 0 and "superseded" not in (vault.root / OLD).read_text()
    assert OLD not in _hidden(vault)
    # once in force, the supersession takes effect: check asks for both sides, search hides the old note
    vault.write(new, note.replace(f"status: {status}", "status: accepted" if kind == "adr" else "status: active"))
    assert [line.split(" ")[1] for line in vault.check().lines] == ["SS002", "SS004"]
    assert _hidden(vault).get(OLD) == "superseded"


@pytest.mark.parametrize("older_says", ['status: superseded\nsuperseded_by: "[[ADR-0002]]"\n', ""])
def test_the_older_notes_own_word_still_hides_it(vault, hashed_models, older_says):
    """``superseded_by`` / ``status: superseded`` on the older note is its author's word: it hides the note
    whatever the successor's status; a bare ``status: superseded`` line is read the same way."""
    vault.write(OLD, adr("ADR-0001", status="superseded", extra='superseded_by: "[[ADR-0002]]"\n')
                if older_says else adr("ADR-0001", status="superseded"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", status="proposed", extra="supersedes: [ADR-0001]\n"))
    assert _hidden(vault).get(OLD) == "superseded"


def test_the_commands_leave_the_older_note_standing_until_the_successor_is_accepted(vault, hashed_models):
    """``new --supersedes`` writes a note of the schema's first status (``proposed``), and ``supersede OLD
    NEW`` may name a draft: both used to retire OLD at once. Now they write only the new note's
    ``supersedes`` and say so (SS007); ``show`` and the search agree that OLD stands; once the new note
    is accepted, ``check`` asks for the old side and ``check --fix`` writes it."""
    vault.write(OLD, adr("ADR-0001"))
    vault.write("docs/rules/RULE-0001.md", _rule("RULE-0001", "active"))
    vault.write("docs/rules/RULE-0002.md", _rule("RULE-0002", "draft"))
    vault.commit("init")
    made = run_cli(["new", "adr", "--title", "Durable queue", "--supersedes", "ADR-0001", "--body", "Use a queue."],
                   vault.root)
    assert made.code == 0 and "SS007" in made.err and "ADR-0001 stays in force" in made.err, made.err
    assert vault.git("status", "--porcelain").stdout.split() == ["??", "docs/adrs/ADR-0002-durable-queue.md"]
    moved = run_cli(["supersede", "RULE-0001", "RULE-0002"], vault.root)
    assert moved.code == 0 and "SS007 warning: status: draft" in moved.err, moved.err
    assert "superseded" not in (vault.root / "docs/rules/RULE-0001.md").read_text()
    assert vault.check().code == 0
    shown = json.loads(run_cli(["show", "ADR-0001", "--format", "json"], vault.root).out)
    assert shown["superseded_by"] == [] and shown["search_hides"] == [], shown
    assert _hidden(vault).keys().isdisjoint({OLD, "docs/rules/RULE-0001.md"})
    new = vault.root / "docs/adrs/ADR-0002-durable-queue.md"
    new.write_text(new.read_text().replace("status: proposed", "status: accepted"))
    assert {line.split(" ")[1] for line in vault.check().lines} == {"SS002", "SS004"}
    assert vault.check("--fix").code == 0
    assert "status: superseded" in (vault.root / OLD).read_text()
    shown = json.loads(run_cli(["show", "ADR-0001", "--format", "json"], vault.root).out)
    assert [s["memory_id"] for s in shown["superseded_by"]] == ["ADR-0002"] and shown["search_hides"], shown


def test_only_successors_in_force_count_as_a_notes_successors(vault, hashed_models):
    """SS005 (several notes supersede one) counts the successors in force: a proposal beside a rejected
    one is no conflict, and an accepted one beside a rejected one is a plain SS002/SS004 that --fix
    completes."""
    vault.write(OLD, adr("ADR-0001"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", status="proposed", extra="supersedes: [ADR-0001]\n"))
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003", status="rejected", extra="supersedes: [ADR-0001]\n"))
    assert vault.check().code == 0
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra="supersedes: [ADR-0001]\n"))
    assert {line.split(" ")[1] for line in vault.check().lines} == {"SS002", "SS004"}
    assert vault.check("--fix").code == 0 and "ADR-0002" in (vault.root / OLD).read_text()


def test_a_proposal_cannot_take_an_old_note_already_superseded_nor_be_made_twice(vault, hashed_models):
    """``supersede``/``new --supersedes`` with a successor not in force refuse an older note that already
    names its successor, as they do for one in force; a proposal made again is refused, not "written";
    a rejected successor is told it supersedes nothing; a proposal is committed as one."""
    vault.write(OLD, adr("ADR-0001", status="superseded", extra='superseded_by: "[[ADR-0002]]"\n'))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra="supersedes: [ADR-0001]\n"))
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003", status="proposed"))
    vault.write("docs/adrs/ADR-0004.md", adr("ADR-0004"))
    vault.write("docs/adrs/ADR-0005.md", adr("ADR-0005", status="rejected"))
    vault.commit("init")
    for args in (["supersede", "ADR-0001", "ADR-0003"], ["new", "adr", "--title", "T", "--supersedes", "ADR-0001",
                                                          "--body", "B."]):
        res = run_cli(args, vault.root)
        assert res.code == 2 and "already superseded by" in res.err and "SS007" not in res.err, (args, res.err)
    assert vault.git("status", "--porcelain").stdout == ""
    first = run_cli(["supersede", "ADR-0004", "ADR-0003", "--commit"], vault.root)
    assert first.code == 0 and "SS007" in first.err, first.err
    assert vault.git("log", "-1", "--format=%s").stdout.strip() == "ADR-0003 proposes to supersede ADR-0004"
    again = run_cli(["supersede", "ADR-0004", "ADR-0003", "--commit"], vault.root)
    assert again.code == 2 and "already lists ADR-0004 in supersedes" in again.err and "Traceback" not in again.err
    rejected = run_cli(["supersede", "ADR-0004", "ADR-0005"], vault.root)
    assert rejected.code == 0 and "a rejected note supersedes nothing" in rejected.err, rejected.err
