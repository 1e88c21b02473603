"""FM007 for two keys that differ as text but that a YAML 1.1 reader (``yaml.safe_load``) loads as one key."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.vault.note import parse_text
from vaultsync.vault.yamlload import YamlProblem, load_yaml


def _fm007(text: str) -> list[tuple[int, str]]:
    note = parse_text("docs/n.md", "---\n" + text + "---\nBody\n")
    return [(d.line, d.message) for d in note.diagnostics if d.code == "FM007"]


@pytest.mark.parametrize("first, second, shown", [
    ("~", "null", "null"), ("null", "Null", "null"), ("NULL", "~", "null"), ("0x1", "1", "1"), ("1", "+1", "1"),
    ("true", "True", "true"), ("false", "FALSE", "false"), ("yes", "true", "true"), ("off", "false", "false"),
    ("1", "1.0", "1"), ("010", "8", "8"), ("10", "1_0", "10"), (".nan", ".NaN", ".nan"), ("1.0e+3", "1000", "1000.0"),
    ("!!int 7", "7.0", "7"), (".inf", ".Inf", ".inf"), ("-.inf", "-.INF", "-.inf"),
])
@pytest.mark.parametrize("where", ["top", "nested", "flow"])
def test_keys_equal_as_yaml_values_are_duplicates(first, second, shown, where):
    """`~:` and `null:` (or `0x1:` and `1:`) were two keys to vaultsync, which keeps keys as text; every
    YAML 1.1 reader of the note loads them as one, the last value silently winning."""
    if where == "flow":
        text, line = f"m: {{{first}: a, {second}: b}}\n", 2
    else:
        pad = "  " if where == "nested" else ""
        text = ("m:\n" if pad else "") + f"{pad}{first}: a\n{pad}{second}: b\n"
        line = 4 if pad else 3
    (found,) = _fm007(text)
    shown_first = first.removeprefix("!!int ")
    assert found[0] == line and found[1].startswith(f"duplicate key '{second}' (first defined on line ")
    assert found[1].endswith(f" as '{shown_first}': YAML reads both as the key {shown})"), found


@pytest.mark.parametrize("first, second", [
    ('"1"', "1.0"), ("'~'", "null"), ('"true"', "True"), ("true", "1"), ("false", "0"), ("1", "2"), ("'1.0'", "1"),
    ("|\n  5\n", "5"), ("!!str 5", "5.0"), ("! 6", "6.0"), ("null", '"null "'), ("2024-02-30", "2024-2-30"),
])
def test_keys_a_reader_keeps_apart_are_no_duplicates(first, second):
    """A quoted key is a string: "1" is not the number 1. A boolean is no number here (YAML tells them
    apart), and a key YAML 1.1 cannot load as a date (2024-02-30) is its text."""
    text = "? |\n  5\n: a\n" if first.startswith("|") else f"{first}: a\n"
    assert _fm007(text + f"{second}: b\n") == []


def test_the_same_text_quoted_and_plain_stays_one_key_to_vaultsync():
    """vaultsync keeps keys as their text: `"1"` and `1` would be one key of its data, so they stay FM007."""
    with pytest.raises(YamlProblem) as exc:
        load_yaml('"1": a\n1: b\n')
    assert exc.value.code == "FM007"


NULLS = ["~", "null", "Null", "NULL"]
BOOLS = ["true", "True", "TRUE", "yes", "Yes", "on", "ON", "y"]
INTS = ["1", "+1", "0x1", "0o1", "01", "1_"]


@settings(max_examples=150, deadline=None)
@given(keys=st.lists(st.sampled_from([*NULLS, *BOOLS, *INTS, "1.0", "title", '"1"', "'null'", "'yes'"]),
                     min_size=1, max_size=6))
def test_a_repeated_key_is_fm007_exactly_where_safe_load_would_merge_it(keys):
    """Property: FM007 stands at each key whose value ``yaml.safe_load`` already met in the mapping (text
    equal, or loaded equal with booleans and numbers apart), and nowhere else."""
    text = "".join(f"{k}: {i}\n" for i, k in enumerate(keys))
    texts: set[str] = set()
    values: list[tuple[bool, object]] = []
    expected = []
    for i, k in enumerate(keys):
        (loaded,) = yaml.safe_load(f"{k}: 0\n")
        ident = (isinstance(loaded, bool), loaded)
        if k.strip("'\"") in texts or (not isinstance(loaded, str) and ident in values):
            expected.append(i + 2)
        texts.add(k.strip("'\""))
        values.append(ident)
    assert [line for line, _ in _fm007(text)] == expected
