"""Lifecycle checks: TTL dates, unique memory_id, supersession (both ways, acyclic), `check --fix`."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess

import pytest
from conftest import adr, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

def d(days: int) -> str:
    """Today + ``days``, read when called: a date fixed at import goes stale in a run across midnight."""
    return (dt.date.today() + dt.timedelta(days=days)).isoformat()


def test_date_order_future_validation_and_expiry(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f'expires: "2024-02-01"\nlast_validated: "{d(3)}"\n'))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra=f'expires: "{d(-1)}"\n'))
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003", extra=f'expires: "{d(30)}"\nlast_validated: "{d(0)}"\n'))
    res = vault.check()
    assert res.lines == [
        "docs/adrs/ADR-0001.md:7:10: DT002 expires: 2024-02-01 is not after created (2024-03-01)",
        "docs/adrs/ADR-0001.md:7:10: DT004 warning: expired on 2024-02-01: re-validate it (move expires forward, "
        "update last_validated) or supersede it",
        f"docs/adrs/ADR-0001.md:8:17: DT003 last_validated: {d(3)} is in the future (today is {d(0)})",
        f"docs/adrs/ADR-0002.md:7:10: DT004 warning: expired on {d(-1)}: re-validate it (move expires forward, "
        "update last_validated) or supersede it",
    ]


def test_expired_severity_is_configurable(vault):
    vault.write(".vaultsync.yaml", vault.root.joinpath(".vaultsync.yaml").read_text() + "checks: {expired: error}\n")
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra=f'expires: "{d(-1)}"\n'))
    res = vault.check()
    assert res.code == 1 and "DT004 expired" in res.out
    vault.write(".vaultsync.yaml", vault.root.joinpath(".vaultsync.yaml").read_text().replace("error", "off"))
    assert vault.check().lines == []


@pytest.mark.parametrize("old, new_extra", [
    (dict(status="superseded", extra='superseded_by: "[[ADR-0002]]"\n'), "supersedes: [ADR-0001]\n"),
    (dict(status='"superseded by [[ADR-0002]]"'), 'supersedes: ["[[ADR-0001]]"]\n'),  # MADR's status line
    (dict(status="superseded", extra="superseded_by: ADR-0002\n"), "supersedes:\n  - ADR-0001\n"),
])
def test_an_expired_note_already_superseded_asks_nothing(vault, old, new_extra):
    """An expired note that a newer note already supersedes is hidden from search anyway: no DT004, so
    it neither blocks a commit (``checks: {expired: error}``) nor warns on every one."""
    vault.write(".vaultsync.yaml", vault.root.joinpath(".vaultsync.yaml").read_text() + "checks: {expired: error}\n")
    old = dict(old, extra=old.get("extra", "") + f'expires: "{d(-3)}"\n')
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", **old))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra=new_extra))
    res = vault.check()
    assert (res.code, res.lines) == (0, []), res.out
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003", extra=f'expires: "{d(-3)}"\n'))  # not superseded: blocks
    res = vault.check()
    assert res.code == 1 and res.lines == [f"docs/adrs/ADR-0003.md:7:10: DT004 expired on {d(-3)}: re-validate it "
                                           "(move expires forward, update last_validated) or supersede it"], res.out


@pytest.mark.parametrize("other", ["adr-0001", "ADR\u20100001", "\uff21\uff24\uff32-0001", "ADR-0001 ", "Adr\u22120001"])
def test_a_memory_id_search_takes_for_another_is_a_duplicate(make_vault, other):
    """Search and `show` read ids case-blind, with any dash and any width (`ＡＤＲ`), so two notes so written
    were one memory for them, yet check passed both."""
    vault = make_vault({"docs/notes/a.md": "---\nmemory_id: ADR-0001\n---\nx\n",
                        "docs/notes/b.md": f'---\nmemory_id: "{other}"\n---\nx\n',
                        "docs/notes/c.md": "---\nmemory_id: ADR-0002\n---\nx\n"})
    lines = [line for line in vault.check().lines if " ID001 " in line]
    assert [line.split(":")[0] for line in lines] == ["docs/notes/a.md", "docs/notes/b.md"], lines
    assert lines[0].endswith(f"is also used by docs/notes/b.md (as {other!r}) — search and lookups read them as one id")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["ADR-0001", "adr-0001", "ADR\u20130001", "ADR-0002", "INC-0001", "ａdr-0001",
                                 "ADR-00001", "ADR_0001"]), min_size=2, max_size=4))
def test_property_id001_exactly_where_search_takes_two_ids_for_one(make_vault, ids):
    from vaultsync.vault.resolve import id_key

    vault = make_vault({f"docs/notes/n{i}.md": f'---\nmemory_id: "{mid}"\n---\nx\n' for i, mid in enumerate(ids)})
    flagged = {line.split(":")[0] for line in vault.check().lines if " ID001 " in line}
    keys = [id_key(mid) for mid in ids]
    assert flagged == {f"docs/notes/n{i}.md" for i, k in enumerate(keys) if keys.count(k) > 1}


def test_duplicate_memory_id_names_the_other_files(vault):
    vault.write("docs/adrs/ADR-0001-a.md", adr("ADR-0001"))
    vault.write("docs/adrs/ADR-0001-b.md", adr("ADR-0001"))
    assert vault.check().lines == [
        "docs/adrs/ADR-0001-a.md:2:12: ID001 memory_id 'ADR-0001' is also used by docs/adrs/ADR-0001-b.md",
        "docs/adrs/ADR-0001-b.md:2:12: ID001 memory_id 'ADR-0001' is also used by docs/adrs/ADR-0001-a.md",
    ]


def test_supersession_consistent_both_ways_passes(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status="superseded", extra='superseded_by: "[[ADR-0002]]"\n'))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra="supersedes: [ADR-0001]\n"))
    assert vault.check().lines == []


def test_madr_status_line_counts_as_supersession(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status='"superseded by [[ADR-0002]]"'))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra='supersedes: ["[[ADR-0001]]"]\n'))
    assert vault.check().lines == []


@pytest.mark.parametrize("field, value, col", [
    ("superseded_by", '"[[ADR-0009]]"', 16), ("supersedes", '["[[ADR-0009]]"]', 14),
    ("supersedes", '["[[ADR-0009|old one]]"]', 14), ("superseded_by", '" [[Ãdr-0009]]"', 16),
])
def test_ss001_of_a_wikilink_says_no_note_of_that_name(vault, field, value, col):
    """A WikiLink is a name only: "no note with that memory_id or name" sent a reader looking for a memory_id."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status="superseded" if field == "superseded_by" else "accepted",
                                             extra=f"{field}: {value}\n"))
    (ss,) = [ln for ln in vault.check().lines if " SS001 " in ln]
    assert ss.startswith(f"docs/adrs/ADR-0001.md:7:{col}: SS001 {field}: ") and ss.endswith("→ no note of that name"), ss


def test_supersession_errors(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))  # no back-reference, status not superseded
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra='supersedes: ["[[ADR-0001]]", ADR-0099]\n'))
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003", status="superseded"))
    assert vault.check().lines == [
        "docs/adrs/ADR-0001.md:1:1: SS002 superseded_by: missing back-reference to ADR-0002 "
        "(docs/adrs/ADR-0002.md supersedes this note) — run `vaultsync check --fix`",
        "docs/adrs/ADR-0001.md:5:9: SS004 status: is 'accepted' but the note is superseded — set status: superseded, "
        "or run `vaultsync check --fix`",
        "docs/adrs/ADR-0002.md:7:30: SS001 supersedes: 'ADR-0099' → no note with that memory_id or name",
        "docs/adrs/ADR-0003.md:5:9: SS004 status: superseded, but no note supersedes it — add superseded_by",
    ]


def test_supersession_cycle_is_reported_once(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status="superseded",
                                             extra="supersedes: [ADR-0002]\nsuperseded_by: ADR-0002\n"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", status="superseded",
                                             extra="supersedes: [ADR-0001]\nsuperseded_by: ADR-0001\n"))
    cycles = [line for line in vault.check().lines if "SS003" in line]
    assert cycles == ["docs/adrs/ADR-0001.md:7:1: SS003 supersession cycle: ADR-0001 → ADR-0002 → ADR-0001"]


def test_fix_writes_only_the_back_reference(vault):
    older = ("\ufeff" + adr("ADR-0001", status="superseded", extra="# keep this comment\ntags:   [ops]\n")).replace("\n", "\r\n")
    vault.write("docs/adrs/ADR-0001.md", older.encode())
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra='supersedes:\n  - "[[ADR-0001]]"\n'))
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003", status="superseded", extra="superseded_by: ADR-0004\n"))
    vault.write("docs/adrs/ADR-0004.md", adr("ADR-0004", extra="supersedes: [ADR-0005]\n"))
    vault.write("docs/adrs/ADR-0005.md", adr("ADR-0005", status="superseded", extra="superseded_by: ADR-0004\n"))
    before = {p.name: p.read_bytes() for p in (vault.root / "docs/adrs").iterdir()}
    res = vault.check("--fix")
    assert res.code == 0, res.out
    after = {p.name: p.read_bytes() for p in (vault.root / "docs/adrs").iterdir()}
    assert after["ADR-0001.md"] == before["ADR-0001.md"].replace(
        b"tags:   [ops]\r\n", b'tags:   [ops]\r\nsuperseded_by: "[[ADR-0002]]"\r\n')
    assert after["ADR-0004.md"] == before["ADR-0004.md"].replace(
        b"supersedes: [ADR-0005]", b'supersedes: [ADR-0005, "[[ADR-0003]]"]')
    assert {k for k in after if after[k] != before[k]} == {"ADR-0001.md", "ADR-0004.md"}


@pytest.mark.parametrize("status_line, written", [
    ("status: accepted\n", "status: superseded\n"),
    ('status: "accepted"  # was proposed\n', 'status: "superseded"  # was proposed\n'),  # quotes and comment kept
    ("status: 'deprecated'\n", "status: 'superseded'\n"),
    ("", "status: superseded\n"),                                  # absent: added (before the closing ---)
    ("status: accepted   # aligned\n", "status: superseded   # aligned\n"),  # the comment's alignment kept
    ("status:\n", "status: superseded\n"), ("status: ~\n", "status: superseded\n"),  # null, however written
    ("status: in review\n", "status: superseded\n"),
])
@pytest.mark.parametrize("nl", ["\n", "\r\n", "\r"])
def test_fix_completes_the_supersession_status_too(vault, status_line, written, nl):
    """SS002 says "run --fix"; after it SS004 (status) remained. --fix now completes the supersession:
    the back-reference and the older note's status, in one run, each edit verified."""
    older = adr("ADR-0001", extra="tags: [ops]\n").replace("status: accepted\n", status_line)
    vault.write("docs/adrs/ADR-0001.md", older.replace("\n", nl).encode())  # CR alone: SS002 said --fix, which refused
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra='supersedes: ["[[ADR-0001]]"]\n'))
    before = vault.check()
    assert any("SS002" in line and line.endswith("run `vaultsync check --fix`") for line in before.lines)
    assert any("SS004" in line for line in before.lines)
    res = vault.check("--fix")
    assert (res.code, res.lines) == (0, []), res.out + res.err
    text = (vault.root / "docs/adrs/ADR-0001.md").read_bytes().decode()
    assert "\r" not in text.replace(nl, "") and "\n" not in text.replace(nl, "")  # one line end, as written
    assert written.replace("\n", nl) in text and 'superseded_by: "[[ADR-0002]]"' in text
    assert "set status: superseded" in res.err and "added superseded_by" in res.err
    assert vault.check("--fix").err == ""  # nothing left to do


@pytest.mark.parametrize("back", ['superseded_by: "[[ADR-0002]]"\n', ""])
@pytest.mark.parametrize("status_lines", ["status: >-\n  accepted\n", "Status: accepted\n", "status: [accepted]\n"])
def test_fix_leaves_a_status_it_cannot_rewrite_safely(vault, status_lines, back):
    """A block scalar, a key in another case (a second `status:` would not fix it), a list: named
    "by hand", the file untouched by it. With the back-reference missing too, --fix added it and left the
    status: a note half-edited, after "run --fix" advice. A note is now edited whole or not at all, and
    SS002 advises by hand."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=back).replace("status: accepted\n", status_lines))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra='supersedes: ["[[ADR-0001]]"]\n'))
    if not back:
        (ss,) = [line for line in vault.check().lines if " SS002 " in line]
        assert "write by hand superseded_by:" in ss, ss
    before = (vault.root / "docs/adrs/ADR-0001.md").read_bytes()
    res = vault.check("--fix")
    assert res.err.startswith("not fixed: docs/adrs/ADR-0001.md: ") and res.err.endswith("write by hand status: superseded\n")
    assert "fixed: " not in res.err.replace("not fixed: ", "")
    assert (vault.root / "docs/adrs/ADR-0001.md").read_bytes() == before


@pytest.mark.parametrize("name", ["ADR-0006 C# tips", "ADR-0006 a|b", "ADR-0006 ^x", "ADR-0006 [draft]"])
@pytest.mark.parametrize("declared_by", ["newer", "older"])
def test_fix_refers_by_memory_id_to_a_file_name_no_wikilink_can_hold(vault, name, declared_by):
    """``[[ADR-0006 C# tips]]`` names note "ADR-0006 C", heading " tips": the fix writes the memory_id,
    which resolves, and the check passes after it."""
    newer = adr("ADR-0006", extra="supersedes: [ADR-0007]\n" if declared_by == "newer" else "")
    older = adr("ADR-0007", status="superseded",
                extra="superseded_by: ADR-0006\n" if declared_by == "older" else "")
    vault.write(f"docs/adrs/{name}.md", newer)
    vault.write("docs/adrs/ADR-0007-old.md", older)
    if declared_by == "older":  # the newer note's side is written: rename the older one unlinkably instead
        (vault.root / "docs/adrs/ADR-0007-old.md").rename(vault.root / f"docs/adrs/{name.replace('0006', '0007')}.md")
        (vault.root / f"docs/adrs/{name}.md").rename(vault.root / "docs/adrs/ADR-0006-new.md")
    res = vault.check("--fix")
    assert res.code == 0, res.out
    fixed = "ADR-0007-old.md" if declared_by == "newer" else "ADR-0006-new.md"
    written = (vault.root / "docs/adrs" / fixed).read_text()
    assert ('superseded_by: "ADR-0006"' if declared_by == "newer" else '"ADR-0007"') in written, written
    assert vault.check().code == 0


def test_fix_writes_nothing_it_cannot_make_resolve(vault):
    """No memory_id and a file name no WikiLink can hold: the back-reference stays for a person (SS002)."""
    vault.write(".vaultsync.yaml", "vault: docs\n")
    vault.write("docs/C# tips.md", "---\nsupersedes: [\"[[old]]\"]\n---\n# C# tips\n")
    vault.write("docs/old.md", "---\nstatus: superseded\n---\n# old\n")
    before = (vault.root / "docs/old.md").read_bytes()
    res = vault.check("--fix")
    assert (vault.root / "docs/old.md").read_bytes() == before, res.out
    ss002 = [line for line in vault.check().lines if " SS002 " in line]  # and the message does not send it to --fix
    assert len(ss002) == 1 and "--fix` cannot" in ss002[0] and "add it by hand" in ss002[0], ss002


@pytest.mark.parametrize(("field", "value"), [
    ("superseded_by", "[ADR-0004]"), ("superseded_by", "[[ADR-0004]]"), ("superseded_by", "[ADR-0004, ADR-0005]"),
    ("superseded_by", "{id: ADR-0004}"), ("supersedes", "[[ADR-0004]]"), ("supersedes", "{old: ADR-0004}"),
    ("supersedes", "[[[ADR-0004]]]"),
])
def test_an_unreadable_supersession_field_is_one_error_and_nothing_for_fix(vault, field, value):
    """``superseded_by: [ADR-0004]`` is LC001 (cannot be read; search ignores it), yet the supersession checks
    read it: ADR-0004 got SS002, the note SS004, and ``--fix`` wrote a back-reference and a status for a
    value the tool called unreadable. One reading: LC001 alone (or FM017 for an unquoted link, which says
    what search does too), and ``--fix`` writes nothing."""
    vault.write(".vaultsync.yaml", "vault: docs\n")
    vault.write("docs/ADR-0003.md", adr("ADR-0003", extra=f"{field}: {value}\n"))
    vault.write("docs/ADR-0004.md", adr("ADR-0004"))
    vault.write("docs/ADR-0005.md", adr("ADR-0005"))
    before = {p.name: p.read_bytes() for p in (vault.root / "docs").iterdir()}
    res = vault.check()
    codes = {line.split(": ", 2)[1].split()[0] for line in res.lines if ": " in line}
    assert codes in ({"LC001"}, {"FM017"}) and ("search ignores" in res.out or "search hides" in res.out), res.out
    vault.check("--fix")
    assert {p.name: p.read_bytes() for p in (vault.root / "docs").iterdir()} == before


@pytest.mark.parametrize("broken", ["supersedes: [[ADR-0004]], [[ADR-0005]]\n", 'title: "unclosed\n',
                                    "tags: [a\n", "\tconfidence: 0.5\n", "misplaced", "a list"])
@pytest.mark.parametrize("side", ["successor", "predecessor"])
def test_a_note_whose_frontmatter_cannot_be_read_is_asked_for_no_back_reference(vault, broken, side):
    """`supersedes: [[A]], [[B]]` is FM005 (YAML refuses the frontmatter); the note that names it as successor
    then also made it SS002 ("missing back-reference"), a second diagnostic for the one mistake, whose fix
    the first already says. Either side's frontmatter, any cause of FM005."""
    vault.write(".vaultsync.yaml", "vault: docs\n")
    old = adr("ADR-0004", status="superseded", extra='superseded_by: "[[ADR-0003]]"\n')
    new = adr("ADR-0003", extra='supersedes: ["[[ADR-0004]]"]\n')
    def broke(text: str) -> str:
        if broken == "misplaced":  # FM003: the frontmatter does not start on line 1
            return "\n" + text
        if broken == "a list":  # FM011: YAML reads a list, not a mapping
            return "---\n- " + text.split("---\n", 2)[1].replace("\n", "\n- ", text.count("\n") - 3) + "---\nx\n"
        return text.replace("created:", broken + "created:", 1)

    if side == "successor":
        new = broke(new)
    else:
        old = broke(old)
    vault.write("docs/ADR-0003.md", new)
    vault.write("docs/ADR-0004.md", old)
    vault.write("docs/ADR-0005.md", adr("ADR-0005"))
    codes = [line.split(": ", 2)[1].split()[0] for line in vault.check().lines]
    assert len(codes) == 1 and codes[0] in ("FM005", "FM006", "FM003", "FM004", "FM011"), codes  # FM006: a tab


def test_fix_never_writes_a_memory_id_two_notes_share(vault):
    """Two notes with memory_id ADR-0006, one named unlinkably: that id would name either; nothing is written."""
    vault.write("docs/adrs/ADR-0006 C# tips.md", adr("ADR-0006", extra="supersedes: [ADR-0007]\n"))
    vault.write("docs/adrs/ADR-0006-copy.md", adr("ADR-0006"))
    vault.write("docs/adrs/ADR-0007-old.md", adr("ADR-0007", status="superseded"))
    before = (vault.root / "docs/adrs/ADR-0007-old.md").read_bytes()
    vault.check("--fix")
    assert (vault.root / "docs/adrs/ADR-0007-old.md").read_bytes() == before
    assert any(" SS002 " in line and "add it by hand" in line for line in vault.check().lines)


def test_fix_appends_to_a_block_list(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra="supersedes:\n  - ADR-0002\ntags: [ops]\n"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", status="superseded", extra="superseded_by: ADR-0001\n"))
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003", status="superseded", extra="superseded_by: ADR-0001\n"))
    assert vault.check("--fix").code == 0
    text = (vault.root / "docs/adrs/ADR-0001.md").read_text()
    assert 'supersedes:\n  - ADR-0002\n  - "[[ADR-0003]]"\ntags: [ops]\n' in text


def test_check_without_fix_never_writes(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra="supersedes: [ADR-0001]\n"))
    before = (vault.root / "docs/adrs/ADR-0001.md").read_bytes()
    for fmt in ("text", "json", "github"):
        vault.check("--format", fmt)
    assert (vault.root / "docs/adrs/ADR-0001.md").read_bytes() == before


def test_json_and_github_formats(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra="confidence: 1.5\n") + "[[nope]]\n")
    data = json.loads(vault.check("--format", "json").out)
    assert data["errors"] == 2 and data["checked"] == 1  # one error for the value, saying that search hides it
    assert data["diagnostics"][0] == {"path": "docs/adrs/ADR-0001.md", "line": 7, "col": 13, "code": "SC001",
                                      "severity": "error", "message": "confidence: 1.5 must be at most 1; search "
                                      "hides this note until it is fixed"}
    gh = vault.check("--format", "github")
    assert gh.code == 1
    assert gh.out.splitlines()[1] == ("::error file=docs/adrs/ADR-0001.md,line=10,col=1,title=WL001::"
                                      "[[nope]] → no such note")


@pytest.mark.parametrize("odd", ["\x1b]0;OWNED\x07", "\x1b[31m", "\x9b2J", "\x7f"])
def test_the_github_format_escapes_a_file_names_terminal_controls(vault, odd):
    """A committed file name's ESC/OSC sequences reached the CI log raw in ``--format github`` (the text format
    escaped them)."""
    vault.write(f"docs/adrs/ADR-0001 {odd}x.md", adr("ADR-0001") + "[[nope]]\n")
    gh = vault.check("--format", "github")
    assert gh.code == 1 and "WL001" in gh.out
    assert not any(ch in gh.out for ch in "\x1b\x07\x9b\x7f"), repr(gh.out)
    assert gh.out.count("\n") == 1 and "file=docs/adrs/ADR-0001 \\u" in gh.out


def test_ephemeral_paths_and_report_filtering(vault):
    vault.write("docs/scratch/idea.md", "# wip\n")
    vault.write("docs/rules/x.tmp.md", "# wip\n")
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001") + "[[nope]]\n")
    vault.write("docs/scratch/untracked.md", "# wip, never added\n")  # where scratch belongs: no PA001
    vault.git("add", "docs/scratch/idea.md", "docs/rules/x.tmp.md")
    res = vault.check()
    assert res.lines == [
        "docs/adrs/ADR-0001.md:9:1: WL001 [[nope]] → no such note",
        "docs/rules/x.tmp.md:1:1: PA001 ephemeral/scratch file must not be committed (matches '**/*.tmp.md') "
        "— unstage it (git rm --cached -- ':(top,literal)docs/rules/x.tmp.md') and add it to .gitignore",
        "docs/scratch/idea.md:1:1: PA001 ephemeral/scratch file must not be committed (matches '**/scratch/**') "
        "— unstage it (git rm --cached -- ':(top,literal)docs/scratch/idea.md') and add it to .gitignore",
    ]
    only = vault.check("docs/scratch/idea.md")
    assert only.lines == [line for line in res.lines if line.startswith("docs/scratch/idea.md")]


@pytest.mark.parametrize("rule", ["docs/scratch/\n", "*.md\n!docs/adrs/*.md\n!docs/rules/*.md\n", "idea*\n"])
def test_pa001_for_a_scratch_file_git_already_ignores_says_so(vault, rule):
    """Added with ``git add -f`` (or tracked before the rule): the advice is to untrack it only, since
    .gitignore already keeps it out; a name with a blank is quoted for the shell."""
    vault.write(".gitignore", rule)
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.write("docs/scratch/idea one.md", "# wip\n")
    vault.git("add", "-f", "docs/scratch/idea one.md")
    assert vault.check().lines == [
        "docs/scratch/idea one.md:1:1: PA001 ephemeral/scratch file must not be committed (matches '**/scratch/**') "
        "— unstage it (git rm --cached -- ':(top,literal)docs/scratch/idea one.md'); an ignore rule already "
        "matches it, so it stays out after that"]


@pytest.mark.parametrize("name", ["nb\u00a0sp.md", "nl\nx.md", "*.md", "it's $(x) `y`.md", ":!x.md", "back\\slash\u200b.md",
                                  "tab\tx.md", "-rf.md", "ünï 日本.md", "c\u3164d.md", "braille\u2800.md"])
def test_the_pa001_command_untracks_exactly_that_file_from_any_folder(vault, name):
    """The advice is pasted into a shell, often from a subfolder: it must name that one file, whatever its
    name holds (a glob, pathspec magic, quotes, a line break or a character the message writes as an escape)."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.write(f"docs/scratch/{name}", "# wip\n")
    vault.write("docs/scratch/other.md", "# wip\n")
    vault.git("add", "-A")
    line = next(x for x in vault.check().lines if "PA001" in x and "other.md" not in x)
    command = re.search(r"\((git rm --cached -- .*?)\)(?: and|;)", line).group(1)
    subprocess.run(["bash", "-c", command], cwd=vault.root / "docs", check=True, capture_output=True)
    assert vault.git("ls-files", "docs/scratch").stdout.splitlines() == ["docs/scratch/other.md"]


@pytest.mark.parametrize("rule,path", [("docs/adrs/\n", "docs/adrs/ADR-0002.md"), ("ADR-0002*\n", "docs/adrs/ADR-0002.md"),
                                       ("docs/\n", "docs/adrs/ADR-0002.md"), ("*.md\n", "docs/adrs/ADR-0002.md")])
def test_a_tracked_note_under_an_ignore_rule_is_checked(vault, rule, path):
    """git never ignores a tracked file: a note added with ``-f`` is checked in the working tree too
    (before, the walk skipped it, so its dangling link passed until ``--staged``)."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.write(path, adr("ADR-0002") + "[[nope]]\n")
    vault.write("docs/adrs/ADR-0002-draft.md", "[[nope either]]\n")  # ignored and untracked: not checked
    vault.write(".gitignore", rule)
    vault.git("add", "-f", path, "docs/adrs/ADR-0001.md", ".gitignore")
    expected = [f"{path}:9:1: WL001 [[nope]] → no such note"]
    assert vault.check().lines == expected
    assert vault.check("--staged").lines == expected


@pytest.mark.parametrize("rule,tracked,draft", [
    ("*\n!*.md\n!.gitignore\n!.vaultsync.yaml\n", "docs/adrs/ADR-0002.md", "docs/adrs/new.md"),
    ("**/priv/**\n!**/keep.md\n", "docs/adrs/priv/deep/ADR-0002.md", "docs/adrs/priv/deep/keep.md"),
    ("docs/adrs/priv/\n!docs/adrs/priv/keep.md\n", "docs/adrs/priv/ADR-0002.md", "docs/adrs/priv/keep.md"),
])
def test_a_negation_rule_does_not_bring_back_an_untracked_file_under_an_ignored_folder(vault, rule, tracked, draft):
    """git never re-includes a path under an excluded folder, whatever a ``!`` rule says: walked into for
    the note it tracks, the folder's untracked files stay out (libgit2, asked about one path, says otherwise)."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.write(tracked, adr("ADR-0002"))
    vault.write(draft, "---\ntitle: [unclosed\n---\n")
    vault.write(".gitignore", rule)
    vault.git("add", "-f", tracked, "docs/adrs/ADR-0001.md", ".gitignore")
    assert vault.git("check-ignore", "-q", draft, check=False).returncode == 0  # git ignores it
    assert vault.check().lines == vault.check("--staged").lines == []


def test_fix_refuses_layouts_it_cannot_edit_safely(vault):
    flow_multiline = adr("ADR-0001", extra='supersedes: [\n  "[[ADR-0002]]",\n]\n')
    commented = adr("ADR-0004", extra='supersedes: ["[[ADR-0005]]"] # see [old]\n')
    vault.write("docs/adrs/ADR-0001.md", flow_multiline)
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", status="superseded", extra="superseded_by: ADR-0001\n"))
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003", status="superseded", extra="superseded_by: ADR-0001\n"))
    vault.write("docs/adrs/ADR-0004.md", commented)
    vault.write("docs/adrs/ADR-0005.md", adr("ADR-0005", status="superseded", extra="superseded_by: ADR-0004\n"))
    vault.write("docs/adrs/ADR-0006.md", adr("ADR-0006", status="superseded", extra="superseded_by: ADR-0004\n"))
    before = {p.name: p.read_bytes() for p in (vault.root / "docs/adrs").iterdir()}
    for _ in range(2):  # a second run must not make anything worse
        res = vault.check("--fix")
        assert "not fixed: docs/adrs/ADR-0001.md" in res.err and "not fixed: docs/adrs/ADR-0004.md" in res.err
    after = {p.name: p.read_bytes() for p in (vault.root / "docs/adrs").iterdir()}
    assert after == before


# how the older note's frontmatter may be laid out around its (missing) back-reference
_OLD_LAYOUTS = {
    "absent": "memory_id: ADR-0001\ntype: adr\ntitle: Old\nstatus: superseded\ncreated: \"2024-03-01\"\n",
    "empty": "memory_id: ADR-0001\ntype: adr\ntitle: Old\nstatus: superseded\ncreated: \"2024-03-01\"\nsuperseded_by:\n",
    "tilde": "memory_id: ADR-0001\ntype: adr\ntitle: Old\nsuperseded_by: ~ # later\nstatus: superseded\ncreated: \"2024-03-01\"\n",
    "null": "superseded_by: null\nmemory_id: ADR-0001\ntype: adr\ntitle: Old\nstatus: superseded\ncreated: \"2024-03-01\"\n",
    "flow": "{memory_id: ADR-0001, type: adr, title: Old, status: superseded, created: \"2024-03-01\"}\n",
    "indented": "  memory_id: ADR-0001\n  type: adr\n  title: Old\n  status: superseded\n  created: \"2024-03-01\"\n",
}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=st.sampled_from(sorted(_OLD_LAYOUTS)), nl=st.sampled_from(["\n", "\r\n", "\r"]),
       name=st.sampled_from(["new", "Neu 2", "新しい"]))
def test_ss002_advises_fix_only_where_fix_makes_the_edit(vault, layout, nl, name):
    """SS002 said "run `vaultsync check --fix`" where --fix then declined (a flow mapping, an empty key), and
    "not fixed" said to add `superseded_by: [[new]]` by hand, which is a nested list in YAML. Now the
    advice is --fix exactly when --fix makes the edit, else a line that, written by hand, clears the error."""
    for old in (vault.root / "docs/adrs").glob("*.md"):
        old.unlink()
    text = f"---\n{_OLD_LAYOUTS[layout]}---\n# Old\n"
    vault.write("docs/adrs/old.md", text.replace("\n", nl).encode())
    vault.write(f"docs/adrs/{name}.md", adr("ADR-0002", extra='supersedes: ["[[old]]"]\n'))
    (ss,) = [ln for ln in vault.check().lines if " SS002 " in ln]
    advised = ss.endswith("run `vaultsync check --fix`")
    res = vault.check("--fix")
    assert ("fixed: docs/adrs/old.md" in res.err and "not fixed" not in res.err) == advised, (ss, res.err)
    if not advised:
        line = ss.split("write by hand ", 1)[1].split(" (`--fix`", 1)[0]
        assert line == f'superseded_by: "[[{name}]]"' and f"write by hand {line}" in res.err
        flat = "".join(f"{k.strip()}\n" for k in _OLD_LAYOUTS["indented"].splitlines())  # how a person would mend it
        vault.write("docs/adrs/old.md", f"---\n{flat}{line}\n---\n# Old\n")
    assert vault.check().lines == [], vault.check().lines


@pytest.mark.parametrize("value", ['""', "5", "[[ADR-0002]]", "{a: b}", "'  '"])
def test_fix_says_nothing_of_a_back_reference_check_does_not_ask_for(vault, value):
    """An unreadable superseded_by is LC001 and asks no back-reference (no SS002): --fix still printed
    "not fixed: … write by hand", for an error check never showed."""
    vault.write("docs/adrs/old.md", adr("ADR-0001", status="superseded", extra=f"superseded_by: {value}\n"))
    vault.write("docs/adrs/new.md", adr("ADR-0002", extra='supersedes: ["[[old]]"]\n'))
    assert not any(" SS002 " in ln for ln in vault.check().lines)
    res = vault.check("--fix")
    assert "not fixed" not in res.err and "fixed:" not in res.err, res.err


def test_fix_only_touches_the_named_files(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra="supersedes: [ADR-0002, ADR-0003]\n"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", status="superseded"))
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003", status="superseded"))
    untouched = (vault.root / "docs/adrs/ADR-0003.md").read_bytes()
    vault.check("--fix", "docs/adrs/ADR-0002.md")
    assert "superseded_by" in (vault.root / "docs/adrs/ADR-0002.md").read_text()
    assert (vault.root / "docs/adrs/ADR-0003.md").read_bytes() == untouched


@pytest.mark.parametrize("created, expires, error", [
    ("2030-01-02T01:00:00+09:00", "2030-01-01T20:00:00Z", False),  # 16:00Z → 20:00Z: four hours later
    ("2030-01-01T23:00:00-05:00", "2030-01-02T01:00:00Z", True),   # 04:00Z → 01:00Z: before it
    ("2030-01-01T10:00:00Z", "2030-01-01T10:00:00+00:00", True),   # the same moment is not after
    ("2030-01-01T10:00:00Z", "2030-01-01 10:00:01z", False),
    ("2030-03-01T00:00:00+0530", "2030-02-28T19:00:00Z", False),   # an offset without its colon
    ("2030-01-01", "2030-01-01T00:00:01Z", False),                 # a moment on the creation day
    ("2030-01-02", "2030-01-01T23:00:00Z", True), ("2030-01-01", "2030-01-01", True),
    ("2030-01-05T10:00:00", "2030-01-05T10:00:00", True),          # no offsets: wall-clock times compare
    ("2030-01-05T10:00:00", "2030-01-05T09:00", True), ("2030-01-05 10:00", "2030-01-05t10:00:00.5", False),
    ("2030-01-05T23:59:59", "2030-01-06T00:00:00", False),
    # one offset only: the other is a wall-clock time where today is counted (in any zone, these hold)
    ("2030-01-05T10:00:00", "2030-01-06T12:00:00Z", False), ("2030-01-05T10:00:00", "2030-01-04T12:00:00Z", True),
])
def test_dt002_compares_moments_with_offsets_as_moments(vault, created, expires, error):
    """FM-01 kind: `expires` was compared with `created` by the dates as written, so a note created at
    01:00+09:00 that expires at 20:00Z the evening before (written) was refused, and the reverse passed;
    two times without offsets on one day were never refused."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f'expires: "{expires}"\n').replace(
        'created: "2024-03-01"', f'created: "{created}"'))
    lines = [line for line in vault.check().lines if "DT002" in line]
    assert lines == ([f"docs/adrs/ADR-0001.md:7:10: DT002 expires: {expires} "
                      f"is not after created ({created})"] if error else []), lines


@pytest.mark.parametrize("created, validated, error", [
    ("2024-02-12T01:00:00+09:00", "2024-02-11T20:00:00Z", False),  # 4 hours after, its written date earlier
    ("2024-02-12T10:00:00Z", "2024-02-12T09:00:00Z", True),         # an hour before, the same written date
    ("2024-02-12T10:00:00+01:00", "2024-02-12T09:00:00Z", False),   # the same moment: not before
    ("2024-02-12", "2024-02-11", True), ("2024-02-12", "2024-02-12", False),  # plain dates: days
    ("2024-02-12T10:00:00", "2024-02-12T09:00:00", True), ("2024-02-12T10:00", "2024-02-12T10:00:00", False),
])
def test_dt003_last_validated_before_created_compares_moments(vault, created, validated, error):
    """As DT002: two moments with offsets compare as moments, not by the dates as written (a false
    error one way, a missed one the other)."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f'last_validated: "{validated}"\n').replace(
        'created: "2024-03-01"', f'created: "{created}"'))
    lines = [line for line in vault.check().lines if "DT003" in line]
    assert lines == ([f"docs/adrs/ADR-0001.md:7:17: DT003 last_validated: {validated} "
                      f"is before created ({created})"] if error else []), lines


@pytest.mark.parametrize("zone, hours, expired", [
    ("Pacific/Kiritimati", 23, False), ("Pacific/Kiritimati", -30, True), ("UTC", 2, False), ("UTC", -2, None),
    ("Pacific/Pago_Pago", 30, False), ("Asia/Tokyo", -48, True),
])
def test_dt004_an_expiry_moment_is_judged_by_the_day_it_falls_on_here(vault, monkeypatch, zone, hours, expired):
    """`today` is the local date (ADR-0053): a moment with an offset counts on the local day it falls on,
    so an expiry 23 hours away is not "expired" because its written date is yesterday here."""
    import time

    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        moment = dt.datetime.now(dt.timezone(dt.timedelta(hours=-11))) + dt.timedelta(hours=hours)
        vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f'expires: "{moment.isoformat(timespec="seconds")}"\n'))
        found = any("DT004" in line for line in vault.check().lines)
        local = moment.astimezone().date()
        assert found == (local < dt.date.today()) and (expired is None or found == expired)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


@pytest.mark.parametrize("status, field, disagree", [
    ("superseded by [[ADR-0002]]", '"[[ADR-0003]]"', True), ("Superseded by ADR-0002", '["[[ADR-0003]]"]', True),
    ("superseded by [[ADR-0003]]", '"[[ADR-0003]]"', False), ("superseded by ADR-0003", '"ADR-0003"', False),
    ("superseded by [[ADR-0003|the new one]]", '["[[ADR-0003]]", "[[ADR-0002]]"]', False),
])
def test_ss004_a_status_line_and_superseded_by_that_name_other_notes_disagree(vault, status, field, disagree):
    """``status: superseded by [[X]]`` beside ``superseded_by: [[Y]]``: the field won and X was dropped
    without a word."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status=status, extra=f"superseded_by: {field}\n"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra='supersedes: ["[[ADR-0001]]"]\n'))
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003", extra='supersedes: ["[[ADR-0001]]"]\n'))
    found = [line for line in vault.check().lines if "SS004" in line and "says superseded by" in line]
    assert len(found) == disagree, found


@pytest.mark.parametrize("zone_name, hours, expired", [("Pacific/Kiritimati", 23, False), ("Pacific/Kiritimati", -30, True),
                                                        ("Asia/Tokyo", 20, False), ("America/Los_Angeles", -40, True)])
def test_dt004_with_checks_timezone_a_moment_counts_on_that_zones_day(vault, zone_name, hours, expired):
    """``checks.timezone`` sets where "today" is (ADR-0053): a moment's day is counted there too."""
    from zoneinfo import ZoneInfo

    vault.write(".vaultsync.yaml", vault.root.joinpath(".vaultsync.yaml").read_text() +
                f"checks: {{timezone: {zone_name}}}\n")
    moment = dt.datetime.now(dt.timezone(dt.timedelta(hours=-11))) + dt.timedelta(hours=hours)
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f'expires: "{moment.isoformat(timespec="seconds")}"\n'))
    found = any("DT004" in line for line in vault.check().lines)
    here = ZoneInfo(zone_name)
    assert found == (moment.astimezone(here).date() < dt.datetime.now(here).date()) == expired


@pytest.mark.parametrize("back", ["", "superseded_by: ADR-0002\n", 'superseded_by: "[[ADR-0003]]"\n'])
@pytest.mark.parametrize("successors", [2, 3])
def test_two_successors_are_named_and_never_fixed(vault, back, successors):
    """A note has one successor: when several notes supersede it, SS005 names them all, and --fix
    (which could only write one) writes nothing."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status="superseded", extra=back))
    for n in range(2, 2 + successors):
        ref = "ADR-0001" if n % 2 else '"[[ADR-0001]]"'
        vault.write(f"docs/adrs/ADR-000{n}.md", adr(f"ADR-000{n}", extra=f"supersedes: [{ref}]\n"))
    before = {p.name: p.read_bytes() for p in (vault.root / "docs/adrs").iterdir()}
    for args in ((), ("--fix",)):
        res = vault.check(*args)
        assert res.code == 1
        assert [line.split(" ", 2)[1] for line in res.lines] == ["SS005"], res.out
        assert f"{successors} notes supersede this note: ADR-0002" in res.out and "--fix" not in res.lines[0]
    assert {p.name: p.read_bytes() for p in (vault.root / "docs/adrs").iterdir()} == before


@pytest.mark.parametrize("kind", ["adr", "rule"])
def test_two_successors_say_which_field_names_each(vault, kind):
    """SS005 said "2 notes supersede this note: ADR-0005, ADR-0002" when ADR-0005 superseded nothing: only
    the old note's own superseded_by named it. Each successor now says which field names it."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status="superseded", extra='superseded_by: "[[ADR-0005]]"\n'))
    vault.write("docs/adrs/ADR-0005.md", adr("ADR-0005"))
    newer = "docs/adrs/ADR-0002.md" if kind == "adr" else "docs/rules/RULE-0002.md"
    vault.write(newer, adr("ADR-0002", extra="supersedes: [ADR-0001]\n") if kind == "adr" else
                '---\nmemory_id: RULE-0002\ntype: rule\ntitle: T\nstatus: active\nenforcement: should\n'
                'created: "2024-04-29"\nsupersedes: ["[[ADR-0001]]"]\n---\nBody.\n')
    res = vault.check()
    line = next(x for x in res.lines if " SS005 " in x)
    assert "(docs/adrs/ADR-0005.md, named by this note's superseded_by)" in line, line
    assert f"({newer}, whose supersedes names this note)" in line, line


def test_fix_leaves_a_supersession_cycle_alone(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status="superseded", extra="supersedes: [ADR-0002]\n"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", status="superseded", extra="supersedes: [ADR-0001]\n"))
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003", extra="supersedes: [ADR-0004]\n"))  # a chain: fixed
    vault.write("docs/adrs/ADR-0004.md", adr("ADR-0004", status="superseded", extra="supersedes: [ADR-0005]\n"))
    vault.write("docs/adrs/ADR-0005.md", adr("ADR-0005", status="superseded"))
    before = {p.name: p.read_bytes() for p in (vault.root / "docs/adrs").iterdir()}
    res = vault.check("--fix")
    assert "SS003" in res.out
    changed = {p.name for p in (vault.root / "docs/adrs").iterdir() if p.read_bytes() != before[p.name]}
    assert changed == {"ADR-0004.md", "ADR-0005.md"}
    cycle = [line for line in res.lines if " SS002 " in line]  # what is left says what to do, never "--fix"
    assert cycle and all("resolve the supersession cycle first (SS003)" in line for line in cycle), res.out


@pytest.mark.parametrize("value", ['""', "' '", "[]", '[""]'])
def test_a_blank_successor_names_no_note(vault, value):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f"superseded_by: {value}\n"))
    assert "SS003" not in vault.check().out


def test_a_superseded_note_with_broken_frontmatter_gets_no_status_message(vault):
    vault.write("docs/adrs/ADR-0001.md", "---\nmemory_id: ADR-0001\ntitle: 'unclosed\n---\nBody.\n")
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra="supersedes: [ADR-0001]\n"))
    out = vault.check().out
    assert "None" not in out and "SS004" not in out


@pytest.mark.parametrize("status, advice", [
    ("Superseded", "write it in lower case"), ('" superseded"', "write it without the spaces around it"),
    ('" SUPERSEDED "', "write it without the spaces around it and in lower case"),
])
def test_lc002_says_what_to_change(vault, status, advice):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status="accepted").replace("status: accepted", f"status: {status}"))
    assert any(line.endswith(f"is read as 'superseded' — {advice}") for line in vault.check().lines)


@pytest.mark.parametrize("older, newer", [
    ("superseded_by: [[ADR-0002]]\n", "supersedes: [ADR-0001]\n"),  # unquoted: a list in a list
    ("superseded_by: ADR-0002\n", "supersedes: [[ADR-0001]]\n"), ("superseded_by: ADR-0002\n", "supersedes: [[[ADR-0001]]]\n"),
])
def test_an_unreadable_back_reference_is_not_called_missing(vault, older, newer):
    """The schema and LC001 point at a field YAML read as something else; SS002 would send the user
    to --fix, which cannot edit it."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status="superseded", extra=older))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra=newer))
    out = vault.check().out
    assert "search hides this note until it is fixed" in out and "SS002" not in out


@pytest.mark.parametrize("created, future", [
    (d(1), True), (d(400), True), ('"2099-01-01T00:00:00Z"', True), (d(0), False), (d(-1), False),
])
def test_dt003_a_note_created_in_the_future(vault, created, future):
    text = adr("ADR-0001").replace('created: "2024-03-01"', f"created: {created}")
    vault.write("docs/adrs/ADR-0001.md", text)
    lines = [line for line in vault.check().lines if "DT003 created:" in line]
    assert bool(lines) is future and all(line.startswith("docs/adrs/ADR-0001.md:6:10: DT003 created: ") for line in lines)


@pytest.mark.parametrize("declared_in", ["newer", "older"])
def test_a_renamed_note_leaves_one_broken_reference_and_fix_adds_no_second(vault, declared_in):
    """After ``git mv`` the newer note's ``supersedes`` names the old file name (SS001, WL007 with the
    new name): no SS002 asks for a back-reference beside it, and ``--fix`` rewrites that one reference to
    the new name (ADR-0124), writing no second entry."""
    if declared_in == "newer":
        vault.write("docs/adrs/ADR-0001-use-postgres.md", adr("ADR-0001", status="superseded",
                                                              extra="superseded_by: ADR-0002\n"))
        vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra='supersedes: ["[[ADR-0001-use-postgres]]"]\n'))
        moved, field_file = "docs/adrs/ADR-0001-use-postgres.md", "docs/adrs/ADR-0002.md"
    else:
        vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status="superseded",
                                                 extra='superseded_by: "[[ADR-0002-redis]]"\n'))
        vault.write("docs/adrs/ADR-0002-redis.md", adr("ADR-0002", extra="supersedes: [ADR-0001]\n"))
        moved, field_file = "docs/adrs/ADR-0002-redis.md", "docs/adrs/ADR-0001.md"
    vault.commit("init")
    vault.git("mv", moved, moved.replace(".md", "-renamed.md"))
    before = (vault.root / field_file).read_bytes()
    res = vault.check()
    codes = [line.split(" ")[1] for line in res.lines if line.startswith(field_file)]
    assert "SS001" in codes and "SS002" not in codes, res.out
    res = vault.check("--fix")
    stem = moved.split("/")[-1][:-3]
    assert (vault.root / field_file).read_bytes() == before.replace(f"[[{stem}]]".encode(),
                                                                    f"[[{stem}-renamed]]".encode()), res.out
    assert res.code == 0 and not [line for line in res.lines if line.startswith(field_file)], res.out


@settings(max_examples=150, deadline=None)
@given(created=st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2040, 1, 1)),
       delta=st.timedeltas(min_value=dt.timedelta(days=-2), max_value=dt.timedelta(days=2)),
       form=st.sampled_from(["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S+02:00"]))
def test_dt002_property_two_times_of_one_form_compare_as_times(created, delta, form):
    """Whatever the form (with or without an offset, seconds or not), when both sides share it, DT002
    holds exactly when the written expiry is not after the written creation."""
    from vaultsync.checks.lifecycle import check_dates
    from vaultsync.vault.note import parse_note

    c, e = created.strftime(form), (created + delta).strftime(form)
    note = parse_note("a.md", f'---\ncreated: "{c}"\nexpires: "{e}"\n---\n'.encode())
    codes = {d.code for d in check_dates(note, dt.date(2000, 1, 1), "off", dt.timezone.utc)}
    assert ("DT002" in codes) == (e <= c), (c, e, codes)


@settings(max_examples=200, deadline=None)
@given(created=st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2040, 1, 1)),
       delta=st.timedeltas(min_value=dt.timedelta(hours=-30), max_value=dt.timedelta(hours=30)),
       zone=st.sampled_from(["UTC", "Asia/Tokyo", "America/Los_Angeles", "Pacific/Kiritimati", "Asia/Kolkata"]),
       offset=st.sampled_from(["Z", "+02:00", "-11:00", "+05:45"]), naive_first=st.booleans(),
       field=st.sampled_from(["expires", "last_validated"]))
def test_dt_property_a_time_without_offset_is_read_where_today_is_counted(created, delta, zone, offset,
                                                                          naive_first, field):
    """One side with an offset, the other without: the one without is a wall-clock time in the checks' zone,
    and they compare as moments (they were compared only by day: 07:00Z passed as after 10:00Z)."""
    from zoneinfo import ZoneInfo

    from vaultsync.checks.lifecycle import check_dates
    from vaultsync.vault.note import parse_note

    tz = ZoneInfo(zone)
    aware = dt.timezone(dt.timedelta(0)) if offset == "Z" else dt.datetime.strptime(offset, "%z").tzinfo
    other = created + delta
    if naive_first:  # created is naive (in the zone), the other carries its offset
        c, c_moment = created.strftime("%Y-%m-%dT%H:%M:%S"), created.replace(tzinfo=tz)
        o_moment = other.replace(tzinfo=aware)
        o = other.strftime("%Y-%m-%dT%H:%M:%S") + offset
    else:
        c_moment = created.replace(tzinfo=aware)
        c = created.strftime("%Y-%m-%dT%H:%M:%S") + offset
        o, o_moment = other.strftime("%Y-%m-%dT%H:%M:%S"), other.replace(tzinfo=tz)
    note = parse_note("a.md", f'---\ncreated: "{c}"\n{field}: "{o}"\n---\n'.encode())
    codes = {d.code for d in check_dates(note, dt.date(2100, 1, 1), "off", tz)}
    if field == "expires":
        assert ("DT002" in codes) == (o_moment <= c_moment), (c, o, zone, codes)
    else:
        assert ("DT003" in codes) == (o_moment < c_moment), (c, o, zone, codes)


@pytest.mark.parametrize("value, zone, shown", [
    ("2026-12-07T23:59:00-11:00", "UTC", "2026-12-07T23:59:00-11:00 (2026-12-08 here)"),
    ("2026-12-08T01:00:00+00:00", "Asia/Tokyo", "2026-12-08T01:00:00+00:00"),
    ("2026-12-08", "UTC", "2026-12-08"),
])
def test_dt003_names_a_moment_as_written_and_the_day_it_falls_on(value, zone, shown):
    from zoneinfo import ZoneInfo

    from vaultsync.checks.lifecycle import check_dates
    from vaultsync.vault.note import parse_note

    note = parse_note("a.md", f'---\ncreated: "{value}"\n---\n'.encode())
    [d] = check_dates(note, dt.date(2026, 12, 7), "off", ZoneInfo(zone))
    assert d.message == f"created: {shown} is in the future (today is 2026-12-07)"


def test_fix_asks_no_status_of_a_note_without_frontmatter(vault):
    """An older note with no frontmatter at all (an untyped folder): check asks it no status (no SS004),
    but --fix said "write by hand status: superseded" beside the back-reference."""
    vault.write("docs/notes/old.md", "# Old\n\nPlain text.\n")
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra='supersedes: ["[[old]]"]\n'))
    assert not any(" SS004 " in line for line in vault.check().lines)
    res = vault.check("--fix")
    assert "status" not in res.err and (vault.root / "docs/notes/old.md").read_text() == "# Old\n\nPlain text.\n"


@pytest.mark.parametrize("head, tail", [("\n", "\r\n"), ("\r\n", "\n"), ("\n", "\r")])
def test_fix_edits_a_note_whose_body_ends_its_lines_otherwise(vault, head, tail):
    """LF frontmatter over a CRLF body: SS002 said "run --fix", which then refused the layout. The edit
    writes the frontmatter's line end and leaves the body's as they are."""
    older = adr("ADR-0001").split("---\n", 2)
    vault.write("docs/adrs/ADR-0001.md", ("---\n" + older[1] + "---\n").replace("\n", head).encode()
                + "## Context\nKept as written.\n".replace("\n", tail).encode())
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra='supersedes: ["[[ADR-0001]]"]\n'))
    assert any(" SS002 " in line and line.endswith("run `vaultsync check --fix`") for line in vault.check().lines)
    res = vault.check("--fix")
    assert (res.code, res.lines) == (0, []), res.out + res.err
    raw = (vault.root / "docs/adrs/ADR-0001.md").read_bytes().decode()
    assert f'superseded_by: "[[ADR-0002]]"{head}' in raw and raw.endswith("Kept as written." + tail)


@pytest.mark.parametrize("head, why", [
    ("", "the note has no frontmatter: add a '---' block at its top holding it; `--fix` adds none"),
    ("x\n", "the note has no frontmatter: add a '---' block at its top holding it; `--fix` adds none"),
    ("---\n---\n", "between its empty frontmatter's '---' lines; `--fix` edits frontmatter that holds keys only"),
    ("---\n# only a comment\n---\n",
     "between its empty frontmatter's '---' lines; `--fix` edits frontmatter that holds keys only"),
])
@pytest.mark.parametrize("name", ["old", "Ältere Notiz", "旧"])
def test_ss002_says_why_fix_leaves_a_note_without_frontmatter_alone(vault, head, why, name):
    """SS002 told a note with no frontmatter at all that `--fix` "edits block-style frontmatter with one-line
    values only", as though its layout were the trouble: it says the note has none (or an empty one)."""
    text = f"{head}# {name}\nBody.\n"
    vault.write(f"docs/notes/{name}.md", text)
    vault.write("docs/notes/new.md", f'---\nsupersedes: "[[{name}]]"\n---\nBody.\n')
    (line,) = [ln for ln in vault.check().lines if "SS002" in ln]
    assert line.endswith(f'write by hand superseded_by: "[[new]]" ({why})'), line
    assert "block-style" not in line
    run_cli(["check", "--fix", "docs"], vault.root)
    assert (vault.root / f"docs/notes/{name}.md").read_text() == text  # never rewritten
