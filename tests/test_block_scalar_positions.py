"""A message about a block scalar's value (``key: |``) stands at its text, not at the ``|`` or ``>``."""

from __future__ import annotations

import pytest
from conftest import adr
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.vault.yamlload import load_yaml, yaml_positions

P = "docs/adrs/ADR-0001.md"


@pytest.mark.parametrize("field, indicator, text, code", [
    ("expires", "|", "2024-02-30", "DT001"), ("expires", ">-", "2024-13-01", "DT001"),
    ("confidence", ">", "high", "SC001"), ("confidence", "|+", "0.5", "SC001"),
    ("superseded_by", "|-", "nowhere x", "SS001"), ("superseded_by", "|2", "ADR-9999", "SS001"),
])
@pytest.mark.parametrize("indent, blank", [(2, False), (4, True)])
def test_a_value_error_in_a_block_scalar_points_at_its_text(vault, field, indicator, text, code, indent, blank):
    """DT001, SC001 and SS001 of `expires: |` stood at the `|`: the line to mend is the next one."""
    indent = 2 if indicator == "|2" else indent
    body = f"{field}: {indicator}\n" + ("\n" if blank else "") + f"{' ' * indent}{text}\n"
    vault.write(P, adr("ADR-0001", extra=body))
    lines = (vault.root / P).read_text().split("\n")
    row = next(i for i, x in enumerate(lines) if x.startswith(f"{field}: {indicator}"))
    found = [x for x in vault.check().lines if f" {code} {field}:" in x]
    assert found and all(x.startswith(f"{P}:{row + 2 + blank}:{indent + 1}: ") for x in found), found


@settings(max_examples=100, deadline=None)
@given(indicator=st.sampled_from(["|", ">", "|-", ">+", "|2", ">-"]), blanks=st.integers(0, 3),
       indent=st.integers(1, 6), words=st.lists(st.sampled_from(["a", "né", "日本", "x: y", "# no"]), min_size=1,
                                                max_size=3), nested=st.booleans())
def test_property_a_block_scalar_is_placed_at_its_first_line_of_text(indicator, blanks, indent, words, nested):
    """Property: a block scalar's position is its first line with text, at its indentation, at any depth."""
    if indicator == "|2":
        indent = 2
    pad = "  " if nested else ""
    head = ("m:\n" if nested else "") + f"{pad}k: {indicator}\n"
    text = head + "\n" * blanks + "".join(f"{pad}{' ' * indent}{w}\n" for w in words) + "z: 1\n"
    load_yaml(text)  # valid
    positions, _, _ = yaml_positions(text)
    path = ("m", "k") if nested else ("k",)
    assert positions[path] == (head.count("\n") + blanks, len(pad) + indent)
    assert load_yaml(text).positions[path] == positions[path]


@pytest.mark.parametrize("indicator", ["|", ">", "|-", ">+"])
@pytest.mark.parametrize("blanks", [0, 1, 3])
@pytest.mark.parametrize("nested, listed", [(False, False), (True, False), (False, True)])
def test_an_empty_block_scalar_stays_at_its_indicator(indicator, blanks, nested, listed):
    """A block scalar with no text ends on the next key's line: the value's position is its indicator, never
    that next line (LC001 for `status: |` stood at the key after it, VC001 for `- |` at the next item)."""
    pad = "  " if nested else ""
    head = ("m:\n" if nested else "") + (f"{pad}k:\n{pad}  - {indicator}\n" if listed else f"{pad}k: {indicator}\n")
    text = head + "\n" * blanks + (f"{pad}  - next\n" if listed else f"{pad}next: x\n")
    load_yaml(text)  # valid: an empty text
    positions, _, _ = yaml_positions(text)
    path = (("m",) if nested else ()) + (("k", 0) if listed else ("k",))
    row = head.count("\n") - 1
    assert positions[path] == (row, head.split("\n")[row].index(indicator[0]))


def test_an_empty_block_status_is_reported_on_its_own_line(vault):
    vault.write(P, adr("ADR-0001", extra="").replace("status: accepted\n", "status: |\n\n"))
    lines = (vault.root / P).read_text().split("\n")
    row = lines.index("status: |") + 1
    found = [x for x in vault.check().lines if " status:" in x or "status" in x.split(" ", 2)[-1][:12]]
    assert found and all(x.startswith(f"{P}:{row}:") for x in found), (found, row)
