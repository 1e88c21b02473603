"""Issue 12, kind 5: messages that say what happened and what to write instead."""

from __future__ import annotations

import pytest
from conftest import adr, git, run_cli

ADR1 = adr("ADR-0001", body="# ADR-0001\n## Decision\nUse SQLite.\n")


def _linked(vault, body="Builds on [[ADR-0001]].\n"):
    vault.write("docs/adrs/ADR-0001.md", ADR1)
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", body=body))
    vault.commit("init")


@pytest.mark.parametrize("new, link, fix", [
    ("docs/adrs/ADR-0001-sqlite.md", "[[ADR-0001]]", "[[ADR-0001-sqlite]]"),          # git mv, same blob
    ("docs/archive/ADR-0001.md", "[[adrs/ADR-0001#Decision|why]]", "[[ADR-0001#Decision|why]]"),  # moved folder
    ("docs/adrs/Décision SQLite.md", "[[ADR-0001]]", "[[Décision SQLite]]"),             # renamed and edited
])
def test_a_rename_names_the_new_path_and_the_link_to_write(vault, new, link, fix):
    _linked(vault, body=f"Builds on {link}.\n")
    (vault.root / new).parent.mkdir(parents=True, exist_ok=True)
    vault.git("mv", "docs/adrs/ADR-0001.md", new)
    if "Décision" in new:  # an edit on top of the rename: matched by memory_id
        (vault.root / new).write_text(ADR1 + "More.\n", encoding="utf-8")
        vault.git("add", new)
    res = vault.check("--staged")
    assert res.code == 1
    assert res.lines == [f"docs/adrs/ADR-0002.md:8:11: WL007 {link} → target removed in this commit "
                         f"(docs/adrs/ADR-0001.md): renamed to {new} in this commit — update the link to {fix}"]


def test_a_deletion_still_says_removed(vault):
    _linked(vault)
    vault.git("rm", "-q", "docs/adrs/ADR-0001.md")
    assert vault.check("--staged").lines == [
        "docs/adrs/ADR-0002.md:8:11: WL007 [[ADR-0001]] → target removed in this commit (docs/adrs/ADR-0001.md)"]


@pytest.mark.parametrize("files, link, hint", [
    ({"docs/adrs/ADR-0004-clickhouse-analytics.md": adr("ADR-0004")}, "[[ADR-0004]]",
     "did you mean [[ADR-0004-clickhouse-analytics]]? ('ADR-0004' is the memory_id of "
     "docs/adrs/ADR-0004-clickhouse-analytics.md; links name the file)"),
    ({"docs/adrs/ADR-0004-clickhouse-analytics.md": adr("ADR-0004")}, "[[adr-0004#Context|ctx]]",
     "did you mean [[ADR-0004-clickhouse-analytics#Context|ctx]]?"),
    ({"docs/incidents/INC-7 db lock.md": "# x\n"}, "[[INC-7]]", "did you mean [[INC-7 db lock]]?"),
    ({"docs/rules/deploy-freeze.md": "# x\n"}, "[[deploy-freze]]", "did you mean [[deploy-freeze]]?"),
])
def test_dangling_links_suggest_the_likely_note(vault, files, link, hint):
    for path, text in files.items():
        vault.write(path, text)
    vault.write("docs/a.md", f"{link}\n")
    lines = [line for line in vault.check().lines if line.startswith("docs/a.md")]
    assert len(lines) == 1 and lines[0].startswith(f"docs/a.md:1:1: WL001 {link} → no such note — {hint}"), lines


@pytest.mark.parametrize("extra, by", [
    ('status: superseded\nsuperseded_by: "[[ADR-0002]]"\nexpires: "2024-06-01"\n', ' by [[ADR-0002]]'),
    ('status: superseded by [[ADR-0002]]\nexpires: "2024-06-01"\n', " by [[ADR-0002]]"),
])
def test_expired_but_superseded_says_it_is_hidden(vault, extra, by):
    text = adr("ADR-0001", extra=extra).replace("status: accepted\n", "")
    vault.write("docs/adrs/ADR-0001.md", text)
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra='supersedes: ["[[ADR-0001]]"]\n'))
    lines = vault.check().lines
    assert any(f"DT004 warning: expired on 2024-06-01, but it is already superseded{by} and hidden from search"
               in line for line in lines), lines
    assert not any("supersede it" in line for line in lines)


def test_expired_and_live_still_asks_to_revalidate(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra='expires: "2024-06-01"\n'))
    assert vault.check().lines == ["docs/adrs/ADR-0001.md:7:10: DT004 warning: expired on 2024-06-01: re-validate "
                                   "it (move expires forward, update last_validated) or supersede it"]


def test_a_revision_missing_from_a_shallow_clone_says_how_to_fetch_it(vault, tmp_path):
    vault.write("docs/a.md", "# a\n")
    vault.commit("one")
    vault.write("docs/b.md", "# b\n")
    vault.commit("two")
    vault.git("branch", "feature")
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", "--depth", "1", "--single-branch", f"file://{vault.root}", str(clone))
    for rev in ("origin/feature", "HEAD~1"):
        res = run_cli(["check", "--rev", rev], clone)
        assert res.code == 2 and res.out == ""
        assert f"unknown revision '{rev}' — this clone is shallow" in res.err
        assert "fetch-depth: 0" in res.err and "git fetch --deepen" in res.err
    assert "shallow" not in vault.check("--rev", "nope").err  # a full clone: just unknown


@pytest.mark.parametrize("args, code, expected", [
    (["nosuch.md"], 1, ["nosuch.md: PA003 no such file: nosuch.md — check the path (relative to the current folder)"]),
    (["docs/a.md", "docs/typo.md"], 1, ["docs/typo.md: PA003 no such file: docs/typo.md — check the path "
                                        "(relative to the current folder)"]),
    (["README.md"], 0, []),      # exists, outside the vault (pre-commit passes every staged .md): nothing to say
    (["docs/a.md"], 0, []),
])
def test_paths_given_on_the_command_line(vault, args, code, expected):
    vault.write("docs/a.md", "# a\n")
    vault.write("README.md", "# readme\n")
    for mode in ([], ["--staged"]):
        vault.git("add", "-A")
        res = vault.check(*mode, *args)
        assert (res.code, res.lines) == (code, expected)
        checked = sum(1 for a in args if a == "docs/a.md")
        assert f"{checked} notes checked" in res.out
