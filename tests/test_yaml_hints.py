"""Issue 12, kind 2: every common YAML mistake gets a message naming the fix, at the right place."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.vault.yamlload import load_yaml

P = "docs/free.md"


@pytest.mark.parametrize("yaml_line, where, message", [
    ("title: ADR: use SQLite", "2:11",
     "title: the value holds ': ' (colon and space), which YAML reads as another key — quote the value: "
     'title: "ADR: use SQLite"'),
    ("summary: Plan B: retry, then fail", "2:16",
     "summary: the value holds ': ' (colon and space), which YAML reads as another key — quote the value: "
     'summary: "Plan B: retry, then fail"'),
    ("titel: Решение: SQLite", "2:15",
     "titel: the value holds ': ' (colon and space), which YAML reads as another key — quote the value: "
     'titel: "Решение: SQLite"'),
    ('cite: He said "no": final', "2:19",
     "cite: the value holds ': ' (colon and space), which YAML reads as another key — quote the value: "
     "cite: 'He said \"no\": final'"),
])
def test_an_unquoted_colon_space_in_a_value(vault, yaml_line, where, message):
    vault.write(P, f"---\n{yaml_line}\n---\n")
    res = vault.check()
    assert res.code == 1 and res.lines == [f"{P}:{where}: FM005 {message}"]


@pytest.mark.parametrize("text, where, fragment", [
    ('title: "unclosed\nstatus: ok\n', "2:8", 'the double quote opened here is never closed — add the closing "'),
    ("title: 'unclosed\nstatus: ok\n", "2:8", "the single quote opened here is never closed — add the closing '"),
    ("tags: [ops, search\nstatus: ok\n", "2:7", "the '[' opened here is never closed — add ']'"),
    ("owner: {team: core\n", "2:8", "the '{' opened here is never closed — add '}'"),
    ("x:\n  - a\n  - [b, c\n", "4:5", "the '[' opened here is never closed"),
])
def test_unclosed_quotes_and_brackets_point_at_the_opener(vault, text, where, fragment):
    vault.write(P, "---\n" + text + "---\n")
    res = vault.check()
    assert res.code == 1 and len(res.lines) == 1
    assert res.lines[0].startswith(f"{P}:{where}: FM005 ") and fragment in res.lines[0]


@pytest.mark.parametrize("yaml_line, char", [
    ("owner: @alice", "'@'"), ("cmd: `make test`", "a backtick"), ("share: %50", "'%'"),
    ("автор: @иван", "'@'"),
])
def test_reserved_leading_characters(vault, yaml_line, char):
    vault.write(P, f"---\n{yaml_line}\n---\n")
    res = vault.check()
    key, value = yaml_line.split(": ", 1)
    col = len(key) + 3
    assert res.code == 1
    assert res.lines == [f'{P}:2:{col}: FM005 {key}: a value cannot start with {char} (reserved in YAML) — quote it: '
                         f'{key}: "{value}"']


@pytest.mark.parametrize("yaml_line, where, items", [
    ("title: [[Foo]] and more", "2:8", None), ("parent: [[Ёлка]] (old)", "2:9", None),  # one link and text: one value
    ("see: [[A]], [[B]]", "2:6", '["[[A]]", "[[B]]"]'), ("see: [[A|a]],[[B#h]]", "2:6", '["[[A|a]]", "[[B#h]]"]'),
    ("ссылки: [[Ёлка]], [[Дом]], [[Сад]]", "2:9", '["[[Ёлка]]", "[[Дом]]", "[[Сад]]"]'),  # several: a list
    # a field the built-in schema reads as a list is offered the list only: one text would be SC001 next
    ("related: [[A]], [[B]]", "2:10", '["[[A]]", "[[B]]"]'), ("Supersedes: [[A]],[[B]]", "2:13", '["[[A]]", "[[B]]"]'),
])
def test_unquoted_wikilinks_followed_by_text(vault, yaml_line, where, items):
    vault.write(P, f"---\n{yaml_line}\n---\n")
    res = vault.check()
    key, value = yaml_line.split(": ", 1)
    text = "" if key.casefold() in ("related", "supersedes") else f' (or the whole value as one text: {key}: "{value}")'
    fix = f'quote the whole value: {key}: "{value}"' if items is None else f"quote each link: {key}: {items}{text}"
    assert res.code == 1
    assert res.lines == [f"{P}:{where}: FM005 {key}: an unquoted [[WikiLink]] is read as a YAML list — {fix}"]


@pytest.mark.parametrize("text, where, fragment", [
    ("tags:\n\t- ops\n", "3:1", "tab used for indentation"),
    ("title: x\n\tstatus: y\n", "3:1", "tab used for indentation"),
    # valid YAML 1.2 that YAML 1.1 readers refuse (ADR-0101): one FM017 per line, at its first tab
    ("title:\tx\t#\tc\nb: [a,\tb]\nc: '\t'\nd: x\n", "2:7", "a tab outside quotes"),
])
def test_tabs(vault, text, where, fragment):
    vault.write(P, "---\n" + text + "---\n")
    res = vault.check()
    code = "FM017" if "outside quotes" in fragment else "FM006"
    assert res.code == 1 and res.lines[0].startswith(f"{P}:{where}: {code} ") and fragment in res.lines[0]
    if code == "FM017":
        assert [x.split(": ")[0] for x in res.lines] == [f"{P}:2:7", f"{P}:3:7"]


@pytest.mark.parametrize("text, where, fragment", [
    ("title:x\nstatus: ok\n", "2:6", "'title:x' is not a 'key: value' pair: put a space after the colon"),
    ("just some words\nstatus: ok\n", "2:1", "'just some words' is not a 'key: value' pair"),
    ("x: a\n  b: c\n", "3:3", "'b' is indented further than the key above it"),
    ("  title: x\nstatus: y\n", "2:1", "the first key is indented"),
    ("title: 'it's'\n", "2:12", "text after the closing ' — quote the whole value (inside single quotes write '' for '): "
                                "title: \"it's\""),
    ('path: "C:\\qa"\n', "2:10", "'\\q' is not an escape inside double quotes"),
    ("title: - item\n", "2:8", "'- ' starts a list item, so a value cannot start with it — quote it: title: \"- item\""),
    ("title: > 5 items\n", "2:8", "quote it: title: \"> 5 items\""),
    ("ref: *nope\n", "2:6", "ref: a value starting with '*' names a YAML alias — quote it: ref: \"*nope\""),
])
def test_other_common_mistakes_name_the_fix(vault, text, where, fragment):
    vault.write(P, "---\n" + text + "---\n")
    res = vault.check()
    assert res.code == 1 and len(res.lines) == 1, res.lines
    assert res.lines[0].startswith(f"{P}:{where}: FM00"), res.lines
    assert fragment in res.lines[0]
    assert "Traceback" not in res.out + res.err


def test_errors_are_located_after_a_long_frontmatter_and_a_bom(vault):
    text = "\ufeff---\n" + "".join(f"k{i}: v\n" for i in range(30)) + "title: ADR: x\n---\nbody\n"
    vault.write(P, text.encode("utf-8"))
    assert vault.check().lines[0].startswith(f"{P}:32:11: FM005 title: the value holds ': '")


@pytest.mark.parametrize("text, where, fragment", [
    ('owner: "unclosed\nsource_session: "s1"\n', "2:8", 'not closed on its line, so YAML reads the lines below into '
                                                       'it, up to the next " — close it: owner: "unclosed"'),
    ("title: 'it is\nstatus: 'x'\n", "2:8", "close it: title: 'it is'"),
    ('meta:\n  note: "Москва\n  city: "x"\n', "3:9", 'close it: note: "Москва"'),
    # the open quote swallowed several lines (blank and comment lines too) before the next quote
    ('title: "T\nstatus: accepted\ncreated: "2024-01-01"\n', "2:8", 'close it: title: "T"'),
    ("title: 'T\nstatus: accepted\n\n# note\nowner: x\ncreated: '2024-01-01'\n", "2:8", "close it: title: 'T'"),
])
def test_a_quote_left_open_is_named_where_it_opened(vault, text, where, fragment):
    vault.write(P, "---\n" + text + "---\n")
    res = vault.check()
    assert res.code == 1 and len(res.lines) == 1 and res.lines[0].startswith(f"{P}:{where}: FM005 ")
    assert fragment in res.lines[0]


@pytest.mark.parametrize("text, where, fragment", [
    ("a: &x 1\nb: &x 2\n", "3:4", "&x is defined again (first on line 2)"),
    ("base: &cfg {a: 1}\nlist:\n  - &cfg [b]\n", "4:5", "&cfg is defined again (first on line 2)"),
    ('a: "\\x4"\n', "2:5", "'\\x4' is an incomplete escape inside double quotes"),
    ('x: ok\npath: "C:\\u12ab\\u12"\n', "3:16", "'\\u12' is an incomplete escape"),
    ('emoji: "\\U0001F6"\n', "2:9", "'\\U0001F6' is an incomplete escape"),
])
def test_a_repeated_anchor_and_an_incomplete_escape_say_so(vault, text, where, fragment):
    """A repeated anchor said only "YAML error: second occurrence"; ``"\\x4"`` was called an unclosed quote."""
    vault.write(P, "---\n" + text + "---\n")
    res = vault.check()
    assert res.code == 1 and len(res.lines) == 1 and res.lines[0].startswith(f"{P}:{where}: FM005 "), res.lines
    assert fragment in res.lines[0] and "never closed" not in res.lines[0]


@pytest.mark.parametrize("text, where, fix", [
    ("deciders: [alice #x]\n", "2:18", 'quote the item: "alice #x"'),
    ("tags: [a, #b, c]\n", "2:11", 'quote the item: "#b"'),
    ("m: {a: 1 #c}\n", "2:10", 'quote the value: a: "1 #c"'),
    ("теги: [東京 #1]\n", "2:11", 'quote the item: "東京 #1"'),
])
def test_a_comment_that_hides_the_closing_bracket(vault, text, where, fix):
    vault.write(P, "---\n" + text + "---\n")
    res = vault.check()
    assert res.code == 1 and len(res.lines) == 1 and res.lines[0].startswith(f"{P}:{where}: FM005 the ' #' in ")
    assert res.lines[0].endswith(fix)


@pytest.mark.parametrize("text, where, fix", [
    ("title: x\nowner:T\n", "3:6", "put a space after the colon (owner: T)"),
    ("owner:T\ntitle: x\n", "2:6", "put a space after the colon"),
    ("title: x\nвладелец:Иван\n", "3:9", "(владелец: Иван)"),
])
def test_a_key_without_a_space_after_its_colon(vault, text, where, fix):
    vault.write(P, "---\n" + text + "---\n")
    res = vault.check()
    assert res.code == 1 and len(res.lines) == 1 and res.lines[0].startswith(f"{P}:{where}: ") and fix in res.lines[0]


@pytest.mark.parametrize("text, where, marker", [
    ("title: x\n<<<<<<< HEAD\nstatus: a\n=======\nstatus: b\n>>>>>>> main\n", "3:1", "<<<<<<<"),
    ("=======\ntitle: x\n", "2:1", "======="),
    ("title: x\n>>>>>>> 1a2b3c\n", "3:1", ">>>>>>>"),
])
def test_a_merge_conflict_left_in_the_frontmatter(vault, text, where, marker):
    vault.write(P, "---\n" + text + "---\n")
    res = vault.check()
    assert res.code == 1 and res.lines == [f"{P}:{where}: FM005 a merge-conflict marker ('{marker}') is left in the "
                                           "frontmatter — resolve the conflict and delete the marker lines"]


def test_a_typed_note_whose_frontmatter_is_one_key_without_its_space(vault):
    vault.write("docs/adrs/ADR-0001.md", "---\nmemory_id:ADR-0001\n---\n")
    res = vault.check()
    assert res.code == 1 and res.lines == ["docs/adrs/ADR-0001.md:1:1: FM011 frontmatter must be a mapping, got a string "
                                           "— put a space after the colon: memory_id: ADR-0001"]


@pytest.mark.parametrize("value, col, escape", [
    ('"\\ud800"', 9, "\\ud800"), ('"x \\uDFFF y"', 11, "\\uDFFF"), ('"\\U00110000"', 9, "\\U00110000"),
    ('"\\ud83d\\ude00"', 9, "\\ud83d"),  # a JSON-style surrogate pair: YAML escapes name characters, not halves
])
def test_an_escape_that_names_no_character_says_so(vault, value, col, escape):
    vault.write(P, f"---\nowner: {value}\n---\n")
    res = vault.check()
    assert res.code == 1 and res.lines == [
        f"{P}:2:{col}: FM005 '{escape}' names no character (a UTF-16 surrogate, or past U+10FFFF) — write the "
        "character itself, or one \\U escape of 8 hex digits for it"]


@pytest.mark.parametrize("line, col, code", [
    ("\ufefftags: [payments]", 1, "U+FEFF"), ("tags: [a,\u2060b] x", 10, "U+2060"), ("k: [a, b]\ufeff", 10, "U+FEFF"),
    # after the colon, where YAML needs the space: "put a space after the colon" kept the no-break space
    ("status:\u00a0accepted", 8, "U+00A0"), ("owner:\u200bops", 7, "U+200B"), ("tags:\u00a0[a]", 6, "U+00A0"),
    ("所有者:\u00a0運用", 5, "U+00A0"), ("k:\u202f'v'", 3, "U+202F"), ("所有者:\u3000運用", 5, "U+3000"),
])
def test_an_invisible_character_where_yaml_needs_a_blank_is_named(vault, line, col, code):
    vault.write(P, f"---\ntitle: x\n{line}\n---\n")
    res = vault.check()
    what = "an invisible character" if code in ("U+FEFF", "U+2060", "U+200B") else "a space YAML reads as text"
    assert res.code == 1 and res.lines[0].startswith(f"{P}:3:{col}: FM005 {what}, {code} ("), res.lines


def test_an_invisible_character_inside_quotes_is_text_not_the_problem(vault):
    vault.write(P, '---\ntitle: "a\u200bb" x\n---\n')
    (line,) = vault.check().lines
    assert "text after the closing" in line and "invisible" not in line


@pytest.mark.parametrize("text, line", [
    ("owner: x\n\t\nteam: y\n", 3), ("owner: x\n  \t\nteam: y\n", 3), ("owner: x\n\t  \nteam: y\n", 3),
    ("tags:\n  - a\n\t\n  - b\n", 4),  # between list items
    ("x: |\n  a\n\t\n  b\n", 4),  # less indented than a block's text: a blank line of it
    ("título: x\n \t \nétat: y\n", 3),
])
@pytest.mark.parametrize("path", [P, "docs/adrs/ADR-0001.md"])  # a typed folder asks the positions too
def test_a_tab_on_a_line_of_blanks_is_one_fm017_naming_no_field(vault, text, line, path):
    """YAML 1.2 and Obsidian read such a line as blank, PyYAML refuses it: never FM006, an empty field
    name, or (in a typed folder, whose schema checks locate values) an internal error."""
    typed = path != P
    head = 'memory_id: ADR-0001\ntype: adr\ntitle: T\nstatus: accepted\ncreated: "2024-03-01"\n' if typed else ""
    vault.write(path, "---\n" + head + text + "---\n")
    res = vault.check()
    line += head.count("\n")
    col = (head + text).split("\n")[line - 2].index("\t") + 1
    assert res.code == 1 and "internal error" not in res.err, res.err
    assert [x for x in res.lines if " FM017 " in x or " FM006 " in x] == [
        f"{path}:{line}:{col}: FM017 a line of only blanks holds a tab: vaultsync (YAML 1.2) and Obsidian read it as "
        "a blank line, YAML 1.1 readers (PyYAML, many site generators) refuse the whole frontmatter — delete the tab"]


def test_a_tab_in_a_block_scalars_text_stays_text(vault):
    vault.write(P, "---\nx: |\n  a\n  \t\n  b\n---\n")
    assert vault.check().code == 0


def test_a_tab_on_a_continuation_line_names_the_field(vault):
    vault.write(P, "---\nsummary: one\n  two\tthree\n---\n")
    assert vault.check().lines[0].startswith(f"{P}:3:6: FM017 summary: a tab outside quotes")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "tags", "título", "名前"]), st.sampled_from(["x", "[p, q]", "'t'"]),
                          st.text(" \t", min_size=0, max_size=3)), min_size=1, max_size=6, unique_by=lambda r: r[0]))
def test_lines_of_blanks_read_as_blank_lines(rows):
    """Property: a line of spaces and tabs reads as a blank line wherever it stands (the data equals the text
    without it), and each one holding a tab is one tab finding at its first tab."""
    text, plain, expected = [], [], []
    for key, value, blanks in rows:
        plain.append(f"{key}: {value}")
        text.append(f"{key}: {value}")
        if blanks:
            text.append(blanks)
            if "\t" in blanks:
                expected.append((len(text) - 1, blanks.index("\t")))
    doc = load_yaml("\n".join(text) + "\n")
    assert doc.data == load_yaml("\n".join(plain) + "\n").data
    assert [(f.line, f.col) for f in doc.findings if f.kind == "tab"] == expected


@pytest.mark.parametrize("n", [1, 3, 64, 65, 200])
def test_a_tab_in_a_block_scalars_text_stays_text_however_many_blank_tab_lines(n):
    """Past 64 such lines every tab-only line was blanked at once, a block scalar's text line with it."""
    text = "title: A\nsummary: |\n  a\n  \t\n  b\nlist:\n" + "".join(f"  - i{i}\n\t\n" for i in range(n))
    doc = load_yaml(text)
    assert doc.data["summary"] == "a\n\t\nb\n" and doc.data["list"] == [f"i{i}" for i in range(n)]
    assert [f.line for f in doc.findings if f.kind == "tab"] == [7 + 2 * i for i in range(n)]


ITEMS = st.lists(st.sampled_from(["payments", '"a]"', "'b}'", "データ", "x y", '"[[Note]]"', '"x\\" ["', "'it''s [x'"]),
                 max_size=3, unique=True)  # brackets in quotes, escaped quotes around them too


@given(ITEMS, st.sampled_from(["[", "{"]), st.booleans(), st.integers(0, 2), st.sampled_from(["tags", "名前", "deciders"]))
@settings(max_examples=150, deadline=None)
def test_a_bracket_left_open_on_the_last_line_is_named_at_its_opener(items, opener, comma, before, key):
    """``tags: [payments,`` as the frontmatter's last line got PyYAML's own "did not find expected node content",
    at the closing ``---``, where the same line above another key named the open bracket: any items, quoted
    brackets among them, a trailing comma or not, in a list or a mapping, after other keys."""
    from vaultsync.vault.yamlsafety import YamlProblem

    body = ", ".join(items if opener == "[" else [f"k{i}: {v}" for i, v in enumerate(items)])
    text = "".join(f"f{i}: v\n" for i in range(before)) + f"{key}: {opener}{body}{',' if comma and items else ''}\n"
    with pytest.raises(YamlProblem) as err:
        load_yaml(text)
    assert (err.value.line, err.value.col) == (before, len(key) + 2), err.value.message
    assert err.value.message.startswith(f"the '{opener}' opened here is never closed"), err.value.message


@pytest.mark.parametrize("line, col", [("tags: [payments, , database]", 17), ("tags: [, a]", 7),
                                       ("owner: {a: 1, , b: 2}", 14), ("名前: [データ, , x]", 10)])
def test_an_empty_item_in_a_flow_list_names_the_extra_comma(line, col):
    from vaultsync.vault.yamlsafety import YamlProblem

    with pytest.raises(YamlProblem) as err:
        load_yaml(line + "\n")
    assert (err.value.line, err.value.col) == (0, col) and "an empty item" in err.value.message, err.value.message


@pytest.mark.parametrize("line, opener, closer", [("tags: [a, }", "[", "}"), ("tags: [}]", "[", "}"),
                                                  ("owner: {a: 1, ]", "{", "]"), ("名前: [データ, }", "[", "}")])
def test_a_bracket_closed_with_the_other_kind_names_both(line, opener, closer):
    """``tags: [a, }`` was told "an empty item … delete the extra ','": the fault is the closer."""
    from vaultsync.vault.yamlsafety import YamlProblem

    with pytest.raises(YamlProblem) as err:
        load_yaml(line + "\n")
    assert (err.value.line, err.value.col) == (0, line.index(opener))
    assert err.value.message.startswith(f"the '{opener}' opened here is closed with '{closer}'"), err.value.message


_LONG = "k" * 1100


@pytest.mark.parametrize("text, where, length", [
    (f"title: x\n{_LONG}: x\n", "3:1", 1100),  # was: "put a space after the colon", which never helped
    (f"title: x\n\"{'é' * 1030}\": x\n", "3:1", "1030 characters and its 2 quotes"),  # two-byte characters
    (f"title: x\n'{'k' * 1023}': x\n", "3:1", "1023 characters and its 2 quotes"),  # 1,025 with the quotes
    (f"title: x\nk:\n  {'k' * 2000}: x\n", "4:3", 2000),  # nested
    (f"title: x\ntags:\n  - {'k' * 1025}: x\n", "4:5", 1025),  # a mapping in a list
    (f"{{title: x, {_LONG}: x}}\n", "2:12", 1100),  # a flow mapping: was "the '{' opened here is never closed"
    (f"title: x\nk: {{a: 1, {_LONG}: x}}\n", "3:11", 1100),
])
def test_a_key_longer_than_yaml_allows_says_so(vault, text, where, length):
    """PyYAML (as YAML 1.2 asks) reads no implicit key past 1024 characters, then errs at the colon: the
    message told the author to put a space after a colon that had one."""
    vault.write(P, f"---\n{text}---\n")
    res = vault.check()
    quoted = isinstance(length, str)
    size = length if quoted else f"{length} characters"
    assert res.code == 1 and res.lines == [
        f"{P}:{where}: FM005 a key of {size}: YAML reads no key longer than 1024 characters"
        f"{', quotes included' if quoted else ''} — shorten it"], res.lines


@pytest.mark.parametrize("text", [f"title: x\n{'k' * 1024}: x\n", f"title: x\n\"{'k' * 1022}\": x\n",
                                  f"title: x\ndescription: a, {_LONG}: and more\n"])
def test_a_key_of_1024_characters_passes_and_a_long_value_keeps_its_own_message(vault, text):
    vault.write(P, f"---\n{text}---\n")
    assert not [line for line in vault.check().lines if "YAML reads no key longer" in line]


DOCUMENT_END = ("FM005 '...' ends the YAML document, but the frontmatter goes on after it — delete the line "
                "(the frontmatter ends at its closing '---')")


@pytest.mark.parametrize("rows, at", [
    (["title: T", "...", "status: accepted"], 3),
    (["title: T", "... # end of the YAML", "tags:", "  - a"], 3),
    (["...", "título: Ünïcode"], 2),
    (["a: 1", "...", "", "  b: 2"], 3),
    (["notes: |", "  one", "...", "more: x"], 4),  # at column 0, `...` ends a block scalar too
    (["list:", "  - a", "...", "  - b"], 4),
])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_document_end_marker_inside_frontmatter_is_named_at_its_line(vault, rows, at, eol):
    """`...` in the frontmatter gave PyYAML's "did not find expected <document start>" at the line after it:
    the message names the marker, at its own line."""
    vault.write(P, eol.join(["---", *rows, "---", "Body", ""]))
    assert vault.check().lines == [f"{P}:{at}:1: {DOCUMENT_END}"]


@pytest.mark.parametrize("rows", [["title: T", "..."], ["title: T", "... # done"], ["notes: |", "  ...", "x: 1"],
                                  ["title: 'a ... b'", "more: ...x"]])
def test_a_document_end_marker_that_ends_nothing_early_is_no_error(vault, rows):
    vault.write(P, "\n".join(["---", *rows, "---", "Body", ""]))
    assert vault.check().lines == []


@pytest.mark.parametrize("rows", [["title: [unclosed", "..."], ["title: {a: 1", "...", "# only a comment"],
                                  ["title: 'open", "...", ""]])
def test_a_document_end_marker_after_the_real_mistake_is_not_blamed(vault, rows):
    """Nothing follows the `...`: the error is the bracket or quote left open, not the marker."""
    vault.write(P, "\n".join(["---", *rows, "---", "Body", ""]))
    lines = vault.check().lines
    assert lines and all("'...' ends the YAML document" not in line for line in lines), lines


@settings(max_examples=80, deadline=None)
@given(before=st.lists(st.sampled_from(["a: 1", "b: [x, y]", "c:\n  - d", "k: 1  # note", "e: 'q'", "n: |\n  x\n  ..."]),
                       max_size=4).map(lambda rows: "\n".join(rows).split("\n") if rows else []),
       after=st.lists(st.sampled_from(["f: 2", "g: text", "h: {k: v}"]), min_size=1, max_size=3),
       tail=st.sampled_from(["", " ", " # why", "\t"]))
def test_property_a_document_end_marker_before_more_keys_is_fm005_at_it(before, after, tail):
    """Property: wherever `...` stands before more keys, the error is at its line, column 1."""
    from vaultsync.vault.note import parse_text

    note = parse_text(P, "\n".join(["---", *before, "..." + tail, *after, "---", "Body", ""]))
    assert [(d.line, d.col, f"{d.code} {d.message}") for d in note.diagnostics] == \
        [(len(before) + 2, 1, DOCUMENT_END)]
