"""A committed note must not drive its readers' terminals: search, show and review print no control
character a terminal acts on (ESC, BEL, C1, a carriage return that ends no line); JSON keeps the text."""

from __future__ import annotations

import json
import re

import pytest
from conftest import adr, run_cli
from hypothesis import given
from hypothesis import strategies as st

from vaultsync.diagnostics import terminal_safe

ACTED_ON = re.compile(r"\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# OSC 52 (writes the clipboard), an erased line and a carriage return that forges one, 8-bit CSI, BEL
ATTACKS = ["\x1b]52;c;ZWNobyBwd25lZA==\x07", "\x1b[2K\rFAKE LINE", "\x9b31m", "\x07\x08\x7f", "\x1b[?1049h"]


@given(st.text())
def test_nothing_a_terminal_acts_on_is_left_and_the_rest_is_kept(text):
    out = terminal_safe(text)
    assert not ACTED_ON.search(out)
    assert out.count("\n") == text.count("\n") and out.count("\t") == text.count("\t")
    if not ACTED_ON.search(text):
        assert out == text


@pytest.mark.parametrize("text", ["plain ASCII", "é ü ß 日本語 한국어 עברית العربية 😀\u200d👩", "a\r\nb\tc"])
def test_text_of_any_script_is_unchanged(text):
    assert terminal_safe(text) == text


@pytest.fixture(scope="module")
def poisoned(tmp_path_factory, model_env):  # type: ignore[no-untyped-def]
    """An indexed vault whose ADR holds every attack in its title, a heading and its body."""
    from conftest import init_vault

    vault = init_vault(tmp_path_factory.mktemp("poison"))
    attacks = "".join(ATTACKS)
    body = f"# Okapi {attacks}\n\nThe okapi rule: rotate the okapi keys {attacks} every quarter.\n"
    vault.write("docs/adr/ADR-0001-okapi.md", adr("ADR-0001", title=json.dumps(f"Okapi {ATTACKS[0]} keys"), body=body))
    vault.commit()
    vault.synced()
    return vault


@pytest.mark.parametrize("command", [["search", "okapi keys rotation", "--no-daemon", "--min-relevance", "0"],
                                     ["search", "okapi keys rotation", "--no-daemon", "--min-relevance", "0",
                                      "--format", "markdown"],
                                     ["show", "ADR-0001"], ["show", "ADR-0001", "--format", "markdown"]])
def test_search_and_show_print_no_terminal_control(poisoned, command):
    res = run_cli(command, poisoned.root)
    assert res.code == 0, res.err
    assert "okapi" in res.out.casefold() and "\\u001b" in res.out  # the hit is there, its escapes visible
    assert not ACTED_ON.search(res.out + res.err), repr(res.out)


def test_json_escapes_them_and_keeps_the_note_as_written(poisoned):
    res = run_cli(["search", "okapi keys rotation", "--no-daemon", "--min-relevance", "0", "--format", "json"],
                  poisoned.root)
    assert not ACTED_ON.search(res.out)  # C1 controls and DEL too, which json.dumps leaves raw
    assert any(ATTACKS[0] in h["text"] and ATTACKS[2] in h["text"] for h in json.loads(res.out)["hits"])
    shown = run_cli(["show", "ADR-0001", "--format", "json"], poisoned.root)
    body = json.loads(shown.out)["body"]  # a lone CR reads as a line break, as in every editor
    assert not ACTED_ON.search(shown.out) and "".join(ATTACKS).replace("\r", "\n") in body


def test_review_annotations_hold_one_command_per_item():
    from vaultsync.memory.review import ReviewItem, render

    item = ReviewItem(kind="expiring", path="docs/a,b:c\n::error::forged.md", memory_id="ADR-1\n::add-mask::x",
                      title="t", type="adr", importance=5, reason="expires soon\r\n::error::x", line=3, due=None)
    out = render([item], "github")
    assert "\n" not in out and "\r" not in out and out.startswith("::warning file=docs/a%2Cb%3Ac%0A"), out
    assert not ACTED_ON.search(render([item], "text") + render([item], "markdown"))
