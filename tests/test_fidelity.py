"""Issue 12, kind 1: YAML that stores something other than what the author wrote (FM017).

Every kind is shown in several fields, positions and scripts; a property test
checks the rule itself: a plain value is either stored as written or reported.
"""

from __future__ import annotations

import contextlib
import json
import re

import pytest
from conftest import adr
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.checks.fidelity import check_fidelity
from vaultsync.vault.note import parse_text
from vaultsync.vault.scalars import canonical_number
from vaultsync.vault.yamlquote import quote
from vaultsync.vault.yamlload import YamlProblem, load_yaml

P = "docs/adrs/ADR-0001.md"
FREE = "docs/free.md"  # outside any type folder: no schema


def _lines(vault, path, text):
    vault.write(path, text)
    res = vault.check()
    return res.code, res.lines


@pytest.mark.parametrize("line, col, field, stored, written", [
    ("title: Follow-up to INC #42 db lock", 25, "title", "'Follow-up to INC'", "Follow-up to INC #42 db lock"),
    ("title: Сбой базы #17 блокировка", 18, "title", "'Сбой базы'", "Сбой базы #17 блокировка"),
    ("title: 障害対応 #42 ロック", 13, "title", "'障害対応'", "障害対応 #42 ロック"),
    ('title: Use "fast" path #perf', 24, "title", "'Use \"fast\" path'", 'Use "fast" path #perf'),
])
def test_a_comment_that_cuts_a_title_is_an_error(vault, line, col, field, stored, written):
    code, lines = _lines(vault, P, adr("ADR-0001").replace("title: A decision", line))
    assert code == 1
    assert lines == [f"{P}:4:{col}: FM017 {field}: YAML reads ' #' as the start of a comment and stores "
                     f"{stored}, not '{written}' — quote it: {quote(written)}"]


@pytest.mark.parametrize("text, where, message", [
    ("tags:\n  - ops\n  - #database\n", "4:5", "tags[1]: YAML reads ' #' as the start of a comment and stores an "
                                                "empty value (null), not '#database' — quote it: \"#database\""),
    ("owner:\n  team: core #infra\n", "3:14", "owner.team: YAML reads ' #' as the start of a comment and stores "
                                              "'core', not 'core #infra' — quote it: \"core #infra\""),
    ("ticket: #1234\n", "2:9", "ticket: YAML reads ' #' as the start of a comment and stores an empty value "
                               "(null), not '#1234' — quote it: \"#1234\""),
])
def test_comment_cuts_in_lists_nested_maps_and_empty_values(vault, text, where, message):
    code, lines = _lines(vault, FREE, "---\n" + text + "---\n")
    assert code == 1 and lines == [f"{FREE}:{where}: FM017 {message}"]


@pytest.mark.parametrize("text, where, field, stored, written", [
    ("title: Decision on retries for\n  #webhooks and queues\n", "3:3", "title", "Decision on retries for",
     "Decision on retries for #webhooks and queues"),
    ("owner:\n  team: core\n    #infra group\n", "4:5", "owner.team", "core", "core #infra group"),
    ("tags:\n  - ops\n    #later\n", "4:5", "tags[0]", "ops", "ops #later"),
    ("title: Сбой базы\n\n   #17 блокировка\n", "4:4", "title", "Сбой базы", "Сбой базы #17 блокировка"),
    ("title: 障害対応\n\t\n  #42\n", None, None, None, None),  # a tab line: YAML refuses the whole block
])
def test_a_comment_line_below_a_plain_value_cuts_it(vault, text, where, field, stored, written):
    """``#word`` on the line below a plain value, indented as its next line would be: YAML reads a comment
    that ends the value (§6.6), not more of it."""
    code, lines = _lines(vault, FREE, "---\n" + text + "note: end\n---\n")
    assert code == 1
    if where is not None:
        fm017 = [line for line in lines if " FM017 " in line]
        assert len(fm017) == 1 and fm017[0].startswith(f"{FREE}:{where}: FM017 {field}: YAML reads ' #' as the start"
                                                       f" of a comment and stores '{stored}'"), lines
        assert fm017[0].endswith(f"not '{written}' — quote it: {quote(written)}"), fm017[0]


@pytest.mark.parametrize("text", [
    "title: x\n# a comment line at the key's column\n",
    "owner:\n  team: core\n  #infra: a key commented out\n",
    "title: x\n  # an intended comment, hash and space\n",
    "title: x\n  ## a heading-like comment\n",
    "tags:\n  - ops\n  #- later\n",
    "tags: [ops, search]\n  #later\n",              # a closed flow collection cannot go on below
    "owner: {team: core}\n    #infra\n",
    "links:\n  - [a, b]\n    #c\n",
    "title: \"quoted\"\n  #more\n",
])
def test_comment_lines_not_placed_as_more_of_a_value_pass(text):
    note = parse_text(FREE, "---\n" + text + "---\n")
    assert note.fm_state == "mapping" and check_fidelity(note, None) == [], check_fidelity(note, None)


@pytest.mark.parametrize("text", [
    "status: accepted  # decided in the review\n",
    "title: C# and F# interop\n",                 # '#' not after a space: part of the value
    "title: 'INC #42'\n",                         # quoted
    "title: \"INC #42\"\n",
    "# a comment line\ntitle: x\n",
    "tags: [ops, search]   # two tags\n",
])
def test_intended_comments_and_quoted_hashes_pass(text):
    note = parse_text(FREE, "---\n" + text + "---\n")
    assert note.fm_state == "mapping" and check_fidelity(note, None) == []


@pytest.mark.parametrize("text, where, message", [
    ("version: 1.10\n", "2:10", 'version: YAML reads 1.10 as the number 1.1 — quote it to keep the text: "1.10", '
                                "or write 1.1"),
    ("build: +5\n", "2:8", 'build: YAML reads +5 as the number 5 — quote it to keep the text: "+5", or write 5'),
    ("mask: 0x1F\n", "2:7", 'mask: YAML reads 0x1F as the number 31 — quote it to keep the text: "0x1F", or write 31'),
    ("ratio: .5\n", "2:8", 'ratio: YAML reads .5 as the number 0.5 — quote it to keep the text: ".5", or write 0.5'),
    ("week: 07\n", "2:7", 'week: YAML reads 07 as the number 7 — quote it to keep the text: "07", or write 7'),
    ("shift: -00\n", "2:8", 'shift: YAML reads -00 as the number 0 — quote it to keep the text: "-00", or write 0'),
    ("list:\n  - 2.50\n", "3:5", 'list[0]: YAML reads 2.50 as the number 2.5 — quote it to keep the text: "2.50", '
                                 "or write 2.5"),
])
def test_numbers_whose_text_does_not_survive_in_untyped_fields(vault, text, where, message):
    code, lines = _lines(vault, FREE, "---\n" + text + "---\n")
    assert code == 1 and lines == [f"{FREE}:{where}: FM017 {message}"]


@pytest.mark.parametrize("text, where, message", [
    ("id: 010\n", "2:5", 'id: YAML readers disagree on 010: vaultsync (YAML 1.2) stores the number 10, YAML 1.1 '
                         'readers read the octal number 8 — quote it: "010", or write 10'),
    ("duration: 1:30\n", "2:11", 'duration: YAML readers disagree on 1:30: vaultsync (YAML 1.2) stores the text, '
                                 'YAML 1.1 readers read the number 90 — quote it: "1:30"'),
    ("budget: 1_000\n", "2:9", 'budget: YAML readers disagree on 1_000: vaultsync (YAML 1.2) stores the text, '
                               'YAML 1.1 readers read the number 1000 — quote it: "1_000"'),
    ("limit: 1e3\n", "2:8", 'limit: YAML readers disagree on 1e3: vaultsync (YAML 1.2) stores the number 1000.0, '
                            'YAML 1.1 readers read text — quote it: "1e3", or write 1000.0'),
    ("zip: 08\n", "2:6", 'zip: YAML readers disagree on 08: vaultsync (YAML 1.2) stores the number 8, YAML 1.1 '
                         'readers read text — quote it: "08", or write 8'),
    ("y: 0x_1F\n", "2:4", 'y: YAML readers disagree on 0x_1F: vaultsync (YAML 1.2) stores the text, YAML 1.1 '
                          'readers read the number 0x1F — quote it: "0x_1F"'),
    ("mask: -0xF_F\n", "2:7", 'mask: YAML readers disagree on -0xF_F: vaultsync (YAML 1.2) stores the text, YAML 1.1 '
                              'readers read the number -0xFF — quote it: "-0xF_F"'),
])
def test_forms_yaml_readers_disagree_on_are_errors_in_any_field(vault, text, where, message):
    code, lines = _lines(vault, FREE, "---\n" + text + "---\n")
    assert code == 1 and lines == [f"{FREE}:{where}: FM017 {message}"]


@pytest.mark.parametrize("field", ["importance", "confidence"])  # integer and number in the core schema
@pytest.mark.parametrize("written", ["1e1", "010", "0o7", "5e-1", "1e0", "+1", "0.5 #x", "7 #note", "1_0", "0:10",
                                     "0b1", ".5e0", "1 #重要"])
def test_advice_in_a_numeric_field_clears_the_error_when_followed(vault, field, written):
    """"Quote it" turned a number into text that a numeric field refuses: in a field the schema declares
    numeric the advice is only the number to write (or how to keep a comment), and following it passes."""
    vault.write(P, adr("ADR-0001", extra=f"{field}: {written}\n"))
    res = vault.check()
    fm017 = [line for line in res.lines if "FM017" in line]
    if not fm017:
        return  # read as written: nothing to follow (the range check may still speak)
    assert len(fm017) == 1 and "quote it" not in fm017[0], fm017
    advice = fm017[0].rsplit(" — ", 1)[1]
    if advice.startswith("write '# '"):
        fixed = written.replace(" #", " # ", 1)
    elif advice.startswith("write it as a plain number"):
        fixed = {"1_0": "10", "0:10": "10", "0b1": "1"}[written]
    else:
        fixed = advice.removeprefix("write ")
    vault.write(P, adr("ADR-0001", extra=f"{field}: {fixed}\n"))
    after = [line for line in vault.check().lines if "FM017" in line or "SC001" in line or "LC001" in line]
    in_range = float(fixed.split("#")[0]) <= 1 if field == "confidence" else float(fixed.split("#")[0]).is_integer()
    assert after == [] or not in_range, after


_NUMERIC_SCHEMA = {
    "type": "object", "$defs": {"int": {"type": "integer"}, "num": {"$ref": "#/$defs/real"}, "real": {"type": "number"}},
    "properties": {"title": {"type": "string"}, "ref": {"$ref": "#/$defs/int"}, "chain": {"$ref": "#/$defs/num"},
                   "anyn": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                   "onen": {"oneOf": [{"type": "number"}, {"type": "null"}]}, "nullable": {"type": ["integer", "null"]},
                   "small": {"type": "number"}, "deep": {"type": "object", "properties": {"n": {"$ref": "#/$defs/int"}}}},
}


@pytest.mark.parametrize("field", ["ref", "chain", "anyn", "onen", "nullable", "small"])
@pytest.mark.parametrize("written", ["0o7", "1e16", "5e-5", "1e-7", "&a 7", "&b 2.5e-3", "010", "+3"])
def test_advice_in_a_numeric_field_of_a_custom_schema_passes_when_followed(vault, field, written):
    """Numeric through ``$ref``, ``anyOf``/``oneOf`` or a type list: never "quote it" (the schema then refuses the
    text); "write 5e-05" came back as FM017 again: the number to write has no exponent."""
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  thing: {folder: docs/things, schema: s.json}\n")
    vault.write("s.json", json.dumps(_NUMERIC_SCHEMA))
    vault.write("docs/things/a.md", f"---\ntitle: T\n{field}: {written}\n---\n# T\n")
    fm017 = [line for line in vault.check().lines if "FM017" in line]
    if not fm017:
        return
    assert len(fm017) == 1 and "quote it" not in fm017[0], fm017
    advice = fm017[0].rsplit(" — ", 1)[1]
    fixed = advice.removeprefix("drop the anchor: ").removeprefix("write ")
    assert re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", fixed), advice
    vault.write("docs/things/a.md", f"---\ntitle: T\n{field}: {fixed}\n---\n# T\n")
    after = vault.check()
    wants_int = field in ("ref", "anyn", "nullable")
    assert after.lines == [] or (wants_int and "." in fixed), after.lines


@pytest.mark.parametrize("text, reported", [
    ("id: !!int 010\n", True),       # YAML 1.1 readers still read 8
    ("id: !!str 010\n", False),      # a string in every YAML version
    ("title: Hello!\nid: 010\n", True),
    ("title: Done!\nversion: 1.10\n", True),
])
def test_a_tag_or_a_bang_in_the_frontmatter_hides_no_number(text, reported):
    note = parse_text(FREE, "---\n" + text + "---\n")
    assert bool(check_fidelity(note, None)) is reported, note.scalar_findings


@pytest.mark.parametrize("text, where, shown", [
    ('owner: "C:\\Program Files\\Nvidia"\n', "2:11", "U+2029 (PARAGRAPH SEPARATOR)"),
    ('owner: "D:\\Logs\\Nightly"\n', "2:11", "U+2028 (LINE SEPARATOR)"),
    ('owner: "x\\_y"\n', "2:10", "U+00A0 (NO-BREAK SPACE)"),
    ('list:\n  - "bell\\x07"\n', "3:10", "U+0007"),
    ('deep:\n  path: "\\u2028 here"\n', "3:10", "U+2028"),
    ('owner: "first line\n  C:\\temp"\n', "2:8", "U+0009"),  # a value over two lines
    ('Заголовок: "Москва\\Nовости"\n', "2:19", "U+0085"),
])
def test_escapes_that_store_an_invisible_character(vault, text, where, shown):
    code, lines = _lines(vault, FREE, "---\n" + text + "---\n")
    assert code == 1 and len(lines) == 1 and lines[0].startswith(f"{FREE}:{where}: FM017 ") and shown in lines[0]
    assert "use single quotes for backslashes: '" in lines[0]


@pytest.mark.parametrize("text, fix", [
    ('path: "C:\\\\Users\\Program Files"\n', "'C:\\\\Users\\Program Files'"),  # as typed (`\\\\srv` shares)
    ('a: "say \\"hi\\" \\x0B"\n', "'say \"hi\" \\x0B'"),
    ('"k\\Px": v\n', "'k\\Px'"),                                     # in a key
    ('a: "tab\\\tafter"\n', "'tab\\\tafter'"),                    # a backslash before a real tab
])
def test_the_single_quoted_fix_keeps_the_text_meant(text, fix):
    (d,) = check_fidelity(parse_text(FREE, "---\n" + text + "---\n"), None)
    assert d.message.endswith(f"use single quotes for backslashes: {fix}"), d.message


@pytest.mark.parametrize("text", [
    'owner: "two\\nlines"\n', 'owner: "caf\\u00e9 \\x41"\n', 'owner: "a \\"quote\\" and \\\\ slash"\n',
    "owner: 'C:\\Program Files'\n", 'owner: "\\/etc"\n',
])
def test_escapes_of_printable_characters_are_meant(text):
    note = parse_text(FREE, "---\n" + text + "---\n")
    assert note.fm_state == "mapping" and check_fidelity(note, None) == []


@pytest.mark.parametrize("text, where, stored", [
    ("aliases:\n- a\n - b\n", "4:2", "'a - b'"),
    ("aliases:\n  - a\n   - b\n", "4:4", "'a - b'"),
    ("owner: Иван\n  - Пётр\n", "3:3", "'Иван - Пётр'"),
    ("deep:\n  list:\n    - 東京\n      - 大阪 # second\n", "5:7", "'東京 - 大阪'"),
])
def test_a_list_item_indented_too_deep_is_more_text(vault, text, where, stored):
    code, lines = _lines(vault, FREE, "---\n" + text + "---\n")
    assert code == 1 and len(lines) == 1 and lines[0].startswith(f"{FREE}:{where}: FM017 ")
    fix = "quote the value, or start the list" if text.startswith("owner") else "line its '-' up"
    assert f"stores {stored}" in lines[0] and fix in lines[0]


@pytest.mark.parametrize("text, where, written, kind, fix", [
    ("tags: [a,\n  #b\n  c]\n", "3:3", "#b", "list", '"#b"'),
    ("tags: [\n  #first,\n  second]\n", "3:3", "#first", "list", '"#first"'),
    ("map: {a: 1,\n    #Ελλάδα\n    c: 2}\n", "3:5", "#Ελλάδα", "mapping", '"#Ελλάδα"'),
    ("tags: [x, #tag\n  ]\n", "2:11", "#tag", "list", '"#tag"'),           # after an item, at the line's end
    ("tags: [x,\n  y, #tag\n  z]\n", "3:6", "#tag", "list", '"#tag"'),
    ("map: {b: 1,\n  #c: 2,\n  d: 3}\n", "3:3", "#c: 2", "mapping", '"#c": 2'),  # a key and its value
])
def test_a_hash_word_inside_a_flow_collection_is_a_lost_item(vault, text, where, written, kind, fix):
    code, lines = _lines(vault, FREE, "---\n" + text + "---\n")
    assert code == 1 and lines == [f"{FREE}:{where}: FM017 {text.split(':')[0]}: YAML reads '{written}' "
                                   f"as a comment, so the {kind} leaves it out — quote it: {fix}"]


@pytest.mark.parametrize("text, where", [
    ("items:\n  - a\n  - # later\n", "4:5"),
    ("items:\n  - # todo: fill in\n  - b\n", "3:5"),
    ("deep:\n  names:\n    -   # 未定\n", "4:9"),
])
def test_a_list_item_holding_only_a_comment_is_reported(vault, text, where):
    code, lines = _lines(vault, FREE, "---\n" + text + "---\n")
    assert code == 1 and len(lines) == 1 and lines[0].startswith(f"{FREE}:{where}: FM017 ")
    assert "stores an empty (null) item" in lines[0]


@pytest.mark.parametrize("text", [
    "tags:\n  - a\n  - b\n", "nested:\n  -\n    - a\n", "pairs:\n  - - a\n    - b\n", "key: # none yet\n",
    "tags: [a,\n  b]  # two\n", "items:\n  - a  # fine\n",
])
def test_lists_and_comments_that_mean_what_they_say(text):
    note = parse_text(FREE, "---\n" + text + "---\n")
    assert note.fm_state == "mapping" and check_fidelity(note, None) == [], note.scalar_findings


@pytest.mark.parametrize("written, number", [("0b101", 5), ("-0b11", -3), ("0b1_0", 2)])
def test_binary_numbers_are_read_differently_by_yaml_11(vault, written, number):
    code, lines = _lines(vault, FREE, f"---\nmask: {written}\n---\n")
    assert code == 1 and f"YAML 1.1 readers read the binary number {number}" in lines[0]


@pytest.mark.parametrize("text, written", [
    ("aliases: [a, &x b]\n", "&x b"), ("map: {k: &y v, o: 1}\n", "&y v"), ("list:\n  - &omega текст\n", "&omega текст"),
])
def test_an_anchor_is_quoted_as_written_and_no_further(text, written):
    note = parse_text(FREE, "---\n" + text + "---\n")
    (d,) = check_fidelity(note, None)
    assert f"of {written!r} as an anchor name" in d.message and d.message.endswith(f'quote it: "{written}"')


@pytest.mark.parametrize("text, fix", [
    ("tags: &t [payments]\n", "[payments]"), ("aliases: &a [x, y]\n", "[x, y]"), ("map: &m {k: v}\n", "{k: v}"),
    ("list: &l\n  - a\n", ""),
])
def test_an_anchor_on_a_list_or_mapping_is_dropped_not_quoted(text, fix):
    """Quoting ``&t [payments]`` made the list a string, which the schema then refused: the collection is
    what was meant, so the advice is to drop the anchor."""
    note = parse_text(FREE, "---\n" + text + "---\n")
    found = check_fidelity(note, None)
    assert found or not fix  # (a block list after its anchor is no finding: the anchor stands alone)
    assert all("quote it" not in d.message for d in found)
    assert all(d.message.endswith(f"drop the anchor: {fix}" if fix else "drop the anchor") for d in found)


@pytest.mark.parametrize("extra, field", [("title: |\n", "title"), ("deciders:\n  - >\n", "deciders[0]"),
                                          ("deciders:\n  - >-\n", "deciders[0]")])
def test_an_empty_block_is_explained_not_just_called_empty(vault, extra, field):
    text = adr("ADR-0001", extra=extra) if not extra.startswith("title") else \
        adr("ADR-0001").replace("title: A decision\n", extra)
    code, lines = _lines(vault, P, text)
    assert code == 1 and len(lines) == 1 and f"FM017 {field}: '" in lines[0] and "starts a block" in lines[0]


@pytest.mark.parametrize("written, says", [
    ("1.5e3", "YAML 1.1 readers read text"), ("2E5", "YAML 1.1 readers read text"), (".5e1", "YAML 1.1 readers read text"),
    ("1.0e+3", "YAML reads 1.0e+3 as the number 1000.0"),  # 1.1 and 1.2 agree: only the spelling is lost
])
def test_exponents_are_explained_as_each_yaml_reads_them(written, says):
    (d,) = check_fidelity(parse_text(FREE, f"---\nv: {written}\n---\n"), None)
    assert says in d.message


def test_an_infinity_is_not_offered_as_a_spelling():
    (d,) = check_fidelity(parse_text(FREE, "---\nv: .inf\n---\n"), None)
    assert 'quote it to keep the text: ".inf"' in d.message and "or write" not in d.message


def test_numeric_fields_accept_any_spelling_of_their_number(vault):
    vault.write(P, adr("ADR-0001", extra="confidence: 0.80\nimportance: 7\n"))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra="confidence: 0.8\nimportance: +7\n"))
    res = vault.check()
    assert res.code == 0 and res.lines == []


def test_portable_forms_are_errors_in_numeric_fields_too(vault):
    code, lines = _lines(vault, P, adr("ADR-0001", extra="importance: 08\n"))
    assert code == 1 and [line.split(" FM017 ")[0] for line in lines] == [f"{P}:7:13:"]


@pytest.mark.parametrize("extra, where, message", [
    ("confidence: 1.50\n", "7:13", "confidence: 1.50 must be at most 1; search hides this note until it is fixed"),
    ("importance: 011\n", "7:13", None),  # portable: FM017, and 11 is out of range: SC001 quotes '011'
    ("confidence: 1e0\n", "7:13", None),
])
def test_schema_errors_quote_the_text_as_written(vault, extra, where, message):
    code, lines = _lines(vault, P, adr("ADR-0001", extra=extra))
    assert code == 1
    if message:
        assert lines == [f"{P}:{where}: SC001 {message}"]
    written = extra.split(": ", 1)[1].strip()
    assert all(written in line for line in lines if " SC001 " in line)


@pytest.mark.parametrize("title, shown, fix", [
    ("1.10", "1.10", '"1.10"'), ("2024", "2024", '"2024"'), ("true", "true", '"true"'), ("0x10", "0x10", '"0x10"'),
])
def test_a_number_or_boolean_in_a_string_field_is_quoted_back(vault, title, shown, fix):
    code, lines = _lines(vault, P, adr("ADR-0001", title=title))
    kind = "boolean" if title == "true" else "number"
    assert code == 1
    assert lines == [f"{P}:4:8: SC001 title: expected string, got {shown} — YAML reads it as a {kind}: quote it: {fix}"]


@pytest.mark.parametrize("text, where, written", [
    ("up: [[ADR-0001]]\n", "2:5", "[[ADR-0001]]"),
    ("parent: [[Заметка|родитель]]\n", "2:9", "[[Заметка|родитель]]"),
    ("refs:\n  - [[a]]\n  - \"[[b]]\"\n", "3:5", "[[a]]"),
])
def test_unquoted_wikilinks_outside_schemas_are_reported(vault, text, where, written):
    code, lines = _lines(vault, FREE, "---\n" + text + "---\n")
    field = text.split(":", 1)[0] + ("[0]" if text.startswith("refs") else "")
    assert code == 1
    assert lines[0] == (f"{FREE}:{where}: FM017 {field}: YAML reads the unquoted {written} as a list inside a "
                        f"list — quote it: {quote(written)}")


@pytest.mark.parametrize("text, where, written", [
    ("title: &co update\n", "2:8", "&co update"),
    ("owner: &Ω team\n", "2:8", "&Ω team"),
])
def test_a_lone_anchor_swallows_text(vault, text, where, written):
    code, lines = _lines(vault, FREE, "---\n" + text + "---\n")
    assert code == 1 and lines[0].startswith(f"{FREE}:{where}: FM0") and quote(written) in lines[0]


@pytest.mark.parametrize("line, where, single", [
    ('path: "C:\\temp\\new"', "2:10", "'C:\\temp\\new'"),
    ('share: "\\\\srv\\bin"', "2:14", "'\\\\srv\\bin'"),
    ('dir: "E:\\tёмы"', "2:9", "'E:\\tёмы'"),
])
def test_control_escapes_in_double_quotes(vault, line, where, single):
    code, lines = _lines(vault, FREE, f"---\n{line}\n---\n")
    assert code == 1 and lines[0].startswith(f"{FREE}:{where}: FM017 ") and lines[0].endswith(single), lines


def test_anchors_with_aliases_are_yaml_and_pass():
    note = parse_text(FREE, "---\nbase: &b shared\nother: *b\n---\n")
    assert note.frontmatter == {"base": "shared", "other": "shared"} and check_fidelity(note, None) == []


def test_the_file_is_never_rewritten(vault):
    text = "---\ntitle: INC #42\nversion: 1.10\n---\n"
    path = vault.write(FREE, text)
    assert vault.check().code == 1
    assert path.read_text(encoding="utf-8") == text


# --- the rule as a property ------------------------------------------------------------------

_ALPHABET = st.sampled_from(list("ab Zé日я0123456789#:.-_+eE,[]@%`!&*|>{}?'\"x ") + [" #", "1.10", "0", ":30"])


def _faithful(text: str, value: object) -> bool:
    """The stored value is what the text says (a YAML 1.2 core null/bool/number spelt canonically counts)."""
    if value is None:
        return text in ("", "~", "null", "Null", "NULL")
    if isinstance(value, bool):
        return text.lower() == str(value).lower()
    if isinstance(value, (int, float)):
        return canonical_number(value) == text
    return value == text


@settings(max_examples=1500, deadline=None)
@given(st.lists(_ALPHABET, min_size=1, max_size=10).map("".join).map(str.strip))
def test_a_plain_value_is_stored_as_written_or_reported(text):
    if not text or text[0] in "'\"[{!|>" or text.startswith(("- ", "? ")):
        return  # quoted, flow collections, tags and block scalars mean what YAML says
    yaml_text = f"key: {text}\n"
    try:
        doc = load_yaml(yaml_text)
    except YamlProblem as exc:
        assert exc.message and exc.line >= 0 and exc.col >= 0  # reported, located
        return
    if not isinstance(doc.data, dict) or "key" not in doc.data:
        return
    note = parse_text(FREE, f"---\n{yaml_text}---\n")
    reported = check_fidelity(note, None)
    meant = re.split(r"(?:^|\s)#\s", text)[0].strip()  # '# like this' is a comment by the documented rule
    assert _faithful(meant, doc.data["key"]) or reported, (text, doc.data)
    for d in reported:  # a report quotes the author's text
        assert d.line == 2 and text.split(" #")[0].strip()[:3] in d.message


_NUMBERS = st.sampled_from([".inf", "-.Inf", ".NaN", "0o17", "0x1F", "1e3", "1_000", "010", "+5", "1.", "1:30",
                            "!!int 010", "!!float 1", "!!str 1.10", "2", "0.5"])


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b: c", "- ", "k", "  -"]), st.one_of(_ALPHABET, _NUMBERS)),
                min_size=1, max_size=6))
def test_the_fast_text_screen_never_hides_a_finding(parts):
    """Notes the screen lets through without a node walk really have no finding."""
    from vaultsync.vault.scalars import _may_have_findings, scalar_findings
    from vaultsync.vault.yamlload import _StrictLoader

    text = "".join(f"{key}{i}: {value}\n" if key[0] not in "- " else f"l{i}:\n  - {value}\n" if key == "- "
                   else f"   - {value}\n" for i, (key, value) in enumerate(parts))  # "  -": deeper, more text
    try:
        doc = load_yaml(text)
    except YamlProblem:
        return
    loader = _StrictLoader(text)
    root = loader.get_single_node()
    loader.dispose()
    walked = scalar_findings(root, text, doc.data, screen=False)
    if not _may_have_findings(text):  # the text alone
        assert walked == [], text
    if not _may_have_findings(text, loader.odd_numbers):  # the text, and the loader for numbers
        assert walked == [], text


@pytest.mark.parametrize("text, where", [
    ("base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n", "4:3"),
    ("defaults: &d\n  owner: a\nnote:\n  <<: *d\n", "5:3"),
    ("list:\n  - <<: {k: v}\n", "3:5"),
])
def test_a_yaml_11_merge_key_is_reported(vault, text, where):
    code, lines = _lines(vault, FREE, "---\n" + text + "---\n")
    assert code == 1 and len(lines) == 1 and lines[0].startswith(f"{FREE}:{where}: FM017 ")
    assert "merge the mapping given after '<<:'" in lines[0]


@pytest.mark.parametrize("extra, where", [
    ("base: &b\n  owner: me\n<<: *b\n", "9:1"), ("<<: {owner: me}\n", "7:1"), ("<<: [{a: 1}, {b: 2}]\n", "7:1"),
])
def test_a_merge_key_in_a_typed_note_says_merge_not_only_not_allowed(vault, extra, where):
    """In a type's schema `<<` is also an unknown key: the merge explanation replaces "additional property
    not allowed" at that key, other keys' errors stay."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=extra))
    lines = vault.check().lines
    merge = [x for x in lines if x.startswith(f"docs/adrs/ADR-0001.md:{where}: ")]
    assert len(merge) == 1 and " FM017 <<: YAML 1.1 readers " in merge[0], lines
    assert not any("<<: additional property" in x for x in lines)


def test_a_quoted_merge_key_is_a_key_like_any_other():
    note = parse_text(FREE, '---\n"<<": text\n---\n')
    assert note.frontmatter == {"<<": "text"} and check_fidelity(note, None) == []


@pytest.mark.parametrize("text, where, said, at_end", [
    # a '#word' after a key whose value is below: YAML reads a comment
    ("owner: #tag R&D\n  up: C#\n", "2:8", "YAML reads '#tag R&D' as a comment and takes the indented lines below as the value", False),
    ("tags: #list\n  - a\n  - b\n", "2:7", "YAML reads '#list' as a comment and takes the indented lines below as the value", False),
    ("m:\n  x: #Ωmega\n    z: 1\n", "3:6", "YAML reads '#Ωmega' as a comment and takes the indented lines below as the value", False),
    # a flow-mapping key without the space after its colon
    ("a: {b:c, d: e}\n", "2:5", "as one key with no value — put a space after the colon: b: c", True),
    ("m: {Ключ:значение}\n", "2:5", "as one key with no value — put a space after the colon: Ключ: значение", True),
    ("x:\n  - {k:v}\n", "3:6", "as one key with no value — put a space after the colon: k: v", True),
])
def test_a_value_yaml_reads_otherwise_than_it_looks(vault, text, where, said, at_end):
    code, lines = _lines(vault, FREE, "---\n" + text + "---\n")
    assert code == 1 and len(lines) == 1 and lines[0].startswith(f"{FREE}:{where}: FM017 ")
    assert lines[0].endswith(said) if at_end else said in lines[0]


def test_a_comment_after_a_key_written_as_one_is_fine():
    note = parse_text(FREE, "---\nmeta: # a real comment\n  k: v\n---\n")
    assert check_fidelity(note, None) == []


@pytest.mark.parametrize("text", ["a: {b: c}\n", "a: {http://x: 1}\n", 'a: {"b:c": }\n', "a: [b:c]\n"])
def test_flow_keys_written_as_meant(text):
    assert check_fidelity(parse_text(FREE, "---\n" + text + "---\n"), None) == []


@pytest.mark.parametrize("written", ["01", "07", "00", "+03", "0005"])
def test_a_leading_zero_both_yaml_versions_read_alike_is_fine_in_a_number_field(vault, written):
    """``importance: 07`` is 7 to YAML 1.1 (octal) and 1.2 (decimal) alike: no reader disagrees."""
    note = "docs/adrs/ADR-0001.md"
    code, lines = _lines(vault, note, adr("ADR-0001", extra=f"importance: {written}\n"))
    assert not any("FM017" in line for line in lines), lines


# --- FM-06: tabs between tokens, valid YAML 1.2 that YAML 1.1 readers refuse -------------------------------

_PIECES = st.sampled_from(["title: Hello", 'title: "Hel lo"', "title: 'a b'", "tags: [api, queues]", "n: 3",
                           "owner: a b # note", "m: {k: v}", "x: |\n  block line", "- item", "k:\n  - a",
                           "k:\n- [a, b]", "- 運用", "k:\n  - x: y"])


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(_PIECES, min_size=1, max_size=3), where=st.lists(st.integers(0, 40), max_size=2))
def test_a_tab_is_reported_exactly_where_a_yaml_11_reader_refuses_it(lines, where):
    """Property: on any text vaultsync loads, a ``tab`` finding is reported iff PyYAML's own ``safe_load``
    refuses a tab (its "found character '\\t'" error): no tab PyYAML stops at goes unsaid, none is invented."""
    import yaml as pyyaml

    text = "\n".join(lines) + "\n"
    for w in where:  # a tab put among the characters, never at a line start (that is indentation: FM006)
        at = min(w, len(text) - 1)
        if at > 0 and text[at - 1] != "\n":
            text = text[:at] + "\t" + text[at:]
    try:
        doc = load_yaml(text)
    except YamlProblem:
        return
    said = any(f.kind == "tab" for f in doc.findings)
    try:
        pyyaml.load(text, Loader=pyyaml.SafeLoader)
        refused = False
    except pyyaml.YAMLError as exc:
        refused = "'\\t'" in str(exc)
    assert said == refused, (text, doc.findings)


@pytest.mark.parametrize("line, where", [
    ("owner:\tme", "7:7"), ("owner\t: me", "7:6"), ("tags: [api,\tqueues]", "7:12"), ('owner: "x"\t# c', "7:11"),
    ("owner: a\tb", "7:9"), ("owner: me\t", "7:10"),
])
def test_a_tab_between_tokens_is_fm017_at_the_tab(vault, line, where):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=line + "\n"))
    lines = [x for x in vault.check().lines if " FM017 " in x]
    assert len(lines) == 1 and lines[0].startswith(f"docs/adrs/ADR-0001.md:{where}: FM017 ") and "a tab" in lines[0]


@pytest.mark.parametrize("items, stored", [
    ("-\tops", ["ops"]), ("  -\t[a, b]\n  - c", [["a", "b"], "c"]), ("-\t運用\n-\t\tdb", ["運用", "db"]),
    ("- a\n-\t'q: r'", ["a", "q: r"]), ("-\t \tx # c", ["x"]),
])
def test_a_tab_after_a_list_items_dash_is_read_as_yaml_12_reads_it(items, stored):
    """``-<TAB>ops`` is an item to YAML 1.2 (spec example 6.3) and Obsidian; it was FM006 "tab used after a
    value". It is read, and FM017 says YAML 1.1 readers refuse it, at the tab."""
    doc = load_yaml("deciders:\n" + items + "\n")
    assert doc.data == {"deciders": stored}
    tabs = [(f.line, f.col) for f in doc.findings if f.kind == "tab"]
    assert tabs == [(i + 1, line.index("\t")) for i, line in enumerate(items.split("\n")) if "\t" in line]


@pytest.mark.parametrize("tail", ["a: b", "a", "x" * 1000])
def test_a_long_run_of_tabs_after_a_dash_is_read_in_linear_time(tail):
    """The first form of the dash rule backtracked over the run: 20,000 tabs took 4 s, 200,000 minutes (a
    committed note would have held up every hook)."""
    import time

    start = time.perf_counter()
    with contextlib.suppress(YamlProblem):
        load_yaml("deciders:\n-" + "\t" * 200_000 + tail + "\n")
    assert time.perf_counter() - start < 30  # the quadratic form took minutes (a loaded machine: seconds)


@pytest.mark.parametrize("items", ["-\tkey: v", "-\t- x", "-\t? k", "-\tk:"])
def test_a_tab_after_a_dash_before_a_key_or_an_item_is_fm006_saying_so(items):
    """What follows the tab would be indented by it, which YAML 1.2 refuses as well."""
    with pytest.raises(YamlProblem, match="tab used after a list item's '-', before a key or an item"):
        load_yaml("deciders:\n" + items + "\n")


@pytest.mark.parametrize("line", ['owner: "a\tb"', "owner: 'a\tb'", "owner: x # a\tb", "owner: |\n  a\tb",
                                  "# a\tcomment"])
def test_a_tab_inside_quotes_a_block_or_a_comment_is_text(vault, line):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=line + "\n"))
    assert not [x for x in vault.check().lines if "tab" in x]


@pytest.mark.parametrize("schema, expected", [
    ({"properties": {"n": {"$ref": "#/$defs/num"}}, "$defs": {"num": {"type": "number"}}}, {"number"}),
    ({"properties": {"n": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]}},
      "$defs": {"a": {"type": "integer"}}}, {"integer", "null"}),
    ({"properties": {"n": {"$ref": "#/$defs/a~1b"}}, "$defs": {"a/b": {"type": "number"}}}, {"number"}),  # escaped
    ({"properties": {"n": {"$ref": "#/$defs/nowhere"}}}, None),                                           # dangling
    ({"properties": {"n": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}]}}}, None),  # loop
])
def test_the_types_a_field_takes_follow_references_through_the_schema_library(schema, expected):
    """A committed schema's references are resolved by ``referencing`` (a hand-walked JSON pointer before), and a
    loop of ``anyOf`` and ``$ref`` ends instead of recursing without end."""
    from vaultsync.checks.fidelity import types_at

    assert types_at(schema, ("n",)) == expected
