"""The write path below the CLI and the MCP server: frontmatter rendering and line edits, memory_id
allocation, the all-or-nothing validated write, and the review queue's dates."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

import pytest
from conftest import CONFIG, Vault, adr, git, run_cli
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vaultsync.memory import transaction
from vaultsync.memory.create import create
from vaultsync.memory.errors import MemoryWriteError, WriteRefused
from vaultsync.memory.frontmatter_text import render_note, set_fields
from vaultsync.memory.ids import next_memory_id, type_prefix
from vaultsync.memory.review import queue
from vaultsync.memory.workspace import Workspace
from vaultsync.vault.note import parse_text



@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40))
@example("A,0")  # written plain into the flow list, it was two items: "A" and the number 0
@example("a, b]")
def test_any_title_reads_back_exactly(title: str) -> None:
    text = render_note({"memory_id": "ADR-0001", "title": title, "tags": [title]}, "body\n")
    assert parse_text("n.md", text).frontmatter == {"memory_id": "ADR-0001", "title": title, "tags": [title]}


def test_set_fields_edits_one_key_and_keeps_the_rest_byte_for_byte() -> None:
    text = "\ufeff---\r\nmemory_id: ADR-0001 # stable\r\ntags:\r\n  - a\r\n  - b\r\nstatus: accepted\r\n---\r\nBody\r\n"
    out = set_fields(text, {"tags": ["c"], "last_validated": "2026-01-02"})
    assert out == ("\ufeff---\r\nmemory_id: ADR-0001 # stable\r\ntags: [c]\r\nstatus: accepted\r\n"
                   'last_validated: "2026-01-02"\r\n---\r\nBody\r\n')


@pytest.mark.parametrize("line, key, kept", [
    ("status: accepted  # reviewed by the guild", "status", "  # reviewed by the guild"),
    ("status: accepted\t# tab before", "status", "\t# tab before"),
    ('title: "Retries # with backoff"  # the name', "title", "  # the name"),  # a "#" inside quotes is text
    ("title: 'it''s # here' # c", "title", " # c"),
    ('supersedes: ["[[A#h]]", "[[B]]"] # chain', "supersedes", " # chain"),
    ("confidence: 0.9 #最終確認", "confidence", " #最終確認"),
    ("title: C#-style retries # lang", "title", " # lang"),  # "#" not after a blank is text
    ("status: accepted", "status", ""),
])
def test_an_edit_keeps_the_comment_that_ends_the_edited_line(line: str, key: str, kept: str) -> None:
    text = f"---\nmemory_id: ADR-0001\n{line}\n---\nBody\n"
    out = set_fields(text, {key: "superseded"})
    assert out == f"---\nmemory_id: ADR-0001\n{key}: superseded{kept}\n---\nBody\n"


def test_a_block_value_keeps_the_comment_on_its_key_line() -> None:
    out = set_fields("---\ntags: # by team\n  - a\n  - b\nstatus: x\n---\n", {"tags": ["c"]})
    assert out == "---\ntags: [c] # by team\nstatus: x\n---\n"


@pytest.mark.parametrize("block, added", [
    ('supersedes:\n  - "[[ADR-0003]]"   # old retries\n  # more later\n', '  - "[[ADR-0003]]"   # old retries\n'
                                                                          '  - "[[ADR-0009]]"\n  # more later\n'),
    ("supersedes:\n- ADR-0003\n\n# about the status\n", "- ADR-0003\n- \"[[ADR-0009]]\"\n\n# about the status\n"),
    ("supersedes: # why\n    -   ADR-0003\n", "supersedes: # why\n    -   ADR-0003\n    -   \"[[ADR-0009]]\"\n"),
])
def test_a_block_list_an_edit_extends_keeps_its_lines_and_comments(block, added) -> None:
    """`vaultsync supersede` rewrote a `- item` list on one line and dropped the comments in it; a list the
    edit extends gets its new items after its last one, written as its first is."""
    text = f"---\nmemory_id: ADR-0007\n{block}status: accepted\n---\nBody\n"
    old = parse_text("n.md", text).frontmatter["supersedes"]
    out = set_fields(text, {"supersedes": [*old, "[[ADR-0009]]"]})
    assert added in out and out.replace(added, "") == text.replace(block.split("\n", 1)[1] if "# why" not in block
                                                                     else block, ""), out
    assert parse_text("n.md", out).frontmatter["supersedes"] == [*old, "[[ADR-0009]]"]


@settings(max_examples=100, deadline=None)
@given(old=st.text(st.characters(exclude_categories=["Cs", "Cc", "Zl", "Zp"]), min_size=1, max_size=20),
       comment=st.text(st.characters(exclude_categories=["Cs", "Cc", "Zl", "Zp"]), max_size=20),
       new=st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=20))
def test_any_value_and_comment_survive_an_edit(old: str, comment: str, new: str) -> None:
    """Property: whatever the old value and the comment after it, the new value reads back and the
    comment ends the line unchanged."""
    from vaultsync.memory.frontmatter_text import scalar

    text = f"---\ntitle: {scalar(old)}  #{comment}\n---\nBody\n"
    if parse_text("n.md", text).frontmatter != {"title": old}:
        return  # a comment YAML reads differently (never happens for a quoted value)
    out = set_fields(text, {"title": new})
    assert parse_text("n.md", out).frontmatter == {"title": new}
    assert out.split("\n")[1] == f"title: {scalar(new)}  #{comment}"


def test_set_fields_refuses_a_layout_it_cannot_edit() -> None:
    with pytest.raises(MemoryWriteError, match="edit it by hand"):
        set_fields("---\n{memory_id: ADR-0001, status: accepted}\n---\n", {"status": "superseded"})
    with pytest.raises(MemoryWriteError, match="no frontmatter"):
        set_fields("# just a body\n", {"status": "x"})


def _ws(v: Vault) -> Workspace:
    return Workspace.open(v.root)


@pytest.mark.parametrize("name", ["RULE-0007-half-edited.md", "RULE-0007.md", "RULE-7-x.md"])
def test_an_id_held_only_by_a_file_name_is_taken(make_vault, name) -> None:  # type: ignore[no-untyped-def]
    """A note whose frontmatter cannot be read (an edit left half done) still holds the id in its file name:
    the next memory never gets it."""
    v = make_vault({"docs/rules/RULE-0003.md": adr("RULE-0003").replace("type: adr", "type: rule"),
                    f"docs/rules/{name}": "---\nmemory_id: RULE-0007\ntitle: 'unclosed\n---\n",
                    "docs/rules/RULE-00071x.md": "# a file whose name only starts like an id\n"})
    assert next_memory_id(_ws(v).vault(), "RULE") == "RULE-0008"


def test_memory_id_prefix_and_width(make_vault) -> None:  # type: ignore[no-untyped-def]
    v = make_vault({"docs/adrs/D-00041.md": adr("D-00041"), "docs/rules/x.md": "no frontmatter\n"})
    ws = _ws(v)
    vault = ws.vault()
    assert type_prefix(ws.config, vault, "adr") == "D"
    assert next_memory_id(vault, "D") == "D-00042"
    assert type_prefix(ws.config, vault, "rule") == "RULE" and next_memory_id(vault, "RULE") == "RULE-0001"
    v.write(".vaultsync.yaml", CONFIG.replace("adr: {folder: docs/adrs}", "adr: {folder: docs/adrs, id_prefix: DEC}"))
    assert type_prefix(_ws(v).config, vault, "adr") == "DEC"


def test_a_type_folder_inside_an_ephemeral_glob_is_never_written(make_vault) -> None:  # type: ignore[no-untyped-def]
    v = make_vault({".vaultsync.yaml": CONFIG.replace("docs/rules", "docs/scratch/rules")})
    with pytest.raises(MemoryWriteError, match="ephemeral"):
        create(_ws(v), "rule", "A rule", body="x")
    assert not (v.root / "docs/scratch").exists()


def test_a_failed_move_restores_what_was_already_written(make_vault, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    v = make_vault({"docs/adrs/A.md": adr("ADR-0001"), "docs/adrs/B.md": adr("ADR-0002")})
    ws = _ws(v)
    real, calls = os.replace, []

    def flaky(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise OSError("disk full")
        real(src, dst)

    monkeypatch.setattr(transaction.os, "replace", flaky)
    with pytest.raises(OSError, match="disk full"):
        transaction.apply(ws, {"docs/adrs/A.md": adr("ADR-0001", title="New A"),
                               "docs/adrs/B.md": adr("ADR-0002", title="New B")})
    assert (v.root / "docs/adrs/A.md").read_text(encoding="utf-8") == adr("ADR-0001")
    assert (v.root / "docs/adrs/B.md").read_text(encoding="utf-8") == adr("ADR-0002")
    assert sorted(p.name for p in (v.root / "docs/adrs").iterdir()) == ["A.md", "B.md"]


def test_a_duplicate_id_elsewhere_is_a_new_error(make_vault) -> None:  # type: ignore[no-untyped-def]
    v = make_vault({"docs/adrs/A.md": adr("ADR-0001"), "docs/adrs/broken.md": "---\nmemory_id: [\n---\n"})
    ws = _ws(v)
    with pytest.raises(WriteRefused) as err:
        transaction.apply(ws, {"docs/adrs/C.md": adr("ADR-0001")}, create={"docs/adrs/C.md"})
    assert {d.code for d in err.value.diagnostics} == {"ID001"}  # broken.md's old error does not block
    assert not (v.root / "docs/adrs/C.md").exists()
    assert transaction.apply(ws, {"docs/adrs/C.md": adr("ADR-0003")}, create={"docs/adrs/C.md"}) == []


def test_review_counts_from_created_when_never_validated(make_vault) -> None:  # type: ignore[no-untyped-def]
    config = CONFIG + "review:\n  max_age_days: {adr: 30}\n"
    v = make_vault({".vaultsync.yaml": config, "docs/adrs/A.md": adr("ADR-0001", extra="importance: 2\n")})
    items = queue(_ws(v).vault(), on=dt.date(2024, 4, 15))
    assert [(i.kind, i.due, i.line) for i in items] == [("stale", "2024-03-31", 6)]
    assert items[0].reason.startswith("created, never validated since, 2024-03-01 (45 days ago")  # not "last validated"
    assert queue(_ws(v).vault(), on=dt.date(2024, 3, 20)) == []
    validated = make_vault({".vaultsync.yaml": config, "docs/adrs/A.md": adr("ADR-0001", extra='last_validated: "2024-03-05"\n')})
    assert queue(_ws(validated).vault(), on=dt.date(2024, 4, 15))[0].reason.startswith("last validated 2024-03-05")


@pytest.mark.parametrize("review", ["", "review:\n  max_age_days: {adr: 30}\n", "review: {}\n"])
def test_review_says_when_no_note_is_queued_for_its_age(make_vault, review: str) -> None:  # type: ignore[no-untyped-def]
    """"nothing to review" read as "every note is fresh" where age checks were simply not configured."""
    v = make_vault({".vaultsync.yaml": CONFIG + review, "docs/adrs/A.md": adr("ADR-0001")})
    res = run_cli(["review"], v.root)
    assert res.code == 0 and "Traceback" not in res.err
    assert ("set review.max_age_days in .vaultsync.yaml" in res.err) == ("max_age_days" not in review), res.err
    assert "note:" not in run_cli(["review", "--format", "json"], v.root).err  # machine formats stay quiet


def test_new_with_an_editor_reports_what_the_edit_broke(vault: Vault, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    vault.commit("config")
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nprintf 'See [[nowhere]].\\n' >> \"$1\"\n", encoding="utf-8")
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(editor))
    res = run_cli(["new", "adr", "--title", "Edited", "--edit"], vault.root)
    assert res.code == 1 and "WL001 [[nowhere]]" in res.err
    assert "See [[nowhere]]." in (vault.root / "docs/adrs/ADR-0001-edited.md").read_text(encoding="utf-8")


def test_review_confirm_prints_a_one_line_diff(vault: Vault) -> None:
    vault.write("docs/adrs/A.md", adr("ADR-0001", extra='last_validated: "2020-01-01"\n'))
    before = dt.date.today().isoformat()  # read around the run: the run may cross midnight
    res = run_cli(["review", "--confirm", "ADR-0001"], vault.root)
    assert res.code == 0
    changed = [ln for ln in res.out.splitlines() if ln[:1] in "+-" and ln[:3] not in ("+++", "---")]
    assert changed[0] == '-last_validated: "2020-01-01"' and len(changed) == 2
    assert changed[1] in {f'+last_validated: "{d}"' for d in (before, dt.date.today().isoformat())}
    again = run_cli(["review", "--confirm", "ADR-0001"], vault.root)
    assert again.code == 0 and "already today" in again.out
    assert run_cli(["review", "--confirm", "ADR-0404"], vault.root).code == 2



@pytest.mark.parametrize("status, extra, said", [
    ("superseded", 'superseded_by: "[[B]]"\n', "is superseded by [[B]]: search shows its successor instead"),
    ("superseded by [[B]]", "", "is superseded by [[B]]: search shows its successor instead"),  # MADR's form
    ("Superseded", "", "is superseded: search shows its successor instead"),
    ("accepted", 'expires: "2999-01-01"\n', None),
])
def test_confirming_a_note_search_still_hides_says_so(vault: Vault, status, extra, said) -> None:
    """`--confirm` records a review; it does not undo a supersession: the user is told."""
    vault.write("docs/adrs/A.md", adr("ADR-0001", status=status, extra=extra))
    vault.write("docs/adrs/B.md", adr("ADR-0002", extra='supersedes: ["[[A]]"]\n' if status != "accepted" else ""))
    res = run_cli(["review", "--confirm", "ADR-0001"], vault.root)
    assert res.code == 0 and "+last_validated" in res.out
    assert (f"vaultsync review: docs/adrs/A.md {said}" in res.err) if said else res.err == "", res.err


@pytest.mark.parametrize("expires", ['"2021-01-01"', "2021-01-01", '"2021-01-01T10:00:00Z"'])
def test_confirming_an_expired_note_needs_a_new_expires_and_writes_nothing_without_one(vault: Vault, expires) -> None:
    """A new user's `review --confirm` of an expired note wrote `last_validated` (exit 0) and left search
    hiding the note. It is refused now, the file untouched, and `--expires` renews it in the same edit."""
    vault.write("docs/adrs/A.md", adr("ADR-0001", extra=f"expires: {expires}\n"))
    vault.commit("a")
    before = (vault.root / "docs/adrs/A.md").read_bytes()
    res = run_cli(["review", "--confirm", "ADR-0001"], vault.root)
    assert res.code == 2 and (vault.root / "docs/adrs/A.md").read_bytes() == before
    assert "docs/adrs/A.md expired on 2021-01-01: confirmed as it is, search would go on hiding it — give the " \
           "last day it holds (`vaultsync review --confirm ADR-0001 --expires YYYY-MM-DD`" in res.err, res.err
    later = (dt.date.today() + dt.timedelta(days=90)).isoformat()
    res = run_cli(["review", "--confirm", "ADR-0001", "--expires", later], vault.root)
    assert res.code == 0 and res.err == "", res.err
    text = (vault.root / "docs/adrs/A.md").read_text()
    assert f'expires: "{later}"' in text and f'last_validated: "{dt.date.today().isoformat()}"' in text
    assert run_cli(["check"], vault.root).code == 0


@pytest.mark.parametrize("args, said", [
    (["--expires", "2020-01-01", "--confirm", "ADR-0001"], "expires 2020-01-01 is before today"),
    (["--expires", "2999-01-01"], "--expires goes with --confirm ID"),
    (["--confirm", "ADR-0001", "--expires", "2999-1-1"], "expected a date as YYYY-MM-DD, got '2999-1-1'"),
    (["--confirm", "ADR-0001", "--expires", "2999-02-30"], "expected a date as YYYY-MM-DD"),
])
def test_a_wrong_expires_is_refused_and_writes_nothing(vault: Vault, args, said, monkeypatch) -> None:
    vault.write("docs/adrs/A.md", adr("ADR-0001"))
    vault.commit("a")
    before = (vault.root / "docs/adrs/A.md").read_bytes()
    import io
    from contextlib import redirect_stderr

    from vaultsync.cli.main import main

    monkeypatch.chdir(vault.root)
    with redirect_stderr(out := io.StringIO()):
        try:
            code = main(["review", *args])
        except SystemExit as exited:  # argparse's own refusal
            code = exited.code
    err = out.getvalue()
    assert code == 2 and said in err and (vault.root / "docs/adrs/A.md").read_bytes() == before, err


@pytest.mark.parametrize("extra, kind, said", [
    ("expires: \"{soon}\"\n", "expiring", "expires in 3 day(s) ({soon}): renew `expires`"),
    ("confidence: 0.3\n", "low_confidence", "confidence 0.3 is below the search threshold 0.5"),
    ("expires: \"{soon}\"\nconfidence: 0.2\n", "expiring", "expires in 3 day(s)"),
])
def test_confirming_a_note_the_queue_keeps_says_why_it_stays(vault: Vault, extra, kind, said) -> None:
    """``review --confirm`` of an expiring note said "last_validated is already today", exit 0, and the note
    stayed in the queue with no word why: confirming settles a note's age, not its ``expires`` or confidence."""
    soon = (dt.date.today() + dt.timedelta(days=3)).isoformat()
    vault.write("docs/adrs/A.md", adr("ADR-0001", extra=extra.format(soon=soon)))
    vault.commit("a")
    for _ in range(2):  # the edit, then the second confirm that changes nothing
        res = run_cli(["review", "--confirm", "ADR-0001"], vault.root)
        assert res.code == 0 and f"vaultsync review: docs/adrs/A.md stays in the queue ({kind}): " in res.err, res.err
        assert said.format(soon=soon) in res.err


def test_review_workflow_step_writes_the_issue_body(vault: Vault) -> None:
    import shlex

    import yaml
    from conftest import REPO_ROOT

    doc = yaml.safe_load((REPO_ROOT / "examples" / "review-workflow.yml").read_text(encoding="utf-8"))
    (step,) = [s["run"] for s in doc["jobs"]["review"]["steps"] if s.get("run", "").startswith("vaultsync ")]
    args = shlex.split(step.split(">")[0])
    soon = (dt.date.today() + dt.timedelta(days=3)).isoformat()
    vault.write("docs/adrs/A.md", adr("ADR-0001", extra=f'expires: "{soon}"\n'))
    vault.commit("a")
    res = run_cli(args[1:], vault.root)
    assert res.code == 0
    assert res.out.splitlines()[:3] == [
        "| importance | note | kind | why |", "|---|---|---|---|",
        f"| 5 | `ADR-0001` A decision | expiring | expires in 3 day(s) "
        f"({soon}): renew `expires` or retire the note |"]


def test_memory_commands_outside_a_repository_say_so(tmp_path: Path) -> None:
    for args in (["mcp"], ["new", "adr", "--title", "x"], ["review"], ["show", "ADR-0001"]):
        res = run_cli(args, tmp_path)
        assert res.code == 2 and "not inside a git working tree" in res.err and "Traceback" not in res.err


@pytest.mark.parametrize("linked", ["docs/rules", "docs"])
def test_a_symlinked_folder_never_carries_a_write_outside(make_vault, tmp_path, linked) -> None:  # type: ignore[no-untyped-def]
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    v = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001")})
    if linked == "docs":
        import shutil

        shutil.move(str(v.root / "docs"), str(outside / "docs"))
        (v.root / "docs").symlink_to(outside / "docs")
    else:
        (v.root / "docs/rules").symlink_to(outside)
    with pytest.raises(MemoryWriteError, match="symbolic link"):
        create(_ws(v), "rule", "Escape test", body="hello")
    assert [p.name for p in outside.rglob("RULE-*")] == []


def test_promote_never_removes_a_file_in_git_or_outside_the_vault(make_vault) -> None:  # type: ignore[no-untyped-def]
    from vaultsync.memory.promote import promote

    v = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001")})
    for rel in (".git/scratch/g.md", "scratch/top.md"):
        v.write(rel, "# Idea\nsome text\n")
        with pytest.raises(MemoryWriteError):
            promote(_ws(v), rel, "rule")
        assert (v.root / rel).exists()


def test_a_new_note_gets_the_umask_mode_not_0600(make_vault) -> None:  # type: ignore[no-untyped-def]
    import stat

    v = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001")})
    old = os.umask(0o022)
    try:
        written = create(_ws(v), "rule", "Readable by the team", body="x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((v.root / written.path).stat().st_mode) == 0o644


def test_the_title_has_one_source(make_vault) -> None:  # type: ignore[no-untyped-def]
    v = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001")})
    with pytest.raises(MemoryWriteError, match="title is its own argument"):
        create(_ws(v), "rule", "File name title", body="x", fields={"title": "Another title"})
    assert not list((v.root / "docs").rglob("RULE-*"))


@pytest.mark.parametrize("ref, found", [("adr-0001", True), ("Adr-0001", True), (" ADR-0001 ", True),
                                        ("adr-001", False), ("ADR-0010", False)])
def test_show_finds_a_memory_id_in_any_case_and_suggests_close_ones(vault: Vault, ref, found) -> None:  # type: ignore[no-untyped-def]
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", title="Use SQLite"))
    vault.commit("init")
    res = run_cli(["show", ref], vault.root)
    if found:
        assert res.code == 0 and res.out.startswith("ADR-0001  Use SQLite"), res.err
    else:
        assert res.code == 2 and "did you mean ADR-0001?" in res.err, res.err


@pytest.mark.parametrize("extra, config, reasons", [
    ('expires: "2020-01-01"\n', "", [("expired 2020-01-01", "--include-expired")]),
    ("expires: 2020-01-01T09:00:00+02:00\n", "", [("expired 2020-01-01", "--include-expired")]),
    ("confidence: 0.3\n", "", [("confidence 0.3 < 0.5", "--min-confidence 0.3")]),
    ("confidence: 0.3\n", "search: {min_confidence: 0.2}\n", []),
    ("confidence: 0.6\n", "search: {min_confidence: 0.7}\n", [("confidence 0.6 < 0.7", "--min-confidence 0.6")]),
    ('superseded_by: "[[ADR-0002]]"\nexpires: "2021-05-05"\nconfidence: 0.1\n', "",
     [("superseded", "--include-superseded"), ("expired 2021-05-05", "--include-expired"),
      ("confidence 0.1 < 0.5", "--min-confidence 0.1")]),
    ('expires: "someday"\n', "", [("unreadable expires", "--include-expired")]),
    ("confidence: high\n", "", [("unreadable confidence", "--min-confidence 0")]),
    ('expires: "2999-01-01"\nconfidence: 0.5\n', "", []),
    ('expires: "2020-01-01"\n', "search: {include_expired: true}\n", []),  # the config shows expired notes
    ('superseded_by: "[[ADR-0002]]"\n', "search: {include_superseded: true}\n", []),
    ("confidence: 0.3\n", "search: {min_confidence: high}\n", [("confidence 0.3 < 0.5", "--min-confidence 0.3")]),
    ("confidence: 0.3\n", "search: {min_confidence: [1]}\n", [("confidence 0.3 < 0.5", "--min-confidence 0.3")]),
])
def test_show_says_why_search_hides_the_note(vault: Vault, extra: str, config: str,
                                             reasons: list[tuple[str, str]]) -> None:
    """``show`` of an expired, superseded or low-confidence note said nothing of it: a reader who
    found it by id could not tell that search leaves it out, nor how to see it there."""
    if config:
        vault.write(".vaultsync.yaml", vault.root.joinpath(".vaultsync.yaml").read_text() + config)
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", title="Use SQLite for the ledger", extra=extra,
                                             body="The ledger lives in SQLite.\n"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", title="Use Postgres", body="Postgres.\n"))
    vault.commit("init")
    view = json.loads(run_cli(["show", "ADR-0001", "--format", "json"], vault.root).out)
    assert [(h["reason"], h["show_with"]) for h in view["search_hides"]] == reasons
    text = run_cli(["show", "ADR-0001"], vault.root).out.split("\n---\n")[0]
    said = [ln for ln in text.splitlines() if ln.startswith("search hides it: ")]
    assert said == ([f"search hides it: {'; '.join(r for r, _ in reasons)} (shown with "
                     f"{' '.join(dict.fromkeys(f for _, f in reasons))})"] if reasons else [])
    invalid = config.startswith(("search: {min_confidence: high", "search: {min_confidence: ["))
    if not reasons or any(r.startswith("unreadable") for r, _ in reasons) or invalid:
        return  # an invalid committed value (CF002) stops search; show judges by the default
    assert run_cli(["sync"], vault.root).code == 0
    found = json.loads(run_cli(["search", "ledger SQLite", "--format", "json", "--min-relevance", "0"], vault.root).out)
    assert "ADR-0001" not in {h["memory_id"] for h in found["hits"]}  # search agrees: hidden, with the same reasons
    (hidden,) = [n for n in found["hidden"]["notes"] if n["memory_id"] == "ADR-0001"]
    assert hidden["show_with"] == " ".join(dict.fromkeys(f for _, f in reasons))


@pytest.mark.parametrize("argv", [["show", "ADR-0001"], ["review", "--format", "json"], ["show", "ADR-0001", "--format", "json"]])
def test_memory_commands_piped_into_head_end_quietly(vault: Vault, argv) -> None:  # type: ignore[no-untyped-def]
    """``show | head`` said "[Errno 32] Broken pipe" and exited 2: the reader leaving is no error."""
    import subprocess
    import sys

    body = "".join(f"Line {i} of a long decision.\n" for i in range(20_000))
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra='expires: "2020-01-01"\n', body=body))
    vault.commit("init")
    cmd = " ".join([sys.executable, "-m", "vaultsync", *argv])
    res = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd} | head -c 10"], cwd=vault.root, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0 and res.stderr == "" and len(res.stdout) == 10, res.stderr


@pytest.mark.parametrize("title, expected", [
    ("Use Postgres for the ledger", "use-postgres-for-the-ledger"),
    ("Über große Datenbanken: 日本語", "uber-grosse-datenbanken-日本語"),   # ß is "ss", Japanese kept
    ("データベースの選定", "データベースの選定"), ("Выбор базы данных", "выбор-базы-данных"),
    ("Ångström — naïve café", "angstrom-naive-cafe"), ("C# & F# interop", "c-f-interop"), ("👍", ""),
    ("ᎠᏍᎦᏯ ꭰꮝ", "ꭰꮝꭶꮿ-ꭰꮝ"),                                        # Cherokee: lower case, though casefold is upper
])
def test_a_slug_keeps_the_words_of_any_script(title, expected) -> None:
    from vaultsync.memory.scaffold import slug

    assert slug(title) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_a_slug_is_a_safe_file_name_part(title: str) -> None:
    from vaultsync.memory.scaffold import slug

    s = slug(title)
    assert len(s) <= 60 and "/" not in s and "\\" not in s and not s.startswith(("-", ".")) and not s.endswith("-")
    assert all(c.isalnum() or c == "-" for c in s) and s == s.lower()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.sampled_from("abcdeé日Ω"), min_size=1, max_size=14), min_size=1, max_size=12),
       st.integers(min_value=10, max_value=60))
def test_a_long_title_is_cut_at_a_words_end(words: list[str], limit: int) -> None:
    """`...-dedupe-by-even` for "...by event id": a title cut short ended inside a word, unless that would
    drop most of it (`q3` for "Q3 ThePaymentsLedgerReconciliationJob…")."""
    from vaultsync.memory.scaffold import slug

    full = slug(" ".join(words), limit=1000)
    s = slug(" ".join(words), limit=limit)
    assert full.startswith(s) and len(s) <= limit and (s or not full)
    if s != full and full[:limit].rfind("-") > limit // 2:  # cut, a word's end in the second half: there
        assert full[len(s)] == "-", (full, s)
    elif s != full:
        assert len(s) >= limit // 2 or len(s.rstrip("-")) == len(full[:limit].rstrip("-")), (full, s)


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from(["𐌰", "𠀀", "é", "ß", "日", "a", " ", "-", "ﷺ"]), min_size=1, max_size=300),
       st.from_regex(r"[A-Z]{1,40}-[0-9]{4}", fullmatch=True))
def test_a_new_notes_file_name_fits_255_bytes_whatever_the_title_and_prefix(title: str, memory_id: str) -> None:
    """`GUIDELINE-0001-` and a title of 4-byte letters (Gothic, CJK Extension B) made a name over 255 bytes:
    the write failed with a raw `[Errno 36] File name too long`."""
    import posixpath

    from vaultsync.memory.scaffold import note_path
    from vaultsync.vault.config import TypeSpec

    name = posixpath.basename(note_path(TypeSpec("rule", "docs/rules", "rule"), memory_id, title))
    assert len(name.encode("utf-8")) <= 255 and name.startswith(memory_id) and name.endswith(".md")


def test_a_new_note_of_a_long_4_byte_title_lands(vault) -> None:  # type: ignore[no-untyped-def]
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  rule: {folder: docs/rules, id_prefix: GUIDELINE}\n")
    vault.commit("config")
    res = run_cli(["new", "rule", "--title", "𐌰" * 300], vault.root)
    assert res.code == 0 and "Errno" not in res.err, res.err
    (made,) = (vault.root / "docs/rules").iterdir()
    assert made.name.startswith("GUIDELINE-0001-𐌰") and len(made.name.encode()) <= 255


@pytest.mark.parametrize("status, flagged", [
    ("accepted", True), ("proposed", True), ("resolved", False), ("Rejected", False), ("deprecated", False),
    ("superseded", False),
])
def test_review_asks_to_relink_a_superseded_note_only_from_notes_still_in_force(make_vault, status, flagged) -> None:  # type: ignore[no-untyped-def]
    """A resolved post-mortem or a rejected decision records the past: its link to what held then stays."""
    v = make_vault({
        "docs/adrs/A.md": adr("ADR-0001", status="superseded", extra="superseded_by: ADR-0002\n"),
        "docs/adrs/B.md": adr("ADR-0002", extra="supersedes: [ADR-0001]\n"),
        "docs/adrs/C.md": adr("ADR-0003", status=status, body="Based on [[A]].\n"),
    })
    kinds = [i.kind for i in queue(_ws(v).vault(), on=dt.date(2024, 3, 20))]
    assert ("superseded_linked" in kinds) is flagged, kinds


def test_a_check_outside_a_repository_says_it_checks_the_folder(tmp_path: Path) -> None:
    """Outside git, `check` reads the folder's notes (a vault not in git yet), and says so: run by mistake in a
    home folder, the walk is noticed. With --root naming the folder, that was the intent: nothing is said."""
    (tmp_path / "a.md").write_text("# A\nSee [[b]].\n", encoding="utf-8")
    res = run_cli(["check"], tmp_path)
    assert res.code == 1 and "a.md:2:5: WL001 [[b]] → no such note" in res.out
    assert res.err.splitlines() == [f"vaultsync check: {tmp_path} is not inside a git working tree: checking the notes "
                                    "under it as a folder"]
    assert run_cli(["check", "--root", str(tmp_path)], tmp_path).err == ""


@pytest.mark.parametrize("rel", ["docs/scratch/idea.md", "docs/scratch/ideé [1].md", "docs/notes/draft.tmp.md"])
def test_promote_takes_a_staged_scratch_note_out_of_the_index(make_vault, rel) -> None:  # type: ignore[no-untyped-def]
    """`git add -A` staged the scratch note; promoting it must not leave that copy for the next commit. A
    scratch note a commit already holds stays in the index: its removal is the user's change to commit."""
    from vaultsync.memory.promote import promote

    v = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001"), "docs/scratch/old.md": "# Old idea\ntext\n"})
    v.commit("init")
    v.write(rel, "# Idea\nsome text\n")
    git(v.root, "add", "-A")
    promote(_ws(v), rel, "rule")
    promote(_ws(v), "docs/scratch/old.md", "rule")
    staged = git(v.root, "-c", "core.quotepath=off", "status", "--porcelain").stdout.splitlines()
    assert not any(rel in line for line in staged), staged
    assert " D docs/scratch/old.md" in staged, staged


def test_promoting_a_scratch_note_whose_heading_is_too_long_names_the_heading_and_the_way_out(make_vault) -> None:  # type: ignore[no-untyped-def]
    """The title a scratch note takes is its first heading: 378 characters were refused as a title the user
    never gave, with no word of where it came from or of --title."""
    v = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001")})
    v.write("docs/scratch/long.md", "# " + "Long heading " * 29 + "x\nSome text.\n")
    res = run_cli(["promote", "docs/scratch/long.md", "--type", "rule"], v.root)
    assert res.code == 2 and "Traceback" not in res.err and (v.root / "docs/scratch/long.md").exists()
    assert ("docs/scratch/long.md: its first heading, the title it would take, has 378 characters (at most 300) "
            "— give a shorter one: --title (MCP: title)") in res.err
    assert run_cli(["promote", "docs/scratch/long.md", "--type", "rule", "--title", "Short"], v.root).code == 0


@pytest.mark.parametrize("pad", ["\u3000" * 2000, "\u00a0" * 3000, " \t" * 500])
def test_a_padded_title_is_stored_once_stripped_in_frontmatter_heading_and_name(make_vault, pad) -> None:  # type: ignore[no-untyped-def]
    """The limit counted the stripped title, the frontmatter stored it stripped, and the `#` heading took it
    as given: 5,000 characters of padding went into the heading."""
    v = make_vault({})
    res = run_cli(["new", "rule", "--title", pad + "Short title" + pad, "--body", "b"], v.root)
    assert res.code == 0, res.err
    (path,) = (v.root / "docs/rules").glob("*.md")
    text = path.read_text(encoding="utf-8")
    assert path.name == "RULE-0001-short-title.md" and "\ntitle: Short title\n" in text and "\n# Short title\n" in text


@pytest.mark.parametrize("content, title", [
    ("# \u3000\u3000\n\nbody text\n", "good-name"),  # a blank heading: the file name, not the next paragraph
    ("#\nA paragraph under a bare hash.\n", "good-name"),
    ("# Real title\n\nbody\n", "Real title")])
def test_promote_takes_its_title_from_a_heading_on_its_own_line(make_vault, content, title) -> None:  # type: ignore[no-untyped-def]
    from vaultsync.memory.promote import promote

    v = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001")})
    v.write("docs/scratch/good-name.md", content)
    written = promote(_ws(v), "docs/scratch/good-name.md", "rule")
    assert f"\ntitle: {title}\n" in (v.root / written.path).read_text(encoding="utf-8")


def test_promote_of_a_too_long_frontmatter_title_points_to_title_too(make_vault) -> None:  # type: ignore[no-untyped-def]
    v = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001")})
    v.write("docs/scratch/long.md", f"---\ntitle: {'x' * 320}\n---\nSome text.\n")
    res = run_cli(["promote", "docs/scratch/long.md", "--type", "rule"], v.root)
    assert res.code == 2 and ("docs/scratch/long.md: its frontmatter title, the title it would take, has 320 characters "
                              "(at most 300) — give a shorter one: --title (MCP: title)") in res.err


@pytest.mark.parametrize("link", ["[[RULE-0001]]", "[[RULE-0001-no-friday]]", "[[No deploys on Fridy]]"])
def test_writing_the_note_a_dangling_link_waits_for_adds_no_error(make_vault, link) -> None:  # type: ignore[no-untyped-def]
    """The link was an error before; the new note only changes its hint ("did you mean …?"): not a new error."""
    v = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001", body=f"See {link}.\n")})
    written = create(_ws(v), "rule", "No deploys on Friday", body="Deploys wait for Monday.")
    assert written.path == "docs/rules/RULE-0001-no-deploys-on-friday.md"


def test_supersede_warns_when_the_older_note_replaces_the_newer(vault: Vault) -> None:
    """`supersede ADR-0002 ADR-0001` with ADR-0001 created first: written as asked (a revert to an older
    decision is legitimate), with SS006 naming the other order and how to undo."""
    vault.write("docs/adrs/A.md", adr("ADR-0001").replace('created: "2024-03-01"', 'created: "2023-01-10"'))
    vault.write("docs/adrs/B.md", adr("ADR-0002"))
    vault.commit("two")
    res = run_cli(["supersede", "ADR-0002", "ADR-0001"], vault.root)
    assert res.code == 0 and res.out.split() == ["docs/adrs/A.md", "docs/adrs/B.md"]
    assert res.err.startswith("docs/adrs/A.md:6:10: SS006 warning: created 2023-01-10, before the note it now "
                              "supersedes, ADR-0002 (created 2024-03-01) — if that one is the newer decision, the "
                              "order is `vaultsync supersede ADR-0001 ADR-0002`"), res.err
    vault.git("checkout", "--", "docs/adrs/A.md", "docs/adrs/B.md")
    res = run_cli(["supersede", "ADR-0001", "ADR-0002"], vault.root)
    assert res.code == 0 and "SS006" not in res.err


@pytest.mark.parametrize("edited", [("A",), ("B",), ("A", "B")])
@pytest.mark.parametrize("staged", [False, True])
def test_the_undo_ss006_never_throws_away_an_edit_made_before(vault: Vault, edited, staged) -> None:
    """A new user's reversed `supersede` was told to undo with `git checkout -- A B`, which would also throw
    away edits the notes held before the command. A note whose text is not what git's index holds is named
    to mend by hand; `git checkout` is offered only for notes it restores exactly as they were."""
    files = {"A": adr("ADR-0001").replace('created: "2023-01-10"', "").replace('created: "2024-03-01"',
                                                                              'created: "2023-01-10"'),
             "B": adr("ADR-0002")}
    for name, text in files.items():
        vault.write(f"docs/adrs/{name}.md", text)
    vault.commit("tracked")
    for name in edited:  # a body edit made before the command
        files[name] = files[name] + "A paragraph written this morning.\n"
        vault.write(f"docs/adrs/{name}.md", files[name])
        if staged:
            vault.git("add", f"docs/adrs/{name}.md")
    res = run_cli(["supersede", "ADR-0002", "ADR-0001"], vault.root)
    assert res.code == 0 and " SS006 " in res.err, res.err
    for name in "AB":
        assert (f"docs/adrs/{name}.md holds edits git does not have" in res.err) == (name in edited and not staged)
    undo = re.search(r"undo this with `(git checkout -- [^`]+)`", res.err)
    assert (undo is None) == (len(edited) == 2 and not staged)
    if undo:
        vault.git(*undo.group(1).split()[1:])
        for name in undo.group(1).split()[3:]:
            assert (vault.root / name).read_text() == files[name.split("/")[-1][:-3]]  # the morning's edit kept


@pytest.mark.parametrize("untracked", [(), ("A",), ("B",), ("A", "B")])
def test_the_undo_ss006_gives_restores_what_git_tracks_and_says_what_it_cannot(vault: Vault, untracked) -> None:
    """The undo was `git checkout -- A B` with B new and untracked: git refused the whole command and
    restored neither. It names the tracked notes only (and runs), and the untracked ones to mend by hand."""
    files = {"A": adr("ADR-0001").replace('created: "2024-03-01"', 'created: "2023-01-10"'), "B": adr("ADR-0002"),
             "C": adr("ADR-0003")}
    for name in ("A", "B", "C"):
        if name not in untracked:
            vault.write(f"docs/adrs/{name}.md", files[name])
    vault.commit("tracked")
    for name in untracked:
        vault.write(f"docs/adrs/{name}.md", files[name])
    res = run_cli(["supersede", "ADR-0002", "ADR-0001"], vault.root)
    assert res.code == 0 and " SS006 " in res.err, res.err
    for name in untracked:
        assert f"docs/adrs/{name}.md holds edits git does not have: remove its" in res.err
    undo = re.search(r"undo this with `(git checkout -- [^`]+)`", res.err)
    assert (undo is None) == (len(untracked) == 2)
    if undo:
        assert vault.git(*undo.group(1).split()[1:], check=False).returncode == 0
        for name in set("AB") - set(untracked):
            assert (vault.root / f"docs/adrs/{name}.md").read_text() == files[name]


def test_new_supersedes_commit_needs_a_body(vault: Vault) -> None:
    """`new --supersedes X --commit` with no body committed the type's empty sections, hiding X behind them,
    right after warning to fill it in before committing. It is refused, nothing written; with --body it goes."""
    vault.write("docs/rules/RULE-0001.md", "---\nmemory_id: RULE-0001\ntype: rule\ntitle: Renew certs\n"
                "status: active\ncreated: \"2024-03-01\"\n---\nRenew 30 days ahead.\n")
    vault.commit("init")
    res = run_cli(["new", "rule", "--title", "Renew certs earlier", "--supersedes", "RULE-0001", "--commit",
                   "--set", "status=active"], vault.root)  # in force: it would hide RULE-0001 (a draft hides nothing)
    assert res.code == 2 and "--supersedes RULE-0001 --commit needs --body or --edit" in res.err, res.err
    assert vault.git("status", "--porcelain").stdout == "" and len(vault.git("log", "--format=%h").stdout.split()) == 1
    res = run_cli(["new", "rule", "--title", "Renew certs earlier", "--supersedes", "RULE-0001", "--commit",
                   "--body", "Renew 45 days ahead."], vault.root)
    assert res.code == 0 and "committed" in res.err, res.err


def _rule_and_editor(vault: Vault, tmp_path: Path, monkeypatch, editor: str) -> None:  # type: ignore[no-untyped-def]
    """RULE-0001 committed, and ``$VISUAL`` a script running ``editor`` (shell lines; ``$1`` is the file)."""
    vault.write("docs/rules/RULE-0001.md", "---\nmemory_id: RULE-0001\ntype: rule\ntitle: Renew certs\n"
                "status: active\ncreated: \"2024-03-01\"\n---\nRenew 30 days ahead.\n")
    vault.commit("init")
    script = tmp_path / "editor.sh"
    script.write_text(f"#!/bin/sh\n{editor}\n", encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(script))


@pytest.mark.parametrize("editor, commit, code, committed", [
    ("true", True, 1, False),  # closed without a change: not committed
    (":", False, 0, False),  # not asked to commit: a warning
    ("printf 'Renew 45 days ahead.\\n' >> \"$1\"", True, 0, True),  # filled in: committed
])
def test_new_supersedes_edit_commit_refuses_an_unchanged_successor(vault: Vault, tmp_path: Path, monkeypatch,
                                                                  editor: str, commit: bool, code: int,
                                                                  committed: bool) -> None:
    """``--edit`` counted as a body even when the editor closed without a change: ``--supersedes X --edit
    --commit`` committed the type's empty sections and hid X behind them, without a word."""
    _rule_and_editor(vault, tmp_path, monkeypatch, editor)
    res = run_cli(["new", "rule", "--title", "Renew certs earlier", "--supersedes", "RULE-0001", "--edit",
                   "--set", "status=active", *(["--commit"] if commit else [])], vault.root)
    assert res.code == code, res.err
    assert (len(vault.git("log", "--format=%h").stdout.split()) == 2) == committed
    new = "docs/rules/RULE-0002-renew-certs-earlier.md"
    assert (vault.root / new).exists()  # nothing lost: the files stay for the writer to fill in
    if not committed:
        assert "RULE-0002 holds only the type's empty sections" in res.err and "supersedes RULE-0001" in res.err
        assert ("not committed" in res.err and f"fill in {new}" in res.err) == commit, res.err
        status = vault.git("status", "--porcelain", "-uall").stdout.splitlines()
        assert " M docs/rules/RULE-0001.md" in status and f"?? {new}" in status, status


@pytest.mark.parametrize("kind, title, extra", [
    ("adr", "Use ILM for log indices", []), ("rule", "Rotate keys", []),
    ("incident", "Disk full", ["--set", "severity=SEV2"]), ("adr", "ログの保存期間", []),
])
@pytest.mark.parametrize("body", [False, True])
def test_new_edit_commit_never_commits_an_untouched_skeleton(vault: Vault, tmp_path: Path, monkeypatch, kind: str,
                                                             title: str, extra: list[str], body: bool) -> None:
    """``new --edit --commit`` committed the type's empty sections when the editor closed without a change;
    with ``--body`` the text was already written, so an unchanged editor accepts it."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit("init")
    monkeypatch.setenv("VISUAL", "true")
    res = run_cli(["new", kind, "--title", title, *extra, *(["--body", "Why we chose it."] if body else []),
                   "--edit", "--commit"], vault.root)
    assert (res.code, len(vault.git("log", "--format=%h").stdout.split())) == ((0, 2) if body else (1, 1)), res.err
    status = vault.git("-c", "core.quotepath=off", "status", "--porcelain", "-uall").stdout
    written = [p for p in status.splitlines() if p.startswith("??")]
    assert len(written) == (0 if body else 1)  # nothing lost: the skeleton stays to be filled in
    if not body:
        assert "not committed" in res.err and f"fill in {written[0][3:]}" in res.err, res.err


@pytest.mark.parametrize("status", [1, 2, 130])
@pytest.mark.parametrize("supersedes", [False, True])
def test_new_edit_commit_commits_nothing_when_the_editor_calls_the_edit_off(vault: Vault, tmp_path: Path, monkeypatch,
                                                                           status: int, supersedes: bool) -> None:
    """An editor that exits non-zero (vim's `:cq`) calls the edit off, as `git commit` reads it: the note was
    committed anyway. Now nothing is committed and the file stays as the editor left it."""
    _rule_and_editor(vault, tmp_path, monkeypatch, f"printf 'Half a thought.\\n' >> \"$1\"\nexit {status}")
    res = run_cli(["new", "rule", "--title", "Renew sooner", *(["--supersedes", "RULE-0001"] if supersedes else []),
                   "--edit", "--commit"], vault.root)
    assert res.code == 1 and f"the editor exited with status {status}: nothing committed" in res.err, res.err
    assert len(vault.git("log", "--format=%h").stdout.split()) == 1
    assert "Half a thought." in (vault.root / "docs/rules/RULE-0002-renew-sooner.md").read_text(encoding="utf-8")


def test_show_keeps_each_committed_field_on_its_line(vault: Vault) -> None:
    """A committed value holding a line break or a terminal escape is shown escaped, never as a forged line."""
    vault.write("docs/adrs/A.md", adr("ADR-0001", extra='owner: "x\\nstatus: accepted\\u001b[31m"\n'))
    out = run_cli(["show", "ADR-0001"], vault.root).out.splitlines()
    assert out[2].startswith("created: ") and "owner: x\\nstatus: accepted\\u001b[31m" in out[2] and "\x1b" not in out[2]


def test_a_write_left_uncommitted_says_search_will_not_find_it_yet(vault: Vault) -> None:
    """vaultsync indexes commits: a memory written without --commit is not searchable yet, and the write
    says so (an agent that writes, then searches, would otherwise miss its own memory silently)."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit("init")
    res = run_cli(["new", "adr", "--title", "Later"], vault.root)
    assert res.code == 0 and "written, not committed: search finds it once it is committed" in res.err
    res = run_cli(["new", "adr", "--title", "Now", "--commit"], vault.root)
    assert res.code == 0 and "not committed" not in res.err


def test_status_says_how_to_turn_on_a_configured_check_hook(vault: Vault) -> None:
    """A fresh clone has vaultsync-check in .pre-commit-config.yaml but no hook yet: `pre-commit install`."""
    vault.write(".pre-commit-config.yaml", "repos:\n- repo: local\n  hooks:\n  - id: vaultsync-check\n")
    vault.write("docs/a.md", "# a\n")
    vault.commit("init")
    out = run_cli(["status"], vault.root).out
    assert "pre-commit check off (run `pre-commit install`: .pre-commit-config.yaml has vaultsync-check)" in out


def test_supersede_commit_never_carries_the_users_own_uncommitted_edits(vault: Vault) -> None:
    """``git commit --only`` commits a file whole: when a note the write edits holds uncommitted edits of the
    user's, the write is refused before anything is written (it wrote both notes, then said "not committed",
    exit 2: an attacker's finding) and says why; with a clean note the commit goes through."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002"))
    vault.commit("init")
    with (vault.root / "docs/adrs/ADR-0001.md").open("a") as f:
        f.write("A private draft line.\n")
    before = {p: (vault.root / p).read_bytes() for p in ("docs/adrs/ADR-0001.md", "docs/adrs/ADR-0002.md")}
    res = run_cli(["supersede", "ADR-0001", "ADR-0002", "--commit"], vault.root)
    assert res.code == 2 and "docs/adrs/ADR-0001.md holds uncommitted changes of yours, which a committed write " \
        "would carry along" in res.err and "nothing was written" in res.err, res.err
    assert vault.git("log", "--format=%s").stdout.splitlines() == ["init"]
    assert {p: (vault.root / p).read_bytes() for p in before} == before  # the user's edit kept, nothing else
    vault.git("checkout", "--", ".")
    res = run_cli(["supersede", "ADR-0001", "ADR-0002", "--commit"], vault.root)
    assert res.code == 0 and "A private draft line." not in vault.git("show", "HEAD").stdout, res.err
    # it says what it committed, as `new --commit` does (it printed only the paths)
    assert f"committed {vault.git('rev-parse', 'HEAD').stdout.strip()[:10]}" in res.err, res.err


@pytest.mark.parametrize("command, uncommitted", [
    (["supersede", "ADR-0001", "ADR-0002", "--commit"], "ADR-0001"),
    (["supersede", "ADR-0001", "ADR-0002", "--commit"], "ADR-0002"),
    (["new", "adr", "--title", "Newer", "--supersedes", "ADR-0001", "--body", "## Decision\nX.\n", "--commit"],
     "ADR-0001"),
])
def test_a_committed_supersession_of_a_note_not_committed_names_it(vault: Vault, command, uncommitted) -> None:
    """A supersession committed on its own is checked over HEAD's files: a note written but not committed
    was refused as "SS001 … no note of that name" and "WL001 no such note", though the user sees it."""
    vault.write("docs/adrs/keep.md", adr("ADR-0009"))
    vault.commit("init")
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002"))
    vault.git("add", "--", f"docs/adrs/{'ADR-0002' if uncommitted == 'ADR-0001' else 'ADR-0001'}.md")
    vault.git("commit", "-q", "--no-verify", "-m", "one")
    res = run_cli(command, vault.root)
    assert res.code != 0 and f"{uncommitted} (docs/adrs/{uncommitted}.md) is not committed" in res.err, res.err
    assert "SS001" not in res.err and vault.git("log", "--format=%s").stdout.splitlines() == ["one", "init"]


@pytest.mark.parametrize("command", [
    ["new", "rule", "--title", "Links to the draft", "--body", "Follow [[ADR-0002-draft]]."],
    ["new", "rule", "--title", "Embeds the draft", "--body", "See ![[ADR-0002-draft#Context]]."],
    ["new", "rule", "--title", "Links to a heading", "--body", "As [[ADR-0002-draft#Context|the draft]] says."],
])
def test_a_committed_write_is_checked_against_what_the_commit_holds(vault: Vault, command: list[str]) -> None:
    """``--commit`` commits the write's files only: a link to a note that is written but not committed would
    dangle in that commit (``check --rev HEAD`` fails). The write is checked over HEAD's files and refused;
    without ``--commit`` the working tree holds the note, and the same write passes."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit("init")
    vault.write("docs/adrs/ADR-0002-draft.md", adr("ADR-0002", body="# Draft\n\n## Context\n\nWhy.\n"))
    res = run_cli([*command, "--commit"], vault.root)
    assert res.code == 1 and "refused, nothing written" in res.err and "ADR-0002" in res.err, res.err
    assert vault.git("log", "--format=%s").stdout.splitlines() == ["init"]
    assert vault.git("status", "--porcelain").stdout.strip() == "?? docs/adrs/ADR-0002-draft.md"
    res = run_cli(command, vault.root)
    assert res.code == 0 and "not committed" in res.err, res.err
    vault.commit("both")
    assert run_cli(["check", "--rev", "HEAD"], vault.root).code == 0


@pytest.mark.parametrize("title, what, where", [
    ("Line one\n## Injected heading\n\n---\nstatus: superseded", "a line break (U+000A)", 9),
    ("a\r\nmemory_id: RULE-9999", "a line break (U+000D)", 2),
    ("Ends with a break\nx", "a line break (U+000A)", 18),  # a break at the end is stripped, as blanks are
    ("Unicode\u2028line separator", "a line break (U+2028)", 8),
    ("Next\x85line", "a line break (U+0085)", 5),
    ("Tab\there", "a control character (U+0009)", 4),
    ("Null\x00byte", "a control character (U+0000)", 5),
    ("日本語の\n見出し", "a line break (U+000A)", 5),
])
def test_a_title_that_is_not_one_line_is_refused_and_nothing_is_written(make_vault, title, what, where) -> None:  # type: ignore[no-untyped-def]
    """The title heads the note (`# title`): a line break in it wrote headings, fields and a `---` of its own
    into the body, and every search output that shows the title. Characters are counted from 1, as an
    editor's columns are."""
    v = make_vault({})
    with pytest.raises(MemoryWriteError, match=rf"title: must be one line of text, but it holds {re.escape(what)} "
                                               rf"at character {where}"):
        create(_ws(v), "rule", title, body="x")
    assert not (v.root / "docs/rules").exists() or not list((v.root / "docs/rules").iterdir())
    res = run_cli(["new", "rule", "--title", title], v.root)
    assert res.code == 2 and "must be one line" in res.err and "Traceback" not in res.err  # as for an empty title


@pytest.mark.parametrize("title, refused", [
    ("T" * 300, False), ("T" * 301, True), ("語" * 301, True), ("é" * 300, False),
    ("a" * 299 + "e\u0301", False),  # é written as e + a combining accent: stored as one character (NFC)
    ("a" * 300 + "  ", False),  # the blanks around it are not stored
    ("Body passed as a title. " * 5000, True)])
def test_a_title_longer_than_300_characters_is_refused_and_nothing_is_written(make_vault, title, refused) -> None:  # type: ignore[no-untyped-def]
    """A title heads the note and every hit that shows it: 300,000 characters (a body passed as the title)
    were written. Characters are counted as stored (stripped, NFC), not bytes."""
    v = make_vault({})
    res = run_cli(["new", "rule", "--title", title, "--body", "x"], v.root)
    rules = list((v.root / "docs/rules").glob("*.md")) if (v.root / "docs/rules").exists() else []
    if refused:
        assert res.code == 2 and "Traceback" not in res.err and not rules
        assert f"title: must be at most 300 characters, but it has {len(title.strip()):,} — put the detail in " \
               "the body" in res.err
    else:
        assert res.code == 0 and len(rules) == 1, res.err


@pytest.mark.parametrize("value, expected", [
    ("ADR-0001", "'ADR-0001'"), ("x" * 80, repr("x" * 80)),
    ("x" * 81, "'" + "x" * 80 + "… (81 characters)"), ("語" * 200, "'" + "語" * 80 + "… (200 characters)"),
    ("\n\"" * 60, repr("\n\"" * 40)[:-1] + "… (120 characters)"),  # never cut inside an escape
    (["a"] * 40, repr(["a"] * 40)[:80] + f"… ({len(repr(['a'] * 40))} characters)")])
def test_a_message_repeats_at_most_80_characters_of_a_value(value, expected) -> None:  # type: ignore[no-untyped-def]
    from vaultsync.diagnostics import shown

    assert shown(value) == expected


def test_a_multi_line_title_written_by_hand_is_shown_on_one_line(make_vault) -> None:  # type: ignore[no-untyped-def]
    v = make_vault({"docs/notes/n.md": '---\ntitle: "Two\\n## lines\\u2028---"\n---\n## Usage\nThe zebrafish body.\n'})
    v.commit("n", "--no-verify")
    assert run_cli(["sync", "--wait", "60"], v.root).code == 0
    for fmt in ("text", "markdown"):
        out = run_cli(["search", "zebrafish", "--format", fmt, "--no-daemon"], v.root).out
        assert "Two ## lines --- › Usage" in out, out
        assert "\n## lines" not in out and "\u2028" not in out


def test_a_multi_line_memory_id_or_status_written_by_hand_is_shown_on_one_line(make_vault) -> None:  # type: ignore[no-untyped-def]
    v = make_vault({"docs/notes/p.md": '---\ntitle: P\nmemory_id: "PX\\nPY"\nstatus: "acc\\u2028epted"\n---\n'
                                       "The pangolin body.\n"})
    v.commit("p", "--no-verify")
    assert run_cli(["sync", "--wait", "60"], v.root).code == 0
    for fmt in ("text", "markdown"):
        out = run_cli(["search", "pangolin", "--format", fmt, "--no-daemon"], v.root).out
        assert "PX PY · acc epted" in out and "\nPY" not in out and "\u2028" not in out, out


@pytest.mark.parametrize("written, shown", [
    ('related: ["[[ADR-0002]]"]\n', 'related: ["[[ADR-0002]]"]'),                  # was [[[ADR-0002]]]
    ('related: ["[[ADR-0002]]", "[[ADR-0002#Why]]"]\n', 'related: ["[[ADR-0002]]", "[[ADR-0002#Why]]"]'),
    ("projects: [checkout, ledger-v2]\n", "projects: [checkout, ledger-v2]"),      # plain items stay plain
    ('projects: ["a, b", "x: y"]\n', 'projects: ["a, b", "x: y"]'),              # one item each, read back
    ('owner: {team: "[core]"}\n', 'owner: {team: "[core]"}'),
])
def test_show_writes_a_list_of_links_as_the_yaml_it_reads_back_as(vault: Vault, written, shown) -> None:
    """``show`` printed ``related: [[[ADR-0002]]]`` for a list of one link: an item is quoted where bare it
    would read as something else."""
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", body="# ADR-0002\n## Why\nText.\n"))
    vault.write("docs/free/A.md", f"---\ntitle: A\n{written}---\nBody.\n")
    vault.commit("a")
    res = run_cli(["show", "docs/free/A.md"], vault.root)
    assert res.code == 0 and shown in res.out.splitlines()[2].split("   "), res.out


def test_a_commit_a_git_hook_refuses_is_a_refusal_with_the_files_kept(vault) -> None:  # type: ignore[no-untyped-def]
    """README: "1 refused (… or not committed)"; a `git commit` a hook refused exited 2, as a bad request."""
    vault.commit("config")
    hook = vault.root / ".git/hooks/pre-commit"
    hook.write_text("#!/bin/sh\necho 'policy: no commits today' >&2\nexit 1\n")
    hook.chmod(0o755)
    res = run_cli(["new", "adr", "--title", "Replace the ledger", "--body", "Why.", "--commit"], vault.root)
    assert res.code == 1 and "not committed" in res.err and "policy: no commits today" in res.err, res.err
    (written,) = (vault.root / "docs/adrs").glob("*.md")
    assert "Replace the ledger" in written.read_text() and git(vault.root, "status", "--porcelain").stdout.strip()


def test_promote_takes_the_field_its_advice_names(make_vault) -> None:  # type: ignore[no-untyped-def]
    """An incident needs `severity`: promote advised `--set severity=SEV1`, an option it did not have."""
    v = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001"), "docs/scratch/c.md": "# Outage\nThe ledger stalled.\n"})
    v.commit("init")
    asked = run_cli(["promote", "docs/scratch/c.md", "--type", "incident"], v.root)
    advice = re.search(r"--set severity=\S+", asked.err)
    assert asked.code == 2 and advice, asked.err
    done = run_cli(["promote", "docs/scratch/c.md", "--type", "incident", *advice.group(0).split(" ", 1)], v.root)
    assert done.code == 0, done.err
    (made,) = (v.root / "docs/incidents").glob("*.md")
    assert "severity: SEV" in made.read_text() and run_cli(["check"], v.root).code == 0


def test_review_refuses_an_empty_note_to_confirm(vault) -> None:  # type: ignore[no-untyped-def]
    """`--confirm ''` listed the queue and exited 0, as if nothing had been asked."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit("init")
    res = run_cli(["review", "--confirm", ""], vault.root)
    assert res.code == 2 and "empty note reference" in res.err, res.err


@pytest.mark.parametrize("status, hides", [(None, False), ("proposed", False), ("accepted", True)])
def test_a_successor_not_in_force_is_not_said_to_hide_the_note_it_supersedes(vault, status, hides) -> None:  # type: ignore[no-untyped-def]
    """`new adr --supersedes ADR-0001` (status proposed) warned both that ADR-0001 stays in force (SS007) and
    that search now hides it behind empty sections; only a successor in force hides it (ADR-0114)."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit("init")
    given = ["--set", f"status={status}"] if status else []
    res = run_cli(["new", "adr", "--title", "Replace it", "--supersedes", "ADR-0001", *given], vault.root)
    assert res.code == 0 and ("which search hides behind it" in res.err) == hides, res.err
    committed = run_cli(["new", "adr", "--title", "Again", "--supersedes", "ADR-0001", *given, "--commit"], vault.root)
    assert committed.code == (2 if hides else 0), committed.err


def test_a_memory_id_longer_than_a_file_name_leaves_no_room_for_a_slug_and_never_hangs() -> None:
    """An `id_prefix` a commit set to 300 letters left a negative byte budget: the slug loop never ended."""
    from vaultsync.memory.scaffold import note_path, slug
    from vaultsync.vault.config import TypeSpec

    assert slug("Any title", max_bytes=-40) == "" and slug("Any title", max_bytes=0) == ""
    assert note_path(TypeSpec("rule", "docs/rules", "rule"), "X" * 300 + "-0001", "Title") == \
        "docs/rules/" + "X" * 300 + "-0001.md"


@pytest.mark.parametrize("typed, close", [("incidnt", "incident"), ("ADR", "adr"), ("rules", "rule"), ("memo", None)])
def test_an_unknown_type_names_the_close_one(make_vault, typed, close) -> None:  # type: ignore[no-untyped-def]
    from vaultsync.memory.errors import MemoryWriteError
    from vaultsync.memory.scaffold import type_spec

    v = make_vault({"docs/adrs/A.md": adr("ADR-0001")})
    with pytest.raises(MemoryWriteError) as err:
        type_spec(_ws(v).vault().config, typed)
    assert (f"did you mean '{close}'?" in str(err.value)) if close else "did you mean" not in str(err.value)


def test_an_unknown_type_names_a_configured_one_in_another_case() -> None:
    from vaultsync.memory.errors import MemoryWriteError
    from vaultsync.memory.scaffold import type_spec
    from vaultsync.vault.config import Config, TypeSpec

    config = Config(types=[TypeSpec("ADR", "docs/adr", "adr"), TypeSpec("Incident", "docs/inc", "incident")])
    for typed, close in (("adr", "ADR"), ("ADRs", "ADR"), ("incidnt", "Incident")):
        with pytest.raises(MemoryWriteError, match=f"did you mean '{close}'"):
            type_spec(config, typed)


@pytest.mark.parametrize("value, said", [(".inf", "inf"), ("-.inf", "-inf"), (".nan", "nan"), (".NaN", "nan")])
@pytest.mark.parametrize("field", ["score", "confidence", "title", "importance"])
def test_show_writes_standard_json_for_yamls_infinities_and_nan(vault: Vault, field, value, said) -> None:  # type: ignore[no-untyped-def]
    """`show --format json` wrote `Infinity` and `NaN`, which no standard JSON parser reads (RFC 8259)."""
    vault.write("docs/free.md", f"---\n{field}: {value}\n---\nx\n")
    out = run_cli(["show", "docs/free.md", "--format", "json"], vault.root).out

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    view = json.loads(out, parse_constant=refuse)
    assert view["frontmatter"][field] == said and (view["title"] == said) == (field == "title")


def test_show_of_a_note_without_frontmatter_says_unset_not_none(vault: Vault) -> None:
    """`show` printed Python's `type: None   status: None` for a note without frontmatter."""
    vault.write("docs/plain.md", "# Plain\nNo frontmatter here.\n")
    out = run_cli(["show", "docs/plain.md"], vault.root).out
    assert "path: docs/plain.md   type: (unset)   status: (unset)" in out and "None" not in out, out


@pytest.mark.parametrize("ref", ["adr-0001", "ＡＤＲ-0001", "ADR\u20100001", " ADR-0001 "])
def test_show_finds_a_memory_id_as_search_compares_it(vault: Vault, ref) -> None:
    """ID001 says search and lookups read such spellings as one id: `show` now compares them as search does."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    res = run_cli(["show", ref], vault.root)
    assert res.code == 0 and res.out.startswith("ADR-0001  "), (res.out, res.err)


@pytest.mark.parametrize("ref, said", [
    ("React Native", "did you mean ADR-0001 ('Use React Native for the app')? ('React Native' is in their title)"),
    ("react native", "did you mean ADR-0001 ('Use React Native for the app')?"),
    ("ネイティブ", "did you mean ADR-0002 ('ネイティブ アプリの配布')?"),
    ("the", "did you mean ADR-0001 ('Use React Native for the app'), ADR-0003 ('Ship the release on Tuesday')?"),
    ("Re", None),  # too short to name a title
])
def test_a_title_word_given_for_a_note_names_the_notes_with_that_title(vault: Vault, ref, said) -> None:
    """`vaultsync show "React Native"` said only "no note": a title is no reference (two notes may share one,
    and a write must not pick one), but the notes whose title holds the words are named."""
    vault.write("docs/adrs/A.md", adr("ADR-0001", title="Use React Native for the app"))
    vault.write("docs/adrs/B.md", adr("ADR-0002", title="ネイティブ アプリの配布"))
    vault.write("docs/adrs/C.md", adr("ADR-0003", title="Ship the release on Tuesday"))
    vault.commit("three")
    res = run_cli(["show", ref], vault.root)
    assert res.code == 2 and f"no note '{ref}' in the vault" in res.err
    assert (said in res.err) if said else "did you mean" not in res.err, res.err


def test_the_last_id_a_form_allows_is_refused_in_one_line_naming_its_note(vault: Vault) -> None:
    """A note `RULE-999999` made every `new rule` allocate RULE-1000000, which the schema refuses (SC001, no
    argument mends it). It is one line naming the note; a file name with more digits is no id at all."""
    vault.write("docs/notes/RULE-0099999999999999999999-x.md", "# not an id\n")  # ignored: no id of the form
    vault.write("docs/rules/a.md", "---\nmemory_id: RULE-0007\ntype: rule\ntitle: A\nstatus: active\n"
                                   'created: "2024-03-01"\nenforcement: must\n---\nBody.\n')
    vault.commit("seed")
    res = run_cli(["new", "rule", "--title", "Next", "--body", "Text.", "--set", "enforcement=must"], vault.root)
    assert res.code == 0 and "docs/rules/RULE-0008-next.md" in res.out, res.err
    vault.write("docs/rules/b.md", "---\nmemory_id: RULE-999999\ntype: rule\ntitle: B\nstatus: active\n"
                                   'created: "2024-03-01"\nenforcement: must\n---\nBody.\n')
    assert run_cli(["check"], vault.root).code == 0
    res = run_cli(["new", "rule", "--title", "Later", "--body", "Text."], vault.root)
    assert res.code == 2 and res.err.count("\n") == 1 and "no RULE memory_id is left: docs/rules/b.md holds " \
        "RULE-999999, the highest the form RULE-N (at most 6 digits) allows" in res.err, res.err


@pytest.mark.parametrize("title", ["\u200b", "\u200b\u200d", " \u0301 ", "\u2060"])
def test_a_title_with_nothing_visible_is_refused(vault: Vault, title: str) -> None:
    """`new` wrote `RULE-0005.md` with a title of one U+200B: a note no one can see the name of."""
    vault.write("docs/adrs/A.md", adr("ADR-0001"))
    vault.commit("a")
    res = run_cli(["new", "rule", "--title", title, "--body", "Text."], vault.root)
    assert res.code == 2 and "title: holds no visible character" in res.err, res.err
    assert vault.git("status", "--porcelain").stdout == ""


@pytest.mark.parametrize("written, refused", [("[a, b]", True), ("{a: 1}", True), ("true", True), ("2024", False)])
def test_promote_takes_no_title_that_is_not_text(vault: Vault, written: str, refused: bool) -> None:
    """A scratch note's `title: [a, b]` was promoted as the title "['a', 'b']" (Python's own spelling)."""
    vault.write("docs/adrs/A.md", adr("ADR-0001"))
    vault.commit("a")
    vault.write("docs/scratch/t.md", f"---\ntitle: {written}\n---\nBody.\n")
    res = run_cli(["promote", "docs/scratch/t.md", "--type", "adr"], vault.root)
    if refused:
        assert res.code == 2 and "its frontmatter title is not text" in res.err, res.err
        assert (vault.root / "docs/scratch/t.md").exists()
    else:
        assert res.code == 0 and "title: \"2024\"" in (vault.root / res.out.split()[0]).read_text(), res.err


@pytest.mark.parametrize("body", [" ", "\n\t\n"])
def test_a_blank_body_is_no_text_for_a_committed_successor(vault: Vault, body: str) -> None:
    """`--body " "` passed the guard that `--body ""` met, and committed a successor of one heading that hid
    the old note behind nothing."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit("a")
    res = run_cli(["new", "adr", "--title", "Newer", "--supersedes", "ADR-0001", "--body", body, "--commit",
                   "--set", "status=accepted"],
                  vault.root)
    assert res.code == 2 and "needs --body or --edit" in res.err, res.err
    assert vault.git("log", "--format=%s").stdout.splitlines() == ["a"] and vault.git("status", "--porcelain").stdout == ""


def test_promote_commit_commits_the_removal_of_a_tracked_scratch_note(vault: Vault) -> None:
    """The CLI committed the new note only and left ` D docs/scratch/t.md` behind (MCP committed both)."""
    vault.write("docs/adrs/A.md", adr("ADR-0001"))
    vault.write("docs/scratch/t.md", "# A scratch idea\nText.\n")
    vault.git("add", "-A")
    vault.git("commit", "-qm", "a", "--no-verify")
    res = run_cli(["promote", "docs/scratch/t.md", "--type", "adr", "--commit"], vault.root)
    assert res.code == 0, res.err
    assert vault.git("status", "--porcelain").stdout == ""
    assert "docs/scratch/t.md" in vault.git("show", "--stat", "HEAD").stdout


@pytest.mark.parametrize("link_to", ["b.md", "../adrs/A.md", "/etc/hostname"])
def test_promote_never_goes_through_a_symbolic_link(vault: Vault, link_to: str) -> None:
    """`promote docs/scratch/a.md`, a link to b.md, promoted and removed b.md and left a.md dangling: the path
    was resolved before the link check saw it. A link outside the repository was "outside the repository"."""
    vault.write("docs/adrs/A.md", adr("ADR-0001"))
    vault.write("docs/scratch/b.md", "# B\nText.\n")
    vault.commit("a")
    (vault.root / "docs/scratch/a.md").symlink_to(link_to)
    before = sorted(p.name for p in (vault.root / "docs").rglob("*"))
    res = run_cli(["promote", "docs/scratch/a.md", "--type", "adr"], vault.root)
    assert res.code == 2 and "docs/scratch/a.md is a symbolic link; notes are never written or removed through one" \
        in res.err, res.err
    assert sorted(p.name for p in (vault.root / "docs").rglob("*")) == before


def test_the_markdown_queue_says_how_to_confirm_an_expired_note(vault: Vault) -> None:
    """The footer said "Confirm one with `vaultsync review --confirm ID`", which an expired note refuses."""
    vault.write("docs/adrs/A.md", adr("ADR-0001", extra='expires: "2021-01-01"\n'))
    vault.commit("a")
    res = run_cli(["review", "--format", "markdown"], vault.root)
    assert "`vaultsync review --confirm ID` (one past its expires with `--expires YYYY-MM-DD` too" in res.out, res.out


@pytest.mark.parametrize("folder", [":!m", "docs/*", "docs/[r]ules", ":(glob)docs/**"])
def test_a_committed_write_commits_its_note_only_whatever_the_folder_is_called(make_vault, folder) -> None:  # type: ignore[no-untyped-def]
    """A committed config's rule folder ``:!m`` made the note's path an exclude-only pathspec, so a write with
    commit committed everything else: an untracked secrets file and the user's uncommitted edits."""
    from vaultsync.memory.commit import commit_paths

    config = CONFIG.replace("vault: docs", f"vault: [docs, {json.dumps(folder)}]").replace(
        "rule: {folder: docs/rules}", f"rule: {{folder: {json.dumps(folder)}}}")
    v = make_vault({".vaultsync.yaml": config, "docs/adrs/ADR-0001.md": adr("ADR-0001")})
    v.commit("init")
    v.write("secrets.env", "AWS_SECRET=hunter2\n")
    v.write("docs/adrs/ADR-0001.md", adr("ADR-0001") + "\nA private edit, not for this commit.\n")
    ws = Workspace.open(v.root, committing=True)
    written = create(ws, "rule", "Team lunch on Fridays", fields={"status": "active"}, body="Pizza.")
    assert written.changed and all(p.startswith(folder + "/") for p in written.changed)
    commit_paths(ws, written.changed, "RULE-0001: Team lunch on Fridays")
    assert git(v.root, "show", "--name-only", "--format=", "HEAD").stdout.split("\n")[:-1] == written.changed
    status = git(v.root, "status", "--porcelain", "-uall").stdout
    assert "?? secrets.env" in status and " M docs/adrs/ADR-0001.md" in status


@pytest.mark.parametrize("asked", ["[[ADR-0002|x\n\nReviewed-by: Security <sec@example.org>]]",
                                   "x\r\n\r\nSigned-off-by: Linus <l@example.org>", "x\u2028\u2028Co-authored-by: M <m@e.x>",
                                   "x\x0b\x0cAcked-by: A <a@b.c>"])
def test_an_argument_quoted_in_a_commit_message_cannot_add_trailers(make_vault, asked) -> None:  # type: ignore[no-untyped-def]
    """An MCP ``supersede`` whose ``old`` held line breaks put forged ``Reviewed-by:`` trailers in the commit."""
    from vaultsync.memory.commit import commit_paths

    v = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001")})
    v.commit("init")
    v.write("docs/adrs/ADR-0001.md", adr("ADR-0001") + "\nMore.\n")
    commit_paths(Workspace.open(v.root, committing=True), ["docs/adrs/ADR-0001.md"], f"ADR-0003 supersedes {asked}")
    message = git(v.root, "log", "-1", "--format=%B").stdout.strip()
    assert "\n" not in message and message.startswith("ADR-0003 supersedes ")
    assert git(v.root, "log", "-1", "--format=%(trailers)").stdout.strip() == ""
