"""The check cache: a cached check says exactly what a fresh one says, re-reads only changed notes,
and forgets everything when the config, a schema or vaultsync changes; a broken cache only costs time."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import adr
from vaultsync.checks.cache import FILE_NAME, CheckCache, fingerprint
from vaultsync.checks.runner import load_checked_vault, run_checks
from vaultsync.git import WorktreeSnapshot
from vaultsync.vault import vault as vault_module
from vaultsync.vault.config import load_config

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from fuzz_check import generate  # noqa: E402

# every kind of per-note finding whose message or position the cache must carry: a date in the future,
# an unreadable lifecycle field (its raw text is quoted from the file), a comment cutting a title,
# schema and vocabulary errors, a YAML error, and links to headings, blocks, aliases and nowhere
NOTES = {
    "docs/adrs/ADR-0001-db.md": adr("ADR-0001", extra="tags: [database]\naliases: [The DB]\n",
                                    body="# Choice [[ADR-0002]] **now**\n\nSee [[ADR-0002-search#Why not|why]].\n"
                                         "A block. ^b1\n"),
    "docs/adrs/ADR-0002-search.md": adr("ADR-0002", title="Follow-up to INC #42 db lock",
                                        extra="last_validated: \"2999-01-01\"\nconfidence: 1.10\n",
                                        body="## Why not\n[[ADR-0001-db#^b1]] [[ADR-0001-db#^nope]] "
                                             "[[ADR-0001-db#Choice ADR-0002 now]] [[The DB]] [[missing]]\n"),
    "docs/adrs/ADR-0003-bad.md": adr("ADR-0003", status="Superseded", extra="expires: soon\ntags: [databse]\n"),
    "docs/adrs/ADR-0004-yaml.md": "---\nmemory_id: ADR-0004\ntitle: ADR: use SQLite\n---\nx\n",
    "docs/notes/plain.md": "no frontmatter, a link to [[ADR-0003-bad#Nowhere]] and \\[[escaped]]\n",
}


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    real = vault_module.parse_note

    def counting(path: str, data: bytes):  # type: ignore[no-untyped-def]
        parsed.append(path)
        return real(path, data)

    monkeypatch.setattr(vault_module, "parse_note", counting)
    return parsed


@pytest.fixture
def repo(make_vault):  # type: ignore[no-untyped-def]
    v = make_vault(dict(NOTES))
    rng = random.Random(5)
    for _ in range(60):
        name, data, _ = generate(rng)
        v.write(f"docs/adrs/{name}" if rng.random() < 0.5 else f"docs/notes/{name}", data)
    v.commit()
    return v


@pytest.mark.parametrize(("fmt", "jobs"), [("text", 1), ("json", 1), ("text", 2)])
def test_a_cached_check_says_exactly_what_a_fresh_one_says(repo, monkeypatch, fmt, jobs):
    monkeypatch.setenv("VAULTSYNC_CHECK_JOBS", str(jobs))
    monkeypatch.setattr(vault_module, "PARALLEL_MIN_NOTES", 10)  # 2 jobs: worker processes send notes packed
    fresh = repo.check("--staged", "--no-cache", "--format", fmt)
    assert fresh.code == 1 and "FM005" in fresh.out  # the vault has errors of every kind
    assert not (repo.root / ".git" / "vaultsync" / FILE_NAME).exists()  # --no-cache writes nothing
    first = repo.check("--staged", "--format", fmt)
    parsed = _count_parses(monkeypatch)
    again = repo.check("--staged", "--format", fmt)
    assert parsed == []  # every note came from the cache
    assert (first.code, first.out, first.err) == (fresh.code, fresh.out, fresh.err)
    assert (again.code, again.out, again.err) == (fresh.code, fresh.out, fresh.err)
    rev = repo.check("--rev", "HEAD", "--format", fmt)  # a commit's tree shares the blob ids
    assert (rev.code, rev.out) == (fresh.code, fresh.out)


def test_only_changed_notes_are_parsed_again_and_their_new_findings_show(repo, monkeypatch):
    repo.check("--staged")
    repo.write("docs/adrs/ADR-0001-db.md", adr("ADR-0001", extra="tags: [nosuchtag]\n"))
    repo.git("add", "-A")
    parsed = _count_parses(monkeypatch)
    result = repo.check("--staged")
    assert parsed == ["docs/adrs/ADR-0001-db.md"]
    assert "nosuchtag" in result.out
    assert "ADR-0001-db#^b1" in result.out  # the cached note's link to a block that is now gone
    assert result.out == repo.check("--staged", "--no-cache").out
    repo.write("docs/notes/plain.md", "now [[ADR-0001-db]]\n")  # the working tree: blob ids hashed from the bytes
    parsed.clear()
    work = repo.check()
    assert parsed == ["docs/notes/plain.md"] and work.out == repo.check("--no-cache").out


@pytest.mark.parametrize("change", ["vocabulary", "schema", "code"])
def test_a_new_config_schema_or_vaultsync_empties_the_cache(repo, monkeypatch, change):
    repo.check("--staged")
    if change == "vocabulary":
        config = (repo.root / ".vaultsync.yaml").read_text().replace("security]", "security, databse]")
        repo.write(".vaultsync.yaml", config)
    elif change == "schema":
        schema = {"type": "object", "required": ["memory_id", "owner"]}
        repo.write(".vaultsync.yaml", (repo.root / ".vaultsync.yaml").read_text().replace(
            "{folder: docs/adrs}", "{folder: docs/adrs, schema: adr.json}"))
        repo.write("adr.json", json.dumps(schema))
    else:  # an upgrade or a local edit of vaultsync itself
        import vaultsync.checks.cache as cache_module

        monkeypatch.setattr(cache_module, "_FORMAT", cache_module._FORMAT + 1)
    repo.git("add", "-A")
    parsed = _count_parses(monkeypatch)
    result = repo.check("--staged")
    assert len(parsed) == len([p for p in repo.git("ls-files", "-z").stdout.split("\0") if p.endswith(".md")])
    assert result.out == repo.check("--staged", "--no-cache").out
    if change == "schema":
        assert "owner" in result.out
        repo.write("adr.json", json.dumps({"type": "object", "required": ["memory_id", "ticket"]}))
        repo.git("add", "-A")
        assert "ticket" in repo.check("--staged").out  # the schema file's text, not only its name, counts
    if change == "vocabulary":
        assert "databse" not in result.out


@pytest.mark.parametrize("damage", ["garbage", "wrong-entry", "wrong-shape", "wrong-types", "not-a-file"])
def test_a_broken_cache_only_costs_time(repo, damage):
    fresh = repo.check("--staged", "--no-cache")
    cache_dir = repo.root / ".git" / "vaultsync"
    if damage == "garbage":
        cache_dir.mkdir(parents=True, exist_ok=True)
        (cache_dir / FILE_NAME).write_bytes(b"not a database" * 100)
    elif damage in ("wrong-entry", "wrong-shape", "wrong-types"):
        repo.check("--staged")
        import marshal
        import sqlite3

        with sqlite3.connect(cache_dir / FILE_NAME) as db:
            for key, value in db.execute("SELECT key, value FROM notes").fetchall():
                entry = list(marshal.loads(value))
                if damage == "wrong-entry":
                    bad = b"\x00\xff"
                elif damage == "wrong-shape":  # unpacks, but the frontmatter is a list
                    bad = marshal.dumps(tuple(entry[:5] + [["title", "x"]] + entry[6:]))
                else:  # the right shape holding values YAML never gives, headings of ints
                    entry[5] = {"title": {1, 2}, "tags": b"x"}
                    entry[9] = [(1, 2, 3)]
                    bad = marshal.dumps(tuple(entry))
                db.execute("UPDATE notes SET value = ? WHERE key = ?", (bad, key))
    else:  # cannot be opened at all (as a read-only folder would be, for anyone but root)
        (cache_dir / FILE_NAME).mkdir(parents=True)
    for _ in range(2):
        result = repo.check("--staged")
        assert (result.code, result.out, result.err) == (fresh.code, fresh.out, fresh.err)


def test_stale_entries_are_dropped_once_they_outnumber_the_vault(tmp_path):
    cache = CheckCache(tmp_path / FILE_NAME, "f")
    from vaultsync.vault.note import parse_note

    note = parse_note("a.md", b"---\nx: 1\n---\n")
    for i in range(3000):
        cache.store(f"n{i}.md", "0" * 40, note, [])
    cache.save()
    cache = CheckCache(tmp_path / FILE_NAME, "f")
    assert cache.lookup("n1.md", "0" * 40) is not None
    cache.save()  # only n1 was used this time: the 2,999 others go
    cache = CheckCache(tmp_path / FILE_NAME, "f")
    assert cache.lookup("n1.md", "0" * 40) is not None and cache.lookup("n2.md", "0" * 40) is None
    cache.save()
    assert CheckCache(tmp_path / FILE_NAME, "other").lookup("n1.md", "0" * 40) is None  # another fingerprint


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), edits=st.integers(0, 3))
def test_property_cached_and_fresh_checks_agree_on_generated_notes(tmp_path_factory, seed, edits):
    root = tmp_path_factory.mktemp("v")
    (root / ".vaultsync.yaml").write_text("vault: docs\ntypes:\n  adr: {folder: docs/adrs}\n", encoding="utf-8")
    rng = random.Random(seed)
    names = []
    for _ in range(12):
        name, data, _ = generate(rng)
        rel = f"docs/adrs/{name}" if rng.random() < 0.5 else f"docs/{name}"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
        names.append(rel)
    config = load_config(root)
    cache_file = root / "cache" / FILE_NAME

    def check(cached: bool) -> list[str]:
        cache = CheckCache(cache_file, fingerprint(config, root)) if cached else None
        vault = load_checked_vault(WorktreeSnapshot(root, config.vault), config, root, jobs=1, cache=cache)
        if cache is not None:
            cache.save()
        return [d.render() for d in run_checks(vault)]

    assert check(True) == check(False)
    for _ in range(edits):  # edit some notes; the rest still come from the cache
        name, data, _ = generate(rng)
        (root / rng.choice(names)).write_bytes(data)
        assert check(True) == check(False)
    assert check(True) == check(False)


def test_the_fingerprint_covers_the_built_in_schemas_outside_the_package(tmp_path, monkeypatch):
    """In a source checkout or an editable install the built-in schemas live in the repository's
    `schemas/`, not under `vaultsync/`: editing one must empty the cache too."""
    import os

    import vaultsync.checks.cache as cache_module

    (tmp_path / "adr.schema.json").write_text('{"type": "object"}', encoding="utf-8")
    monkeypatch.setattr(cache_module, "data_dir", lambda name: tmp_path)
    config = load_config(tmp_path)
    cache_module._code_version.cache_clear()
    before = fingerprint(config, tmp_path)
    (tmp_path / "adr.schema.json").write_text('{"type": "object", "required": ["x"]}', encoding="utf-8")
    os.utime(tmp_path / "adr.schema.json", ns=(1, 1))
    cache_module._code_version.cache_clear()
    try:
        assert fingerprint(config, tmp_path) != before
    finally:
        cache_module._code_version.cache_clear()


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_staged_note_whose_blob_is_missing_is_reported_and_never_cached(make_vault, monkeypatch, jobs):
    """FM015, exit 1, in the main process and in worker processes alike; the next run tries again."""
    monkeypatch.setenv("VAULTSYNC_CHECK_JOBS", str(jobs))
    monkeypatch.setattr(vault_module, "PARALLEL_MIN_NOTES", 1)
    v = make_vault({"docs/a.md": "# a\n"})
    v.git("add", "-A")
    v.git("update-index", "--add", "--cacheinfo", f"100644,{'1' * 40},docs/gone.md")
    for _ in range(2):
        res = v.check("--staged")
        assert res.code == 1 and res.lines == [
            "docs/gone.md:1:1: FM015 cannot read file: its git object is missing from the repository "
            "(a partial or damaged clone?)"]
