"""Reliability attacks: one bad note never stops the index, and lifecycle filters fail closed.

Real git repositories, real SQLite index and the real CLI; the embedder is a
small deterministic stand-in (hashing) so that these tests need no model, and
search runs on BM25 only.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import HashEmbedder, Vault, adr, hash_embedders, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

UNTYPED = "docs/notes"  # a folder of the test vault with no type (see conftest.CONFIG)


@pytest.fixture(autouse=True)
def hashed_models(monkeypatch):  # type: ignore[no-untyped-def]
    """Every embedder the index asks for is a :class:`HashEmbedder`; search loads none."""
    hash_embedders(monkeypatch, HashEmbedder)
    monkeypatch.setenv("VAULTSYNC_NO_VECTORS", "1")


def sync(v: Vault):  # type: ignore[no-untyped-def]
    res = run_cli(["sync", "--wait", "60"], v.root)
    assert res.code == 0 and "Traceback" not in res.err, res.err
    return res


def found(v: Vault, query: str, **opts) -> list[str]:  # type: ignore[no-untyped-def]
    """Paths of the hits for ``query`` (BM25, no graph hop unless asked)."""
    from vaultsync.git import open_repo
    from vaultsync.engine import open_searcher, options_for
    from vaultsync.vault.config import Config

    opts.setdefault("graph_hops", 0)
    opts.setdefault("min_relevance", 0.0)  # what the filters let through, not what the floor keeps
    searcher, head = open_searcher(open_repo(v.root), Config(), rerank="none")
    try:
        return [h.path for h in searcher.search(query, options_for(Config(), legs=("bm25",), **opts), head=head).hits]
    finally:
        searcher.close()


def hits(v: Vault, query: str, **opts):  # type: ignore[no-untyped-def]
    from vaultsync.git import open_repo
    from vaultsync.engine import open_searcher, options_for
    from vaultsync.vault.config import Config

    searcher, head = open_searcher(open_repo(v.root), Config(), rerank="none")
    try:
        return searcher.search(query, options_for(Config(), legs=("bm25",), graph_hops=0, min_relevance=0.0, **opts),
                               head=head).hits
    finally:
        searcher.close()


def status(v: Vault) -> dict:  # type: ignore[type-arg]
    res = run_cli(["status", "--format", "json"], v.root)
    assert res.code == 0, res.err
    return json.loads(res.out)


def indexed(v: Vault) -> set[str]:
    con = sqlite3.connect(v.root / ".git/vaultsync/index.sqlite")
    try:
        return {p for (p,) in con.execute("SELECT path FROM notes")}
    finally:
        con.close()


def plain(word: str, fm: str = "") -> str:
    """A note of an untyped folder whose body holds ``word``."""
    return (f"---\n{fm}---\n" if fm else "") + f"# {word}\nThe {word} note body.\n"


# --- 3. one bad note never freezes the index ------------------------------------------------

LONG = "x" * 9000  # pushes a character past the 8 KB that the binary sniff reads

BAD_NOTES = {
    "bel-in-title": ("---\ntitle: Cache \x07 rules\n---\nBody.\n", 2, 14, "U+0007"),
    "esc-in-list-item": ("---\ntags:\n  - ops\n  - \x1b[31mred\n---\nBody.\n", 4, 5, "U+001B"),
    "fffe-in-quoted-value": ('---\nmemory_id: N-1\nsummary: "ab\ufffecd"\n---\nBody.\n', 3, 13, "U+FFFE"),
    "nul-after-8kb": (f"---\ndescription: {LONG}\nnote: a\x00b\n---\nBody.\n", 3, 8, "U+0000"),
    "del-in-key": ("---\nsta\x7ftus: accepted\n---\nBody.\n", 2, 4, "U+007F"),
    "c1-in-nested-map": ("---\nsource:\n  session: \x9b2J\n---\nBody.\n", 3, 12, "U+009B"),
}


@pytest.mark.parametrize("name", sorted(BAD_NOTES))
def test_a_control_character_note_is_recorded_and_every_other_note_indexed(vault, name):
    text, line, col, char = BAD_NOTES[name]
    vault.write(f"{UNTYPED}/first.md", plain("aardvark"))
    vault.commit("first")
    sync(vault)
    bad = f"{UNTYPED}/bad.md"
    vault.write(bad, text)
    vault.write(f"{UNTYPED}/second.md", plain("bandicoot"))
    vault.commit("bad and second", "--no-verify")
    res = sync(vault)
    assert f"{bad}:{line}:{col}: FM018" in res.err
    vault.write(f"{UNTYPED}/third.md", plain("chinchilla"))
    vault.commit("third", "--no-verify")
    sync(vault)
    for word, path in (("aardvark", "first"), ("bandicoot", "second"), ("chinchilla", "third")):
        assert found(vault, word) == [f"{UNTYPED}/{path}.md"], word
    warnings = status(vault)["warnings"]
    assert any(w.startswith(f"{bad}:{line}:{col}: FM018") and char in w for w in warnings), warnings
    text_status = run_cli(["status"], vault.root).out
    assert f"warning     {bad}:{line}:{col}: FM018" in text_status
    res = vault.check()
    assert res.code == 1 and "Traceback" not in res.err
    lines = [x for x in res.lines if x.startswith(bad)]
    assert len(lines) == 1 and lines[0].startswith(f"{bad}:{line}:{col}: FM018 ") and char in lines[0]
    assert "delete it" in lines[0]


def test_the_bad_note_stays_recorded_after_syncs_that_do_not_touch_it(vault):
    vault.write(f"{UNTYPED}/bad.md", "---\ntitle: a\x07\n---\nBody.\n")
    vault.commit("bad", "--no-verify")
    sync(vault)
    vault.write(f"{UNTYPED}/later.md", plain("dugong"))
    vault.commit("later")
    sync(vault)
    sync(vault)  # up to date: the warnings of the indexed tree are kept
    assert any("bad.md:2:9: FM018" in w for w in status(vault)["warnings"])
    res = run_cli(["index", "--rebuild", "--quiet"], vault.root)
    assert res.code == 0 and "bad.md:2:9: FM018" in res.err
    assert any("bad.md:2:9: FM018" in w for w in status(vault)["warnings"])
    vault.write(f"{UNTYPED}/bad.md", "---\ntitle: a\n---\nBody.\n")
    vault.commit("fixed")
    sync(vault)
    assert status(vault)["warnings"] == []


@pytest.mark.parametrize("frontmatter, kind", [
    ("- a\n- b\n", "list"), ("just a string\n", "str"), ("42\n", "number"), ("- expires: 2020-01-01\n", "list"),
    ("[a, b]\n", "list"), ("ただの文字列\n", "str"),
])
def test_a_frontmatter_that_is_no_mapping_is_named_in_the_syncs_warnings(vault, frontmatter, kind):
    """A note whose frontmatter is a list or a scalar (FM011) was indexed without it and named nowhere, while a
    frontmatter that did not load (FM005) is named by the sync and by `status` until it is fixed."""
    bad = "docs/rules/odd.md"
    vault.write(bad, f"---\n{frontmatter}---\nThe okapi note.\n")
    vault.commit("odd", "--no-verify")
    res = sync(vault)
    checked = [line for line in vault.check().lines if line.startswith(bad)]
    assert checked[0].startswith(f"{bad}:1:1: FM011 frontmatter must be a mapping, got ") and kind in checked[0]
    said = f"{checked[0]} — indexed without its frontmatter"  # the check's own words
    assert said in res.err, res.err
    assert any(w.startswith(said) for w in status(vault)["warnings"]), status(vault)["warnings"]
    vault.write(bad, "---\ntitle: odd\n---\nThe okapi note.\n")
    vault.commit("fixed", "--no-verify")
    sync(vault)
    assert status(vault)["warnings"] == []


def test_a_lifecycle_key_in_frontmatter_that_did_not_load_hides_the_note(vault):
    vault.write(f"{UNTYPED}/ttl.md", '---\nexpires: "2099-01-01"\ntitle: x\x07\n---\nThe echidna note.\n')
    vault.write(f"{UNTYPED}/plain.md", "---\ntitle: x\x07\n---\nThe ermine note.\n")
    vault.commit("bad", "--no-verify")
    sync(vault)
    assert found(vault, "echidna") == [] and found(vault, "echidna", include_expired=True) == [f"{UNTYPED}/ttl.md"]
    assert found(vault, "ermine") == [f"{UNTYPED}/plain.md"]  # no lifecycle field: nothing to hide


@pytest.mark.parametrize("stage", ["parse_note", "chunk_note"])
def test_any_exception_on_one_note_skips_only_that_note(vault, monkeypatch, stage):
    import vaultsync.index.records as records
    import vaultsync.index.sync as sync_mod

    module = sync_mod if stage == "parse_note" else records
    real = getattr(module, stage)

    def flaky(path, *args, **kw):  # type: ignore[no-untyped-def]
        if path.endswith("boom.md"):
            raise RuntimeError("simulated fault")
        return real(path, *args, **kw)

    monkeypatch.setattr(module, stage, flaky)
    vault.write(f"{UNTYPED}/boom.md", plain("flamingo"))
    vault.write(f"{UNTYPED}/fine.md", plain("gazelle"))
    vault.commit("two")
    res = sync(vault)
    assert f"skipping {UNTYPED}/boom.md: RuntimeError: simulated fault" in res.err
    assert indexed(vault) == {f"{UNTYPED}/fine.md"}
    assert found(vault, "gazelle") == [f"{UNTYPED}/fine.md"]
    assert any("boom.md" in w for w in status(vault)["warnings"])
    vault.write(f"{UNTYPED}/more.md", plain("hedgehog"))
    vault.commit("more")
    sync(vault)  # the skipped note is tried again and recorded again; the rest goes on
    assert indexed(vault) == {f"{UNTYPED}/fine.md", f"{UNTYPED}/more.md"}
    assert any("boom.md" in w for w in status(vault)["warnings"])


FORBIDDEN = [chr(c) for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0x85),
                              *range(0x86, 0xA0), 0xFFFE, 0xFFFF)]
FIELDS = ["memory_id: N-1", "title: A plain title", 'summary: "quoted text"', "tags: [ops, search]",
          "related:\n  - x", "source: {session: s1}"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(char=st.sampled_from(FORBIDDEN), field=st.integers(0, len(FIELDS) - 1), at=st.integers(0, 40),
       pad=st.booleans())
def test_check_locates_any_forbidden_character_anywhere_in_frontmatter(vault, char, field, at, pad):
    if char == "\x00":
        pad = True  # a NUL inside the first 8 KB makes the file binary (FM002), a different report
    lines = ([f"description: {LONG}"] if pad else []) + FIELDS
    target = (1 if pad else 0) + field
    yaml_lines = "\n".join(lines).split("\n")
    offset = sum(len(x) + 1 for x in yaml_lines[:target]) + min(at, len(yaml_lines[target]))
    yaml_text = "\n".join(yaml_lines)
    yaml_text = yaml_text[:offset] + char + yaml_text[offset:]
    line = yaml_text.count("\n", 0, offset) + 2
    col = offset - (yaml_text.rfind("\n", 0, offset) + 1) + 1
    vault.write(f"{UNTYPED}/n.md", f"---\n{yaml_text}\n---\nBody.\n")
    res = vault.check()
    assert res.code == 1 and "Traceback" not in res.out + res.err
    assert res.lines == [f"{UNTYPED}/n.md:{line}:{col}: FM018 "
                         f"{'non-character' if ord(char) >= 0xFFFE else 'control character'} U+{ord(char):04X} "
                         f"is not allowed in YAML — delete it (or write it as "
                         f'"{chr(92)}{"x%02X" % ord(char) if ord(char) < 256 else "u%04X" % ord(char)}" '
                         "inside a double-quoted string)"]


# --- 4. lifecycle filters fail closed ---------------------------------------------------------

# (name, frontmatter lines, the include option that shows the note, what check says)
FAIL_OPEN = [
    ("expires-unpadded", 'expires: "2020-1-1"\n', {"include_expired": True}, "LC001 expires: cannot read '2020-1-1'"),
    ("expires-future-unpadded", "expires: 2099-1-1\n", {"include_expired": True}, "LC001 expires: cannot read '2099-1-1'"),
    ("expires-trailing-space", 'expires: "2099-01-01 "\n', {"include_expired": True},
     "LC001 expires: cannot read '2099-01-01 '"),
    ("expires-list", "expires: [2099-01-01]\n", {"include_expired": True}, "LC001 expires: cannot read [2099-01-01]"),
    ("expires-false", "expires: false\n", {"include_expired": True}, "LC001 expires: cannot read false"),
    ("expires-number", "expires: 20990101\n", {"include_expired": True}, "LC001 expires: cannot read 20990101"),
    ("expires-empty-string", 'expires: ""\n', {"include_expired": True}, "LC001 expires: cannot read ''"),
    ("confidence-string", 'confidence: "0.9"\n', {"min_confidence": 0.0}, "LC001 confidence: cannot read '0.9'"),
    ("confidence-word", "confidence: high\n", {"min_confidence": 0.0}, "LC001 confidence: cannot read 'high'"),
    ("confidence-nan", "confidence: .nan\n", {"min_confidence": 0.0}, "LC001 confidence: cannot read .nan"),
    ("confidence-minus-inf", "confidence: -.inf\n", {"min_confidence": 0.0}, "LC001 confidence: cannot read -.inf"),
    ("confidence-inf", "confidence: .inf\n", {"min_confidence": 0.0}, "LC001 confidence: cannot read .inf"),
    ("confidence-list", "confidence: [0.9]\n", {"min_confidence": 0.0}, "LC001 confidence: cannot read [0.9]"),
    ("confidence-above-one", "confidence: 1.5\n", {"min_confidence": 0.0},
     "LC001 confidence: cannot read 1.5 as a number from 0 to 1"),
    ("confidence-negative", "confidence: -0.2\n", {"min_confidence": 0.0}, "LC001 confidence: cannot read -0.2"),
    ("confidence-percent", "confidence: 80\n", {"min_confidence": 0.0},
     "LC001 confidence: cannot read 80 as a number from 0 to 1; search hides this note until it is fixed — "
     "for 80 %, write 0.8"),
    ("confidence-huge", "confidence: 1e300\n", {"min_confidence": 0.0}, "LC001 confidence: cannot read 1e300"),
    ("confidence-false", "confidence: false\n", {"min_confidence": 0.0}, "LC001 confidence: cannot read false"),
    ("status-capitalised", "status: Superseded\n", {"include_superseded": True},
     "LC002 warning: status: 'Superseded' is read as 'superseded'"),
    ("status-upper-padded", 'status: " SUPERSEDED "\n', {"include_superseded": True},
     "LC002 warning: status: ' SUPERSEDED ' is read as 'superseded'"),
    ("status-list", "status: [superseded]\n", {"include_superseded": True}, "LC001 status: cannot read [superseded]"),
    ("status-false", "status: false\n", {"include_superseded": True}, "LC001 status: cannot read false"),
    ("superseded-by-number", "superseded_by: 42\n", {"include_superseded": True},
     "LC001 superseded_by: cannot read 42"),
    ("superseded-by-empty", 'superseded_by: ""\n', {"include_superseded": True}, "LC001 superseded_by: cannot read ''"),
    ("superseded-by-unquoted-link", "superseded_by: [[target]]\n", {"include_superseded": True},
     "LC001 superseded_by: cannot read [[target]]"),
    ("supersedes-number", "supersedes: 7\n", {"include_superseded": True}, "LC001 supersedes: cannot read 7"),
    ("supersedes-mapping", "supersedes: {a: 1}\n", {"include_superseded": True},
     "LC001 supersedes: cannot read {a: 1}"),
]


def _typed(name: str, fm: str, word: str) -> str:
    """An ADR note (typed folder) with ``fm`` replacing the default status line when it sets one."""
    status = "accepted"
    extra = fm
    if fm.startswith("status:"):
        status, extra = fm[len("status:"):].strip(), ""
    return adr(f"ADR-{1000 + [n for n, *_ in FAIL_OPEN].index(name)}", title=f"Note {word}", status=status, extra=extra,
               body=f"The {word} note body.\n")


@pytest.mark.parametrize("folder", ["typed", "untyped"])
def test_every_fail_open_value_is_hidden_by_default_and_reported_by_check(vault, folder):
    words = {}
    for i, (name, fm, _, _) in enumerate(FAIL_OPEN):
        word = f"quokka{chr(97 + i // 26)}{chr(97 + i % 26)}"
        words[name] = word
        path = f"docs/adrs/{name}.md" if folder == "typed" else f"{UNTYPED}/{name}.md"
        vault.write(path, _typed(name, fm, word) if folder == "typed" else plain(word, fm))
    vault.write(f"{UNTYPED}/target.md", plain("targetword"))
    vault.write(f"{UNTYPED}/control.md", plain("controlword", 'expires: "2099-01-01"\nconfidence: 0.9\n'))
    vault.commit("notes", "--no-verify")
    sync(vault)
    assert found(vault, "controlword") == [f"{UNTYPED}/control.md"]
    report = vault.check().lines
    for name, _, include, says in FAIL_OPEN:
        path = f"docs/adrs/{name}.md" if folder == "typed" else f"{UNTYPED}/{name}.md"
        assert found(vault, words[name]) == [], name
        assert found(vault, words[name], **include) == [path], name
        # the schema's error for the value says it, or FM017's for an unquoted link (one diagnostic per mistake)
        schema_says = (folder == "typed" or "unquoted-link" in name) and says.startswith("LC001 ")
        assert any(line.startswith(path + ":") and (says in line or schema_says and "search hides this note" in line)
                   for line in report), (name, report)
    assert vault.check().code == 1


def test_a_value_the_schema_and_the_lifecycle_reader_refuse_is_one_error(vault):
    """One mistake, one error: where a type's schema refuses a lifecycle value (DT001, SC001) that search
    cannot read either, the schema's error also says that search hides the note, and no LC001 repeats it."""
    names = [name for name, *_, says in FAIL_OPEN if says.startswith("LC001 ")]
    for name in names:
        vault.write(f"docs/adrs/{name}.md", _typed(name, dict((n, fm) for n, fm, *_ in FAIL_OPEN)[name], "x"))
    report = vault.check().lines
    for name in names:
        mine = [line for line in report if line.startswith(f"docs/adrs/{name}.md:")]
        spots = [line.split(": ", 1)[0] for line in mine if " warning:" not in line]
        assert len(spots) == len(set(spots)) and mine, (name, mine)  # at most one error at each place
        assert any("search hides this note until it is fixed" in line for line in mine), (name, mine)


def test_lc001_message_names_the_field_the_raw_text_and_the_effect(vault):
    vault.write(f"{UNTYPED}/a.md", plain("x", 'title: T\nexpires: "2020-1-1"\nlast_validated: 2024-3-1\n'))
    assert vault.check().lines == [
        f"{UNTYPED}/a.md:3:10: LC001 expires: cannot read '2020-1-1' as a date (YYYY-MM-DD); "
        "search hides this note until it is fixed",
        f"{UNTYPED}/a.md:4:17: LC001 last_validated: cannot read '2024-3-1' as a date (YYYY-MM-DD); "
        "search ignores it when ranking by recency",
    ]


def test_supersession_is_read_from_either_side_and_by_memory_id(vault):
    n = UNTYPED
    # only the successor declares it, by WikiLink
    vault.write(f"{n}/old-a.md", plain("ibis"))
    vault.write(f"{n}/new-a.md", plain("ibisnew", 'supersedes: ["[[old-a]]"]\n'))
    # only the successor declares it, by memory_id
    vault.write(f"{n}/old-b.md", plain("jackal", "memory_id: MEM-0002\n"))
    vault.write(f"{n}/new-b.md", plain("jackalnew", "supersedes: [MEM-0002]\n"))
    # the old note names its successor by memory_id; the successor's file name is unrelated
    vault.write(f"{n}/old-c.md", plain("kiwi", "superseded_by: MEM-0103\n"))
    vault.write(f"{n}/cache-rules.md", plain("kiwinew", "memory_id: MEM-0103\n"))
    # a successor that does not resolve still hides the note that names it
    vault.write(f"{n}/old-d.md", plain("lemur", "superseded_by: MEM-9999\n"))
    vault.commit("supersession", "--no-verify")
    sync(vault)
    for word, old, new in (("ibis", "old-a", "new-a"), ("jackal", "old-b", "new-b"), ("kiwi", "old-c", "cache-rules")):
        assert found(vault, word) == [f"{n}/{new}.md"], word  # the successor is offered in its place
        assert f"{n}/{old}.md" in found(vault, word, include_superseded=True), word
    assert found(vault, "lemur") == []
    assert found(vault, "lemur", include_superseded=True) == [f"{n}/old-d.md"]
    report = vault.check().lines
    assert any(line.startswith(f"{n}/old-a.md:") and "SS002" in line for line in report)
    assert any(line.startswith(f"{n}/old-b.md:") and "SS002" in line for line in report)
    assert any(line.startswith(f"{n}/old-d.md:") and "SS001" in line for line in report)


def test_supersession_follows_notes_that_arrive_in_later_commits(vault):
    n = UNTYPED
    vault.write(f"{n}/newer.md", plain("marmot", 'supersedes: ["[[older]]"]\n'))
    vault.write(f"{n}/legacy.md", plain("narwhal", 'superseded_by: "[[replacement]]"\n'))
    vault.commit("first", "--no-verify")
    sync(vault)
    assert found(vault, "narwhal") == []  # named a successor: hidden even before it exists
    vault.write(f"{n}/older.md", plain("ocelot"))
    vault.write(f"{n}/replacement.md", plain("pelican"))
    vault.commit("second", "--no-verify")
    sync(vault)
    assert found(vault, "ocelot") == [f"{n}/newer.md"]
    assert found(vault, "narwhal") == [f"{n}/replacement.md"]
    vault.git("mv", f"{n}/replacement.md", f"{n}/successor.md")
    vault.commit("third", "--no-verify")
    sync(vault)
    assert found(vault, "narwhal") == []  # the successor no longer resolves: still hidden, nothing offered
    assert found(vault, "narwhal", include_superseded=True) == [f"{n}/legacy.md"]


def test_hidden_notes_are_never_named_in_another_hits_links(vault):
    n = UNTYPED
    vault.write(f"{n}/expired.md", plain("one", 'expires: "2020-01-01"\n'))
    vault.write(f"{n}/unreadable.md", plain("two", 'expires: "2020-1-1"\n'))
    vault.write(f"{n}/old.md", plain("three"))
    vault.write(f"{n}/new.md", plain("four", 'supersedes: ["[[old]]"]\n'))
    vault.write(f"{n}/shaky.md", plain("five", "confidence: .nan\n"))
    vault.write(f"{n}/fine.md", plain("six"))
    vault.write(f"{n}/hub.md", "# Hub\nThe quetzal hub: [[expired]], [[unreadable]], [[old]], [[new]], "
                               "[[shaky]], [[fine]].\n")
    vault.commit("links", "--no-verify")
    sync(vault)
    (hit,) = [h for h in hits(vault, "quetzal") if h.path == f"{n}/hub.md"]
    assert hit.links == [f"{n}/fine.md", f"{n}/new.md"]
    (hit,) = [h for h in hits(vault, "quetzal", include_expired=True, include_superseded=True, min_confidence=0.0)
              if h.path == f"{n}/hub.md"]
    assert hit.links == sorted(f"{n}/{p}.md" for p in ("expired", "unreadable", "old", "new", "shaky", "fine"))
    graph = found(vault, "quetzal", graph_hops=1)
    assert f"{n}/fine.md" in graph and not {f"{n}/{p}.md" for p in ("expired", "unreadable", "old", "shaky")} & set(graph)


@pytest.mark.parametrize("chain", [1, 2])
def test_a_link_to_a_superseded_note_names_its_successor(vault, chain):
    """A hit's links lead where a hit on the link's target would: to the newest note of its chain in force."""
    n = UNTYPED
    vault.write(f"{n}/v0.md", plain("three"))
    for i in range(1, chain + 1):
        vault.write(f"{n}/v{i}.md", plain(f"version {i}", f'supersedes: ["[[v{i - 1}]]"]\n'))
    vault.write(f"{n}/hub.md", "# Hub\nThe quokka rule lives in [[v0]].\n")
    vault.commit("links", "--no-verify")
    sync(vault)
    (hit,) = [h for h in hits(vault, "quokka") if h.path == f"{n}/hub.md"]
    assert hit.links == [f"{n}/v{chain}.md"]
    (hit,) = [h for h in hits(vault, "quokka", include_superseded=True) if h.path == f"{n}/hub.md"]
    assert hit.links == [f"{n}/v0.md"]


def test_an_index_of_the_previous_schema_converges(vault):
    from vaultsync.index.format import SCHEMA_VERSION

    vault.write(f"{UNTYPED}/old.md", plain("raven"))
    vault.write(f"{UNTYPED}/new.md", plain("ravennew", 'supersedes: ["[[old]]"]\n'))
    vault.commit("init")
    sync(vault)
    db_path = vault.root / ".git/vaultsync/index.sqlite"
    con = sqlite3.connect(db_path)
    with con:  # what an index of schema 10 looks like: no refs table, no unreadable column, the old fingerprint
        con.execute("DROP TABLE refs")
        con.execute("ALTER TABLE notes DROP COLUMN unreadable")
        con.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")
        con.execute("UPDATE meta SET value = 'fingerprint-of-10' WHERE key = 'config_hash'")
    con.close()
    from vaultsync.git import open_repo
    from vaultsync.engine import NoIndexError, open_searcher
    from vaultsync.vault.config import Config

    with pytest.raises(NoIndexError, match="vaultsync sync"):
        open_searcher(open_repo(vault.root), Config(), rerank="none")
    res = run_cli(["search", "raven"], vault.root)  # search syncs a missing or stale index itself
    hit_lines = [line for line in res.out.splitlines() if line[:1].isdigit()]
    assert res.code == 0 and "Traceback" not in res.err and not [h for h in hit_lines if "docs/notes/old.md" in h]
    assert "docs/notes/old.md: superseded by docs/notes/new.md — to show it: --include-superseded" in res.out
    con = sqlite3.connect(db_path)
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == SCHEMA_VERSION
    con.close()
    assert found(vault, "raven") == [f"{UNTYPED}/new.md"]


def test_check_reads_status_case_insensitively_for_supersession(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", status="Superseded", extra='superseded_by: "[[ADR-0002]]"\n'))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra="supersedes: [ADR-0001]\n"))
    lines = vault.check().lines
    assert not any("SS004" in line for line in lines), lines
    assert any("LC002" in line for line in lines)


@pytest.mark.parametrize("key", ["Status", "STATUS", "status", "sTaTuS"])
def test_ss004_names_the_key_it_wants_replaced(make_vault, key):
    """SS004's "set status: superseded" says which key to replace when the note wrote it in another case
    (a second `status:` under the miscased one would be a duplicate key for readers that fold case)."""
    old = plain("old", f'{key}: accepted\nsuperseded_by: "[[new]]"\n')
    vault = make_vault({f"{UNTYPED}/old.md": old, f"{UNTYPED}/new.md": plain("new", 'supersedes: ["[[old]]"]\n')})
    ss004 = [line for line in vault.check().lines if "SS004" in line]
    assert len(ss004) == 1, ss004
    assert ss004[0].endswith("set status: superseded" + (", or run `vaultsync check --fix`" if key == "status" else
                                                          f" (in place of {key}:, a key in another case)"))


@pytest.mark.parametrize("fields", [
    'status: accepted\nsuperseded_by: "[[new]]"\n',
    'status: "accepted"  # decided in March\nsuperseded_by: "[[new]]"\n',
    'superseded_by: "[[new]]"\n',  # no status yet: --fix adds the line
    'status: >-\n  accepted\nsuperseded_by: "[[new]]"\n',  # a folded block: by hand
    'status: [accepted]\nsuperseded_by: "[[new]]"\n',
    '{status: accepted, superseded_by: "[[new]]"}\n',  # a flow mapping: by hand
    'status: accepted\n',  # the back-reference is missing too: --fix writes both
    'status: accepted\nsuperseded_by: "[[new]]" # see the new one\n',
])
def test_ss004_advises_fix_exactly_where_fix_sets_the_status(make_vault, fields):
    """SS004 said "set status: superseded" without naming `check --fix`, which sets it: the advice is given
    where `--fix` makes the edit (the SS004 is gone from the next check) and only there."""
    vault = make_vault({f"{UNTYPED}/old.md": plain("old", fields),
                        f"{UNTYPED}/new.md": plain("new", 'supersedes: ["[[old]]"]\n')})
    vault.commit("c")
    ss004 = [line for line in vault.check().lines if "SS004" in line]
    assert len(ss004) == 1, ss004
    advised = "or run `vaultsync check --fix`" in ss004[0]
    vault.check("--fix")
    assert advised == (not [line for line in vault.check().lines if "SS004" in line]), ss004


def test_notes_are_never_rewritten(vault):
    files = {f"{UNTYPED}/a.md": plain("x", 'expires: "2020-1-1"\n'), f"{UNTYPED}/b.md": "---\ntitle: \x07\n---\n"}
    for path, text in files.items():
        vault.write(path, text)
    vault.commit("x", "--no-verify")
    sync(vault)
    vault.check()
    for path, text in files.items():
        assert (vault.root / path).read_bytes() == text.encode()


# --- property: any value of a filtering field is either read or hides the note ------------------

_TODAY = __import__("datetime").date(2026, 6, 1)
_SCALARS = st.one_of(
    st.sampled_from(["true", "false", "null", "~", ".nan", ".NaN", ".inf", "-.inf", "+.inf", "0", "1", "0.49",
                     "0.5", "-0.1", "1e3", "0x10", "2026-06-01", "2026-6-1", "2026-05-31", "2099-12-31",
                     "2026-02-30", "2026-06-01T10:00:00Z", "superseded", "Superseded", "SUPERSEDED",
                     "superseded by [[x]]", "accepted", "1" + "0" * 400, "-1" + "0" * 400, "[]", "{}", "[0.9]", "[2099-01-01]", "''", '""', '" "']),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), max_size=12)
    .map(lambda t: json.dumps(t, ensure_ascii=False)),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
)


def _readable(field: str, value) -> bool:  # type: ignore[no-untyped-def]
    """The specification, written independently of the reader: what each field must hold."""
    import datetime as dt
    import math
    import re

    if field == "expires":
        m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?)?",
                         value) if isinstance(value, str) else None
        try:
            return bool(m) and bool(dt.date.fromisoformat(m.group(1)))
        except ValueError:
            return False
    if field == "confidence":
        try:
            return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(float(value)) \
                and 0 <= value <= 1  # a probability
        except OverflowError:
            return False
    return isinstance(value, str) and bool(value.strip())


def _visible(field: str, value) -> bool:  # type: ignore[no-untyped-def]
    """Shown by default: absent, or readable and not filtered (expired, below 0.5, superseded)."""
    import datetime as dt
    import re

    if value is None:
        return True
    if not _readable(field, value):
        return False
    if field == "expires":
        return dt.date.fromisoformat(value[:10]) >= _TODAY
    if field == "confidence":
        return float(value) >= 0.5
    return value.strip().casefold() != "superseded" and not re.match(r"superseded\s+by\s", value.strip(), re.I)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["expires", "confidence", "status"]), source=_SCALARS)
def test_a_filtering_field_is_read_or_hides_the_note(tmp_path, field, source):
    from vaultsync.checks.lifecycle_values import check_lifecycle_fields
    from vaultsync.index.records import note_record
    from vaultsync.index.sqlite_store import SqliteStore
    from vaultsync.search.lifecycle import LifecyclePolicy, exclusions
    from vaultsync.vault.note import parse_text
    from vaultsync.vault.resolve import LinkIndex

    note = parse_text("n.md", f"---\n{field}: {source}\n---\nBody.\n")
    if note.fm_state != "mapping":
        return  # not a value of the field (a YAML error, reported as such)
    value = note.frontmatter.get(field)
    db = tmp_path / f"{abs(hash((field, source)))}.sqlite"
    store = SqliteStore(db)
    try:
        store.apply([], [note_record(note, "0" * 40, LinkIndex(["n.md"]), [], 100)], {})
        hidden = exclusions(store.db, LifecyclePolicy(today=_TODAY))
    finally:
        store.close()
        db.unlink()
    assert ("n.md" not in hidden) == _visible(field, value), (field, source, value, hidden.reasons)
    codes = {d.code for d in check_lifecycle_fields(note)}
    assert ("LC001" in codes) == (value is not None and not _readable(field, value)), (field, source, value, codes)


def test_control_characters_in_the_body_are_text(vault):
    body = "The sassafras note.\n" + "filler line\n" * 800 + "tail \x00 \x07 \x1b \ufffe end\n"
    assert len(body.encode()) > 8192
    vault.write(f"{UNTYPED}/body.md", "---\ntitle: Body\n---\n" + body)
    vault.commit("body")
    res = vault.check()
    assert res.code == 0 and "Traceback" not in res.err, res.out
    sync(vault)
    assert set(found(vault, "sassafras")) == {f"{UNTYPED}/body.md"}  # its long block is several chunks
    assert status(vault)["warnings"] == []


@pytest.mark.parametrize("frontmatter", [
    "title: Broken: yes\nstatus: accepted\n",      # YAML refuses the whole block (FM005)
    "status: [[Accepted]]\n",                       # a status that is no name
    "status: [[Accepted]]\nexpires: 2020-13-45\nconfidence: high\n",  # three filters hide it: three flags
])
def test_a_note_hidden_for_an_unreadable_field_is_not_called_superseded(vault, frontmatter):
    """The report names what hid it (an unreadable field, see status), not a supersession it never had."""
    import json

    from conftest import run_cli

    vault.write(f"{UNTYPED}/broken.md", f"---\n{frontmatter}---\n# Broken\nSome text about gRPC deadlines.\n")
    vault.commit("broken")
    sync(vault)
    res = run_cli(["search", "--no-daemon", "gRPC deadlines", "--format", "json"], vault.root)
    notes = {n["path"]: n for n in json.loads(res.out)["hidden"]["notes"]}
    reason = notes[f"{UNTYPED}/broken.md"]["reason"]
    assert reason.startswith("unreadable ") and "could not be read" in reason and "superseded" not in reason, reason
    flags = notes[f"{UNTYPED}/broken.md"]["show_with"].split()  # the flags it names show it, all of them together
    res = run_cli(["search", "--no-daemon", "gRPC deadlines", "--format", "json", *flags], vault.root)
    assert f"{UNTYPED}/broken.md" in {h["path"] for h in json.loads(res.out)["hits"]}, flags


# --- a lifecycle key in another case or spelling is read as the field it names ---------------

KEY_VARIANTS = [
    ("Expires", "expires: 2020-01-01\n", {"include_expired": True}),
    ("EXPIRES", "expires: 2021-06-30\n", {"include_expired": True}),
    ("Confidence", "confidence: 0.2\n", {"min_confidence": 0.0}),
    ("Status", "status: superseded\n", {"include_superseded": True}),
    ("Status", "status: Superseded by [[target]]\n", {"include_superseded": True}),  # MADR, key and value
    ("Superseded-By", 'superseded_by: "[[target]]"\n', {"include_superseded": True}),
    ("superseded by", 'superseded_by: "[[target]]"\n', {"include_superseded": True}),
    ('"expires "', "expires: 2019-12-31\n", {"include_expired": True}),
    ("supersededBy", 'superseded_by: "[[target]]"\n', {"include_superseded": True}),  # camel case
    ("SupersededBy", 'superseded_by: "[[target]]"\n', {"include_superseded": True}),
]


@pytest.mark.parametrize("folder", ["typed", "untyped"])
def test_a_lifecycle_key_in_another_case_is_read_and_warned(vault, folder):
    """`Expires: 2020-01-01` hid nothing: search read only the lower-case key. It is read as meant and
    ``check`` says how to write it (LC002, a warning), at the key; where a type's schema refuses the key, its
    SC003 (with the did-you-mean) says it instead."""
    variants = [v for v in KEY_VARIANTS if folder == "untyped" or v[0] != "Status"]  # an ADR writes `status`
    paths = {}
    for i, (key, fm, _) in enumerate(variants):
        word = f"wombat{chr(97 + i)}"
        line = key + fm[fm.index(":"):]
        path = f"docs/adrs/ADR-{2000 + i}.md" if folder == "typed" else f"{UNTYPED}/variant{i}.md"
        vault.write(path, adr(f"ADR-{2000 + i}", title=f"Note {word}", body=f"The {word} note.\n", extra=line)
                    if folder == "typed" else plain(word, line))
        paths[word] = path
    vault.write(f"{UNTYPED}/target.md", plain("targetword"))
    vault.commit("variants", "--no-verify")
    sync(vault)
    report = vault.check().lines
    for (word, path), (key, fm, include) in zip(paths.items(), variants):
        assert path not in found(vault, word), (key, fm)  # a superseded note's successor may stand in
        assert found(vault, word, **include)[0] == path, (key, fm)
        name = fm.split(":")[0]
        row = next(i for i, x in enumerate((vault.root / path).read_text().split("\n")) if x.startswith(key)) + 1
        written = key.strip(chr(34))
        assert f"{path}:{row}:1: LC002 warning: {written}: read as the lifecycle field '{name}' — write " \
               f"the key as '{name}'" in report or any(  # a typed folder's schema refuses the key: its error says it
            line.startswith(f"{path}:{row}:1: SC003 {key}: additional property not allowed")
            and line.endswith(f"; search reads it as the lifecycle field '{name}'") for line in report), (key, report)


def test_a_key_variant_never_overrides_the_field_written_as_is(vault):
    vault.write(f"{UNTYPED}/a.md", plain("numbat", 'expires: "2099-01-01"\nExpires: 2020-01-01\n'))
    vault.commit("both", "--no-verify")
    sync(vault)
    assert found(vault, "numbat") == [f"{UNTYPED}/a.md"]
    assert not [x for x in vault.check().lines if "LC002" in x]


@settings(max_examples=200, deadline=None)
@given(field=st.sampled_from(["expires", "confidence", "status", "supersedes", "superseded_by", "last_validated"]),
       spelling=st.lists(st.tuples(st.booleans(), st.sampled_from(["_", "-", " "])), min_size=14, max_size=14))
def test_any_case_or_separator_of_a_field_reads_as_the_field(field, spelling):
    """Property: a key that differs from a lifecycle field only by case and ``_``/``-``/space reads the same."""
    from vaultsync.vault.fields import key_variants
    from vaultsync.vault.lifecycle_fields import read_lifecycle

    key = "".join(sep if ch == "_" else (ch.upper() if up else ch) for ch, (up, sep) in zip(field, spelling))
    value = {"expires": "2020-01-01", "confidence": 0.3, "status": "superseded", "supersedes": ["[[a]]"],
             "superseded_by": "[[a]]", "last_validated": "2020-01-01"}[field]
    assert read_lifecycle({key: value}) == read_lifecycle({field: value})
    assert key_variants({key: value}) == ([] if key == field else [(key, field)])


@pytest.mark.parametrize("fm, expected", [
    ('Expires: "2020-01-01"\n', ["2:1: LC002", "2:10: DT004"]),  # the date checks read it too
    ('Last-Validated: "2999-01-01"\n', ["2:1: LC002", "2:17: DT003"]),
    ('EXPIRES: "2020-01-01"\nExpires: "2099-01-01"\n', ["2:1: LC002", "2:10: DT004", "3:1: LC003"]),
    ('expires: "2099-01-01"\nExpires: "2020-01-01"\n', ["3:1: LC003"]),
    ("ſtatus: superseded\n", ["2:1: LC004"]),  # ASCII case only: not read, so warned as a likely field
])
def test_every_lifecycle_check_reads_a_key_in_another_spelling(vault, fm, expected):
    vault.write(f"{UNTYPED}/a.md", plain("okapi", fm))
    got = [" ".join(x.split(" ")[:2]).replace(f"{UNTYPED}/a.md:", "") for x in vault.check().lines]
    assert got == expected


def test_a_supersession_in_another_spelling_is_whole_for_the_ss_checks_and_review(vault):
    """`Superseded-By:` hid the note in search while check called the pair incomplete (SS002/SS004)
    and `--fix` wrote a second key."""
    vault.write(f"{UNTYPED}/b.md", plain("bongo", 'Superseded-By: "[[c]]"\nStatus: superseded\n'))
    vault.write(f"{UNTYPED}/c.md", plain("civet", 'supersedes: ["[[b]]"]\n'))
    vault.write(f"{UNTYPED}/j.md", plain("jackal", "STATUS: superseded by [[k]]\n"))
    vault.write(f"{UNTYPED}/k.md", plain("kudu"))
    res = vault.check()
    assert not [x for x in res.lines if " SS00" in x and "/b.md" in x]
    assert any(x.startswith(f"{UNTYPED}/k.md:") and " SS002 " in x for x in res.lines), res.lines
    before = (vault.root / f"{UNTYPED}/b.md").read_text()
    vault.check("--fix")
    assert (vault.root / f"{UNTYPED}/b.md").read_text() == before


@pytest.mark.parametrize("written, link", [('["[[ADR-0002]]"]', "[[ADR-0002]]"),
                                           ("\n  - '[[ADR-0002]]'", "[[ADR-0002]]"),
                                           ('["[[ADR-0002|the new one]]"]', "[[ADR-0002|the new one]]")])
def test_a_quoted_link_in_a_list_is_told_to_stand_alone_not_quoted_again(make_vault, written, link):
    """`superseded_by: ["[[X]]"]` was told to write "[[[[X]]]]": the link is quoted already, the list is the
    mistake."""
    vault = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001", status="superseded", extra=f"superseded_by: {written}\n"),
                        "docs/adrs/ADR-0002.md": adr("ADR-0002", extra='supersedes: ["[[ADR-0001]]"]\n')})
    (sc,) = [line for line in vault.check().lines if " SC001 superseded_by" in line]
    assert f'got a list — write one value: "{link}"' in sc and "[[[[" not in sc, sc


@pytest.mark.parametrize("key, field", [
    ("supersededBy", "superseded_by"), ("SupersededBy", "superseded_by"), ("lastValidated", "last_validated"),
    ("ExPires", "expires"), ("STATUS", "status"), ("superseded_by", None), ("expiresAt", None), ("statusNote", None),
    ("supersedesBy", None), ("lastvalidated", None), ("Superseded_By", "superseded_by"),
])
def test_a_lifecycle_key_in_camel_case_names_its_field(key, field):
    """`supersededBy:` (camel case, as JSON-minded tools write it) was read as no field: the note stayed in
    search as if nothing superseded it."""
    from vaultsync.vault.fields import lifecycle_field_of

    assert lifecycle_field_of(key) == field


@pytest.mark.parametrize("statuses", [["open", "closed"], ["Open", "Retired"]])
@pytest.mark.parametrize("declared", ["supersedes", "superseded_by", "both"])
def test_a_type_whose_schema_has_no_superseded_status_is_not_asked_for_one(make_vault, statuses, declared):
    """SS004 asked a note of a type whose schema lists ``status: open | closed`` to set ``status: superseded``,
    and ``--fix`` set it: the next check failed on the fix itself (SC001 not one of: open, closed)."""
    import json

    schema = {"$ref": "https://vaultsync.dev/schemas/memory.schema.json",
              "properties": {"status": {"enum": statuses}}}
    config = ("vault: docs\ntypes:\n  adr: {folder: docs/adrs}\n  ticket: {folder: docs/tickets, schema: ticket.json}\n")
    old_extra = 'superseded_by: "[[ADR-0002]]"\n' if declared in ("superseded_by", "both") else ""
    new_extra = 'supersedes: ["[[T-0001]]"]\n' if declared in ("supersedes", "both") else ""
    vault = make_vault({".vaultsync.yaml": config, "ticket.json": json.dumps(schema),
                        "docs/tickets/T-0001.md": f"---\nmemory_id: T-0001\ntype: ticket\ntitle: A ticket\n"
                                                  f"status: {statuses[0]}\ncreated: \"2024-03-01\"\n{old_extra}---\nBody.\n",
                        "docs/adrs/ADR-0002.md": adr("ADR-0002", extra=new_extra)})
    vault.commit("c")
    vault.check("--fix")
    vault.git("add", "-A")
    res = vault.check()
    assert res.code == 0 and not [line for line in res.lines if "SS004" in line or "SC001" in line], res.lines
    assert f"status: {statuses[0]}" in (vault.root / "docs/tickets/T-0001.md").read_text()
