"""Issue 12, kind 5: messages that say what happened and what to write instead."""

from __future__ import annotations

import re

import pytest
from conftest import adr, git, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.diagnostics import visible

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
                         f"(docs/adrs/ADR-0001.md): renamed to {new} in this commit — update the link to {fix}, or run "
                         "`vaultsync check --fix`"]


def test_a_deletion_still_says_removed(vault):
    _linked(vault)
    vault.git("rm", "-q", "docs/adrs/ADR-0001.md")
    assert vault.check("--staged").lines == [
        "docs/adrs/ADR-0002.md:8:11: WL007 [[ADR-0001]] → target removed in this commit (docs/adrs/ADR-0001.md)"]


@pytest.mark.parametrize("aliases, link", [
    ("[Zed]", "[[Zed]]"), ("Zed", "[[zed|the old one]]"), ("[決定, Other]", "[[決定#Decision]]"),
    ("[\"Retry policy\"]", "[[Retry policy]]"),
])
def test_a_deletion_names_links_through_the_removed_notes_aliases(vault, aliases, link):
    """A link that reached the deleted note through one of its aliases broke in this commit too (WL007),
    whether the alias list is a list or one string, in any script."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f"aliases: {aliases}\n",
                                           body="# ADR-0001\n## Decision\nUse SQLite.\n"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", body=f"Builds on {link}.\n"))
    vault.commit("init")
    vault.git("rm", "-q", "docs/adrs/ADR-0001.md")
    assert vault.check("--staged").lines == [
        f"docs/adrs/ADR-0002.md:8:11: WL007 {link} → target removed in this commit (docs/adrs/ADR-0001.md)"]


@pytest.mark.parametrize("files, link, hint", [
    ({"docs/adrs/ADR-0004-clickhouse-analytics.md": adr("ADR-0004")}, "[[ADR-0004]]",
     "did you mean [[ADR-0004-clickhouse-analytics]]? ('ADR-0004' is the memory_id of "
     "docs/adrs/ADR-0004-clickhouse-analytics.md; links name the file)"),
    ({"docs/adrs/ADR-0004-clickhouse-analytics.md": adr("ADR-0004")}, "[[adr-0004#Context|ctx]]",
     "did you mean [[ADR-0004-clickhouse-analytics#Context|ctx]]?"),
    ({"docs/incidents/INC-7 db lock.md": "# x\n"}, "[[INC-7]]", "did you mean [[INC-7 db lock]]?"),
    ({"docs/rules/deploy-freeze.md": "# x\n"}, "[[deploy-freze]]", "did you mean [[deploy-freeze]]?"),
    ({"docs/adrs/ADR-0004-sessions-in-redis.md": adr("ADR-0004")}, "[[ADR-0004-sessions-in-redix]]",
     "did you mean [[ADR-0004-sessions-in-redis]]? (the id ADR-0004 matches, the rest of the name does not)"),
    ({"docs/rules/RULE-0001-no-friday-deploys.md": "# x\n"}, "[[rule-0001-migrations#Why|why]]",
     "did you mean [[RULE-0001-no-friday-deploys#Why|why]]? (the id rule-0001 matches"),
    ({"docs/incidents/INC-12 db lock.md": "# x\n"}, "[[INC-12 database lock]]",
     "did you mean [[INC-12 db lock]]? (the id INC-12 matches"),
    # a title written as a link, in any case, script or punctuation, its heading and alias kept
    ({"docs/adrs/ADR-0002-ship-logs-through-kafka.md": adr("ADR-0002", title="Ship logs through Kafka")},
     "[[ship logs through kafka]]", "did you mean [[ADR-0002-ship-logs-through-kafka]]? ('ship logs through kafka' "
     "is the title of docs/adrs/ADR-0002-ship-logs-through-kafka.md; links name the file, or an alias"),
    ({"docs/adrs/ADR-0003-prometheus.md": adr("ADR-0003", title='"Use Prometheus: pull-based metrics"')},
     "[[Use Prometheus: pull-based metrics#Decision|pull]]", "did you mean [[ADR-0003-prometheus#Decision|pull]]?"),
    ({"docs/adrs/ADR-0005-決定.md": adr("ADR-0005", title="ログはKafkaで送る")}, "[[ログはkafkaで送る]]",
     "did you mean [[ADR-0005-決定]]? ('ログはkafkaで送る' is the title"),
])
def test_dangling_links_suggest_the_likely_note(vault, files, link, hint):
    for path, text in files.items():
        vault.write(path, text)
    vault.write("docs/a.md", f"{link}\n")
    lines = [line for line in vault.check().lines if line.startswith("docs/a.md")]
    assert len(lines) == 1 and lines[0].startswith(f"docs/a.md:1:1: WL001 {link} → no such note — {hint}"), lines


def test_a_title_two_notes_share_or_the_linking_notes_own_suggests_nothing(vault):
    vault.write("docs/adrs/ADR-0001-a.md", adr("ADR-0001", title="Retry policy"))
    vault.write("docs/adrs/ADR-0002-b.md", adr("ADR-0002", title="retry policy"))
    vault.write("docs/c.md", "---\ntitle: Cache policy\n---\n[[Retry Policy]] and [[cache policy]]\n")
    lines = [line for line in vault.check().lines if line.startswith("docs/c.md")]
    assert len(lines) == 2 and not any("did you mean" in line for line in lines), lines


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
    (["nosuch.md"], 1, ["nosuch.md:1:1: PA003 no such file: nosuch.md — check the path (relative to the current folder)"]),
    (["docs/a.md", "docs/typo.md"], 1, ["docs/typo.md:1:1: PA003 no such file: docs/typo.md — check the path "
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
        assert f"{checked} note{'' if checked == 1 else 's'} checked" in res.out


@pytest.mark.parametrize("args, checked, expected", [
    (["docs"], 2, ["docs/sub/b.md:1:1: WL001 [[nope]] → no such note"]),  # a folder: every note under it
    (["docs/sub"], 1, ["docs/sub/b.md:1:1: WL001 [[nope]] → no such note"]),
    (["."], 2, ["docs/sub/b.md:1:1: WL001 [[nope]] → no such note"]),
])
def test_a_folder_on_the_command_line_stands_for_its_notes(vault, args, checked, expected):
    vault.write("docs/a.md", "# a\n")
    vault.write("docs/sub/b.md", "[[nope]]\n")
    res = vault.check(*args)
    assert res.code == 1 and res.lines == expected and f"{checked} note{'' if checked == 1 else 's'} checked" in res.out


def test_a_file_outside_the_repository_is_named_not_skipped(vault, tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# x\n", encoding="utf-8")
    vault.write("docs/a.md", "# a\n")
    for arg in (str(outside), "../elsewhere.md"):
        res = vault.check(arg)
        assert res.code == 1 and len(res.lines) == 1 and "PA003" in res.lines[0]
        assert "is outside this repository" in res.lines[0]


@pytest.mark.parametrize("arg", ["outdir/x.md", "docs/evil.md", "docs/../outdir/x.md", "docs/deep/x.md",
                                 "./outdir/x.md"])
def test_a_file_reached_through_a_link_that_leads_outside_is_named_not_skipped(vault, tmp_path, arg):
    """`check outdir/x.md`, with `outdir` a symlink to a folder outside the repository, was "0 notes
    checked", exit 0, where the same file by its own path is PA003: a note asked for never passes
    unchecked. A link to the folder or to the file, in the vault or beside it, a link inside a folder."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.md").write_text("---\ntitle: [unclosed\n---\n[[nosuch]]\n", encoding="utf-8")
    vault.write("docs/a.md", "# a\n")
    (vault.root / "outdir").symlink_to(elsewhere)
    (vault.root / "docs/evil.md").symlink_to(elsewhere / "x.md")
    (vault.root / "docs/deep").symlink_to(elsewhere)
    res = vault.check(arg)
    assert res.code == 1 and res.lines == [
        f"{elsewhere / 'x.md'}:1:1: PA003 {elsewhere / 'x.md'} is outside this repository ({vault.root}) — "
        "check it from its own repository"], res.out


@pytest.mark.parametrize("source", ["--staged", "--rev"])
def test_a_snapshot_check_names_its_own_paths_not_the_working_trees_links(vault, tmp_path, source):
    """`check --rev HEAD docs/a.md`, with docs/a.md a symlink leading outside in the working tree only, was
    PA003 "outside this repository" for a note the commit holds; a staged symlink with a file in its place
    on disk was "0 notes checked", exit 0; a path into .git through a link, too."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "b.md").write_text("# b\n", encoding="utf-8")
    vault.write("docs/a.md", "[[nope]]\n")
    vault.commit("a")
    (vault.root / "docs/a.md").unlink()
    (vault.root / "docs/a.md").symlink_to(elsewhere / "b.md")
    (vault.root / "docs/l.md").symlink_to(elsewhere / "b.md")
    vault.git("add", "docs/l.md")
    (vault.root / "docs/l.md").unlink()
    (vault.root / "docs/l.md").write_text("# on disk\n", encoding="utf-8")
    (vault.root / "docs/gitlink").symlink_to("../.git")
    args = ["--staged"] if source == "--staged" else ["--rev", "HEAD"]
    res = vault.check(*args, "docs/a.md")
    assert res.code == 1 and [line.split(": ", 1)[1] for line in res.lines] == ["WL001 [[nope]] → no such note"]
    if source == "--staged":
        res = vault.check(*args, "docs/l.md")
        assert res.code == 1 and res.lines == ["docs/l.md:1:1: PA003 docs/l.md is a symbolic link in the checked "
                                               "snapshot, not a note — check the file it leads to"], res.out
    res = vault.check("docs/gitlink/HEAD")
    assert res.code == 1 and res.lines == [".git/HEAD:1:1: PA003 .git/HEAD lies in .git, which holds no notes"]


@pytest.mark.parametrize("status", ["Superseded", "SUPERSEDED", " superseded"])
def test_an_expired_note_already_superseded_in_any_case_is_left_alone(vault, status):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status=status, extra='expires: "2020-01-02"\n'))
    res = vault.check()
    assert not [line for line in res.lines if "DT004" in line], res.lines  # hidden anyway: nothing to ask


@pytest.mark.parametrize("value", ["2024-01-01T99:99", "2024-01-01T24:00:00Z", "2024-01-01 10:61", "2024-01-01T10:00+25:00"])
def test_a_date_time_whose_time_does_not_exist_is_rejected(vault, value):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001").replace('created: "2024-03-01"', f'created: "{value}"'))
    res = vault.check()
    assert res.code == 1 and any("created" in line for line in res.lines), res.lines


@pytest.mark.parametrize("before", ["<!-- generated -->\n", "<!-- a -->\n<!-- b -->\n", "\n<!--x-->\n"])
def test_frontmatter_below_an_html_comment_is_called_misplaced(vault, before):
    vault.write("docs/adrs/ADR-0001.md", before + adr("ADR-0001"))
    res = vault.check()
    assert res.code == 1 and any("FM003 frontmatter must start on line 1, column 1" in line for line in res.lines)


@pytest.mark.parametrize("field, value, seen", [
    ("tags", '["ops\\nx"]', "'ops\\nx'"), ("supersedes", '["ADR-0009\\r"]', "'ADR-0009\\r'"),
    ("expires", '"2030-01-01\\u2028"', "'2030-01-01\\u2028'"), ("tags", '["ops\\u00a0"]', "'ops\\u00a0'"),
    ("tags", '["\\ufeffops"]', "'\\ufeffops'"), ("tags", '["o\\u200bps"]', "'o\\u200bps'"),
    ('"tit\\u200ble"', '"x"', "tit\\u200ble"), ('"a\\nb"', "1", "a\\nb"), ("tags", '["東京\\u3000"]', "'東京\\u3000'"),
])
def test_a_message_quoting_an_invisible_or_line_breaking_character_stays_one_readable_line(vault, field, value, seen):
    """VC001, SS001, LC001 and SC003 printed a quoted line break raw, splitting ``path:line:col: CODE message``,
    and showed U+200B, U+00A0 or a BOM as nothing: every message is one line that names such characters."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f"{field}: {value}\n"))
    res = vault.check()
    assert res.code == 1 and res.out.count("\n") == len(res.lines) + 1, res.out
    assert any(seen in line for line in res.lines), res.out
    assert all(line.isprintable() for line in res.lines)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_visible_keeps_one_line_and_every_visible_character(text):
    shown = visible(text)
    assert all(ch.isprintable() for ch in shown)  # no line break, and a tab is "\\t", not spaces to the eye
    if "\\" not in text:  # nothing is lost: the escapes read back as the text
        assert shown.encode("raw_unicode_escape").decode("unicode_escape") == text
    assert visible(shown) == shown  # escapes are themselves visible


@pytest.mark.parametrize("link, shown", [
    ("[[foo\tbar]]", "[[foo\\tbar]]"), ("[[a#b\tc]]", "[[a#b\\tc]]"), ("[[\tx]]", "[[\\tx]]"),
    ("[[x|y\tz]]", "[[x|y\\tz]]"), ("![[p\tq]]", "![[p\\tq]]"), ("[[Ünï\tcødé]]", "[[Ünï\\tcødé]]"),
])
@pytest.mark.parametrize("where", ["body", "frontmatter"])
def test_a_tab_in_a_link_target_is_written_as_an_escape(vault, link, shown, where):
    """WL001 printed a tab inside a link target raw: it read as spaces, a name no note has, and split the
    line for tools that read tab-separated text. It is ``\\t``, as other untrusted characters are escaped."""
    text = f'---\nrelated: "{link}"\n---\n' if where == "frontmatter" else f"See {link} here.\n"
    vault.write("docs/notes/n.md", text)
    lines = [line for line in vault.check().lines if "WL001" in line]
    assert len(lines) == 1 and shown in lines[0] and "\t" not in lines[0], lines


@pytest.mark.parametrize("name", ["evil\nfake.md:1:1: WL001 x.md", "a\rb.md", "zero\u200bwidth.md", "tab\there.md"])
def test_a_file_name_cannot_forge_a_diagnostic_line(vault, name):
    """Text output is one line per finding: a line break or an invisible character in a file name is
    written as an escape, as in messages."""
    from vaultsync.diagnostics import Diagnostic

    rendered = Diagnostic(f"docs/{name}", 3, 2, "WL001", "x").render()
    assert "\n" not in rendered and "\r" not in rendered and rendered.endswith(":3:2: WL001 x")
    vault.write(f"docs/{name}", "[[missing]]\n")
    res = vault.check()
    assert res.code == 1 and len(res.lines) == 1 and res.lines[0].startswith("docs/") and "WL001" in res.lines[0]


KEY_TEXT = st.lists(st.sampled_from([*"ab;:, #-/_.", "é", "名", "😀", "; ", ": "]), min_size=1, max_size=8).map("".join)


@given(st.lists(KEY_TEXT, min_size=1, max_size=3, unique=True), st.integers(0, 5), st.sampled_from(["\n", "\r\n"]))
@settings(max_examples=120, deadline=None)
def test_every_unknown_key_is_one_sc003_at_its_own_line(keys, at, newline):
    """``"todo; later": x`` gave two SC003s (``later`` and ``todo``) and ``see:: x`` one for ``see``, all at 1:1:
    the keys' messages were joined with ``; `` and split again, a key cut at its first ``:``. Any unknown keys,
    quoted, with ``;``, ``:``, spaces or other scripts, anywhere among the fields: one SC003 each, at its line."""
    import json

    from vaultsync.checks.schema import load_validator, validate_frontmatter
    from vaultsync.vault.note import parse_text

    known = ["memory_id: ADR-0001", "type: adr", "title: T", "status: accepted", 'created: "2024-03-01"']
    keys = [k for k in keys if k.strip() and k.casefold() not in {"memory_id", "type", "title", "status", "created"}]
    lines = known[:at] + [f"{json.dumps(k, ensure_ascii=False)}: x" for k in keys] + known[at:]
    note = parse_text("n.md", newline.join(["---", *lines, "---", "Body.", ""]))
    found = [d for d in validate_frontmatter(note, note.frontmatter, load_validator("adr")) if d.code == "SC003"]
    assert sorted((d.line, d.col) for d in found) == [(2 + min(at, 5) + i, 1) for i in range(len(keys))], found
    assert all(" additional property not allowed" in d.message for d in found)


@pytest.mark.parametrize("key, shown", [("trail ", '"trail "'), ("a: b", '"a: b"'), ("x;y", '"x;y"'),
                                        ("plain_key", "plain_key"), ("名前", "名前"), ("-lead", '"-lead"')])
def test_an_unknown_key_is_written_as_it_reads_back(key, shown):
    """``"trail ": 14`` was named ``trail :``, which YAML reads as ``trail``: a key that is not plain is quoted."""
    import json

    from vaultsync.checks.schema import load_validator, validate_frontmatter
    from vaultsync.vault.note import parse_text

    note = parse_text("n.md", "---\nmemory_id: ADR-0001\ntype: adr\ntitle: T\nstatus: accepted\n"
                              f'created: "2024-03-01"\n{json.dumps(key, ensure_ascii=False)}: 1\n---\n')
    (found,) = [d for d in validate_frontmatter(note, note.frontmatter, load_validator("adr")) if d.code == "SC003"]
    assert found.message.startswith(f"{shown}: additional property not allowed"), found.message


LONG = {"digits": "9", "words": "lorem ipsum ", "escapes": "\\x01", "cjk": "記憶"}  # a run, per kind of value


@pytest.mark.parametrize("length", [120, 300, 5000])
@pytest.mark.parametrize("field, value", [
    ("aliases", "[{digits}]"),                  # a number where a string belongs: named, and quoted to fix it
    ("confidence", '"{words}"'),                # not a number
    ("importance", '"{cjk}"'),                  # not an integer
    ("status", '"{words}"'),                    # not one of the statuses
    ("memory_id", '"{cjk}"'),                   # not of the form
    ("expires", '"{words}"'),                   # not a date
    ("expires", '"{escapes}"'),                 # not a date, and escapes YAML reads
    ("tags", '["{words}"]'),                    # outside the vocabulary
    ("related", '["[[{cjk}]]"]'),               # a link to no note
    ("supersedes", '["{words}"]'),              # no note of that name
])
def test_a_long_value_a_message_quotes_is_cut_to_one_readable_line(vault, field, value, length):
    """A pasted paragraph or a 5,000-digit number came back in full, twice for a number (a 711-character line
    for 300 digits; 5,500 characters for a paragraph in `confidence`); a message now quotes at most 80
    characters of a value and says how long it was. Paths and the links a message tells one to write stay whole."""
    written = value.format(**{k: (v * length)[:length] if k != "escapes" else v * length for k, v in LONG.items()})
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs}\nvocabulary:\n  tags: [db]\n")
    fm = {"memory_id": "ADR-0001", "type": "adr", "title": "T", "status": "accepted", "created": '"2024-01-01"'}
    fm[field] = written
    vault.write("docs/adrs/ADR-0001.md", "---\n" + "".join(f"{k}: {v}\n" for k, v in fm.items()) + "---\nBody.\n")
    res = run_cli(["check"], vault.root)
    assert res.code == 1 and "Traceback" not in res.out + res.err
    lines = [ln for ln in res.out.splitlines() if ln.startswith("docs/adrs/ADR-0001.md:")]
    assert lines and all(len(ln) < 500 for ln in lines), lines
    assert any(re.search(r"… \([\d,]+ characters\)", ln) for ln in lines), lines


@pytest.mark.parametrize("length", [120, 2000])
@pytest.mark.parametrize("line", [
    "title: {words} #{digits}",                 # ' #' starts a comment: the value is cut short
    "title: T\n{words}",                        # a line that is no 'key: value' pair
    "{letters}: 1",                             # a key no schema declares
    "title: T\nrelated: [\"[[{words}]]\"]",     # a link naming another note's title
    "title: T\ndeciders: {brackets}",          # a run of brackets YAML reads as lists inside lists
    "title: T\ndeciders: [{sexagesimal}]",     # a number YAML 1.1 reads in base 60
    "title: T\ndeciders: [{underscored}]",     # a number YAML 1.1 reads with its '_' dropped
])
def test_a_long_line_or_key_a_message_quotes_is_cut_too(vault, line, length):
    """The same kind, from YAML's and the link check's messages: a line, a key, a title quoted whole."""
    written = line.format(**{k: (v * length)[:length] for k, v in LONG.items()},
                           letters="k" * min(length, 1000),  # past 1,024 YAML reads no key: FM005 says so
                           brackets="[" * min(length // 2, 300) + "]" * min(length // 2, 300),  # (deeper: FM005)
                           sexagesimal="1:2" * min(length // 3, 60), underscored="1_0" * min(length // 3, 60))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", title=("lorem ipsum " * length)[:length].strip()))
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001").replace("title: A decision\n", "")
                .replace("status: accepted", "status: accepted\n" + written))
    res = run_cli(["check"], vault.root)
    assert "Traceback" not in res.out + res.err
    lines = [ln for ln in res.out.splitlines() if ln.startswith("docs/adrs/ADR-0001.md:")]
    assert lines and all(len(ln) < 500 for ln in lines), lines
    if length > 200:
        assert any(re.search(r"… \([\d,]+ characters\)", ln) for ln in lines), lines


@pytest.mark.parametrize("length", [120, 3000])
@pytest.mark.parametrize("link", ["[[ADR-0002#{run}]]", "[[ADR-0002#^{run}]]", "![[{run}.png]]", "[[ADR-0002#{run}|x]]"])
def test_a_long_heading_block_or_attachment_a_link_names_is_cut(vault, link, length):
    """A link past 100 characters was cut, but the heading, block id or attachment it names came back whole
    after it (a 5,194-character WL003 line for a 5,000-character heading)."""
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", body="# Context\n"))
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", body=link.format(run="z" * length) + "\n"))
    res = run_cli(["check"], vault.root)
    lines = [ln for ln in res.out.splitlines() if ln.startswith("docs/adrs/ADR-0001.md:")]
    assert res.code == 1 and lines and all(len(ln) < 500 for ln in lines), lines
    assert all(ln.count("(3,") == 2 for ln in lines) if length > 1000 else True, lines


@pytest.mark.parametrize("field, value, meant", [
    ("status", "résolu", "resolved"), ("status", "Résolved", "resolved"), ("status", "RÉSOLU", "resolved"),
    ("severity", "sév2", "SEV2"), ("status", "mitigé", "mitigated"),
])
def test_a_value_written_with_accents_or_in_another_case_gets_its_did_you_mean(vault, field, value, meant):
    """`status: résolu` had no "did you mean 'resolved'" (a new user's finding): the accent alone pushed it
    under difflib's cut-off. Values are compared case-blind and without accents."""
    fm = {"memory_id": "INC-0001", "type": "incident", "title": "T", "status": "open", "severity": "SEV2",
          "created": '"2024-01-01"', field: value}
    vault.write("docs/incidents/INC-0001.md", "---\n" + "".join(f"{k}: {v}\n" for k, v in fm.items()) + "---\n")
    res = run_cli(["check"], vault.root)
    assert any(f"did you mean '{meant}'?" in ln for ln in res.out.splitlines()), res.out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=4, max_size=10), min_size=1, max_size=8,
                unique=True), st.data())
def test_closest_finds_a_choice_written_with_accents_and_another_case(choices, data):
    """Property: a choice written with accents on its vowels and in another case is found as itself."""
    from vaultsync.diagnostics import closest

    meant = data.draw(st.sampled_from(choices))
    accents = str.maketrans("aeiou", "áèîõü")
    written = meant.translate(accents).upper() if data.draw(st.booleans()) else meant.translate(accents)
    assert closest(written, choices) == meant
