"""A dense leg's arrays are cached beside the index for its generation and memory-mapped by the next
process (ADR-0089): the cached leg answers exactly as the leg read from SQLite, a file of another
state is never read, a damaged or unwritable cache costs the SQLite read and nothing else.

Real git, real sync, real SQLite files; the embedder is the deterministic hashing stand-in.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import numpy as np
import pytest
from conftest import QueryHash, Vault, adr
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.search import leg_cache

CONFIG = "vault: docs\nindex:\n  embedders: [multilingual-e5-small]\n"
MODEL = "multilingual-e5-small"
WORDS = "cache index shard replica latency budget rollout canary queue retry backoff lock schema".split()


def _note(i: int, extra_words: str = "") -> str:
    body = " ".join(WORDS[(i * 5 + k) % len(WORDS)] for k in range(60)) + f" {extra_words}\n"
    return adr(f"ADR-{i:04d}", f"Decision {i}", body=f"## Part\n{body}\n## Más · 日本語\n{body}")


@pytest.fixture
def vault(make_vault, hashed_models) -> Vault:  # type: ignore[no-untyped-def]
    v = make_vault({".vaultsync.yaml": CONFIG, **{f"docs/adr/ADR-{i:04d}.md": _note(i) for i in range(12)}})
    v.commit("init")
    v.synced()
    return v


def _sqlite(v: Vault) -> Path:
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for

    return layout_for(open_repo(v.root)).sqlite


def _generation(v: Vault) -> str:
    with sqlite3.connect(_sqlite(v)) as db:
        return db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0]


def _leg(v: Vault, cached: bool = True):  # type: ignore[no-untyped-def]
    from vaultsync.search.pipeline import Searcher

    searcher = Searcher(_sqlite(v), {MODEL: QueryHash(MODEL)}, relevance_model=None)
    if not cached:  # the same index read from SQLite only
        from vaultsync.search.dense import load_leg

        return load_leg(searcher.db, "dense", QueryHash(MODEL), {"id": f"hash-{MODEL}", "dim": 16})
    return searcher.legs[0]


def _answers(leg) -> list[object]:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    out: list[object] = []
    for q in rng.random((8, 16), dtype=np.float32) + 0.5:
        q /= np.linalg.norm(q)
        out.append([(c.rowid, round(c.score, 5)) for c in leg.top_chunks(q, 10, None)])
        out.append([(c.rowid, round(c.score, 5)) for c in leg.top_chunks(q, 10, {"docs/adr/ADR-0003.md"})])
        out.append([(p, round(s, 5)) for p, s in leg.top_names(q, 5, None, "docs/")])
    return out


def _files(v: Vault) -> list[Path]:
    return sorted((_sqlite(v).parent / "legs").glob("*.leg"))


def test_the_cached_leg_answers_as_the_leg_read_from_sqlite(vault, monkeypatch):
    first = _leg(vault)  # reads SQLite, writes the cache
    assert len(_files(vault)) == 1
    monkeypatch.setattr("vaultsync.search.dense._read_leg", lambda *a: pytest.fail("SQLite read despite the cache"))
    second = _leg(vault)
    assert not second.chunks.codes.flags.writeable  # mapped from the file
    assert _answers(second) == _answers(first)
    monkeypatch.undo()
    assert _answers(second) == _answers(_leg(vault, cached=False))


def test_a_sync_that_changes_notes_gives_a_new_generation_and_the_old_file_goes(vault):
    _leg(vault)
    before, old_files = _generation(vault), _files(vault)
    vault.synced()  # nothing changed: the cache stays valid
    assert _generation(vault) == before
    vault.write("docs/adr/ADR-0100.md", _note(100, "zeppelin"))
    vault.write("docs/adr/ADR-0001.md", _note(1, "edited"))
    vault.commit("change")
    vault.synced()
    assert _generation(vault) != before
    leg = _leg(vault)
    assert _files(vault) != old_files and len(_files(vault)) == 1
    assert "docs/adr/ADR-0100.md" in set(leg.chunk_paths)
    assert _answers(leg) == _answers(_leg(vault, cached=False))


@pytest.mark.parametrize("damage", ["truncate", "empty", "garbage", "header", "other-key"])
def test_a_damaged_cache_file_is_ignored_and_rewritten(vault, damage):
    expected = _answers(_leg(vault))
    (path,) = _files(vault)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif damage == "header":
        path.write_bytes(data.replace(b'"arrays"', b'"arrayz"', 1))
    else:
        path.write_bytes(data.replace(_generation(vault).encode(), b"0" * 32, 1))
    assert _answers(_leg(vault)) == expected
    assert path.read_bytes() == data  # written again, whole


def test_an_unwritable_index_folder_costs_only_the_cache(vault):
    folder = _sqlite(vault).parent / "legs"
    folder.mkdir()
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        assert _answers(_leg(vault)) == _answers(_leg(vault, cached=False))
        assert _files(vault) == []
    finally:
        folder.chmod(stat.S_IRWXU)


def test_an_index_without_a_generation_reads_sqlite_and_writes_nothing(vault):
    with sqlite3.connect(_sqlite(vault)) as db:
        db.execute("DELETE FROM meta WHERE key = 'generation'")
    assert _answers(_leg(vault)) == _answers(_leg(vault, cached=False))
    assert _files(vault) == []


_text = st.text(st.characters(blacklist_characters="\0"), max_size=40)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 50), dim=st.integers(1, 40), names=st.lists(_text, max_size=30), seed=st.integers(0, 2**31))
def test_save_then_load_gives_back_every_array_and_string(tmp_path_factory, n, dim, names, seed):
    rng = np.random.default_rng(seed)
    folder = tmp_path_factory.mktemp("legs")
    arrays = {"rowids": rng.integers(-2**62, 2**62, n), "codes": rng.integers(-127, 128, (n, dim)).astype(np.int8),
              "scales": rng.random(n, dtype=np.float32)}
    strings = {"paths": [f"p/{i}·é.md" for i in range(n)], "names": names}
    assert leg_cache.save(folder, "m", "g" * 32, dim, arrays, strings)
    loaded = leg_cache.load(folder, "m", "g" * 32, dim)
    assert loaded is not None
    got, got_strings = loaded
    for name, arr in arrays.items():
        assert got[name].dtype == arr.dtype and np.array_equal(got[name], arr)
        assert not got[name].flags.writeable
    assert got_strings == strings
    assert leg_cache.load(folder, "m", "g" * 32, dim + 1) is None  # another key
    assert leg_cache.load(folder, "other", "g" * 32, dim) is None


def test_a_string_holding_nul_is_not_cached(tmp_path):
    assert not leg_cache.save(tmp_path, "m", "g", 1, {"a": np.zeros(1)}, {"ids": ["a\0b"]})
    assert list(tmp_path.iterdir()) == []
