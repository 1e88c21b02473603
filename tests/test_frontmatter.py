"""Field cases FM-01..FM-14: frontmatter parsing and schema errors, with the exact output a user sees."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path

import pytest
from conftest import CONFIG, adr, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.vault.note import parse_note, parse_text
from vaultsync.vault.yamlload import YamlProblem, load_yaml

P = "docs/adrs/ADR-0001.md"


def test_fm01_dates_stay_strings_and_impossible_dates_are_reported(vault):
    vault.write(P, adr("ADR-0001", extra="expires: 2024-02-30\nlast_validated: 2024-03-01T10:20:30Z\n")
                .replace('created: "2024-03-01"', "created: 2024-03-01"))
    res = vault.check()
    assert res.code == 1
    assert res.lines == [f"{P}:7:10: DT001 expires: '2024-02-30' is not a valid date (use YYYY-MM-DD); "
                         "search hides this note until it is fixed"]  # one error per value, not DT001 + LC001
    note = parse_note(P, (vault.root / P).read_bytes())
    assert note.frontmatter["created"] == "2024-03-01"
    assert note.frontmatter["last_validated"] == "2024-03-01T10:20:30Z"
    json.dumps(note.frontmatter)  # storable as JSON in the index


def test_fm01_quoted_and_bare_dates_give_the_same_result(make_vault):
    bare = make_vault({P: adr("ADR-0001", extra="expires: 2024-02-30\n")})
    quoted = make_vault({P: adr("ADR-0001", extra='expires: "2024-02-30"\n')})
    assert [line.replace(":10:", ":X:").replace(":10 ", "") for line in bare.check().lines] == \
        [line.replace(":10:", ":X:") for line in quoted.check().lines]


def test_fm02_yaml11_booleans_are_strings(vault):
    vault.write("docs/rules/RULE-0001.md", (
        "---\nmemory_id: RULE-0001\ntype: rule\ntitle: Norway office rules\nstatus: active\n"
        'created: "2024-03-02"\ntags: [NO]\nreviewed: yes\non: push\n---\n'))
    doc = load_yaml("country: NO\nlanguages: [no, en]\nreviewed: yes\non: push\nok: true\nno2: False\n").data
    assert doc == {"country": "NO", "languages": ["no", "en"], "reviewed": "yes", "on": "push",
                   "ok": True, "no2": False}
    res = vault.check()
    assert res.lines == [
        "docs/rules/RULE-0001.md:7:8: VC001 tags[0]: unknown term 'NO' (known: database, search, ops, security; or add it to "
        "vocabulary.tags in .vaultsync.yaml)",
        "docs/rules/RULE-0001.md:8:1: SC003 reviewed: additional property not allowed",
        "docs/rules/RULE-0001.md:9:1: SC003 on: additional property not allowed",
    ]
    assert "True" not in res.out


def test_fm02_boolean_field_rejects_yes(tmp_path, make_vault):
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "properties": {"reviewed": {"type": "boolean"}}, "patternProperties": {"^x": {}}}
    v = make_vault({
        ".vaultsync.yaml": "vault: docs\ntypes:\n  note: {folder: docs/notes, schema: s.json}\n",
        "s.json": json.dumps(schema),
        "docs/notes/a.md": "---\nreviewed: yes\non: push\n---\n",
    })
    assert v.check().lines == ["docs/notes/a.md:2:11: SC001 reviewed: expected boolean, got 'yes' (use true/false)"]


@pytest.mark.parametrize("names, note, expected", [
    ({"pattern": "^[a-z_]+$"}, "id: A\n1: x\n~: y\n2024-01-01: z\n",
     ["3:1: SC001 key '1' has the wrong form", "4:1: SC001 key '~' has the wrong form",
      "5:1: SC001 key '2024-01-01' has the wrong form"]),
    ({"maxLength": 5}, "id: A\nmeta:\n  short: 1\n  toolong: 2\n", ["5:3: SC001 meta: key 'toolong' is too long"]),
    ({"not": {"const": "Owner"}}, "id: A\nOwner: x\n", ["3:1: SC001 key 'Owner' should not be valid under"]),
    ({"pattern": "^[a-z]+$"}, "id: A\nnested:\n  - {Kéy: 1}\n", ["4:6: SC001 nested[0]: key 'Kéy' has the wrong form"]),
])
def test_a_property_name_error_points_at_the_key(make_vault, names, note, expected):
    """propertyNames: the error named the key but pointed at 1:1; now at the key, at any depth."""
    schema = {"type": "object", "propertyNames": names, "properties": {
        "meta": {"type": "object", "propertyNames": names},
        "nested": {"type": "array", "items": {"type": "object", "propertyNames": names}}}}
    v = make_vault({".vaultsync.yaml": "vault: docs\ntypes:\n  note: {folder: docs/notes, schema: s.json}\n",
                    "s.json": json.dumps(schema), "docs/notes/a.md": f"---\n{note}---\n"})
    lines = [x for x in v.check().lines if not x.startswith("docs/notes/a.md:1:1:")]
    assert len(lines) == len(expected) and all(x.startswith(f"docs/notes/a.md:{e}") for x, e in zip(lines, expected)), lines


@pytest.mark.parametrize(("written", "stored"), [("s.json", "s.json"), ("./s.json", "s.json"),
                                                 ("./schemas//note.json", "schemas/note.json")])
def test_staged_and_committed_checks_read_the_type_schema_from_their_own_snapshot(make_vault, written, stored):
    """However the schema path is spelt, --staged and --rev validate against the schema of that snapshot."""
    def schema(kind: str) -> str:
        return json.dumps({"type": "object", "properties": {"prio": {"type": kind}}})

    v = make_vault({".vaultsync.yaml": f"vault: docs\ntypes:\n  note: {{folder: docs/notes, schema: {written}}}\n",
                    stored: schema("integer"), "docs/notes/a.md": "---\nprio: 3\n---\n"})
    v.commit()
    v.write(stored, schema("string"))  # only in the working tree
    assert v.check("--staged").lines == [] and v.check("--rev", "HEAD").lines == []
    assert [line.split(" — ")[0] for line in v.check().lines] == ["docs/notes/a.md:2:7: SC001 prio: expected string, got 3"]


@pytest.mark.parametrize(("written", "hint", "fixed"), [
    ("12", 'YAML reads it as a number: quote it: "12"', '"12"'),
    ("true", 'YAML reads it as a boolean: quote it: "true"', '"true"'),
    ('!!int "12"', 'the tag !!int makes it a number: drop the tag: "12"', '"12"'),
    ("!!int 12", 'the tag !!int makes it a number: drop the tag: "12"', '"12"'),
    ("!!float '1.5'", "the tag !!float makes it a number: drop the tag: '1.5'", "'1.5'"),
    ("!!bool true", 'the tag !!bool makes it a boolean: drop the tag: "true"', '"true"'),
    ("!<tag:yaml.org,2002:int> 7", 'the tag !<tag:yaml.org,2002:int> makes it a number: drop the tag: "7"', '"7"'),
])
def test_the_fix_for_a_number_where_a_string_is_due_is_one_that_passes(make_vault, written, hint, fixed):
    """``owner: !!int "12"`` was told "quote it: '!!int \"12\"'", which stores the tag as text. A value an
    explicit tag made a number or boolean is fixed by dropping the tag; the fix each hint gives passes."""
    schema = json.dumps({"type": "object", "properties": {"owner": {"type": "string"}}})
    v = make_vault({".vaultsync.yaml": "vault: docs\ntypes:\n  note: {folder: docs/notes, schema: s.json}\n",
                    "s.json": schema, "docs/notes/a.md": f"---\nowner: {written}\n---\n"})
    lines = v.check().lines
    assert len(lines) == 1 and lines[0].endswith(f"SC001 owner: expected string, got {written} — {hint}"), lines
    v.write("docs/notes/a.md", f"---\nowner: {fixed}\n---\n")
    assert v.check().lines == []


@pytest.mark.parametrize("line, message, fixed", [
    ("%YAML 1.1", "'%YAML 1.1' is a YAML directive, which frontmatter cannot hold — delete the line", None),
    ("%TAG ! tag:example.com,2000:", "'%TAG ! tag:example.com,2000:' is a YAML directive, which frontmatter cannot "
                                     "hold — delete the line", None),
    ("%owner: bob", "%owner: a key starting with '%' reads as a YAML directive — quote it: \"%owner\": bob",
     '"%owner": bob'),
    ("%完了: はい", "%完了: a key starting with '%' reads as a YAML directive — quote it: \"%完了\": はい", '"%完了": はい'),
])
@pytest.mark.parametrize("at", [0, 1, 2])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_line_starting_with_percent_is_located_and_named(make_vault, line, message, fixed, at, newline):
    """``%YAML 1.1`` inside frontmatter was FM005 at the closing ``---`` with PyYAML's "did not find expected
    <document start>": a directive line is named where it stands, with a fix that passes."""
    rows = ["title: x", "status: ok"]
    v = make_vault({".vaultsync.yaml": "vault: docs\n", "docs/a.md": newline.join(
        ["---", *rows[:at], line, *rows[at:], "---", "Body", ""])})
    assert v.check().lines == [f"docs/a.md:{at + 2}:1: FM005 {message}"]
    v.write("docs/a.md", newline.join(["---", *rows[:at], *([fixed] if fixed else []), *rows[at:], "---", "Body", ""]))
    assert v.check().lines == []


def test_fm03_duplicate_keys_name_both_lines_at_any_depth(vault):
    vault.write("docs/adrs/ADR-0002.md", "---\nmemory_id: ADR-0002\ntitle: Keep LanceDB local\nstatus: proposed\n"
                'created: "2024-03-03"\nstatus: accepted\n---\n')
    vault.write("docs/adrs/ADR-0003.md", "---\nx:\n  a: 1\n  b: 2\n  a: 3\n---\n")
    assert vault.check().lines == [
        "docs/adrs/ADR-0002.md:6:1: FM007 duplicate key 'status' (first defined on line 4)",
        "docs/adrs/ADR-0003.md:5:3: FM007 duplicate key 'a' (first defined on line 3)",
    ]


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.sampled_from(["title", "status", "a", "標題", "título"]), min_size=1, max_size=8),
       nested=st.booleans(), flow=st.booleans())
def test_fm03_every_repeated_key_is_said_at_once(keys, nested, flow):
    """Only the first repeated key was reported: a note with three took three runs to mend. Property: one
    FM007 per repetition, at its line, naming the line the key first stood on, in any mapping."""
    from vaultsync.vault.note import parse_text

    pad = "  " if nested else ""
    if flow:
        body = "m: {" + ", ".join(f"{k}: {i}" for i, k in enumerate(keys)) + "}\n"
    else:
        body = ("m:\n" if nested else "") + "".join(f"{pad}{k}: {i}\n" for i, k in enumerate(keys))
    note = parse_text("docs/n.md", "---\n" + body + "---\n")
    first: dict[str, int] = {}
    expected = []
    for i, k in enumerate(keys):
        line = 2 if flow else 2 + i + (1 if nested else 0)
        if k in first:
            expected.append((line, f"FM007 duplicate key '{k}' (first defined on line {first[k]})"))
        first.setdefault(k, line)
    said = [(d.line, f"{d.code} {d.message}") for d in note.diagnostics]
    assert sorted(said) == sorted(expected)


def test_every_repeated_key_of_the_config_is_said_at_once(vault):
    vault.write(".vaultsync.yaml", "vault: docs\nvault: notes\nsearch:\n  top_k: 3\n  top_k: 4\n")
    res = vault.check()
    assert res.code == 1 and [ln.split(": ", 1)[0] for ln in res.err.splitlines() if "FM007" in ln] == [
        ".vaultsync.yaml:2:1", ".vaultsync.yaml:5:3"], res.err


@pytest.mark.parametrize("key", ["título", "Ångström", "café_note", "résumé"])
@pytest.mark.parametrize("depth", [0, 1])
def test_fm03_a_key_repeated_in_another_normalisation_is_a_duplicate(vault, key, depth):
    """NFC and NFD spellings look the same to a reader and differ to YAML: the last one silently won."""
    nfd = unicodedata.normalize("NFD", key)
    pad = "  " * depth
    head = "x:\n" if depth else ""
    vault.write("docs/notes/n.md", f"---\n{head}{pad}{key}: one\n{pad}{nfd}: two\n---\n")
    line = 3 + depth
    assert vault.check().lines == [
        f"docs/notes/n.md:{line}:{1 + 2 * depth}: FM007 duplicate key '{nfd}' (first defined on line {line - 1}, "
        "spelled with other Unicode code points)"]


@pytest.mark.parametrize("text, where", [
    ("&k key: 1\n*k : 2\n", "2:1"), ("x:\n  &k a: 1\n  *k : 2\n", "3:3"), ("&k 標題: 1\n*k : 2\n", "2:1"),
])
def test_fm03_a_key_repeated_through_its_alias_is_named_as_such(vault, text, where):
    """The alias is the anchored key node itself (PyYAML keeps no position of its own for it): the
    message says an alias repeats it, not "first defined" on the same line."""
    vault.write("docs/notes/n.md", f"---\n{text}---\n")
    (line,) = vault.check().lines
    assert line.startswith(f"docs/notes/n.md:{where}: FM007 duplicate key ") and "an alias of this key" in line


def test_fm06_tab_indentation(vault):
    vault.write("docs/rules/RULE-0002.md", "---\nmemory_id: RULE-0002\ntitle: Tabs\nstatus: active\n"
                'created: "2024-03-05"\ntags:\n\t- ops\n---\n')
    res = vault.check()
    assert res.code == 1
    assert res.lines == ["docs/rules/RULE-0002.md:7:1: FM006 YAML error: tab used for indentation (YAML needs spaces)"]
    assert "Traceback" not in res.out + res.err


@pytest.mark.parametrize("yaml_text", [
    "owner: |\n  \tindented code\n", "owner: >\n  \tfolded\n", "owner: |-\n    \t\tdeep\n    next\n",
    "tags:\n  - |\n    \tx\n", "owner: |2\n  \tx\n", "owner:\n  note: |\n    \tmake all\n",
])
def test_fm06_a_tab_inside_a_block_scalar_is_text(yaml_text):
    """After the indentation a tab is the text's own (YAML 1.2, 8.1.1.1); libyaml refuses it on a block's first
    line, PyYAML's own scanner reads it: the note is valid and reads as PyYAML reads it."""
    import yaml

    note = parse_text("n.md", f"---\n{yaml_text}---\nbody\n")
    assert note.fm_state == "mapping" and not note.diagnostics, note.diagnostics
    assert note.frontmatter == yaml.load(yaml_text, Loader=yaml.SafeLoader)


@pytest.mark.parametrize("yaml_text, where", [
    ("owner: |\n\tcode\n", (1, 0)), ("owner: |\n  a\n\tb\n", (2, 0)), ("owner:\n\t- a\n", (1, 0)),
])
def test_fm06_a_tab_as_indentation_is_still_refused(yaml_text, where):
    with pytest.raises(YamlProblem) as info:
        load_yaml(yaml_text)
    assert info.value.code == "FM006" and (info.value.line, info.value.col) == where


@pytest.mark.parametrize("variant", ["bom", "crlf", "bom+crlf"])
def test_fm07_bom_and_crlf_validate_like_lf(make_vault, variant):
    text = adr("ADR-0003", extra="expires: 2024-02-30\n")
    data = text.encode()
    if "crlf" in variant:
        data = data.replace(b"\n", b"\r\n")
    if "bom" in variant:
        data = b"\xef\xbb\xbf" + data
    plain = make_vault({P: text}).check()
    odd = make_vault({P: data})
    res = odd.check()
    assert res.lines == plain.lines
    note = parse_note(P, data)
    assert not any(isinstance(v, str) and v.endswith("\r") for v in note.frontmatter.values())
    assert note.frontmatter == parse_note(P, text.encode()).frontmatter
    odd.commit("x", "--no-verify")
    assert (odd.root / P).read_bytes() == data  # nothing rewrote the file


def test_fm08_dashes_in_body_values_and_fences(vault):
    body = ("Intro, see [[ADR-0001]].\n\n---\n\n```yaml\n---\nkey: value\n---\n```\nLater: [[ADR-0002]]\n")
    vault.write("docs/adrs/ADR-0004.md", adr("ADR-0004", title='"Split --- or not"', body=body))
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002"))
    note = parse_note("x.md", (vault.root / "docs/adrs/ADR-0004.md").read_bytes())
    assert len(note.frontmatter) == 5 and note.frontmatter["title"] == "Split --- or not"
    assert "key: value" in note.body and "\n---\n" in note.body
    assert [link.target for link in note.links] == ["ADR-0001", "ADR-0002"]
    assert vault.check().code == 0


@pytest.mark.parametrize("content, expected", [
    ("\n---\nmemory_id: ADR-0005\n---\n", "2:1: FM003 frontmatter must start on line 1, column 1 (found '---' on line 2)"),
    (" ---\nmemory_id: ADR-0005\n---\n", "1:2: FM003 frontmatter must start on line 1, column 1 (found '---' on line 1)"),
    ("---\nmemory_id: ADR-0006\ntitle: x\n\n# Heading\nBody\n",
     "5:1: FM004 frontmatter opened on line 1 is never closed: the note's text seems to start on line 5 ('# Heading') "
     "— add a '---' line above it"),
])
def test_fm09_frontmatter_not_on_line_one_or_unclosed(vault, content, expected):
    vault.write(P, content)
    lines = vault.check().lines
    assert lines[0] == f"{P}:{expected}"
    assert not any("Heading" in line or "required" in line for line in lines[1:])


@pytest.mark.parametrize("before", ["# Decision log\n", "Draft — do not merge\n\n", "<!-- x -->\nIntro.\n",
                                    "# 決定\n", "Status: draft\n\n\n"])
@pytest.mark.parametrize("fields", ["memory_id: ADR-0005\ntype: adr\n", "title: X\nstatus: accepted\ntags: [a]\n",
                                    "id: 7\ndate: 2024-01-01\n"])
def test_fm09_frontmatter_below_a_line_of_text_is_misplaced_not_missing(vault, before, fields):
    """Text above a '---' makes it a thematic break in Markdown, but when two or more common frontmatter fields
    follow and a '---' closes them, the author meant frontmatter: say where it is, not "missing"."""
    vault.write(P, f"{before}---\n{fields}---\nBody\n")
    line = before.count("\n") + 1
    lines = vault.check().lines
    assert lines[0].startswith(f"{P}:{line}:1: FM003 frontmatter must start on line 1, column 1 (found '---' on line "
                               f"{line}, below text"), lines
    assert not any("required" in x or "FM012" in x for x in lines)


@pytest.mark.parametrize("body", ["# T\n\nProse.\n\n---\n\nMore: prose with a colon.\n",
                                  "# T\n---\ntitle: only one field\n---\n", "# T\n---\nstatus: x\ntags: [a]\n",
                                  "Intro\n---\nQ: why?\nA: because.\n---\n"])
def test_fm09_a_thematic_break_below_text_stays_body(body):
    note = parse_text("n.md", body)
    assert note.fm_state == "none" and not note.diagnostics


@pytest.mark.parametrize("closing, named", [("\u00a0---", "U+00A0"), ("---\u200b", "U+200B"), ("\ufeff---", "U+FEFF"),
                                            (" ---", "U+0020"), ("---\u2060\u00a0", "U+00A0, U+2060")])
def test_fm09_a_closing_line_beside_an_invisible_character_is_named(closing, named):
    note = parse_text("n.md", f"---\ntitle: x\nstatus: y\n{closing}\nBody\n")
    assert [d.render() for d in note.diagnostics] == [
        f"n.md:4:1: FM004 frontmatter opened on line 1 is never closed: line 4 reads '---' beside {named} — it must "
        "read exactly '---'"]


INVISIBLE = ["\u200b", "\ufeff", "\u2060", "\u200e", "\u00ad", "\u2063"]  # ZWSP, BOM, word joiner, LRM, SHY, sep


@pytest.mark.parametrize("invisible", INVISIBLE)
@pytest.mark.parametrize("where", ["before", "after", "both", "spaced", "line2"])
def test_fm09_an_invisible_character_beside_the_opening_dashes_is_named(vault, invisible, where):
    """An invisible character (Unicode Cf) around '---' hid the frontmatter: the YAML became body text,
    or a type folder said "missing frontmatter" although '---' is visibly there."""
    opener = {"before": f"{invisible}---", "after": f"---{invisible}", "both": f"{invisible}---{invisible}",
              "spaced": f" {invisible} ---", "line2": f"{invisible}\n---"}[where]
    if invisible == "\ufeff" and where in ("before", "both"):
        opener = "\ufeff" + opener  # one BOM is the encoding's (FM-07); the second one is stray
    vault.write(P, f"{opener}\nmemory_id: ADR-0005\ntitle: [unclosed\n---\nBody\n")
    res = vault.check()
    assert res.code == 1
    line = 2 if where == "line2" else 1
    col = {"before": 2, "both": 2, "spaced": 4}.get(where, 1)
    (first,) = [x for x in res.lines if "FM003" in x]
    assert first.startswith(f"{P}:{line}:{col}: FM003 ")
    assert f"U+{ord(invisible):04X}" in first or where == "line2"
    assert not any("FM012" in x or "missing frontmatter" in x for x in res.lines)


@given(st.lists(st.sampled_from([" ", "\t", "\u00a0", "\u3000", *INVISIBLE]), min_size=1, max_size=4),
       st.lists(st.sampled_from([" ", "\t", *INVISIBLE]), max_size=3))
@settings(max_examples=60, deadline=None)
def test_fm09_any_invisible_or_space_prefix_is_reported_on_line_one(before, after):
    note = parse_text("n.md", "".join(before) + "---" + "".join(after) + "\ntitle: x\n---\nbody\n")
    (d,) = [d for d in note.diagnostics if d.code == "FM003"]
    assert (d.line, d.col) == (1, len(before) + 1) and note.fm_state == "misplaced"


@pytest.mark.parametrize("content, expected", [
    ("---\n---\nbody", "1:1: FM010 frontmatter is empty (required: memory_id, type, title, status, created)"),
    ("---\n# only a comment\n---\n", "1:1: FM010 frontmatter is empty (required: memory_id, type, title, status, created)"),
    ("---\n- a\n- b\n---\n", "1:1: FM011 frontmatter must be a mapping, got a list"),
    (adr("ADR-0001", extra="tags:\n"), "7:6: SC001 tags: expected list, got null (empty value)"),
    (adr("ADR-0001", extra="tags: ~\n"), "7:7: SC001 tags: expected list, got null (empty value)"),
    (adr("ADR-0001", extra="tags: ops\n"), "7:7: SC001 tags: expected list, got 'ops' — write a list: [ops]"),
    (adr("ADR-0001", extra="tags: ops, db\n"), "7:7: SC001 tags: expected list, got 'ops, db' — write a list: [ops, db]"),
    (adr("ADR-0001", title="''"), "4:8: SC001 title: should be non-empty"),
    # a title of spaces or invisible characters was accepted: no one could tell the note by it
    *[(adr("ADR-0001", title=t), f"4:8: SC001 title: {shown} has the wrong form (a title needs a visible character)")
      for t, shown in [('" "', "' '"), ("'\u3000'", "'\\u3000'"), ("'\u200b'", "'\\u200b'"),
                       ("' \u2060 \t'", "' \\u2060 \\t'"), ("'\u200f'", "'\\u200f'"), ("'\u3164'", "'\\u3164'"),
                       ("'\u2800 \u00ad'", "'\\u2800 \\xad'"), ("'\u115f\u1160'", "'\\u115f\\u1160'")]],
    ("---\n\"just a string\"\n---\n", "1:1: FM011 frontmatter must be a mapping, got a string"),
    ("---\n42\n---\n", "1:1: FM011 frontmatter must be a mapping, got a number"),
    ("---\ntrue\n---\n", "1:1: FM011 frontmatter must be a mapping, got true or false"),
])
def test_fm10_empty_null_and_non_mapping_frontmatter(vault, content, expected):
    vault.write(P, content)
    res = vault.check()
    assert res.code == 1
    assert res.lines == [f"{P}:{expected}"]


@pytest.mark.parametrize("path", ["docs/notes/free.md", "docs/adrs/sub/x.md", "docs/x.md"])
@pytest.mark.parametrize("content, kind", [("- a\n- b\n", "a list"), ("[a, b]\n", "a list"), ("just text\n", "a string"),
                                           ("42\n", "a number"), ("- 決定\n", "a list")])
def test_fm10_frontmatter_that_is_no_mapping_is_an_error_outside_type_folders_too(vault, path, content, kind):
    """Obsidian shows such a block as invalid properties wherever the note lies; outside a type folder it passed."""
    vault.write(path, f"---\n{content}---\nBody\n")
    res = vault.check()
    assert res.code == 1 and res.lines == [f"{path}:1:1: FM011 frontmatter must be a mapping, got {kind}"], res.lines


@pytest.mark.parametrize("line, col, tag", [
    ('payload: !!python/object/apply:os.system ["touch {marker}"]', 10, "!!python/object/apply:os.system"),
    ("x: !Ref foo", 4, "!Ref"),
])
def test_fm11_unsafe_tags_never_execute(vault, tmp_path, line, col, tag):
    marker = tmp_path / "pwned"
    vault.write("docs/incidents/INC-0002.md", "---\nmemory_id: INC-0002\n" + line.format(marker=marker) + "\n---\n")
    res = vault.check()
    assert res.lines == [f"docs/incidents/INC-0002.md:3:{col}: FM008 unsupported YAML tag '{tag}'"]
    assert not marker.exists()


@pytest.mark.parametrize("lines, where, named", [
    (["x: !!binary aGVsbG8=", "y: !!set {a}", "z: !Foo q"], "3:4", "'!!binary' (and after it '!!set', '!Foo')"),
    (["a: !Ref r", "b: [1, !!python/object/apply:os.system [ls]]"], "3:4",
     "'!Ref' (and after it '!!python/object/apply:os.system')"),
    (["k:", "  - {deep: !Deep x}", "  - !Other y", "m: !Deep z"], "4:12", "'!Deep' (and after it '!Other', '!Deep')"),
    (["só: [a, !Wrong b]"], "3:9", "'!Wrong'"),
])
def test_fm11_the_first_unsafe_tag_in_the_file_is_reported_naming_the_rest(vault, lines, where, named):
    """Several unsafe tags: the report named the last one; the one above it (maybe the dangerous one) only
    came up after that was fixed. Now: the first, at its place, and every other after it."""
    vault.write("docs/incidents/INC-0002.md", "---\nmemory_id: INC-0002\n" + "\n".join(lines) + "\n---\n")
    assert vault.check().lines == [f"docs/incidents/INC-0002.md:{where}: FM008 unsupported YAML tag {named}"]


def test_fm11_alias_bomb_is_rejected_quickly():
    bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    with pytest.raises(YamlProblem) as exc:
        load_yaml(bomb)
    assert exc.value.code == "FM009"
    assert load_yaml("base: &b {x: 1}\nother: *b\n").data == {"base": {"x": 1}, "other": {"x": 1}}


@pytest.mark.parametrize("text", [
    "title: Hello!\nitems:\n" + "  - someone\n" * 12_000,  # many nodes, a "!" in the text, no alias
    "".join(f"k{i}: &a{i} v\n" for i in range(12_000)),  # anchors that no alias uses
    "base: &b [x, y]\n" + "".join(f"k{i}: *b\n" for i in range(3_000)),  # 3,000 aliases of 2 items each
])
def test_fm11_a_large_document_is_no_alias_bomb(text):
    """Only the nodes aliases add count towards the limit, not the document's own."""
    assert load_yaml(text).data


@pytest.mark.parametrize("line, col, value, tag", [
    ("importance: !!int abc", 13, "abc", "!!int"), ("confidence: !!float high", 13, "high", "!!float"),
    ("tags: [a, !!int 'x']", 11, "x", "!!int"), ("related:\n  - !!float '1,5'", 5, "1,5", "!!float"),
])
def test_fm05_a_value_that_does_not_fit_its_tag_is_located_at_the_value(vault, line, col, value, tag):
    vault.write(P, adr("ADR-0001", extra=line + "\n"))
    row = 7 + line.count("\n")
    assert vault.check().lines == [f"{P}:{row}:{col}: FM005 '{value}' is not a valid {tag}"]


@pytest.mark.parametrize("text", [
    "reviewed: !!bool yes", "reviewed: !!bool 'no'", "owner: !!bool ON", "flags: [!!bool maybe]",
    "owner: !!null bob", "x: !!null 'None'", "importance: !!int 1_000", "importance: !!int ' 7'",
    "importance: !!int ١٢", "confidence: !!float 1_0.5", "confidence: !!float '0.5 '", "n: !!int 0x",
])
def test_fm02_an_explicit_tag_takes_only_its_core_schema_spellings(text):
    """``!!bool yes`` was stored as False and ``!!null bob`` as None, silently: every tag reads only the
    YAML 1.2 core schema's forms, and anything else is said at the value."""
    with pytest.raises(YamlProblem) as err:
        load_yaml(text + "\n")
    assert "is not a valid !!" in str(err.value) and (err.value.line, err.value.col) == (0, text.index("!!"))


@pytest.mark.parametrize("text, data", [
    ("a: !!bool true\nb: !!bool FALSE\nc: !!null ~\nd: !!null\ne: !!int -12\nf: !!int 0x1F\ng: !!float 1\n"
     "h: !!float .inf\ni: !!str 12\nj: !!seq [1]\nk: !!map {x: 1}\n",
     {"a": True, "b": False, "c": None, "d": None, "e": -12, "f": 31, "g": 1.0, "h": float("inf"), "i": "12",
      "j": [1], "k": {"x": 1}}),
])
def test_fm02_core_spellings_of_every_tag_still_load(text, data):
    assert load_yaml(text).data == data


@pytest.mark.parametrize("text, data", [
    ("owner: ! 123", {"owner": "123"}), ("title: !  '7'", {"title": "7"}), ('a: ! "true"', {"a": "true"}),
    ("tags: [! 2024, !!str 2, ! null, x]", {"tags": ["2024", "2", "null", "x"]}),
    ("tags:\n  - ! 1.5\n  - ! ~", {"tags": ["1.5", "~"]}), ("a: &x ! 5\nb: *x", {"a": "5", "b": "5"}),
    ("a: ! &y 0x1F", {"a": "0x1F"}), ("! 12: x", {"12": "x"}), ("owner: !", {"owner": ""}),
    ("nested:\n  deep: {k: ! false}", {"nested": {"deep": {"k": "false"}}}), ("e: ! [1, 2]", {"e": [1, 2]}),
    ("title: Hello ! 5", {"title": "Hello ! 5"}), ("年: ! 二〇二四", {"年": "二〇二四"}),
])
def test_fm02_the_non_specific_tag_makes_a_string(text, data):
    """``! 123`` was the number 123 (PyYAML and libyaml resolve a ``!`` scalar as a plain one), so a
    string field refused it as a number: YAML 1.2 gives the non-specific tag's scalars ``!!str``."""
    assert load_yaml(text + "\n").data == data


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["1", "-0.5", "1e3", ".inf", "0o17", "0x1f", "true", "False", "null", "~", "NULL", "007",
                        "12:30", "yes"]) | st.from_regex(r"[0-9][0-9.eE+-]{0,8}", fullmatch=True),
       st.sampled_from(["{v}", '"{v}"', "'{v}'"]), st.sampled_from(["k: {t}", "k: [{t}]", "k:\n  - {t}",
                                                                    "k: {{x: {t}}}"]))
def test_fm02_any_scalar_under_the_non_specific_tag_is_its_text(value, quoting, shape):
    loaded = load_yaml(shape.format(t="! " + quoting.format(v=value)) + "\n").data["k"]
    got = loaded[0] if isinstance(loaded, list) else loaded["x"] if isinstance(loaded, dict) else loaded
    assert got == value


@pytest.mark.parametrize("text, kind, tag", [
    ("team: !!str [a, b]", "list", "!!str"), ("owner: !!str {name: x}", "mapping", "!!str"),
    ("team: !!map [a]", "list", "!!map"), ("x: !!seq {a: 1}", "mapping", "!!seq"),
    ("nested:\n  - !!int [1, 2]", "list", "!!int"),
])
def test_fm02_a_collection_with_a_scalar_tag_is_refused(text, kind, tag):
    with pytest.raises(YamlProblem, match=f"a {kind} cannot be tagged {tag}"):
        load_yaml(text + "\n")


@pytest.mark.parametrize("value", ["9" * 5000, "-" + "1" * 4400, "0x" + "f" * 5000, "1." + "5" * 4000, "1e" + "9" * 2000])
def test_fm04_a_number_too_long_for_python_is_said_plainly(vault, value):
    """A 5,000-digit integer leaked Python's "Exceeds the limit (4300 digits)" message at line 2:1."""
    vault.write(P, adr("ADR-0001", extra=f"n: {value}\n"))
    (line,) = vault.check().lines
    assert line.startswith(f"{P}:7:4: FM005 '{value[:40]}… ({len(value):,} characters)' is not a valid !!")
    assert "Python" not in line and "sys." not in line and len(line) < 200


@pytest.mark.parametrize("key, block, value", [
    ("memory_id", "|\n  ADR-0001", "ADR-0001\n"), ("title", "|\n  T", "T\n"), ("created", "|\n  2024-01-01", "2024-01-01\n"),
    ("status", "|+\n  accepted\n", "accepted\n\n"), ("summary", ">\n  a\n  b", "a b\n"), ("t", "|-\n  x", "x"),
    ("名前", "|\n  東京", "東京\n"),
])
def test_fm12_a_block_scalar_keeps_its_line_breaks_wherever_its_key_stands(key, block, value):
    """The last key's ``|`` value lost its line break (the frontmatter was cut before it), so the same
    value passed last and failed elsewhere."""
    for position in range(3):
        lines = ["a: 1", "b: 2"]
        lines.insert(position, f"{key}: {block}")
        for ending in ("\n", "\r\n"):
            note = parse_note("a.md", ("---\n" + "\n".join(lines) + "\n---\nbody\n").replace("\n", ending).encode())
            assert note.frontmatter[key] == value, (position, ending)


def test_fm13_wikilinks_in_frontmatter(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002"))
    vault.write("docs/adrs/ADR-0007.md", adr("ADR-0007", extra=(
        'related:\n  - [[ADR-0001]]\n  - "[[ADR-0099]]"\n  - "[[ADR-0002|keep local]]"\n')))
    assert vault.check().lines == [
        'docs/adrs/ADR-0007.md:8:5: SC001 related[0]: expected "[[note]]" string, got a nested list — quote wikilinks in '
        'YAML: "[[ADR-0001]]"',
        "docs/adrs/ADR-0007.md:9:6: WL001 [[ADR-0099]] (frontmatter 'related') → no such note",
    ]


@pytest.mark.parametrize("field", ["related", "up", "関連", "see-also"])
@pytest.mark.parametrize("link, code, says", [
    ("[[B#Missing heading]]", "WL003", "heading not found in docs/B.md: 'Missing heading' — its headings: '#Shipped'"),
    ("[[B#^nope]]", "WL004", "block ^nope not found in docs/B.md — its block ids: '^kept'"),
    ("[[B#Shipping|alias]]", "WL003", "heading not found in docs/B.md: 'Shipping' — did you mean '#Shipped'?"),
])
def test_fm13_a_missing_heading_or_block_in_frontmatter_names_the_field(vault, field, link, code, says):
    """WL001 named the frontmatter field a link came from; WL003 and WL004 did not."""
    vault.write("docs/B.md", "# Shipped\n\nText ^kept\n")
    for value, col in ((f'"{link}"', 5), (f'["{link}"]', 6)):
        vault.write("docs/a.md", f"---\ntitle: x\n{field}: {value}\n---\nBody\n")
        assert vault.check().lines == [f"docs/a.md:3:{len(field) + col - 1}: {code} {link} (frontmatter '{field}') → {says}"]


@pytest.mark.parametrize("value, where", [
    ("  - |\n    x [[Missing]]\n", "5:7"), ("  - >-\n    y\n    z [[Missing]]\n", "6:7"),
    ("  - |2\n     [[Missing]]\n", "5:6"), ("- |\n  決定 [[Missing]]\n", "5:6"),  # an indentation indicator; a flush list
    ("  - a\n  - |\n    [[Missing]]\n", "6:5"), ("  - who: |\n      [[Missing]]\n", "5:7"),
    ("  - - |\n      [[Missing]]\n", "5:7"),  # a list in a list
])
def test_fm13_a_link_in_a_block_scalar_list_item_is_placed_on_its_line(vault, value, where):
    vault.write("docs/a.md", f"---\ntitle: x\ndeciders:\n{value}owner: me\n---\nBody\n")
    assert vault.check().lines == [f"docs/a.md:{where}: WL001 [[Missing]] (frontmatter 'deciders') → no such note"]


@pytest.mark.parametrize("data, where", [
    ("---\ntitle: x\n---\n東京 caf".encode() + b"\xe9\n", "4:7"),  # characters, not bytes
    (b"\xef\xbb\xbfcaf\xe9\n", "1:4"),  # the BOM is no column
    (b"a\rb\xe9\n", "2:2"), (b"a\r\nb\xe9\n", "2:2"),  # a lone CR is a line break, as in the decoded text
    ("\U0001F600\u0301x".encode() + b"\xff", "1:4"), (b"\xe9", "1:1"),
])
def test_fm14_a_non_utf8_byte_is_located_in_characters(vault, data, where):
    vault.write("docs/enc.md", data)
    (line,) = vault.check().lines
    assert line.startswith(f"docs/enc.md:{where}: FM001 "), line


def test_fm14_non_utf8_and_binary_md_files(vault):
    vault.write("docs/rules/legacy.md", "---\ntitle: caf".encode() + b"\xe9\n---\n")
    vault.write("docs/assets/diagram.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    vault.write("docs/adrs/ADR-0008.md", adr("ADR-0008", extra="confidence: 2\n"))
    res = vault.check()
    assert res.code == 1
    assert res.lines == [
        "docs/adrs/ADR-0008.md:7:13: SC001 confidence: 2 must be at most 1; search hides this note until it is fixed",
        "docs/assets/diagram.md:1:1: FM002 binary content in a .md file",
        "docs/rules/legacy.md:2:11: FM001 not valid UTF-8 (byte 0xE9 at offset 14) — re-save as UTF-8",
    ]


def test_a_whole_file_problem_stands_at_1_1_in_json_as_in_text(vault):
    """JSON said line 0, col 0 where the text and GitHub formats say 1:1: one place in every format."""
    vault.write("docs/assets/diagram.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    res = run_cli(["check", "--format", "json"], vault.root)
    (found,) = json.loads(res.out)["diagnostics"]
    assert (found["code"], found["line"], found["col"]) == ("FM002", 1, 1)


@pytest.mark.parametrize("codec, bom, name", [
    ("utf-16-le", b"\xff\xfe", "UTF-16LE"), ("utf-16-be", b"\xfe\xff", "UTF-16BE"), ("utf-16-le", b"", "UTF-16LE"),
    ("utf-16-be", b"", "UTF-16BE"), ("utf-32-le", b"\xff\xfe\x00\x00", "UTF-32LE"),
    ("utf-32-be", b"\x00\x00\xfe\xff", "UTF-32BE"),
])
@pytest.mark.parametrize("text", ["---\ntitle: Deploys\n---\nBody\r\n", "# 東京 ✓ café\n" * 3000, "x"])
def test_fm14_a_utf16_or_utf32_note_is_told_to_re_save_as_utf8(vault, codec, bom, name, text):
    """Windows PowerShell's Out-File wrote UTF-16LE with a BOM: it read as "binary content", no encoding
    named, no fix."""
    vault.write("docs/ps.md", bom + text.encode(codec))
    assert vault.check().lines == [f"docs/ps.md:1:1: FM001 {name} text, not UTF-8 — re-save as UTF-8"]


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(blacklist_categories=["Cc", "Cs", "Cn", "Co", "Zl", "Zp"]), min_size=1, max_size=300),
       st.sampled_from([("utf-16", "UTF-16LE"), ("utf-32", "UTF-32LE"), ("utf-16-be", "UTF-16BE"),
                        ("utf-16-le", "UTF-16LE"), ("utf-32-be", "UTF-32BE")]),
       st.booleans())
def test_fm14_text_in_a_wide_encoding_is_named_not_called_binary(text, codec, markup):
    """With a BOM always; without one when a note's markup makes half of it ASCII."""
    from vaultsync.vault.note import decode

    (python_codec, name), text = codec, ("---\ntitle: a note\n---\n# Heading\n" + text if markup else text)
    data = text.encode(python_codec)
    _, problem = decode("a.md", data)
    with_bom = python_codec in ("utf-16", "utf-32")
    if with_bom or (b"\0" in data and 2 * sum(c < "\x80" for c in text) >= len(text)):
        assert problem is not None and problem.code == "FM001" and problem.message.startswith(f"{name} text")


@settings(max_examples=80, deadline=None)
@given(st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF).filter(lambda c: c.isprintable()),
               min_size=20, max_size=400),
       st.lists(st.integers(0, 10_000), min_size=1, max_size=3), st.sampled_from(["utf-8", "latin-1"]))
def test_fm14_a_nul_in_utf8_or_latin1_text_is_never_called_utf16(text, places, codec):
    """A stray NUL made a UTF-8 or Latin-1 note "UTF-16LE text": re-saving as UTF-8 fixes nothing there."""
    from vaultsync.vault.note import decode

    data = text.encode(codec)
    for at in sorted(places, reverse=True):
        data = data[:at % len(data)] + b"\0" + data[at % len(data):]
    _, problem = decode("a.md", data)
    assert problem is not None and problem.code == "FM002", problem


def test_huge_and_pathological_files_never_crash(vault):
    vault.write("docs/big.md", "---\ntitle: x\n---\n" + ("word " * 200_000 + "\n") * 3)
    vault.write("docs/deep.md", "---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\n")
    vault.write("docs/huge.md", b"x" * (21 * 1024 * 1024))
    res = vault.check()
    assert "Traceback" not in res.out + res.err
    assert any("FM014" in line for line in res.lines)
    assert res.code == 1


def test_schema_errors_suggest_the_fix(vault):
    vault.write(P, adr("ADR-0001", status="acepted", extra="expries: \"2025-01-01\"\ntags: [databse]\n"))
    assert vault.check().lines == [
        f"{P}:5:9: SC001 status: 'acepted' is not one of: proposed, accepted, rejected, deprecated, superseded "
        "(did you mean 'accepted'?)",
        f"{P}:7:1: SC003 expries: additional property not allowed (did you mean 'expires'?)",
        f"{P}:8:8: VC001 tags[0]: unknown term 'databse' (did you mean 'database'? or add it to "
        "vocabulary.tags in .vaultsync.yaml)",
    ]


@pytest.mark.parametrize("first, second, field", [
    ("title: T", "Title: U", "title"), ("owner: a", "Owner: b", "owner"), ("Tags: [database]", "tags: [ops]", "tags"),
    ("title: T", "titel: U", "title"), ("title: T", "TITLE: 題名", "title"), ("owner: a", "ownr: b", "owner"),
    ("tags: [database]", "tag: [ops]", "tags"),
])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_an_extra_key_beside_the_field_it_spells_is_not_told_to_become_it(vault, first, second, field, eol):
    """"did you mean 'title'?" beside a 'title' the note already sets: renaming, as told, made a duplicate key
    (FM007). The message says the two are one field written twice, and keeping one of them passes."""
    head = ["memory_id: ADR-0001", "type: adr", "status: accepted", 'created: "2024-03-01"'] + \
        (["title: T0"] if field != "title" else [])

    def note(keys: list[str]) -> str:
        return eol.join(["---", *head, *keys, "---", "Body.", ""])

    vault.write(P, note([first, second]))
    fields = [key.split(":")[0] for key in (first, second)]
    line_of = {k: len(head) + 2 + i for i, k in enumerate(fields)}
    extra = next(k for k in fields if k != field)
    assert [line for line in vault.check().lines if "SC003" in line] == [
        f"{P}:{line_of[extra]}:1: SC003 {extra}: additional property not allowed — a second spelling of '{field}', "
        f"which this note sets on line {line_of[field]}: keep one of the two"]
    vault.write(P, note([first if fields[0] == field else second]))
    assert vault.check().lines == []


@pytest.mark.parametrize("first, second", [("title: T", "subtitle: Why not MySQL"), ("type: adr", "type_note: x"),
                                           ("status: accepted", "state: reviewed"), ("tags: [database]", "stages: [b]"),
                                           ("owner: a", "co-owner: b"), ("title: T", "Untertitel: U"),
                                           ('supersedes: ["[[ADR-0002]]"]', "superseded: false"),
                                           ('expires: "2030-01-01"', "expired: false")])
def test_a_key_only_like_one_the_note_sets_is_not_called_its_second_spelling(vault, first, second):
    """`subtitle:` beside `title:` was "a second spelling of 'title' … keep one of the two": a user who
    followed it deleted a field. A key is a second spelling only in another case or with other separators,
    or one letter added, dropped or swapped with its neighbour (a changed letter makes another word:
    `expired`, `superseded`); else it is refused as itself, with no did-you-mean for a key the note sets."""
    head = ["memory_id: ADR-0001", "type: adr", "status: accepted", 'created: "2024-03-01"', "title: T0"]
    head = [h for h in head if h.split(":")[0] != first.split(":")[0]]
    vault.write(P, "\n".join(["---", *head, first, second, "---", "Body.", ""]))
    extra = second.split(":")[0]
    said = [line.split(": ", 1)[1] for line in vault.check().lines if "SC003" in line]
    assert len(said) == 1 and said[0].startswith(f"SC003 {extra}: additional property not allowed"), said
    assert "second spelling" not in said[0] and f"did you mean '{first.split(':')[0]}'" not in said[0], said


def _osa(a: str, b: str) -> int:
    """Optimal string alignment distance, by its textbook table (the oracle for ``_spells``)."""
    d = [[i + j if not i * j else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


@settings(max_examples=400, deadline=None)
@given(st.text("abcT-_ ", max_size=8), st.text("abcT-_ ", max_size=8))
def test_property_a_second_spelling_is_one_edit_or_the_same_letters(key, field):
    from vaultsync.checks.schema import _spells

    a, b = (re.sub(r"[-_\s]", "", k.casefold()) for k in (key, field))
    one_edit = _osa(a, b) == 1 and (len(a) != len(b) or sorted(a) == sorted(b))  # no changed letter
    assert _spells(key, field) == (a == b or (min(len(a), len(b)) >= 3 and one_edit))


@pytest.mark.parametrize("value", ['"ADR-0001\\n"', "|\n  ADR-0001\n", '"ADR-0001\\n\\n"', "ADR-\u0661\u0662\u0663\u0664",
                                   "ADR-\uff11\uff12"])
def test_schema_patterns_are_read_as_ecma_262(vault, value):
    """JSON Schema patterns are ECMA-262: ``$`` ends the input (no final newline before it), and ``\\d``
    means ASCII digits. A memory_id ending in a newline, or in Arabic-Indic or full-width digits, is no id."""
    vault.write(P, adr("ADR-0001").replace("memory_id: ADR-0001", f"memory_id: {value}"))
    lines = vault.check().lines
    assert any(" SC001 memory_id:" in line for line in lines), lines


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"\A[A-Z][A-Z0-9]{0,4}-[0-9]{1,6}\Z"), st.sampled_from(["", "\n", "\n\n", " ", "\r\n"]))
def test_the_id_pattern_accepts_exactly_the_ids(mid, tail):
    from vaultsync.checks.ecma_regex import ecma_pattern

    assert (ecma_pattern("^[A-Z][A-Z0-9]*-[0-9]{1,6}$").search(mid + tail) is not None) is (tail == "")


@pytest.mark.parametrize("pattern, good, bad", [
    ("^\\p{Lu}", "Bob", "bob"),                                # a Unicode property escape (ES2018, the u flag)
    ("^\\p{Script=Han}+$", "設計", "設計x"), ("^[\\p{L}\\d ]+$", "Ünïcode 9", "a_b"),
    ("^(?<o>[a-z]+)-\\k<o>$", "ab-ab", "ab-cd"),                # a named group and its back reference
    ("^\\u{1F600}$", "😀", "x"), ("\\bops\\b", "éops", "xops"),  # \\b is ASCII: é is no word character
    ("^[^]+$", "any\nthing", ""), ("^x[]?$", "x", "x]"),          # [^] is any character, [] none
])
def test_schema_patterns_use_ecma_262_syntax(vault, pattern, good, bad):
    """A custom schema's patterns are ECMA-262 with the u flag (JSON Schema 2020-12 §6.4): ES2018 syntax is
    accepted (never a false CF003) and means what it means there."""
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  rule: {folder: docs/rules, schema: s.json}\n")
    vault.write("s.json", json.dumps({"type": "object", "properties": {"owner": {"type": "string", "pattern": pattern}}}))
    for value, ok in ((good, True), (bad, False)):
        vault.write("docs/rules/r.md", f"---\nowner: {json.dumps(value, ensure_ascii=False)}\n---\n")
        res = vault.check()
        codes = [line.split(" ")[1] for line in res.lines if " warning: " not in line and "FM017" not in line]
        assert (res.code, codes) == ((0, []) if ok else (1, ["SC001"])), (value, res.out)


def test_ecma_dot_matches_no_line_terminator():
    from vaultsync.checks.ecma_regex import ecma_pattern

    assert [bool(ecma_pattern("^a.b$").search(f"a{c}b")) for c in "x\n\r\u2028\u2029\u0085"] == [
        True, False, False, False, False, True]


@pytest.mark.parametrize("pattern, yes, no", [
    ("^[\\D]$", "\u0660", "5"), ("^[\\W]$", "é^`", "a_Z9"), ("^\\s$", "\ufeff\u3000\xa0", "\x1c\x85"),
    ("^\\S$", "\x1c", "\ufeff"), ("^\\cJ$", "\n", "J"), ("^[\\s\\d]$", "\u20009", "x"),
])
def test_ecma_class_escapes(pattern, yes, no):
    """``[\\D]``/``[\\W]`` inside a class are ASCII complements, ``\\s`` is ECMA-262's white space (U+FEFF yes,
    U+001C no), ``\\cJ`` a control character."""
    from vaultsync.checks.ecma_regex import ecma_pattern

    rx = ecma_pattern(pattern)
    assert all(rx.search(c) for c in yes) and not any(rx.search(c) for c in no)


@pytest.mark.parametrize("pattern", ["(a", "a{2,1}", "\\p{NoSuchProperty}", "(?<n>a)\\k<m>"])
def test_an_invalid_pattern_is_a_config_error(vault, pattern):
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  rule: {folder: docs/rules, schema: s.json}\n")
    vault.write("s.json", json.dumps({"type": "object", "properties": {"owner": {"type": "string", "pattern": pattern}}}))
    vault.write("docs/rules/r.md", "---\nowner: x\n---\n")
    res = vault.check()
    assert res.code == 1 and " CF003 type 'rule': schema s.json: " in res.out and "internal error" not in res.err


@pytest.mark.parametrize("value, ok", [
    ("alice", True), ("bob", False), ("[alice]", True), ("[alice, bob]", False), ("'Caf\u00e9'", True),
    ("'Cafe\u0301'", True), ("[\"Cafe\u0301\"]", True), ("Cafe", False), ("7", True),
])
def test_vocabulary_holds_single_terms_and_unicode_spellings(vault, value, ok):
    """A vocabulary field written as one term (``owner: bob``) is checked like a list, and a term written
    decomposed (``e`` + U+0301) is the composed one (NFC), as names are; a number is the schema's business."""
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  note: {folder: docs/notes, schema: s.json}\n"
                                   "vocabulary:\n  owner: [alice, 'Caf\u00e9']\n")
    vault.write("s.json", "{}")
    vault.write("docs/notes/n.md", f"---\nowner: {value}\n---\n")
    lines = vault.check().lines
    assert (lines == []) is ok, lines
    assert ok or any(" VC001 owner" in line and "unknown term" in line for line in lines), lines


def test_type_folder_mismatch_and_missing_frontmatter(vault):
    vault.write(P, adr("ADR-0001").replace("type: adr", "type: rule"))
    vault.write("docs/adrs/ADR-0002.md", "# No frontmatter\n")
    vault.write("docs/free-note.md", "# Outside type folders frontmatter is optional\n")
    lines = vault.check().lines
    assert lines == [
        f"{P}:3:7: SC004 type: 'rule' notes live in docs/rules/, this one is in docs/adrs/ (type 'adr'): set type: "
        "adr, or move it to docs/rules/ and give it the rule schema's fields",
        "docs/adrs/ADR-0002.md:1:1: FM012 missing frontmatter: an adr note needs '---' on line 1 with "
        "memory_id, type, title, status, created",
    ]


RULE = "---\nmemory_id: RULE-0009\ntype: rule\ntitle: Ack every write\nstatus: active\ncreated: \"2024-03-01\"\n---\nBody.\n"
INCIDENT = ("---\nmemory_id: INC-0009\ntype: incident\ntitle: Lost orders\nstatus: open\nseverity: SEV2\n"
            "created: \"2024-03-01\"\n---\nBody.\n")


@pytest.mark.parametrize("text, folder, other", [(RULE, "docs/adrs", "rule"), (RULE, "docs/incidents", "rule"),
                                                 (INCIDENT, "docs/adrs", "incident"), (INCIDENT, "docs/rules", "incident")])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_note_saved_in_another_types_folder_is_told_to_move(vault, text, folder, other, newline):
    """A rule saved among the ADRs got "type: must be 'adr'" and the ADR schema's complaints about a rule's
    fields: the fix it needs is a move. It is judged as what it says it is, in one line that names both ways."""
    here = folder.split("/")[1].rstrip("s")
    vault.write(f"{folder}/X.md", text.replace("\n", newline))
    assert vault.check().lines == [
        f"{folder}/X.md:3:7: SC004 type: '{other}' notes live in docs/{other}s/, this one is in {folder}/ (type "
        f"'{here}'): move it to docs/{other}s/, or set type: {here} and give it the {here} schema's fields"]
    (vault.root / folder / "X.md").unlink()  # the first way out leaves nothing to mend
    vault.write(f"docs/{other}s/X.md", text.replace("\n", newline))
    assert vault.check().lines == []
    (vault.root / f"docs/{other}s/X.md").unlink()
    vault.write(f"{folder}/X.md", text.replace("title:", "titel:"))  # its own schema still speaks
    lines = vault.check().lines
    assert any("title" in ln and " SC00" in ln for ln in lines) and not any("status" in ln for ln in lines), lines
    assert any(ln.endswith(f"move it to docs/{other}s/, or set type: {here} and give it the {here} schema's fields")
               for ln in lines), lines


@pytest.mark.parametrize("declared", ["rule", "incident"])
def test_an_adr_whose_type_names_another_type_is_told_to_set_its_type(vault, declared):
    vault.write(P, adr("ADR-0001").replace("type: adr", f"type: {declared}"))
    (line,) = vault.check().lines
    assert line.startswith(f"{P}:3:7: SC004 type: '{declared}'") and line.endswith(
        f": set type: adr, or move it to docs/{declared}s/ and give it the {declared} schema's fields"), line
    vault.write(P, adr("ADR-0001"))  # the first way out leaves nothing to mend
    assert vault.check().lines == []


def test_a_type_no_folder_holds_keeps_the_schemas_word(vault):
    vault.write(P, adr("ADR-0001").replace("type: adr", "type: decision"))
    assert vault.check().lines == [f"{P}:3:7: SC001 type: must be 'adr', got 'decision'"]


def test_parsing_never_touches_the_file(tmp_path):
    path = tmp_path / "n.md"
    data = b"\xef\xbb\xbf---\r\ntitle: x\r\n---\r\nbody\r\n"
    path.write_bytes(data)
    before = os.stat(path).st_mtime_ns
    parse_note("n.md", path.read_bytes())
    assert path.read_bytes() == data and os.stat(path).st_mtime_ns == before


@pytest.mark.parametrize("config, line", [
    ("vault: docs\ntypes:\n  adr: {folder: docs/adrs, shema: adr}\n",
     ".vaultsync.yaml:3:28: CF002 types.adr: unknown key 'shema' — did you mean 'schema'?"),
    ("vault: docs\nserach:\n  top_k: 3\n", ".vaultsync.yaml:2:1: CF002 (top level): unknown key 'serach' — did you mean "
                                          "'search'?"),
    ("vault: docs\nreview:\n  max_age_day: 3\n", ".vaultsync.yaml:3:3: CF002 review: unknown key 'max_age_day' — did you mean 'max_age_days'?"),
    ("vault: docs\nzzz: 1\n", ".vaultsync.yaml:2:1: CF002 (top level): unknown key 'zzz' (known: vault, types, "),
])
def test_config_errors_are_located_at_the_unknown_key_with_the_likely_one(vault, config, line):
    vault.write(".vaultsync.yaml", config)
    res = vault.check()
    assert res.code == 1 and res.err.startswith(line), res.err


def test_frontmatter_positions_are_lazy_but_exact():
    note = parse_note(P, b"---\na: 1\nlist:\n  - x\n  - y\n---\n")
    assert note.position(("list", 1)) == (5, 5)
    assert note.position(("list",), key=True) == (3, 1)
    assert note.position(("missing",)) == (1, 1)


def test_project_dogfoods_its_own_adrs():
    """The project's own decisions in docs/adr pass its own checks."""
    from conftest import REPO_ROOT, run_cli
    res = run_cli(["check", "--root", str(REPO_ROOT)], Path(REPO_ROOT))
    assert res.code == 0, res.out


def _split_by_lines(text: str) -> tuple[str, str, int] | str | None:
    """The frontmatter split as the rule reads: line 1 is `---`, the YAML runs to the next `---` line
    (trailing whitespace allowed on both); the YAML is its lines, each with its line break (a last `|` value
    keeps its own). (yaml, body, body's first line), "open", or None."""
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return None
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if close is None:
        return "open"
    return "".join(line + "\n" for line in lines[1:close]), "\n".join(lines[close + 1:]), close + 2


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(["---", "--- ", "----", "a: 1", "", " ---", "---\t", "x", "---\x85", "\x0b", "---x"]),
                min_size=1, max_size=7), st.booleans())
def test_the_frontmatter_block_is_found_as_its_lines_say(lines, final_newline):
    from vaultsync.vault.unclosed import thematic_break

    text = "\n".join(lines) + ("\n" if final_newline else "")
    note, expected = parse_text("a.md", text), _split_by_lines(text)
    if expected is None:
        assert note.yaml_text == "" and note.body == text
    elif expected == "open" and thematic_break(text):  # `---`, blank lines, text: a rule (tests/test_unclosed.py)
        assert note.fm_state == "none" and note.body == text and not note.diagnostics
    elif expected == "open":
        assert note.fm_state == "invalid" and note.diagnostics[0].code == "FM004"
    else:
        assert (note.yaml_text, note.body, note.body_line) == expected


# Every hint for a WikiLink written wrong in a list field, followed literally, gives a note that passes:
# none may lead to another error (`related: "[[A]]"` → "write a list: [[[A]]]" → FM017 went round).
_HINT = re.compile(r"(?:quote it|write a list|quote each link|quote wikilinks in YAML): (.+?)(?: \(or the whole|; |$)")


@pytest.mark.parametrize("field", ["related", "supersedes"])
@pytest.mark.parametrize("written", [
    "{f}: [[{a}]]", '{f}: "[[{a}]]"', "{f}: [[[{a}]]]", "{f}: [[{a}]], [[{b}]]", '{f}: "[[{a}]], [[{b}]]"',
    "{f}:\n  - [[{a}]]", "{f}: [[{a}|the ledger]]", "{f}: [[{a}#Context]]",
])
def test_a_wikilink_hint_followed_literally_gives_a_valid_list(vault, field, written):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", body="# Context\n"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002"))
    line = written.format(f=field, a="ADR-0001", b="ADR-0002")
    vault.write("docs/adrs/ADR-0007.md", adr("ADR-0007", extra=line + "\n"))
    first = vault.check().lines
    hints = [m.group(1) for text in first if (m := _HINT.search(text))]
    assert hints, first
    fix = hints[0] if hints[0].startswith(f"{field}:") else f"{field}: {hints[0]}"
    if not fix.split(": ", 1)[1].startswith("["):  # an item's hint: the item of a block list
        fix = f"{field}:\n  - {hints[0]}"
    vault.write("docs/adrs/ADR-0007.md", adr("ADR-0007", extra=fix + "\n"))
    assert [x for x in vault.check().lines if "ADR-0007.md" in x and "SS0" not in x] == [], (first, fix)


@pytest.mark.parametrize("yaml_text, path, where", [
    ("tags: &t [payments]\nprojects: *t\n", ("projects", 0), (3, 11)),          # an alias after its key
    ("tags: &t [a, b]\nprojects: *t\n", ("projects", 1), (3, 11)),               # any item of it
    ("tags: &t [a]\nprojects:\n  - x\n  - *t\n", ("projects", 1), (5, 5)),          # a block item
    ("tags: &t a\nprojects: [x, *t, *t]\n", ("projects", 2), (3, 19)),            # the second of two on a line
    ("owner: &o\n  name: x\nteam: {lead: *o}\n", ("team", "lead", "name"), (4, 14)),  # in a flow mapping
    ("confidence: &c 2\nimportance:\n  *c\n", ("importance",), (4, 3)),           # on the next line
    ("tags: &t [payments]\nprojects: *t\n", ("tags", 0), (2, 11)),                # the anchor's own value stays
    ("title: &t T\ntags:\n  - a # see *oops\n  - *t\n", ("tags", 1), (5, 5)),      # a `*` in a comment before it
    ("title: &t T\nowner: # see *note\n  *t\n", ("owner",), (4, 3)),
    ("title: &t T\nprojects: [x, # *y\n   *t]\n", ("projects", 1), (4, 4)),
    ("title: &t T\nsummary: a*b\nowner: *t\n", ("owner",), (4, 8)),               # `a*b` is no alias
])
def test_a_value_from_an_alias_is_placed_at_the_alias(yaml_text, path, where):
    """``projects: *t`` was reported on the ``tags: &t [...]`` line: a composed alias is the anchor's node."""
    note = parse_text("n.md", f"---\n{yaml_text}---\nbody\n")
    assert note.position(path) == where


@pytest.mark.parametrize("value, expected", [
    ("[[a, b], c]", ["7:11: SC001 aliases[0]: expected string, got a list"]),
    ("[1, x]", ['7:11: SC001 aliases[0]: expected string, got 1 — YAML reads it as a number: quote it: "1"']),
    ("[x, {k: v}, [y]]", ["7:14: SC001 aliases[1]: expected string, got a mapping",
                          "7:22: SC001 aliases[2]: expected string, got a list"]),
    ('[""]', ["7:11: SC001 aliases[0]: should be non-empty"]),
    ("3", ["7:10: SC001 aliases: expected list or string, got 3"]),
    ("{k: v}", ["7:10: SC001 aliases: expected list or string, got a mapping"]),
    ("", ["7:9: SC001 aliases: expected list or string, got null (empty value)"]),
])
def test_a_value_either_schema_branch_refuses_is_told_by_the_branch_it_meant(vault, value, expected):
    """`aliases: [[a, b]]` (a list or a string) was reported as the whole expanded value's repr 'is not valid
    under any of the given schemas': an alias bomb printed pages. Now the list branch says which item."""
    vault.write(P, adr("ADR-0001", extra=f"aliases: {value}\n".replace(": \n", ":\n")))
    res = vault.check()
    assert res.code == 1 and res.lines == [f"{P}:{e}" for e in expected], res.lines


_ITEM = st.recursive(st.one_of(st.integers(), st.booleans(), st.none(), st.text("ab ", max_size=3)),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("k", min_size=1), inner,
                                                                                  max_size=2), max_leaves=12)


@given(st.one_of(_ITEM, st.lists(_ITEM, max_size=4)))
@settings(max_examples=80, deadline=None)
def test_any_aliases_value_gets_short_messages_at_its_own_items(value):
    """Whatever an `aliases` value holds, each message names one value in YAML's words (no Python repr of a
    list or mapping) and stands at the item it is about."""
    import yaml

    from vaultsync.checks.schema import load_validator, validate_frontmatter

    text = ('---\nmemory_id: ADR-0001\ntype: adr\ntitle: t\nstatus: accepted\ncreated: "2024-01-01"\n'
            f"aliases: {yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()}\n---\nbody\n")
    note = parse_text("n.md", text)
    if note.frontmatter is None or note.diagnostics:
        return
    found = validate_frontmatter(note, note.frontmatter, load_validator("adr"))
    ok = isinstance(value, str) and value or isinstance(value, list) and all(isinstance(v, str) and v for v in value)
    assert bool(found) != bool(ok), (value, found)
    quoted = max((len(repr(leaf)) for leaf in _leaves(value)), default=0)  # a number is named, and quoted to fix it
    for d in found:
        assert d.message.startswith("aliases") and d.line == 7 and "[[" not in d.message and "{'" not in d.message
        assert len(d.message) < 100 + 2 * quoted, d.message


def _leaves(value):  # type: ignore[no-untyped-def]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    return [value]


@pytest.mark.parametrize("field, used", [("tag", "tags"), ("project", "projects"), ("Tags", "tags"),
                                          ("componets", "components")])
def test_a_vocabulary_field_no_note_sets_beside_one_they_do_is_an_error(vault, field, used):
    """`vocabulary: {tag: [...]}` for `tags`: no config error, and unknown tags went unreported (no VC001)."""
    vault.write(".vaultsync.yaml", f"vault: docs\nvocabulary:\n  {field}: [ops]\n  owner: [bob]\n")
    vault.write("docs/a.md", f"---\ntitle: A\n{used}: [backup]\n---\nx\n")
    res = vault.check()
    assert res.code == 1 and res.lines[0] == (
        f".vaultsync.yaml:3:{len(field) + 5}: CF002 vocabulary.{field}: no note has a '{field}' field, but 1 note(s) "
        f"have '{used}' (did you mean '{used}'?): its terms are not checked"), res.lines


def test_a_vocabulary_field_no_note_sets_yet_is_no_error(vault):
    vault.write(".vaultsync.yaml", "vault: docs\nvocabulary:\n  tags: [ops]\n  severity_class: [a]\n")
    vault.write("docs/a.md", "---\ntitle: A\ntags: [ops]\n---\nx\n")
    assert vault.check().code == 0


@pytest.mark.parametrize("terms, listed", [
    (["db"], "known: db;"),
    ([f"term{i:02d}" for i in range(12)], "known: term00, term01, term02, term03, term04, term05, term06, term07, "
                                          "term08, term09 and 2 more;"),
])
def test_an_unknown_term_with_no_near_one_names_the_known_terms(vault, terms, listed):
    """An agent refused a tag had to read the config to retry: the message lists the vocabulary (the first ten)."""
    vault.write(".vaultsync.yaml", f"vault: docs\ntypes:\n  adr: {{folder: docs/adrs}}\nvocabulary:\n"
                                   f"  tags: [{', '.join(terms)}]\n")
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra="tags: [queue]\n"))
    (line,) = vault.check().lines
    assert line.startswith("docs/adrs/ADR-0001.md:7:8: VC001 tags[0]: unknown term 'queue' (") and listed in line
    assert line.endswith("or add it to vocabulary.tags in .vaultsync.yaml)")


@pytest.mark.parametrize("first, second", [("café", "cafe\u0301"), ("cafe\u0301", "café"), ("Å", "\u212b"),
                                           ("한국", "\u1112\u1161\u11ab\u1100\u116e\u11a8"), ("ñu", "n\u0303u")])
@pytest.mark.parametrize("gap", [0, 2])
def test_vc002_one_term_in_two_unicode_spellings_is_named(vault, first, second, gap):
    """NFC makes them one term (VC001 accepts both), so the list held one tag twice, unseen by the schema's
    uniqueItems, which compares the strings as written."""
    vault.write(".vaultsync.yaml", CONFIG_WITH.format(terms=", ".join(sorted({unicodedata.normalize("NFC", first)}))))
    between = ["ops"] * min(gap, 1) + ["security"] * max(gap - 1, 0)
    tags = [first, *between, second]
    vault.write(P, adr("ADR-0001", extra=f"tags: {json.dumps(tags, ensure_ascii=False)}\n"))
    lines = vault.check().lines
    assert len(lines) == 1 and f" VC002 tags[{len(tags) - 1}]: " in lines[0] and "repeats tags[0] in another Unicode " \
        "spelling — remove one" in lines[0], lines


CONFIG_WITH = ("vault: docs\ntypes:\n  adr: {{folder: docs/adrs}}\nvocabulary:\n  tags: [{terms}, ops, security]\n")


@pytest.mark.parametrize("folder, type_name", [("docs/adrs", "adr"), ("docs/incidents", "incident"), ("docs/rules", "rule")])
def test_a_missing_type_is_named_from_the_folder(vault, folder, type_name):
    """SC002 said only "missing required field 'type'" where the folder decides which type the note is."""
    vault.write(f"{folder}/X-0001.md", adr("X-0001").replace("type: adr\n", ""))
    said = [line for line in vault.check().lines if "SC002" in line and "'type'" in line]
    assert said and said[0].endswith(f"missing required field 'type': {folder}/ holds {type_name} notes — "
                                     f"add type: {type_name}"), said


@pytest.mark.parametrize("term, field, home", [("design-system", "tags", "projects"), ("checkout", "tags", "projects"),
                                               ("ios", "projects", "tags"), ("Caf\u00e9", "projects", "tags")])
def test_a_term_of_another_vocabulary_says_where_it_belongs(vault, term, field, home):
    """A `projects` term under `tags` was told only the tags it may be, with no word of the list it is in."""
    vault.write(".vaultsync.yaml", CONFIG.replace("  tags: [database, search, ops, security]\n",
                                                  "  tags: [database, ios, Cafe\u0301]\n"
                                                  "  projects: [design-system, checkout]\n"))
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f"{field}: [{term}]\n"))
    said = [line for line in vault.check().lines if "VC001" in line]
    assert len(said) == 1 and f"is a term of {home}: move it there" in said[0], said
