"""A key that was meant as a lifecycle field but names none (LC004): ``superceded_by``, ``expiry``,
``confidance``. Search reads nothing from it, so the supersession, TTL or confidence the author wrote
silently did not act; ``check`` says so at the key, as a warning, in every folder whose schema does not
refuse or declare the key."""

from __future__ import annotations

import json

import pytest
from conftest import CONFIG, adr, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.vault.fields import LIFECYCLE_FIELDS, lifecycle_field_of, lifecycle_fields_meant, osa_distance

UNTYPED = "docs/notes"


@pytest.mark.parametrize("key, meant", [
    ("superceded_by", ["superseded_by"]), ("superseeded-by", ["superseded_by"]), ("Superceeded By", ["superseded_by"]),
    ("supercedes", ["supersedes"]), ("supersede", ["supersedes"]), ("superseded", ["supersedes", "superseded_by"]),
    ("supersedesBy", ["superseded_by", "supersedes"]), ("replaced_by", ["superseded_by"]), ("Replaces", ["supersedes"]),
    ("confidance", ["confidence"]), ("confident", ["confidence"]), ("confidences", ["confidence"]),
    ("expire", ["expires"]), ("expired", ["expires"]), ("expiry", ["expires"]), ("Expiry-Date", ["expires"]),
    ("expiresAt", ["expires"]), ("valid_until", ["expires"]), ("TTL", ["expires"]),
    ("stauts", ["status"]), ("statsu", ["status"]), ("lastvalidated", ["last_validated"]),
    ("last_validate", ["last_validated"]), ("last_reviewed", ["last_validated"]), ("superseded_by_", ["superseded_by"]),
    ("ſtatus", ["status"]),  # not read (ASCII case only, ADR-0104), so named
])
def test_a_likely_lifecycle_key_names_its_field(key, meant):
    assert lifecycle_fields_meant(key) == meant


@pytest.mark.parametrize("key", [
    # fields, and spellings search reads as the field (LC002 says those)
    *LIFECYCLE_FIELDS, "Superseded-By", "supersededBy", "EXPIRES", "last validated",
    # other words: a team's own keys must not be warned
    "confidential", "expiry_policy", "stats", "state", "statu", "statusNote", "stage", "tags", "title", "created",
    "importance", "reviewed", "validated", "expires_in", "description", "aliases", "permalink", "owner", "deciders",
    # words a letter or two from a field (an attacker's list): a changed letter makes another word
    "conference", "states", "statue", "empires", "statut", "stati", "conferences", "expries_on",
    "", "s", 7, None, "状态", "期限",
])
def test_other_keys_name_no_lifecycle_field(key):
    assert lifecycle_fields_meant(key) == []


def _reference_osa(a: str, b: str) -> int:
    """The textbook recursive definition, memoised (small strings only)."""
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def d(i: int, j: int) -> int:
        if min(i, j) == 0:
            return max(i, j)
        best = min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1]))
        if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
            best = min(best, d(i - 2, j - 2) + 1)
        return best
    return d(len(a), len(b))


@settings(max_examples=300, deadline=None)
@given(st.text("abcd", max_size=7), st.text("abcd", max_size=7))
def test_osa_distance_is_the_textbook_one(a, b):
    assert osa_distance(a, b) == _reference_osa(a, b) == osa_distance(b, a)
    assert osa_distance(a, b) <= osa_distance(a, b, substitution=2) <= 2 * osa_distance(a, b)


@pytest.mark.parametrize("a, b, plain, without_changes", [
    ("conference", "confidence", 2, 4), ("superceded", "superseded", 1, 2), ("stauts", "status", 1, 1),
    ("expirs", "expires", 1, 1), ("", "ttl", 3, 3)])
def test_a_changed_letter_costs_two_without_changes(a, b, plain, without_changes):
    assert (osa_distance(a, b), osa_distance(a, b, substitution=2)) == (plain, without_changes)


@settings(max_examples=400, deadline=None)
@given(field=st.sampled_from(LIFECYCLE_FIELDS), edit=st.sampled_from(["insert", "delete", "change", "swap"]),
       at=st.integers(min_value=0, max_value=30), letter=st.sampled_from("abcdefghijklmnopqrstuvwxyz"),
       upper=st.booleans())
def test_any_one_typo_of_a_field_is_named(field, edit, at, letter, upper):
    """Property: one letter added, dropped, or two neighbours swapped, anywhere in a field's name (in any
    case), names that field, unless the result is the field or a spelling search reads; a dropped letter
    only for fields of 7+ letters, a changed one only for fields of 10+."""
    word = field
    i = at % len(word)
    if edit == "insert":
        word = word[:i] + letter + word[i:]
    elif edit == "delete":
        word = word[:i] + word[i + 1:]
    elif edit == "change":
        word = word[:i] + letter + word[i + 1:]
    elif i + 1 < len(word):
        word = word[:i] + word[i + 1] + word[i] + word[i + 2:]
    word = word.upper() if upper else word
    letters = len(field.replace("_", ""))
    if word in LIFECYCLE_FIELDS or lifecycle_field_of(word) is not None:
        assert lifecycle_fields_meant(word) == []
    elif len(word.replace("_", "")) < letters and letters < 7:
        assert field not in lifecycle_fields_meant(word)  # `stats` is another word
    elif edit == "change" and letters < 10 and word.casefold() not in (field, "expired"):  # `expired`: a name
        assert field not in lifecycle_fields_meant(word)  # `states`, `empires`: a changed letter makes a word
    else:
        assert field in lifecycle_fields_meant(word), word


def _note(fm: str) -> str:
    return f"---\ntitle: A note\n{fm}---\nThe body.\n"


@pytest.mark.parametrize("fm, want", [
    ('superceded_by: "[[b]]"\n', "3:1: LC004 warning: superceded_by: search does not read this key — did you mean "
                                 "'superseded_by', one \"[[WikiLink]]\" or memory_id?"),
    ("expiry: 2024-01-31\n", "3:1: LC004 warning: expiry: search does not read this key — did you mean 'expires', "
                             "a date (YYYY-MM-DD)?"),
    ("  confidance:   0.3\n", None),  # indented: YAML refuses it, FM005; no LC004 for an unread frontmatter
    ("tags: [ops]\nConfidance: 0.3\n", "4:1: LC004 warning: Confidance: search does not read this key — did you "
                                       "mean 'confidence', a number from 0 to 1?"),
    ("superseded: true\n", '3:1: LC004 warning: superseded: search does not read this key — did you mean status: '
                           'superseded, with superseded_by: "[[successor]]"?'),
    ("superseded: x\n", "3:1: LC004 warning: superseded: search does not read this key — did you mean 'supersedes', "
                        "a list of \"[[WikiLinks]]\" or memory_ids or 'superseded_by', one \"[[WikiLink]]\" or memory_id?"),
    ('"expired ": 2024-01-01\n', "3:1: LC004 warning: expired : search does not read this key — did you mean "
                                 "'expires', a date (YYYY-MM-DD)?"),
    ("expires: 2999-01-01\nexpiry: 2024-01-01\n", ""),  # the field is set: the other key is the team's own
    ("confidential: true\nstate: draft\n", ""),
])
def test_check_warns_at_the_key_in_an_untyped_folder(make_vault, fm, want):
    vault = make_vault({".vaultsync.yaml": CONFIG, f"{UNTYPED}/a.md": _note(fm), f"{UNTYPED}/b.md": _note("")})
    res = vault.check()
    got = [line.removeprefix(f"{UNTYPED}/a.md:") for line in res.lines if "LC004" in line]
    if want is None:
        assert not got and any(" FM0" in line for line in res.lines), res.lines
        return
    assert got == ([want] if want else []), res.lines
    assert res.code == 0, res.out  # a warning blocks no commit


@pytest.mark.parametrize("layout", ["flow", "crlf", "bom", "comment"])
def test_the_warning_stands_at_the_key_in_any_layout(make_vault, layout):
    text = {"flow": "---\n{title: A, superceded_by: '[[b]]'}\n---\nBody.\n",
            "crlf": "---\r\ntitle: A\r\n# a comment\r\nsuperceded_by: '[[b]]'\r\n---\r\nBody.\r\n",
            "bom": "\ufeff---\ntitle: A\n\nsuperceded_by: '[[b]]'\n---\nBody.\n",
            "comment": "---\ntitle: A  # superseded_by: x\n# superseded_by: '[[b]]'\nsuperceded_by: '[[b]]'\n---\nB.\n"}[layout]
    where = {"flow": "2:12", "crlf": "4:1", "bom": "4:1", "comment": "4:1"}[layout]
    vault = make_vault({".vaultsync.yaml": CONFIG, f"{UNTYPED}/a.md": text, f"{UNTYPED}/b.md": _note("")})
    got = [line for line in vault.check().lines if "LC004" in line]
    assert got and got[0].startswith(f"{UNTYPED}/a.md:{where}: LC004 warning: superceded_by:"), got


def test_a_closed_schema_says_it_once_and_an_open_one_that_declares_the_key_not_at_all(make_vault, tmp_path):
    """A type folder whose schema refuses the key: its SC003, with the did-you-mean, and no LC004 beside it.
    A schema that declares ``expiry`` as a property of its own: the team meant that key; no warning."""
    from vaultsync.resources import data_dir

    schema = json.loads((data_dir("schemas") / "rule.schema.json").read_text())
    schema.pop("additionalProperties", None)
    schema.pop("unevaluatedProperties", None)
    schema.setdefault("properties", {})["expiry"] = {"type": "string"}
    config = CONFIG.replace("rule: {folder: docs/rules}", "rule: {folder: docs/rules, schema: schemas/team.json}")
    vault = make_vault({
        ".vaultsync.yaml": config, "schemas/team.json": json.dumps(schema),
        "docs/adrs/ADR-0001.md": adr("ADR-0001", extra='superceded_by: "[[ADR-0002]]"\n'),
        "docs/adrs/ADR-0002.md": adr("ADR-0002"),
        "docs/rules/r1.md": "---\nmemory_id: RULE-0001\ntype: rule\ntitle: One\nstatus: active\n"
                            'created: "2024-03-01"\nexpiry: "2024-05-01"\nconfidance: 0.5\n---\nAlways one.\n',
    })
    res = vault.check()
    adr_lines = [line for line in res.lines if line.startswith("docs/adrs/ADR-0001.md:7:1:")]
    assert len(adr_lines) == 1 and " SC003 superceded_by: additional property not allowed (did you mean " \
        "'superseded_by'?)" in adr_lines[0], res.lines
    rule_lines = [line for line in res.lines if line.startswith("docs/rules/r1.md") and "LC004" in line]
    assert rule_lines == ["docs/rules/r1.md:8:1: LC004 warning: confidance: search does not read this key — did "
                          "you mean 'confidence', a number from 0 to 1?"], res.lines


def test_the_pre_commit_path_warns_and_lets_the_commit_land(make_vault):
    vault = make_vault({".vaultsync.yaml": CONFIG, f"{UNTYPED}/b.md": _note("")})
    vault.write(f"{UNTYPED}/a.md", _note("expiry: 2024-01-31\n"))
    vault.git("add", "-A")
    res = run_cli(["check", "--staged"], vault.root)
    assert res.code == 0 and any("LC004 warning: expiry:" in line for line in res.lines), res.out


@pytest.mark.parametrize("size", [1_000, 100_000, 1_000_000])
def test_a_huge_key_costs_no_distance(size):
    """A key from a commit can be as long as an explicit YAML key allows: one of 20,000 letters took 0.7 s
    (a distance against each field), which a hook pays per note. A key longer than any field by more than
    the distance allows is no near miss, and is not measured."""
    assert lifecycle_fields_meant("superseded_by" + "x" * size) == []
    assert lifecycle_fields_meant("e" * size) == []
