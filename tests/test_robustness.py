"""Bad input found by trying to break vaultsync: each case gets a clear answer and loses nothing."""

from __future__ import annotations

import json

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import adr, assert_same_index, git, index_state, run_cli
from vaultsync.vault.markdown import mask_code
from vaultsync.vault.note import parse_note


def test_non_finite_numbers_are_schema_errors(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra="confidence: .nan\nimportance: .inf\n"))
    lines = vault.check().lines
    assert "docs/adrs/ADR-0001.md:7:13: SC001 confidence: must be a finite number, got nan; search hides this note " \
        "until it is fixed" in lines
    assert any("importance" in line for line in lines)


@pytest.mark.parametrize("line, says", [
    ("importance: .inf", "importance: expected integer, got .inf"),  # not also "must be at most 10"
    ("importance: [5]", "importance: expected integer, got a list"),
    ("status: [accepted]", "status: expected string, got a list"),  # not also "is not one of: …"
    ("status: 7", "status: expected string, got 7"),
    ("memory_id: 12", "memory_id: expected string, got 12"),  # not also the id's pattern
    ("created: [2024-01-01]", "created: expected string, got a list"),  # not also DT001
])
def test_a_value_of_the_wrong_type_is_one_error(vault, line, says):
    key = line.split(":")[0]
    text = "\n".join(line if row.startswith(f"{key}:") else row for row in adr("ADR-0001").split("\n"))
    vault.write("docs/adrs/ADR-0001.md", text if f"\n{line}\n" in text else adr("ADR-0001", extra=line + "\n"))
    errors = [row for row in vault.check().lines if " warning:" not in row and row.startswith("docs/")]
    assert len(errors) == 1 and f" SC001 {says}" in errors[0], errors


@pytest.mark.parametrize("field, value", [("title", ".inf"), ("title", "-.Inf"), ("title", ".NaN"),
                                          ("tags", "[ops, .inf]"), ("owner", ".inf")])
def test_a_non_finite_number_in_a_string_field_is_one_error(vault, field, value):
    """The schema's "expected string" already names it (with the fix: quote it); "must be a finite number"
    beside it would contradict that fix."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", title=value) if field == "title"
                else adr("ADR-0001", extra=f"{field}: {value}\n"))
    lines = [line for line in vault.check().lines if " SC001 " in line]
    assert len(lines) == 1 and "finite" not in lines[0], lines


def test_unicode_line_separators_and_lone_cr(vault):
    vault.write("docs/adrs/ADR-0001.md", "---\nmemory_id: ADR-0001\ntitle: a\u2028b\n---\n")
    assert vault.check().lines == [
        "docs/adrs/ADR-0001.md:3:9: FM016 character U+2028 in frontmatter: YAML reads it as a line break — remove it"]
    note = parse_note("x.md", b"---\rtitle: x\rbogus: y\r---\rbody\r")
    assert note.frontmatter == {"title": "x", "bogus": "y"} and note.body_line == 5


def test_inline_code_scan_is_not_quadratic():
    text = "`a` " * 50_000 + "[[real]]\n" + "` " * 50_000
    masked = mask_code(text)
    assert len(masked) == len(text) and "[[real]]" in masked and "`a`" not in masked


def test_worktree_check_skips_nested_repositories_and_overlapping_roots(vault, tmp_path):
    vault.write(".vaultsync.yaml", "vault: [docs, docs/adrs]\n")
    vault.write("docs/adrs/ADR-0001.md", "# one\n")
    nested = vault.root / "docs/rules/shared"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "x.md").write_text("[[nowhere]]\n")
    res = vault.check()
    assert res.code == 0 and res.lines == [] and "1 note checked: 0 errors, 0 warnings" in res.out


@pytest.mark.parametrize("config, message", [
    ("vault: ../elsewhere\n", "vault: '../elsewhere' is outside the repository"),
    ("vault: /etc\n", "vault: '/etc' is outside the repository"),
])
def test_config_folders_outside_the_repository(vault, config, message):
    vault.write(".vaultsync.yaml", config)
    res = vault.check()
    assert res.code == 1 and message in res.err


@pytest.mark.parametrize("vault_folder", ["docs/../docs", "./docs/", "other/../docs", "docs/adrs/.."])
def test_a_config_folder_with_a_detour_that_stays_inside_is_read(vault, vault_folder):
    """``docs/../docs`` was called outside the repository: only where the path ends counts."""
    vault.write(".vaultsync.yaml", f"vault: {vault_folder}\n")
    vault.write("docs/notes/a.md", "[[nowhere]]\n")
    res = vault.check()
    assert "outside" not in res.err and any(" WL001 " in line for line in res.lines), res.out + res.err


@pytest.mark.parametrize("config, where", [('vault: "docs\\x00"\n', "1:8: CF002 vault: 'docs\\x00'"),
                                           ('vault: docs\ntypes:\n  adr: {folder: "docs/a\\tb"}\n',
                                            "3:17: CF002 types.adr.folder: 'docs/a\\tb'")])
def test_a_config_folder_holding_a_control_character_is_refused_with_its_place(vault, config, where):
    """A NUL byte in `vault:` ended the check with "embedded null byte", exit 2, and no place."""
    vault.write(".vaultsync.yaml", config)
    res = vault.check()
    assert res.code == 1 and f".vaultsync.yaml:{where} holds a control character" in res.err, res.err


@pytest.mark.parametrize("config, where", [
    ("search:\n  legs: 5\n", "2:9: CF002 search.legs: legs must be a name or a list of names, got 5"),
    ("search:\n  types:\n", "2:9: CF002 search.types: types must be a name or a list of names, got None"),
    ("search:\n  tags: {a: 1}\n", "2:9: CF002 search.tags: tags must be a name or a list of names"),
    ("search:\n  min_confidence: high\n", "2:19: CF002 search.min_confidence: min_confidence must be a number"),
    ("search:\n  top_k: 3\n  bogus: 1\n", "3:10: CF002 search.bogus: unknown search option(s): bogus\n"),
    ("search:\n  topk: 3\n", "2:9: CF002 search.topk: unknown search option(s): topk — did you mean 'top_k'?"),
    ("search:\n  fusion: magic\n", "2:11: CF002 search.fusion: fusion must be one of"),
    ('ephemeral: ["ok/**", "**/[z-a]*"]\n', "1:22: CF002 ephemeral[1]: invalid glob '**/[z-a]*'"),
    ("index:\n  embedder: bogus\n", "2:13: CF002 index.embedder: unknown model 'bogus'"),
    ("index:\n  embedders:\n    - multilingual-e5-small\n    - nope\n", "4:7: CF002 index.embedders[1]: unknown model"),
    # relevance is calibrated on e5's vectors: without it every search answered "no memory above relevance"
    ("index:\n  embedders: [use-multilingual]\n", "2:14: CF002 index.embedders: multilingual-e5-small must be one "
     "of them: relevance and its floor are calibrated on its vectors"),
    ("index:\n  embedder: use-multilingual\n", "2:13: CF002 index.embedder: multilingual-e5-small must be one of "
     "them: relevance and its floor are calibrated on its vectors (without it every hit falls below the floor) — "
     "write embedders: [multilingual-e5-small, use-multilingual]"),
    ("vault: [docs, 2, [x]]\n", "1:15: CF002 vault[1]: expected a string, got 2"),  # the list branch of oneOf
    ("vault: [[docs]]\n", "1:9: CF002 vault[0]: expected a string, got a list"),
    ("vault: []\n", "1:8: CF002 vault: should not be empty"),
    ("vault: 3\n", "1:8: CF002 vault: expected a string or a list, got 3"),
])
def test_config_values_the_schema_cannot_judge_are_located_errors(vault, config, where):
    """A config that passed `check` crashed search, review or sync later (exit 3); now `check` says where."""
    vault.write(".vaultsync.yaml", config)
    res = vault.check()
    assert res.code == 1 and f".vaultsync.yaml:{where}" in res.err, res.err
    assert "Traceback" not in res.err + res.out


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_every_config_error_is_reported_at_once_in_file_order(vault, fmt):
    """A config with several mistakes was fixed one run at a time: each run named only the first."""
    vault.write(".vaultsync.yaml", "chekcs:\n  expired: error\nmodels:\n  cache_dir: /tmp/m\n  threads: many\n"
                                   "types:\n  adr: {folder: docs/adrs, shema: adr}\nbogus: 1\n")
    res = vault.check("--format", fmt)
    lines = res.err.splitlines() if fmt == "text" else \
        [f"{d['path']}:{d['line']}:{d['col']}: {d['code']} {d['message']}" for d in json.loads(res.out)["diagnostics"]]
    assert res.code == 1 and "Traceback" not in res.err
    assert [x.split(" ", 2)[:2] for x in lines] == [
        [".vaultsync.yaml:1:1:", "CF002"],  # chekcs: did you mean checks
        [".vaultsync.yaml:4:14:", "CF005"],  # cache_dir: once, as CF005 (not also an unknown key)
        [".vaultsync.yaml:5:12:", "CF002"],  # threads: many
        [".vaultsync.yaml:7:28:", "CF002"],  # shema: did you mean schema
        [".vaultsync.yaml:8:1:", "CF002"],  # bogus
    ], lines
    assert "did you mean 'checks'" in lines[0] and "did you mean 'schema'" in lines[3]


def test_every_value_the_schema_cannot_judge_is_reported_at_once(vault):
    vault.write(".vaultsync.yaml", "vault: ../out\ntypes:\n  adr: {folder: docs/adrs}\n  rule: {folder: docs/adrs}\n"
                                   "index:\n  embedders: [nope, multilingual-e5-small, nada]\n")
    res = vault.check()
    assert res.code == 1
    assert [x.split(" ")[0] for x in res.err.splitlines()] == [
        ".vaultsync.yaml:1:8:", ".vaultsync.yaml:4:18:", ".vaultsync.yaml:6:15:", ".vaultsync.yaml:6:44:"], res.err


def test_valid_search_settings_still_pass(vault):
    vault.write(".vaultsync.yaml", "search:\n  top_k: 3\n  rerank: maxsim\n  port: 8765\n  legs: [bm25, dense]\n"
                                   "  types: adr\n  min_confidence: 0.4\n")
    assert vault.check().code == 0


def test_a_vault_folder_that_holds_nothing_is_reported(vault):
    vault.write(".vaultsync.yaml", "vault: notes\n")
    vault.write("docs/a.md", "# a\n")
    assert vault.check().lines == [".vaultsync.yaml:1:8: CF004 warning: vault folder(s) notes hold no files — check "
                                   "`vault:`"]


def test_a_vault_folder_beside_a_close_folder_without_notes_stays_a_warning(vault):
    """`docs/` beside `vault: doc` holds no note (only an image): nothing would be checked there either."""
    vault.write(".vaultsync.yaml", "vault: doc\n")
    vault.write("docs/img/a.png", b"\x89PNG")
    res = vault.check()
    assert res.code == 0 and res.lines == [".vaultsync.yaml:1:8: CF004 warning: vault folder(s) doc hold no files — "
                                           "check `vault:`"], res.lines


@pytest.mark.parametrize("written, real, note", [
    ("doc", "docs", "docs/a.md"), ("Docs", "docs", "docs/a.md"), ("docs/adrs", "docs/adr", "docs/adr/x/a.md"),
    ("memroy", "memory", "memory/a.md"), ("ドキュメント", "ドキュメンツ", "ドキュメンツ/a.md"),
])
def test_a_vault_folder_misspelt_beside_the_notes_is_an_error(vault, written, real, note):
    """`vault: doc` beside `docs/`: 0 notes checked, exit 0, and the pre-commit hook passed every commit
    unchecked. A close spelling that holds notes makes it an error, as for a type folder."""
    vault.write(".vaultsync.yaml", f"vault: {written}\n")
    vault.write(note, "# a\n")
    res = vault.check()
    assert res.code == 1 and res.lines[0] == (f".vaultsync.yaml:1:8: CF004 vault: '{written}' holds no files, but "
                                              f"'{real}' holds notes (did you mean '{real}'?): no note is checked")
    asked = vault.check(real)  # the folder itself, asked for: it is said to lie outside the vault
    assert f"PA003 warning: {real} lies outside the vault ({written})" in asked.out + asked.err


def test_bad_revision_and_bare_repository(vault, tmp_path):
    res = vault.check("--rev", "nope")
    assert res.code == 2 and "unknown revision 'nope'" in res.err
    vault.write("docs/a.md", "# a\n")
    vault.commit("a")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(vault.root), str(bare))
    res = run_cli(["check"], bare)
    assert res.code == 2 and "use --rev HEAD" in res.err
    assert run_cli(["check", "--rev", "HEAD"], bare).code == 0


def test_invalid_custom_schemas_are_config_errors(vault):
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs, schema: s.json}\n")
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    for schema in ('{"$ref": "#/nope"}', "true", "{not json"):
        vault.write("s.json", schema)
        res = vault.check()
        assert res.code == 1 and res.lines and res.lines[0].startswith(".vaultsync.yaml:3:36: CF003 type 'adr': schema s.json")
        assert "Traceback" not in res.out + res.err


@pytest.mark.parametrize("ref", [
    "common.json#/$defs/o", "#/$defs/nope", "https://example.com/x.json", "#missing-anchor",
    "https://vaultsync.dev/schemas/memory.schema.json#/$defs/nope",
])
@pytest.mark.parametrize("where", ["properties", "allOf", "items", "$defs"])
def test_a_dangling_ref_anywhere_in_a_custom_schema_is_a_config_error(vault, ref, where):
    """A ``$ref`` that does not resolve, however deep (where no note reaches it yet), is CF003 with exit 1 in
    both the working tree and the staged check, never an internal error."""
    sub = {"$ref": ref}
    schema = {"properties": {"title": sub}, "allOf": [sub], "items": sub,
              "$defs": {"d": {"properties": {"x": sub}}}}[where]
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs, schema: s.json}\n")
    vault.write("s.json", json.dumps({"type": "object", where: schema}))
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.git("add", "-A")
    for res in (vault.check(), vault.check("--staged")):
        assert res.code == 1 and res.lines[0].startswith(".vaultsync.yaml:3:36: CF003 type 'adr': schema s.json: "
                                                         f"cannot resolve $ref {ref!r}"), res.out + res.err
        assert "internal error" not in res.err


@pytest.mark.parametrize("schema", [
    {"$ref": "#"},
    {"allOf": [{"$ref": "#"}]},
    {"anyOf": [{"type": "object"}, {"not": {"$ref": "#"}}]},
    {"if": {"$ref": "#"}, "then": True},
    {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"},
    {"$defs": {"x": {"$ref": "#/$defs/x"}}, "properties": {"title": {"$ref": "#/$defs/x"}}},  # under a property
    {"$id": "https://team.example/s", "$defs": {"a": {"$ref": "https://team.example/s#/$defs/a"}},
     "properties": {"title": {"$ref": "#/$defs/a"}}},  # by absolute URI
    {"dependentSchemas": {"title": {"$ref": "#"}}},
])
def test_a_ref_that_loops_on_the_same_value_is_a_config_error(vault, schema):
    """A ``$ref`` cycle that never moves into a property or an item recursed until Python's limit (exit 3,
    "internal error"): a committed schema could crash every hook and CI run. Now CF003 at load."""
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs, schema: s.json}\n")
    vault.write("s.json", json.dumps(schema))
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.git("add", "-A")
    for res in (vault.check(), vault.check("--staged")):
        assert res.code == 1 and res.lines[0].startswith(".vaultsync.yaml:3:36: CF003 type 'adr': schema s.json: $ref ")
        assert "loops back to a schema it came from on the same value" in res.lines[0], res.out + res.err


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"owner": {"$ref": "#"}}},  # recursion through a property: a tree
    {"$defs": {"node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
     "properties": {"tree": {"$ref": "#/$defs/node"}}},
    {"allOf": [{"$ref": "#/$defs/a"}], "$defs": {"a": {"type": "object"}}},  # a shared definition, no loop
])
def test_a_recursive_schema_that_moves_into_the_value_is_kept(vault, schema):
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs, schema: s.json}\n")
    vault.write("s.json", json.dumps(schema))
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra="tree: {children: [{children: []}]}\n"))
    res = vault.check()
    assert res.code == 0 and not any("CF003" in line for line in res.lines), res.out + res.err


@pytest.mark.parametrize("schema, note_extra, expected", [
    ({"$ref": "https://vaultsync.dev/schemas/memory.schema.json", "properties": {"tags": False, "team": True},
      "unevaluatedProperties": False}, "tags: [x]\nteam: a\n", ["SC001 tags: the schema allows no value here"]),
    ({"type": "object", "properties": {"score": {"type": "integer", "exclusiveMaximum": 7}}}, "score: 7\n",
     ["SC001 score: 7 must be less than 7"]),
    ({"type": "object", "properties": {"score": {"exclusiveMinimum": 7}}}, "score: 7\n", ["SC001 score: 7 must be more than 7"]),
    ({"type": "object", "properties": {"title": {"format": "email"}}}, "", ["SC001 title: 'T' is not a valid email"]),
    ({"type": "object", "properties": {"created": {"format": "date-time"}}}, "",
     ["DT001 created: '2024-01-01' is not a valid date-time (RFC 3339: 2024-01-31T09:30:00Z)"]),
    ({"type": "array"}, "", ["SC001 frontmatter: expected list, got a mapping"]),
])
def test_custom_schema_shapes_give_plain_diagnostics(vault, schema, note_extra, expected):
    """Boolean subschemas (valid 2020-12) apply, exclusive bounds say so, a format names itself (a date
    format only is DT001), and an error about the whole frontmatter names it."""
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs, schema: s.json}\n")
    vault.write("s.json", json.dumps(schema))
    vault.write("docs/adrs/ADR-0001.md", "---\nmemory_id: ADR-0001\ntype: adr\ntitle: T\nstatus: accepted\n"
                f"created: '2024-01-01'\n{note_extra}---\nBody.\n")
    res = vault.check()
    assert [line.split(" ", 1)[1] for line in res.lines] == expected and res.code == 1, res.out + res.err


@pytest.mark.parametrize("text", [
    json.dumps({"type": "object", "properties": {"title": json.loads('{"not":' * 150 + "{}" + "}" * 150)}}),
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 70 + "{}" + "}" * 70,
])
def test_a_schema_nested_too_deeply_is_a_config_error(vault, text):
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs, schema: s.json}\n")
    vault.write("s.json", text)
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.git("add", "-A")
    for res in (vault.check(), vault.check("--staged")):
        assert res.code == 1 and "CF003 type 'adr': schema s.json: nested more than 64 levels deep" in res.out, res.err


@pytest.mark.parametrize("where", ["file", "folder"])
def test_a_schema_that_is_a_symlink_is_never_followed(vault, tmp_path, where):
    """A committed schema that is a symbolic link (or sits under one) may lead out of the repository: it is
    never read, in the working tree, the staged index or a commit, and the message says why."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.json").write_text('{"type": "object", "required": ["SECRET_FIELD"]}')
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs, schema: s/s.json}\n")
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    if where == "file":
        (vault.root / "s").mkdir()
        (vault.root / "s" / "s.json").symlink_to(outside / "s.json")
    else:
        (vault.root / "s").symlink_to(outside)
    vault.commit("linked schema")
    for res in (vault.check(), vault.check("--staged"), vault.check("--rev", "HEAD")):
        assert res.code == 1 and "SECRET_FIELD" not in res.out, res.out
        assert "CF003 type 'adr': schema 's/s.json' is a symbolic link" in res.out, res.out


@pytest.mark.parametrize("vault_folder, linked, target", [
    ("notes", "notes", "outside"), ("notes", "notes", "absolute"), ("docs/notes", "docs", "outside"),
    ("ノート", "ノート", "outside"), ("notes", "notes", "inside"),
])
def test_a_vault_folder_that_is_a_symlink_is_never_read(vault, tmp_path, vault_folder, linked, target):
    """A committed ``vault:`` folder that is (or lies under) a symbolic link may lead anywhere on the machine:
    ``check``, ``show``, the workspace of the MCP server and writes read nothing through it; ``check`` says why."""
    from vaultsync.memory.workspace import Workspace

    outside = tmp_path / "outside"
    (outside / "notes").mkdir(parents=True)
    for folder in (outside, outside / "notes"):
        (folder / "secret.md").write_text("---\nmemory_id: SECRET-1\ntitle: SECRET_TITLE\n---\nSECRET_BODY [[x]]\n")
    vault.write(".vaultsync.yaml", f"vault: {vault_folder}\n")
    if target == "inside":
        vault.write("real/secret.md", "---\nmemory_id: SECRET-1\ntitle: SECRET_TITLE\n---\nSECRET_BODY\n")
    link = vault.root / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to({"outside": os.path.relpath(outside, link.parent), "absolute": str(outside),
                     "inside": "real"}[target])
    vault.commit("linked vault")
    for res in (vault.check(), vault.check("--staged"), vault.check("--rev", "HEAD")):
        assert res.code == 1 and "SECRET" not in res.out + res.err, res.out + res.err
        where = "is" if linked == vault_folder else f"lies under {linked}, which is"
        assert f"CF004 vault: '{vault_folder}' {where} a symbolic link: vaultsync never reads through one" in res.out
    for ref in ("SECRET-1", f"{vault_folder}/secret.md"):
        res = run_cli(["show", ref], vault.root)
        assert res.code == 2 and "SECRET_BODY" not in res.out, res.out
    assert Workspace.open(vault.root).vault().files == []


def test_check_of_a_commit_or_the_index_judges_their_links_not_the_disk(vault, tmp_path):
    """``check --rev``/``--staged`` looked at the working tree for the symlink test: a folder turned into a link on
    disk failed a commit that held real notes, and an unreadable folder on disk stopped a check of a commit."""
    vault.write(".vaultsync.yaml", "vault: [docs, more/notes]\n")
    vault.write("docs/a.md", "# a\n[[b]]\n")
    vault.write("more/notes/b.md", "# b\n")
    vault.commit("real folders")
    (vault.root / "docs").rename(vault.root / "realdocs")
    (vault.root / "docs").symlink_to("realdocs")
    for res in (vault.check("--rev", "HEAD"), vault.check("--staged")):
        assert (res.code, res.lines) == (0, []), res.out + res.err
    res = vault.check()  # the working tree holds the link
    assert res.code == 1 and "CF004 vault: 'docs' is a symbolic link" in res.out, res.out
    (vault.root / "more").chmod(0)
    try:
        res = vault.check("--rev", "HEAD")
        assert (res.code, res.lines) == (0, []), res.out + res.err
        assert "Traceback" not in vault.check().err
    finally:
        (vault.root / "more").chmod(0o755)


@pytest.mark.parametrize("layout", ["block", "flow"])
def test_each_linked_vault_folder_is_reported_at_its_own_entry(vault, tmp_path, layout):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.md").write_text("# secret\n")
    folders = ["docs", "ext", "dang", "cyc/sub"]
    vault.write(".vaultsync.yaml", "vault:\n" + "".join(f"  - {f}\n" for f in folders) if layout == "block"
                else f"vault: [{', '.join(folders)}]\n")
    vault.write("docs/a.md", "# a\n")
    (vault.root / "ext").symlink_to(outside)
    (vault.root / "dang").symlink_to(tmp_path / "nowhere")
    (vault.root / "cyc").symlink_to("cyc")
    vault.commit("links")
    text = (vault.root / ".vaultsync.yaml").read_text()
    for res in (vault.check(), vault.check("--rev", "HEAD")):
        found = [line for line in res.lines if "CF004" in line]
        assert len(found) == 3, res.out
        for line, folder in zip(found, ["ext", "dang", "cyc/sub"], strict=True):
            at = text.index(folder)
            row, col = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
            assert line.startswith(f".vaultsync.yaml:{row}:{col}: CF004 vault: '{folder}' "), line


def test_a_type_folder_that_is_a_symlink_is_reported(vault, tmp_path):
    """A type folder that is a link was silently empty: its notes were not read, and only the links to them said so."""
    (tmp_path / "realadr").mkdir()
    (tmp_path / "realadr" / "ADR-0001.md").write_text(adr("ADR-0001"))
    vault.write("docs/index.md", "# index\n")
    (vault.root / "docs" / "adrs").symlink_to(tmp_path / "realadr")
    vault.commit("linked type folder")
    for res in (vault.check(), vault.check("--staged"), vault.check("--rev", "HEAD")):
        assert res.code == 1 and [line for line in res.lines if "CF004" in line] == [
            ".vaultsync.yaml:3:17: CF004 types.adr.folder: 'docs/adrs' is a symbolic link: vaultsync never reads "
            "through one (it may lead out of the repository) — name the folder it leads to, if that is in the "
            "repository"], res.out


@pytest.mark.parametrize("asked", ["docs/index.md", "docs/adrs/ADR-0001.md", "docs/", "docs/adrs/"])
def test_a_config_error_is_reported_whatever_paths_are_checked(vault, tmp_path, asked):
    """``check docs/adrs/ADR-0001.md`` under a linked type folder said "0 notes checked", exit 0: the CF004
    error, which leaves the folder unchecked, was filtered out with every diagnostic of a path not asked for
    (as pre-commit asks for the staged notes only). An error of the config concerns every note."""
    (tmp_path / "realadr").mkdir()
    (tmp_path / "realadr" / "ADR-0001.md").write_text(adr("ADR-0001"))
    vault.write("docs/index.md", "# index\n")
    (vault.root / "docs" / "adrs").symlink_to(tmp_path / "realadr")
    vault.commit("linked type folder")
    res = vault.check(asked)
    assert res.code == 1 and any(line.startswith(".vaultsync.yaml:3:17: CF004 ") for line in res.lines), res.out


def test_a_config_warning_stays_out_of_a_check_of_other_paths(vault):
    """Only errors of the config are kept: a warning (a type folder outside the vault) is for a whole-vault check."""
    vault.write("docs/index.md", "# index\n")
    config = (vault.root / ".vaultsync.yaml").read_text()
    vault.write(".vaultsync.yaml", config.replace("  rule: {folder: docs/rules}\n",
                                                  "  rule: {folder: docs/rules}\n  memo: {folder: memos}\n"))
    vault.commit("a type with no folder yet")
    whole = vault.check()
    assert any(" CF" in line for line in whole.lines), whole.out
    assert not any(" CF" in line for line in vault.check("docs/index.md").lines)


def test_a_config_that_is_a_symlink_is_never_followed(vault, tmp_path):
    outside = tmp_path / "cfg.yaml"
    outside.write_text("root:x:0:0:root:/root:/bin/bash\n")
    vault.write("docs/a.md", "# a\n")
    (vault.root / ".vaultsync.yaml").unlink()
    (vault.root / ".vaultsync.yaml").symlink_to(outside)
    vault.commit("linked config")
    for res in (vault.check(), vault.check("--staged"), vault.check("--rev", "HEAD")):
        assert res.code == 1 and "root:x" not in res.out + res.err, res.out + res.err
        assert "CF001 cannot read config: .vaultsync.yaml is a symbolic link, not a file" in res.out + res.err


BAD_ADR = '---\nmemory_id: ADR-0002\ntype: adr\ntitle: T\nstatus: bogus\ncreated: "2024-01-01"\nfoo: 1\n---\nB.\n'


@pytest.mark.parametrize("folder", ["docs/adrs", "./docs/adrs", "docs//adrs", "docs/./adrs/", "docs\\\\adrs", ".", "./",
                                    "docs"])
def test_a_type_folder_is_read_as_a_path_however_written(vault, folder):
    """``./docs//adrs/`` is ``docs/adrs``, and ``.`` is the whole repository, as for ``vault:``: the type's
    schema applies (it never silently does not)."""
    vault.write(".vaultsync.yaml", f"vault: docs\ntypes:\n  adr: {{folder: {json.dumps(folder)}}}\n")
    vault.write("docs/adrs/ADR-0002.md", BAD_ADR)
    assert sorted(line.split(" ")[1] for line in vault.check().lines) == ["SC001", "SC003"]


@pytest.mark.parametrize("vault_folder, folder", [("docs", "elsewhere"), ("docs/adrs", "docs/rules"), (["a", "b"], "c")])
def test_a_type_folder_outside_the_vault_is_a_warning(vault, vault_folder, folder):
    vault.write(".vaultsync.yaml", f"vault: {json.dumps(vault_folder)}\ntypes:\n  adr: {{folder: {folder}}}\n")
    vault.write("docs/adrs/ADR-0002.md", BAD_ADR)
    vault.write("a/n.md", "# n\n")
    lines = vault.check().lines
    assert any(f"CF004 warning: types.adr.folder: '{folder}' is outside the vault" in line for line in lines), lines


@pytest.mark.parametrize("second", ["docs/adrs", "./docs/adrs/", "docs//adrs"])
def test_two_types_on_one_folder_are_a_config_error(vault, second):
    vault.write(".vaultsync.yaml", f"vault: docs\ntypes:\n  adr: {{folder: docs/adrs}}\n  rule: {{folder: '{second}'}}\n")
    vault.write("docs/adrs/ADR-0002.md", BAD_ADR)
    res = vault.check()
    assert res.code == 1 and "CF002 types.rule.folder: 'docs/adrs' is already the folder of type 'adr'" in res.out + res.err


def test_a_subfolder_may_hold_another_type(vault):
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs}\n  rule: {folder: docs/rules}\n")
    vault.write("docs/rules/r.md", BAD_ADR)
    assert "SC004 type: 'adr' notes live in docs/, this one is in docs/rules/ (type 'rule')" in vault.check().out


@pytest.mark.parametrize("config, message", [
    ("vault: docs\ntypes: 5\n", ".vaultsync.yaml:2:8: CF002 types: expected a mapping, got 5"),
    ("vault: 5\n", ".vaultsync.yaml:1:8: CF002 vault: expected a string or a list, got 5"),
    ("vault: docs\ntypes:\n  adr:\n", ".vaultsync.yaml:3:7: CF002 types.adr: expected a mapping, got nothing (null)"),
    ("vault: docs\nsearch: {min_relevance: true}\n",
     ".vaultsync.yaml:2:25: CF002 search.min_relevance: min_relevance must be a number, got true"),
])
@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_config_errors_speak_yaml_and_follow_the_format(vault, config, message, fmt):
    """A config error says what YAML value was found (never Python's ``True``/``None``) and comes in the
    report ``--format`` asks for, on stdout for json and github (a CI job reads those), exit 1."""
    vault.write(".vaultsync.yaml", config)
    vault.write("docs/a.md", "# a\n")
    res = vault.check("--format", fmt)
    assert res.code == 1
    path, line, col, rest = message.split(":", 3)
    code, text = rest.strip().split(" ", 1)
    if fmt == "text":
        assert res.err.strip() == message
    elif fmt == "json":
        assert json.loads(res.out)["diagnostics"] == [{"path": path, "line": int(line), "col": int(col), "code": code,
                                                       "severity": "error", "message": text}]
    else:
        assert res.out.startswith(f"::error file={path},line={line},col={col},title={code}::")


@pytest.mark.parametrize("schema, expected", [
    ({"type": "object", "x-meta": {"$ref": "#/nope"}}, []),                      # data of an unknown keyword
    ({"$ref": "https://json-schema.org/draft/2020-12/schema"}, ["SC001"]),      # the meta-schema: enum must be a list
    ({"type": "object", "properties": {"enum": {"$ref": "#/nope"}}}, ["CF003"]),  # a property named enum
    ({"type": "object", "$defs": {"const": {"$ref": "#/nope"}}}, ["CF003"]),
    ({"type": "object", "properties": {"x": {"$ref": "#/type"}}}, ["CF003"]),    # a value that is no schema
    ({"type": "object", "patternProperties": {"^(?<a>O)wner$": {"type": "integer"}}}, ["SC001"]),
    ({"type": "object", "patternProperties": {"^O\\d?wner$": {"type": "integer"}},
      "additionalProperties": {"type": "string"}}, ["SC001"]),
    ({"type": "object", "patternProperties": {"^\\p{Lu}": {"type": "string"}}}, ["CF003"]),
])
def test_references_and_pattern_properties_never_crash(vault, schema, expected):
    """Only what JSON Schema reads as a subschema is walked for $ref; patternProperties keys are read as
    ECMA-262 (a ``\\p{…}`` there is CF003, not an internal error)."""
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs, schema: s.json}\n")
    vault.write("s.json", json.dumps(schema))
    vault.write("docs/adrs/ADR-0001.md", "---\nmemory_id: ADR-0001\ntitle: T\nenum: x\nOwner: y\n---\nB.\n")
    res = vault.check()
    assert sorted({line.split(" ")[1] for line in res.lines}) == expected and "internal error" not in res.err, res.out


def test_install_never_loses_a_foreign_hook(vault):
    hooks = vault.root / ".git/hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "post-commit").write_text("#!/bin/sh\necho A\n")
    assert run_cli(["install", "--no-alias"], vault.root).code == 0
    (hooks / "post-commit").write_text("#!/bin/sh\necho B\n")  # another tool replaced our shim
    res = run_cli(["install", "--no-alias"], vault.root)
    assert res.code == 1 and "merge them by hand" in res.err
    assert (hooks / "post-commit").read_text() == "#!/bin/sh\necho B\n"
    assert (hooks / "post-commit.vaultsync-chained").read_text() == "#!/bin/sh\necho A\n"


@pytest.mark.parametrize("config", ["vaultsync-index", "vaultsync-check"])
def test_install_leaves_the_frameworks_syncing_hooks_alone(vault, config):
    """`pre-commit install --hook-type post-commit …` with vaultsync-index already syncs after a commit: a shim
    chained to it would start a second sync. Without vaultsync-index in the config, the hook is chained."""
    hooks = vault.root / ".git/hooks"
    hooks.mkdir(exist_ok=True)
    vault.write(".pre-commit-config.yaml", f"repos:\n- repo: local\n  hooks:\n  - id: {config}\n")
    framework = "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\nexec pre-commit\n"
    for hook in ("post-commit", "post-merge"):
        (hooks / hook).write_text(framework)
    res = run_cli(["install", "--no-alias"], vault.root)
    assert res.code == 0, res.err
    if config == "vaultsync-index":
        assert res.out.splitlines()[0] == ("post-commit, post-merge: the pre-commit framework's hook runs "
                                           "vaultsync-index already: left as is")
        assert (hooks / "post-commit").read_text() == framework and not (hooks / "post-commit.vaultsync-chained").exists()
        assert "vaultsync git hook shim" in (hooks / "post-checkout").read_text()
    else:
        assert (hooks / "post-commit.vaultsync-chained").read_text() == framework


@pytest.mark.parametrize("link", ["../../tools/post-merge", "/nonexistent/hook", "post-merge-real"])
def test_install_never_writes_through_a_hook_link(vault, link):
    """GH-08: a dangling hook symlink counted as "no hook", and the shim was written where it pointed
    (into the working tree)."""
    hooks = vault.root / ".git/hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "post-merge").symlink_to(link)
    assert run_cli(["install", "--no-alias"], vault.root).code == 0
    assert not (vault.root / "tools").exists() and not (hooks / "post-merge-real").exists()
    assert (hooks / "post-merge.vaultsync-chained").is_symlink()
    assert os.readlink(hooks / "post-merge.vaultsync-chained") == link
    assert not (hooks / "post-merge").is_symlink() and "vaultsync" in (hooks / "post-merge").read_text()
    assert vault.git("status", "--porcelain").stdout == "?? .vaultsync.yaml\n"


def test_install_replaces_a_link_to_our_own_shim_without_writing_through_it(vault, tmp_path):
    hooks = vault.root / ".git/hooks"
    hooks.mkdir(exist_ok=True)
    assert run_cli(["install", "--no-alias"], vault.root).code == 0
    shared = tmp_path / "shared-shim"
    shared.write_text((hooks / "post-commit").read_text())
    (hooks / "post-commit").unlink()
    (hooks / "post-commit").symlink_to(shared)
    before = shared.read_text()
    assert run_cli(["install", "--no-alias"], vault.root).code == 0
    assert shared.read_text() == before and not (hooks / "post-commit").is_symlink()


@pytest.mark.parametrize("args", [["--top-k", "0"], ["--top-k", "-1"], ["--budget", "0"],
                                  ["--min-confidence", "nan"], ["--rerank", "nonsense"]])
def test_search_rejects_bad_options(vault, args):
    res = subprocess.run([sys.executable, "-m", "vaultsync", "search", "x", *args, "--no-daemon"], cwd=vault.root,
                         capture_output=True, text=True)
    assert res.returncode == 2 and "Traceback" not in res.stderr


@pytest.mark.slow
def test_an_extreme_value_never_blocks_the_index_and_a_damaged_index_heals(vault, embedder):
    from vaultsync.git import open_repo
    from vaultsync.index.sync import sync

    vault.write(".vaultsync.yaml", "vault: docs\n")
    vault.write("docs/a.md", "---\nimportance: .inf\nconfidence: -99999999999999999999\n---\n# a\nAlpha note.\n")
    vault.write("docs/b.md", "# b\nBravo note.\n")
    vault.commit("odd values", "--no-verify")
    report = sync(open_repo(vault.root), wait=60)
    assert report.status == "updated" and report.added == 2
    db = Path(open_repo(vault.root).path) / "vaultsync" / "index.sqlite"
    db.write_bytes(b"this is not a database" * 100)
    assert sync(open_repo(vault.root), wait=60).added == 2  # rebuilt from scratch


def test_status_while_a_first_sync_is_creating_the_index(vault):
    """A hook's first sync has created index.sqlite but no table yet: status reports, never fails."""
    import json
    import sqlite3

    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit()
    db_path = vault.root / ".git/vaultsync/index.sqlite"
    db_path.parent.mkdir(parents=True, exist_ok=True)
    sqlite3.connect(db_path).execute("PRAGMA user_version = 0").connection.close()
    res = run_cli(["status", "--format", "json"], vault.root)
    info = json.loads(res.out)
    assert res.code == 0 and info["indexed_commit"] is None and not info["up_to_date"]
    assert "no such table" in info["index_problem"]


def test_status_says_when_a_sync_is_running(vault):
    import json

    from vaultsync.index.lock import SyncLock

    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit()
    index_dir = vault.root / ".git/vaultsync"
    assert json.loads(run_cli(["status", "--format", "json"], vault.root).out)["sync_running"] is False
    with SyncLock(index_dir / "sync.lock", index_dir / "dirty", wait=-1) as held:  # a sync holds it
        assert held
        res = subprocess.run([sys.executable, "-m", "vaultsync", "status"], cwd=vault.root,
                             capture_output=True, text=True)
    assert f"BEHIND HEAD (a sync is running, pid {os.getpid()})" in res.stdout
    assert json.loads(run_cli(["status", "--format", "json"], vault.root).out)["sync_running"] is False


def test_status_does_not_call_a_running_syncs_lancedb_step_damage(vault, hashed_models):
    """During a first sync status said "LanceDB … is behind; the next sync repairs it": the running sync fills
    LanceDB last, so that is no damage to report while it runs."""
    from vaultsync.index.lock import SyncLock

    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit()
    vault.synced()
    db = sqlite3.connect(vault.root / ".git/vaultsync/index.sqlite")
    with db:
        db.execute("UPDATE meta SET value = 'elsewhere' WHERE key = 'lance_tree'")
    db.close()
    index_dir = vault.root / ".git/vaultsync"
    assert "LanceDB (embedding cache, vector table) is behind" in run_cli(["status"], vault.root).out
    with SyncLock(index_dir / "sync.lock", index_dir / "dirty", wait=-1) as held:
        assert held
        res = subprocess.run([sys.executable, "-m", "vaultsync", "status"], cwd=vault.root, capture_output=True,
                             text=True)
    assert "a sync is running" in res.stdout and "LanceDB" not in res.stdout, res.stdout


@pytest.fixture
def sha256_repo(tmp_path):
    repo = tmp_path / "sha256"
    repo.mkdir()
    if git(repo, "init", "-q", "--object-format=sha256", check=False).returncode != 0:
        pytest.skip("this git cannot create SHA-256 repositories")
    (repo / "a.md").write_text("---\ntitle: a\n---\nhello\n")
    git(repo, "add", "a.md")
    git(repo, "commit", "-qm", "a")
    return repo


@pytest.mark.parametrize("args", [["status"], ["sync"], ["search", "hello"], ["check", "--staged"],
                                  ["show", "a"]])
def test_a_repository_libgit2_cannot_read_is_named_not_denied(sha256_repo, args):
    """A SHA-256 repository is a repository: the message says why it cannot be read, never
    "not inside a git repository"; the hook's sync stays silent and never fails the commit."""
    import pygit2

    try:
        pygit2.Repository(str(sha256_repo))
        pytest.skip("this libgit2 reads SHA-256 repositories")
    except pygit2.GitError:
        pass
    res = run_cli(args, sha256_repo)
    assert res.code == 2 and "Traceback" not in res.err, res.err
    assert f"cannot read the repository at {sha256_repo}/.git" in res.err and "sha256" in res.err, res.err
    assert "not inside" not in res.err
    assert run_cli(["sync", "--quiet", "--hook", "post-commit"], sha256_repo).code == 0


def test_a_malformed_git_file_is_named(tmp_path):
    (tmp_path / ".git").write_text("garbage\n")
    res = run_cli(["status"], tmp_path)
    assert res.code == 2 and "cannot read the repository: the `.git` file at" in res.err and "malformed" in res.err


def test_outside_any_repository_is_still_said_plainly(tmp_path):
    res = run_cli(["status"], tmp_path)
    assert res.code == 2 and res.err.strip() == "vaultsync status: not inside a git repository"


def test_a_read_only_index_folder_gives_clean_errors(vault, model_env):
    """GH-10: on a read-only `.git/vaultsync`, sync, status and search ended with "internal error" (exit 3).
    The folder is made read-only by a bind mount in a user namespace; where that is not allowed, skipped."""
    import shutil

    if shutil.which("unshare") is None:
        pytest.skip("no unshare")
    vault.write("docs/a.md", "# a\nalpha zqxone\n")
    vault.commit("a")
    assert run_cli(["sync", "--quiet"], vault.root).code == 0
    vault.write("docs/b.md", "# b\nbeta\n")
    vault.commit("b", "--no-verify")
    script = ("mount --bind .git/vaultsync .git/vaultsync && mount -o remount,ro,bind .git/vaultsync || exit 77; "
              f"for c in 'sync' 'status' 'search zqxone --no-daemon'; do {sys.executable} -m vaultsync $c; "
              "echo \"rc=$?\"; done")
    res = subprocess.run(["unshare", "-rm", "bash", "-c", script], cwd=vault.root, capture_output=True, text=True,
                         env={**os.environ, "VAULTSYNC_CACHE_DIR": str(model_env)})
    if res.returncode == 77 or "rc=" not in res.stdout:
        pytest.skip(f"no read-only bind mount here: {res.stderr.strip()[:200]}")
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert "rc=3" not in res.stdout, res.stdout + res.stderr
    assert "Read-only file system" in res.stderr


@pytest.mark.parametrize("setting", [".git/hooks", "./.git/hooks/", "ABS"])
def test_core_hooks_path_naming_gits_own_folder_is_no_obstacle(vault, setting):
    """GH-08: `core.hooksPath=.git/hooks` is where git looks anyway; install refused it as a foreign path."""
    vault.git("config", "core.hooksPath", str(vault.root / ".git/hooks") if setting == "ABS" else setting)
    assert run_cli(["install", "--no-alias"], vault.root).code == 0
    assert "vaultsync" in (vault.root / ".git/hooks/post-commit").read_text()


def test_a_damaged_sync_record_is_only_a_reason_to_check(vault, model_env):
    vault.write("docs/a.md", "# a\nalpha\n")
    vault.commit("a")
    assert run_cli(["sync", "--quiet"], vault.root).code == 0
    (vault.root / ".git/vaultsync/sqlite.verified").write_bytes("é\xff".encode("latin-1"))
    vault.write("docs/b.md", "# b\nbeta\n")
    vault.commit("b", "--no-verify")
    res = run_cli(["sync", "--quiet"], vault.root)
    assert res.code == 0 and "Traceback" not in res.err, res.err


def test_status_of_a_repository_without_commits_says_so(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    res = run_cli(["status"], tmp_path)
    assert res.code == 0 and "HEAD (no commits)   nothing to index yet" in res.out and "BEHIND" not in res.out


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_search_in_a_repository_without_commits_says_why_nothing_is_found(tmp_path, fmt):
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "note.md").write_text("# Note\nwebhook retries\n")  # written, never committed
    res = run_cli(["search", "webhook", "--no-daemon", "--format", fmt], tmp_path)
    assert res.code == 1 and res.out == "" and "no commits" in res.err and "vector leg" not in res.err
    assert not (tmp_path / ".git/vaultsync").exists()  # nothing built for nothing


@pytest.mark.parametrize("option", ["--tag", "--type", "--scope"])
def test_a_filter_that_is_not_utf8_is_a_usage_error(vault, option):
    res = subprocess.run([sys.executable, "-m", "vaultsync", "search", "ledger", "--no-daemon", option.encode(),
                          b"caf\xe9"], cwd=vault.root, capture_output=True, text=True, errors="replace")
    assert res.returncode == 2 and "not valid UTF-8" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("query, byte", [([b"Stra\xdfe"], "0xDF at character 5"), ([b"\xff"], "0xFF at character 1"),
                                         ([b"gateway", b"\xed\xa0\x80"], "0xED at character 1"),
                                         ([b"\xe6\x9d\xb1\xe4\xba"], "0xE4 at character 2")])
def test_a_query_that_is_not_utf8_is_a_usage_error(vault, query, byte):
    """A Latin-1 "Straße" was searched as "Strae" and "\\xff" said "empty query": the query's words get the
    filters' check (exit 2, the byte and where it stands), in text and JSON alike."""
    for fmt in (b"text", b"json"):
        res = subprocess.run([sys.executable, "-m", "vaultsync", "search", *query, b"--no-daemon", b"--format", fmt],
                             cwd=vault.root, capture_output=True, text=True, errors="replace")
        assert res.returncode == 2 and f"argument query: not valid UTF-8: byte {byte}" in res.stderr, res.stderr
        assert res.stdout == "" and "Traceback" not in res.stderr


@pytest.mark.parametrize("argv", [
    [b"new", b"rule", b"--title", b"ok", b"--body", b"x\xffy"],
    [b"new", b"rule", b"--title", b"ok", b"--set", b"tags=[\xff]"],
    [b"new", b"rule", b"--title", b"ab\xffc"],
    [b"new", b"ru\xe9le", b"--title", b"ok"],
    [b"supersede", b"RULE-0001", b"RULE-\xff"],
    [b"promote", b"docs/scratch/\xff.md", b"--type", b"rule"],
])
def test_a_memory_command_argument_that_is_not_utf8_is_a_usage_error(vault, argv):
    """argv bytes that are not UTF-8 crashed `new --body` (exit 3) or gave a vague error: now exit 2, naming
    the byte and where it stands, and nothing is written."""
    before = vault.git("status", "--porcelain", "--untracked-files=all").stdout
    res = subprocess.run([sys.executable, "-m", "vaultsync", *argv], cwd=vault.root, capture_output=True, text=True,
                         errors="replace")
    assert res.returncode == 2 and "not valid UTF-8: byte 0x" in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert vault.git("status", "--porcelain", "--untracked-files=all").stdout == before


@pytest.mark.parametrize("setting", ["/dev/null", "a-file"])
def test_install_into_a_hooks_path_that_is_no_folder_is_refused(vault, setting):
    """``core.hooksPath=/dev/null`` is how people switch hooks off: install says so and changes nothing."""
    (vault.root / "a-file").write_text("not a folder\n")
    git(vault.root, "config", "core.hooksPath", setting)
    res = run_cli(["install", "--hooks-path", "--no-alias"], vault.root)
    assert res.code == 1 and "not a folder" in res.err, res.err


def test_a_sparse_index_is_read_through_git(vault):
    """libgit2 cannot read a sparse index (its ``sdir`` extension): the staged check, the pre-commit
    hook's, lists the entries with ``git ls-files`` instead of failing every commit."""
    vault.write(".vaultsync.yaml", "vault: docs\n")
    vault.write("docs/rules/a.md", "# A\nSee [[b]].\n")
    vault.write("docs/other/b.md", "# B\n")
    vault.commit("init")
    git(vault.root, "sparse-checkout", "init", "--cone", "--sparse-index")
    git(vault.root, "sparse-checkout", "set", "docs/rules")
    assert not (vault.root / "docs/other/b.md").exists()
    vault.write("docs/rules/c.md", "# C\nSee [[b]] and [[gone]].\n")
    git(vault.root, "add", "docs/rules/c.md")
    res = run_cli(["check", "--staged"], vault.root)
    assert res.code == 1 and res.lines == ["docs/rules/c.md:2:15: WL001 [[gone]] → no such note"], res.out + res.err


@pytest.mark.parametrize("scope, prefix", [
    ("docs/adr", "docs/adr/"), ("./docs//adr/", "docs/adr/"), ("docs\\adr", "docs/adr/"), ("docs/x/../adr", "docs/adr/"),
    (".", None), ("", None), ("./", None), ("文書/決定", "文書/決定/"),
])
def test_a_scope_is_a_folder_prefix(scope, prefix):
    """``docs/adr`` holds ``docs/adr/x.md``, not ``docs/adrs/x.md``; spellings of one folder are one scope."""
    from vaultsync.search.options import SearchOptions

    assert SearchOptions.from_config({}, scope=scope).scope == prefix


@pytest.mark.parametrize("scope", ["../x", "docs/../../x", "/etc"])
def test_a_scope_outside_the_repository_is_refused(scope):
    from vaultsync.search.options import SearchOptions

    with pytest.raises(ValueError, match="scope"):
        SearchOptions.from_config({}, scope=scope)


def test_a_scope_given_from_a_subfolder_or_as_an_absolute_path_is_made_repository_relative(vault, monkeypatch):
    from vaultsync.cli.search import _repo_scope

    (vault.root / "docs/adr").mkdir(parents=True)
    monkeypatch.chdir(vault.root / "docs")
    assert _repo_scope("adr") == "docs/adr"  # a folder here: relative to here, as git reads paths
    assert _repo_scope("docs/adr") == "docs/adr"  # no such folder here: from the top, as written
    assert _repo_scope(str(vault.root / "docs/adr")) == "docs/adr"
    assert _repo_scope("/etc") == "/etc"  # outside: left for the search to refuse


def test_the_heap_trim_finds_glibc_without_a_library_search():
    """The daemon calls it after every load: found in the process's own symbols, once, and it never raises."""
    import platform

    from vaultsync import heap

    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert heap._malloc_trim() is not None
    heap.trim()
    assert heap._malloc_trim() is heap._malloc_trim()


@pytest.mark.parametrize("args", [[], ["--staged"], ["--rev", "HEAD"]])
def test_a_config_that_is_a_folder_fails_the_check_as_it_fails_the_index(vault, args):
    (vault.root / ".vaultsync.yaml").unlink()
    vault.write(".vaultsync.yaml/notes.txt", "not a config\n")
    vault.write("docs/a.md", "# a\n")
    vault.commit("a", "--no-verify")
    res = vault.check(*args)
    assert res.code == 1 and res.err.strip() == \
        ".vaultsync.yaml:1:1: CF001 cannot read config: .vaultsync.yaml is a folder, not a file"


def test_a_full_disk_is_an_error_not_a_crash(vault, monkeypatch):
    """ENOSPC, a read-only disk or a denied write is the machine's problem: one line, exit 1, no crash report."""
    import errno

    from vaultsync.cli import status as status_cli

    def full(*_a, **_k):  # type: ignore[no-untyped-def]
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(status_cli, "run", full)
    res = run_cli(["status"], vault.root)
    assert res.code == 1 and res.err.strip() == "vaultsync status: error: No space left on device"


@pytest.mark.slow
def test_a_folder_where_the_index_file_belongs_is_reported_and_rebuilt(vault, model_env):
    vault.write("docs/a.md", "# a\nThe zebrafinch marker.\n")
    vault.commit("a")
    assert run_cli(["sync", "--quiet"], vault.root).code == 0
    index = vault.root / ".git/vaultsync/index.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(str(index) + suffix).unlink(missing_ok=True)
    index.mkdir()
    res = run_cli(["status"], vault.root)  # status reports, as for every other index problem
    assert res.code == 0 and f"warning     the index file {index} is a folder: remove it" in res.out, res.out
    res = run_cli(["search", "zebrafinch", "--no-daemon"], vault.root)
    assert res.code == 1 and "cannot read the index" in res.err and "index --rebuild" in res.err, res.err
    assert run_cli(["index", "--rebuild", "--quiet"], vault.root).code == 0
    assert "docs/a.md" in run_cli(["search", "zebrafinch", "--no-daemon"], vault.root).out


@pytest.mark.slow
def test_a_rebuild_that_cannot_finish_keeps_the_old_index(vault, model_env, tmp_path, monkeypatch):
    vault.write("docs/a.md", "# a\nThe zebrafinch marker.\n")
    vault.commit("a")
    assert run_cli(["sync", "--quiet"], vault.root).code == 0
    before = index_state(vault.root)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("the model cache cannot live here")
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(blocked / "sub"))
    assert run_cli(["index", "--rebuild", "--quiet"], vault.root).code == 1
    monkeypatch.undo()
    assert_same_index(before, index_state(vault.root))
    assert not list((vault.root / ".git/vaultsync").glob("*.rebuilding-old"))


@pytest.mark.parametrize("sparse_index", [False, True])
def test_an_intent_to_add_note_is_not_staged(vault, sparse_index):
    """``git add -N`` puts an empty placeholder in the index that no commit takes: the staged check
    reads as the commit will, so a link to it is dangling and its empty text is no missing frontmatter."""
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs}\n")
    vault.write("docs/base.md", "base\n")
    vault.write("docs/other/keep.md", "# Keep\n")
    vault.commit("init")
    if sparse_index:  # the entries come from `git ls-files` then
        git(vault.root, "sparse-checkout", "init", "--cone", "--sparse-index")
        git(vault.root, "sparse-checkout", "set", "docs")
    vault.write("docs/New note.md", "# New\n")
    vault.write("docs/adrs/ADR-0009.md", adr("ADR-0009"))
    git(vault.root, "add", "-N", "docs/New note.md", "docs/adrs/ADR-0009.md")
    vault.write("docs/empty.md", "")  # a staged empty note stays staged
    vault.write("docs/base.md", "see [[New note]] and [[empty]]\n")
    git(vault.root, "add", "docs/base.md", "docs/empty.md")
    res = run_cli(["check", "--staged"], vault.root)
    assert res.code == 1 and res.lines == ["docs/base.md:1:5: WL001 [[New note]] → no such note; docs/New note.md is "
                                           "on disk but not in what is checked: `git add` it (or it is ignored by "
                                           "git)"], res.out + res.err
    git(vault.root, "add", "docs/New note.md", "docs/adrs/ADR-0009.md")  # now staged for real
    res = run_cli(["check", "--staged"], vault.root)
    assert res.code == 0, res.out + res.err


@pytest.mark.parametrize("shape", ["deleted", "deleted-committed-empty", "unstaged-then-n", "renamed-dir"])
def test_an_intent_to_add_placeholder_stays_unstaged_whatever_the_worktree(vault, shape):
    """Variants: the file deleted after ``git add -N`` (git then shows ``D`` in the work tree, not ``A``), a
    committed empty note deleted from the work tree (a real entry: it stays), a committed note taken out
    of the index and added back with ``-N`` (the commit drops it), a placeholder in a non-ASCII folder."""
    vault.write(".vaultsync.yaml", "vault: docs\n")
    vault.write("docs/base.md", "base\n")
    vault.write("docs/kept-empty.md", "")
    vault.write("docs/gone.md", "# Gone\n")
    vault.commit("init")
    name = {"deleted": "docs/New note.md", "deleted-committed-empty": "docs/New note.md",
            "unstaged-then-n": "docs/gone.md", "renamed-dir": "docs/änderung/Neu.md"}[shape]
    if shape != "unstaged-then-n":
        vault.write(name, "# New\n")
    else:
        git(vault.root, "rm", "-q", "--cached", name)
    git(vault.root, "add", "-N", name)
    if shape.startswith("deleted"):
        (vault.root / name).unlink()
    if shape == "deleted-committed-empty":
        (vault.root / "docs/kept-empty.md").unlink()
    link = name.removeprefix("docs/").removesuffix(".md")
    vault.write("docs/base.md", f"see [[{link}]] and [[kept-empty]]\n")
    git(vault.root, "add", "docs/base.md")
    res = run_cli(["check", "--staged"], vault.root)
    expected = "target removed in this commit (docs/gone.md)" if shape == "unstaged-then-n" else "no such note" + (
        f"; {name} is on disk but not in what is checked: `git add` it (or it is ignored by git)"
        if shape == "renamed-dir" else "")
    assert res.code == 1 and res.lines == [f"docs/base.md:1:5: {'WL007' if shape == 'unstaged-then-n' else 'WL001'} "
                                           f"[[{link}]] → {expected}"], res.out + res.err


@pytest.mark.parametrize("folder, typed", [
    ("fo\u0308lder/café", "földer/café"),         # committed decomposed (macOS), typed composed
    ("földer/cafe\u0301", "fo\u0308lder/café"),   # committed composed, typed decomposed
    ("文書/決定", "文書/決定/"),                     # nothing to normalise
])
def test_a_scope_matches_its_folder_in_either_unicode_form(vault, model_env, folder, typed):
    """Paths keep the bytes git holds; ``--scope`` names the same folder however its accents were typed."""
    import json

    vault.write(".vaultsync.yaml", "vault: .\n")
    vault.write(f"{folder}/x.md", "# Gerbil\nThe gerbil feeding policy.\n")
    vault.write("other/y.md", "# Gerbil too\nAnother gerbil feeding note.\n")
    vault.commit("init")
    vault.synced()
    res = run_cli(["search", "--no-daemon", "gerbil feeding", "--scope", typed, "--format", "json",
                   "--min-relevance", "0"], vault.root)
    assert res.code == 0, res.err
    answer = json.loads(res.out)
    assert [h["path"] for h in answer["hits"]] == [f"{folder}/x.md"] and not answer["warnings"], answer


@pytest.mark.parametrize("section, where", [
    ("  top_k: 500\n", "2:10"), ("  min_relevance: 2\n", "2:18"), ("  bogus_key: 1\n", "2:14"),  # its value
    ("  legs: []\n", "2:9"), ("  graph_hops: -1\n", "2:15"),
])
def test_a_bad_search_value_in_the_committed_config_is_named_where_it_is(vault, section, where):
    """Every search says it with the located CF002 line ``vaultsync check`` gives, not an option error the
    user never typed, and searches with the default settings (ADR-0119: it shapes no index)."""
    vault.write(".vaultsync.yaml", "search:\n" + section)
    vault.write("a.md", "# A\ngerbil\n")
    vault.commit("init")
    res = run_cli(["search", "--no-daemon", "gerbil"], vault.root)
    assert res.code == 0 and res.out.startswith(f"warning: .vaultsync.yaml:{where}: CF002 search."), res.out
    assert "a.md#0" in res.out
    checked = run_cli(["check"], vault.root)
    assert f".vaultsync.yaml:{where}: CF002" in checked.out + checked.err


@pytest.mark.parametrize("written, real", [
    ("docs/adr", "docs/adrs"),              # a letter short
    ("docs/adrs", "docs/adr"),              # a letter too many
    ("docs/ADRs", "docs/adrs"),             # case
    ("docs/decisons", "docs/decisions"),    # a transposition
    ("docs/entscheidungen", "docs/entscheidüngen"),  # a letter of another script
    ("notes/team/adr", "notes/team/adrs"),  # deeper
])
def test_a_type_folder_misspelt_is_named_with_the_folder_it_meant(vault, written, real):
    """CF004: a type folder holding no note while a folder of close spelling does: no note would be
    checked against that type's schema, silently."""
    config = vault.root.joinpath(".vaultsync.yaml").read_text()
    vault.write(".vaultsync.yaml", config.replace("folder: docs/adrs", f"folder: {written}").replace("vault: docs", "vault: ."))
    vault.write(f"{real}/ADR-0001.md", adr("ADR-0001"))
    res = vault.check()  # an error: until it is mended, a commit of those notes passes unchecked
    assert res.code == 1 and any(f"CF004 types.adr.folder: '{written}' holds no note, but '{real}' does "
                                 f"(did you mean '{real}'?)" in line for line in res.lines), res.lines
    vault.write(f"{written}/ADR-0002.md", adr("ADR-0002"))  # the folder now holds a note: nothing to say
    assert not any("CF004" in line for line in vault.check().lines)


@pytest.mark.parametrize("written, other", [
    ("docs/incidents", "docs/adrs"),                      # a type no note uses yet (a new team's incidents/)
    ("docs/notes/2025", "docs/notes/2024"),               # folders by year are other folders
    ("docs/architecture/adr", "docs/architecture/api"),   # a long shared parent is no close spelling
    ("docs/adr", "notes/adrs"),                           # a close name under another parent
])
def test_an_empty_type_folder_with_no_close_spelling_is_not_a_warning(vault, written, other):
    config = vault.root.joinpath(".vaultsync.yaml").read_text()
    vault.write(".vaultsync.yaml", config.replace("folder: docs/adrs", f"folder: {written}").replace("vault: docs", "vault: ."))
    vault.write(f"{other}/x.md", "# x\n")
    assert not any("CF004" in line for line in vault.check().lines)


@pytest.mark.parametrize("outside", [False, True])
@pytest.mark.parametrize("declared_by", ["both", "newer", "older"])
def test_a_supersession_naming_a_symlinked_note_never_crashes_the_check(vault, tmp_path, declared_by, outside):
    """A note that is a symbolic link is never read (GH-12), but links resolve to its name when it leads to
    a file of the repository: a supersession naming it raised KeyError (exit 3) in check, --staged and
    --fix. Then it was left out of supersession, so that a cycle or a missing back-reference through it went
    unreported: now naming it is SS001, which names the link. A link that leads out of the repository is no
    note: the supersession link dangles (WL001, SS001), still without a crash, and nothing is written through it."""
    shared = tmp_path if outside else vault.root
    target = shared / "shared" / "real-old.md"
    target.parent.mkdir()
    back = 'superseded_by: "[[ADR-0101]]"\n' if declared_by in ("both", "older") else ""
    target.write_text(adr("ADR-0100", status="superseded", extra=back))
    (vault.root / "docs/adrs").mkdir(parents=True, exist_ok=True)
    (vault.root / "docs/adrs/ADR-0100.md").symlink_to(target if outside else Path("../../shared/real-old.md"))
    forward = 'supersedes: ["[[ADR-0100]]"]\n' if declared_by in ("both", "newer") else ""
    vault.write("docs/adrs/ADR-0101.md", adr("ADR-0101", extra=forward))
    vault.git("add", "-A")
    for args in ([], ["--staged"], ["--fix"]):
        res = vault.check(*args)
        assert "internal error" not in res.err and res.code == (1 if forward else 0), (args, res.out, res.err)
        assert ("WL001" in res.out) == bool(outside and forward), (args, res.out)
        assert ("SS001" in res.out) == bool(forward), (args, res.out)
        assert ("is a symbolic link: name the note it leads to" in res.out) == bool(forward and not outside)
    assert target.read_text() == adr("ADR-0100", status="superseded", extra=back)  # never written through


@pytest.mark.parametrize("field, ref", [
    ("supersedes", '["[[blink]]"]'), ("supersedes", "blink"), ("superseded_by", '"[[blink]]"'),
    ("supersedes", '["[[diagram.png]]"]'), ("superseded_by", '"[[diagram.png]]"'),
])
def test_a_supersession_through_a_symlink_or_to_an_attachment_is_ss001(vault, field, ref):
    """A cycle through a symbolic link to a note (A supersedes [[blink]] → B, B supersedes A) went unreported:
    an edge through a file no note is read from is no edge. Naming one is SS001, at the reference."""
    vault.write("docs/adrs/ADR-0101-b.md", adr("ADR-0101", extra="supersedes: [ADR-0100]\n"))
    vault.write("docs/assets/diagram.png", b"\x89PNG\r\n")
    (vault.root / "docs/notes").mkdir(parents=True, exist_ok=True)
    (vault.root / "docs/notes/blink.md").symlink_to("../adrs/ADR-0101-b.md")
    status = "superseded" if field == "superseded_by" else "accepted"
    vault.write("docs/adrs/ADR-0100-a.md", adr("ADR-0100", status=status, extra=f"{field}: {ref}\n"))
    res = vault.check()
    ss001 = [line for line in res.lines if " SS001 " in line and line.startswith("docs/adrs/ADR-0100-a.md:7:")]
    assert res.code == 1 and len(ss001) == 1, res.lines
    assert ("symbolic link" in ss001[0]) == ("blink" in ref) and ("not a note" in ss001[0]) == ("png" in ref)


@pytest.mark.parametrize("pattern, gives_up", [("^(a|a)*$", True), ("^(a|aa)+$", True), ("^(a+)+$", False)])
@pytest.mark.parametrize("field", ["title", "owner"])
def test_a_custom_pattern_that_backtracks_without_end_cannot_hang_the_check(vault, pattern, gives_up, field):
    """A committed schema is untrusted: its `pattern` runs under a time limit (`re` took over a minute on
    `^(a+)+$` and 31 characters) and a pattern that gives up is named on the note (SC001), never a hook
    that hangs. Built-in patterns run on `re` as before."""
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs, schema: s.json}\n")
    vault.write("s.json", json.dumps({"type": "object", "properties": {field: {"type": "string", "pattern": pattern}}}))
    value = "a" * 40 + "!"
    note = adr("ADR-0001", extra=f"owner: {value}\n") if field == "owner" else adr("ADR-0001", title=value)
    vault.write("docs/adrs/ADR-0001.md", note)
    res = vault.check()
    line = next(line for line in res.lines if f"SC001 {field}:" in line)
    assert res.code == 1 and ("gave up on this value after 1 s" in line) == gives_up, res.lines


def test_pattern_search_keeps_matching_and_flags_only_what_gives_up():
    from vaultsync.checks.ecma_regex import pattern_search

    assert pattern_search("^ADR-[0-9]{4}$")("ADR-0001") and not pattern_search("^ADR-[0-9]{4}$")("ADR-1")
    assert pattern_search(r"\p{Lu}")("Ä") and pattern_search("^(a|a)*$")("aaaa")
    with pytest.raises(TimeoutError):
        pattern_search("^(a|a)*$")("a" * 40 + "!")


def test_status_says_which_way_the_index_is_off_head(vault):
    """After `git reset --hard HEAD~1` the indexed commit is HEAD's child: status said BEHIND HEAD."""
    def state() -> str:
        return run_cli(["status"], vault.root).out.split("\n")[2]

    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit("one", "--no-verify")
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002"))
    vault.commit("two", "--no-verify")
    assert run_cli(["sync", "--wait", "60"], vault.root).code == 0
    assert state().endswith("up to date")
    vault.git("reset", "-q", "--hard", "HEAD~1")
    assert "AHEAD OF HEAD" in state()
    vault.write("docs/adrs/ADR-0003.md", adr("ADR-0003"))
    vault.commit("three", "--no-verify")  # a sibling of the indexed commit
    assert "NOT AT HEAD (on another line of history)" in state()
    assert run_cli(["sync", "--wait", "60"], vault.root).code == 0
    vault.write("docs/adrs/ADR-0004.md", adr("ADR-0004"))
    vault.commit("four", "--no-verify")
    assert "BEHIND HEAD" in state()


def test_search_values_a_time_zone_and_load_locations_are_reported_with_the_rest(vault):
    """Values judged after the schema (search options, the time zone) and the checks after a CF005 came
    one per run."""
    vault.write(".vaultsync.yaml", "vault: docs\nchecks:\n  timezone: Mars/Olympus\nsearch:\n  top_k: 0\n"
                                   "  min_confidence: 7\n  fusion: magic\n")
    assert [x.split(" ")[0] for x in vault.check().err.splitlines()] == [
        ".vaultsync.yaml:3:13:", ".vaultsync.yaml:5:10:", ".vaultsync.yaml:6:19:", ".vaultsync.yaml:7:11:"]
    vault.write(".vaultsync.yaml", "vault: docs\nmodels: {cache_dir: /x}\nindex:\n  embedder: nope\n")
    assert [x.split(" ", 2)[:2] for x in vault.check().err.splitlines()] == [
        [".vaultsync.yaml:2:21:", "CF005"], [".vaultsync.yaml:4:13:", "CF002"]]
    vault.write(".vaultsync.yaml", "vault: docs\nmodels: {cache_dir: /x}\n")
    res = vault.check()
    assert res.code == 1 and [x.split(" ", 2)[1] for x in res.err.splitlines()] == ["CF005"]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["**/scratch/**", "docs/scratch/*", "*.tmp.md", "docs/**/draft-?.md", "scratch", "**/*.md"]),
       st.lists(st.sampled_from(["docs", "scratch", "a", "draft-1.md", "x.tmp.md", "n.md"]), min_size=1, max_size=4),
       st.sampled_from(["\n", "\r", "\u2028", "\t"]))
def test_a_glob_matches_a_name_with_a_line_break_as_git_does(pattern, parts, odd):
    """A line break in a file or folder name is a character like any other to a glob (git's wildmatch):
    ``**`` crossed it only without one, so such a scratch file escaped PA001 and was read as a note."""
    from vaultsync.vault.glob import compile_glob

    *folders, name = parts
    for ch in (odd, "q"):  # the same name with an ordinary letter where the line break is
        path = "/".join([*folders, name[:1] + ch + name[1:]])
        if ch == odd:
            broken = compile_glob(pattern).match(path)
    assert broken == compile_glob(pattern).match(path)


def test_pa001_reaches_a_scratch_file_with_a_line_break_in_its_name(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.write("docs/scratch/nl\nx.md", "---\ntitle: [oops\n---\n")
    vault.git("add", "-A")
    lines = vault.check("--staged").lines
    assert len(lines) == 1 and lines[0].startswith("docs/scratch/nl\\nx.md:1:1: PA001 "), lines


@pytest.mark.parametrize("conflict", ["content", "add/add", "modify/delete", "outside the vault"])
def test_staged_check_during_an_unresolved_merge_names_the_unmerged_notes(vault, conflict):
    """During a merge git left in conflict, the index holds stages 1-3 of a note, not a note: ``--staged``
    checked the last stage ("theirs") and passed or failed on it. It names the unmerged notes and stops
    (exit 2); a conflict outside the vault stops nothing; resolved and added, the note is checked."""
    note = "docs/adrs/ADR-0001.md" if conflict != "add/add" else "docs/adrs/ADR-0002.md"
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.write("src/app.py", "x = 1\n")
    vault.commit("base")
    vault.git("checkout", "-qb", "feat")
    edits = {"content": {note: adr("ADR-0001", extra="tags: [featbad]\n")}, "add/add": {note: adr("ADR-0002")},
             "modify/delete": {note: None}, "outside the vault": {"src/app.py": "x = 2\n"}}[conflict]
    for rel, text in edits.items():
        vault.git("rm", "-q", rel) if text is None else vault.write(rel, text)
    vault.commit("feat")
    vault.git("checkout", "-q", "main")
    ours = "src/app.py" if conflict == "outside the vault" else note
    vault.write(ours, "x = 3\n" if ours.endswith(".py") else
                adr(note.split("/")[-1][:8], extra="tags: [ops]\n", body="Main's body.\n"))
    vault.commit("main")
    assert vault.git("merge", "-q", "feat", check=False).returncode != 0
    res = vault.check("--staged")
    if conflict == "outside the vault":
        assert res.code == 0 and res.lines == [], res.out + res.err
        return
    assert res.code == 2 and f"{note}: unmerged (a merge conflict git left unresolved)" in res.err, res.err
    vault.write(note, adr(note.split("/")[-1][:8]))
    vault.git("add", note)
    assert vault.check("--staged").code == 0


def test_json_is_short_for_format_json_in_every_command_that_has_it(vault):
    """A new user's `vaultsync search "…" --json` was "unrecognized arguments" while `eval` and `models`
    take --json."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    for command in (["check"], ["status"], ["review"], ["show", "ADR-0001"]):
        short, long = run_cli([*command, "--json"], vault.root), run_cli([*command, "--format", "json"], vault.root)
        assert short.code == long.code and json.loads(short.out).keys() == json.loads(long.out).keys(), command


def test_search_on_an_orphan_branch_says_the_branch_has_no_commits(vault):
    """`git switch --orphan x` in a repository with commits: search said "the repository has no commits"."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.commit("init")
    vault.git("switch", "-q", "--orphan", "fresh")
    res = run_cli(["search", "decision", "--no-daemon"], vault.root)
    assert res.code == 1 and "the branch 'fresh' has no commits yet (other branches have)" in res.err, res.err


@pytest.mark.parametrize("folder", ["docs/adrs", "docs/misc"])
def test_an_unquoted_link_never_hides_another_mistake_of_its_field(vault, folder):
    """`supersedes: [42, [[X]], {a: b}]`: FM017 for the link stood for the field's LC001, and nothing named
    42 or {a: b}; quoting the link as told left the note hidden. LC001 stays where quoting the links would
    not make the field readable, and "search hides this note" stands only where it is true."""
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002"))
    vault.write(f"{folder}/ADR-0001.md", adr("ADR-0001", extra="supersedes:\n  - 42\n  - [[ADR-0002]]\n  - {a: b}\n"))
    rows = [row for row in vault.check().lines if row.startswith(f"{folder}/ADR-0001.md:")]
    assert any(" LC001 supersedes: cannot read" in row and row.endswith("search hides this note until it is fixed")
               for row in rows), rows
    assert any(" FM017 supersedes[1]: " in row or " SC001 supersedes[1]: " in row for row in rows), rows
    assert not any(row.endswith("hides this note until it is fixed") for row in rows if " LC001 " not in row), rows


def test_a_flow_mapping_keeps_every_fields_error_beside_an_unquoted_link(vault):
    """A frontmatter written as one flow mapping: FM017 for `supersedes: [[X]]` dropped every SC001 on its
    line, those of `title`, `status` and `importance` with them."""
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002"))
    vault.write("docs/adrs/ADR-0001.md", '---\n{memory_id: ADR-0001, type: adr, title: 5, status: acepted, '
                                         'created: "2024-01-01", importance: 99, supersedes: [[ADR-0002]]}\n---\nx\n')
    rows = [row.split(": ", 1)[1] for row in vault.check().lines if row.startswith("docs/adrs/ADR-0001.md:")]
    for said in ("SC001 title: expected string, got 5", "SC001 status: 'acepted' is not one of",
                 "SC001 importance: 99 must be at most"):
        assert any(row.startswith(said) for row in rows), (said, rows)
    assert [row for row in rows if row.startswith(("FM017 supersedes", "SC001 supersedes"))][0].endswith(
        "search hides this note until it is fixed"), rows
    assert not any(row.startswith("LC001") for row in rows), rows


@pytest.mark.parametrize("second, hides_at", [("42", None), ("[[ADR-0002]]", "supersedes[1]")])
def test_search_hides_this_note_stands_at_the_item_it_concerns(vault, second, hides_at):
    """`supersedes: ["ADR 1", 42]` in a typed folder: "search hides this note" was added to the error of
    `"ADR 1"` (the schema's form), which hides nothing; it stands at the item that makes the field
    unreadable, or in LC001 of its own."""
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002"))
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f'supersedes:\n  - "ADR 1"\n  - {second}\n'))
    rows = [row.split(": ", 1)[1] for row in vault.check().lines if row.startswith("docs/adrs/ADR-0001.md:")]
    hiding = [row for row in rows if row.endswith("search hides this note until it is fixed")]
    assert len(hiding) == 1, rows
    assert hiding[0].split(":")[0].split()[1] == (hides_at or "supersedes") and \
        (hides_at is not None or hiding[0].startswith("LC001")), rows


@pytest.mark.parametrize("line", ['Expires: "2027-08-04"', "Confidence: 0.8", 'superseded-by: "[[ADR-0002]]"',
                                  'SUPERSEDES: ["[[ADR-0002]]"]', 'Expires: "2027-08-04"\nexpires: "2027-09-01"'])
@pytest.mark.parametrize("typed", [True, False])
def test_a_lifecycle_key_in_another_spelling_is_one_diagnostic(vault, line, typed):
    """`Expires:` in a typed folder was an LC002 warning ("read as the lifecycle field") beside the schema's
    SC003 error ("additional property not allowed"): one mistake, two diagnostics that disagree on whether
    it is read. Where the schema refuses the key, its error (with the did-you-mean) stands alone; elsewhere
    LC002 says how search reads it."""
    folder = "docs/adrs" if typed else "docs/misc"
    vault.write(f"{folder}/ADR-0001.md", adr("ADR-0001", extra=line + "\n"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002"))
    lines = [row for row in vault.check().lines if row.startswith(f"{folder}/ADR-0001.md")]
    places = [row.split(": ", 1)[0] for row in lines]
    assert len(places) == len(set(places)), lines  # one diagnostic at each place
    key = line.split(":")[0]
    if typed:
        assert any(f" SC003 {key}: additional property not allowed" in row for row in lines), lines
        assert "\n" in line or any(row.endswith("; search reads it as the lifecycle field " + repr(
            key.lower().replace("-", "_"))) for row in lines), lines
    else:
        said = "ignored, as" if "\n" in line else "read as the lifecycle field"  # both spellings: LC003
        assert any(f" warning: {key}: {said}" in row for row in lines), lines


@pytest.mark.parametrize("field", ["related", "supersedes", "superseded_by", "tags"])
@pytest.mark.parametrize("value", ["[[ADR-0002]]", "[[ADR-0002]], [[ADR-0003]]", "[[ADR-0002|the old one]]",
                                   "\n  - [[ADR-0002]]", '\n  - "[[ADR-0002]]"\n  - [[ADR-0003]]'])
@pytest.mark.parametrize("folder", ["docs/adrs", "docs/misc"])
def test_an_unquoted_wikilink_list_is_one_error(vault, field, value, folder):
    """`related: [[X]]` was FM017 (YAML reads it as a list inside a list: quote it) and SC001 (got a list: quote
    it) on one line: two errors for one mistake, with one fix. A lifecycle field was FM017 and LC001 (cannot
    read it as a list of links): the one diagnostic now also says what search does with the note meanwhile.
    Inline and block lists, typed folder or not (a one-link field of the type's schema: SC001 says it)."""
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002"))
    vault.write(f"{folder}/ADR-0001.md", adr("ADR-0001", extra=f"{field}: {value}\n"))
    rows = [row for row in vault.check().lines if row.startswith(f"{folder}/ADR-0001.md:")]
    lines = [row for row in rows if not any(code in row for code in (" SS00", " WL00", " SC002 ", " VC001 "))
             and "expected string, got a list" not in row  # other mistakes: a link as a tag, a list for one link
             and 'as one "[[WikiLink]]"' not in row]
    assert len(lines) == 1 and lines[0].split()[1] in ("FM017", "FM005", "SC001"), rows  # FM005: YAML refuses it all
    assert lines[0].split(":")[1] == str(7 + value.count("\n")), rows  # at the unquoted link (the last item)
    hides = field in ("supersedes", "superseded_by") and " FM005 " not in lines[0]
    assert [row.endswith(" search hides this note until it is fixed") for row in rows].count(True) == hides, rows
    assert not any(" LC001 " in row for row in lines), rows  # where quoting the link is all it takes
