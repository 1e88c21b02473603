"""The block row cache (ADR-0121): an index built from cached embeddings takes its block rows from the
cache beside them, equal to the rows an encoder pass makes, and a cache that fails costs only time."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from conftest import assert_same_index, factory_with, index_state
from hypothesis import given
from hypothesis import strategies as st

from vaultsync.git import open_repo
from vaultsync.index.block_vectors import cache_key
from vaultsync.index.embedding_cache import BlockRowCache
from vaultsync.index.layout import layout_for
from vaultsync.index.sync import sync

NOTES = 40  # more chunks than CACHE_LOOKUP_MIN, so the rebuild looks the caches up


class CountingEmbedder:
    """The real embedder, counting the texts it encodes."""

    def __init__(self, inner) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.encoded = inner, 0

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.inner, name)

    def embed_with_blocks(self, texts, spans):  # type: ignore[no-untyped-def]
        self.encoded += len(texts)
        return self.inner.embed_with_blocks(texts, spans)

    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        self.encoded += len(texts)
        return self.inner.embed_passages(texts)


def _rebuild(root, embedder) -> CountingEmbedder:  # type: ignore[no-untyped-def]
    """Delete the worktree's index (the caches stay) and sync again: how a rebuild or a new worktree starts."""
    for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm", "lance", "legs"):
        path = root / ".git/vaultsync" / name
        shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    spy = CountingEmbedder(embedder)
    report = sync(open_repo(root), embedder_factory=factory_with(spy), wait=60)
    assert report.status == "updated", report
    return spy


def test_a_rebuild_takes_every_block_row_from_the_cache_and_a_damaged_cache_is_made_again(vault, embedder):
    for i in range(NOTES):
        paragraphs = [f"Step {j} of runbook {i}: rotate the key vault{i} and page team {j}." for j in range(3)]
        vault.write(f"docs/runbooks/rb-{i:02d}.md", f"# Runbook {i}\n\n" + "\n\n".join(paragraphs) + "\n")
    vault.write("docs/same.md", "---\ntitle: Same\n---\nSummary\nOne line.\n\n## Summary\n\nOne line.\n")  # one hash
    vault.commit("runbooks")
    first = _rebuild(vault.root, embedder)
    assert first.encoded > NOTES  # the first build encodes (the embedding cache may hold vectors, never blocks)
    built = index_state(vault.root)
    assert built["blocks"] and len(built["blocks"]) >= NOTES

    again = _rebuild(vault.root, embedder)
    assert again.encoded == 0  # vectors and block rows all came from the caches
    assert_same_index(index_state(vault.root), built)

    caches = vault.root / ".git/vaultsync/embeddings"
    for damage, tables in ((_no_table_in_its_folder, ""), (_a_file_in_its_place, ""),
                           (_truncated_data, "blocks_"), (_data_removed, "blocks_"), (_truncated_data, "embeddings_")):
        for table in caches.glob(f"{tables}*.lance"):
            damage(table)
        damaged = _rebuild(vault.root, embedder)  # a sync never fails on its caches (it failed on these)
        assert damaged.encoded >= len(built["blocks"]), damage  # encoded once more ...
        assert_same_index(index_state(vault.root), built)  # ... to the same rows
        if tables != "embeddings_":  # (a damaged data file is found when it is read: the next sync remakes it)
            assert _rebuild(vault.root, embedder).encoded == 0, damage  # the cache made again serves the next
    shutil.rmtree(caches)
    caches.write_text("not a folder")  # no cache can be made: every rebuild encodes, and succeeds
    assert _rebuild(vault.root, embedder).encoded > 0
    assert_same_index(index_state(vault.root), built)


def _no_table_in_its_folder(table):  # type: ignore[no-untyped-def]
    shutil.rmtree(table)
    table.mkdir()
    (table / "_versions").write_text("not lance")


# The sync's SQLite commit (SqliteStore.apply), spied on in a fresh process: is LanceDB imported by then?
_SPY = """import sys
from vaultsync.index.sqlite_store import SqliteStore
apply = SqliteStore.apply
def spy(self, *args, **kwargs):
    print("LANCEDB_AT_COMMIT", "lancedb" in sys.modules)
    return apply(self, *args, **kwargs)
SqliteStore.apply = spy
from vaultsync.cli.main import main
sys.exit(main(["sync", "--quiet"]))
"""


@pytest.mark.parametrize("change", ["a new note", "an edited paragraph", "three new notes"])
def test_a_small_change_is_searchable_before_lancedb_is_imported_and_its_rows_are_cached(vault, embedder, model_env,
                                                                                          change):
    """ADR-0006: below CACHE_LOOKUP_MIN new vectors a sync embeds without LanceDB and caches the vectors and
    block rows after its SQLite commit (the block rows once opened the cache first: ~2.5 s more to searchable)."""
    for i in range(NOTES):  # a rebuild of more chunks than CACHE_LOOKUP_MIN reads the caches
        vault.write(f"docs/rb-{i}.md", f"# Runbook {i}\n\nRotate the key vault{i}.\n\nThen page team {i}.\n")
    vault.commit("runbooks")
    assert sync(open_repo(vault.root), embedder_factory=factory_with(embedder), wait=60).status == "updated"
    if change == "an edited paragraph":
        vault.write("docs/rb-1.md", "# Runbook 1\n\nRotate the key vault1 twice.\n\nThen page team 1.\n")
    for i in range({"a new note": 1, "three new notes": 3}.get(change, 0)):
        vault.write(f"docs/new-{i}.md", f"# New {i}\n\nThe freshword{i} paragraph.\n\nAnother one.\n")
    vault.commit(change)
    res = subprocess.run([sys.executable, "-c", _SPY], cwd=vault.root, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and "LANCEDB_AT_COMMIT False" in res.stdout, (res.stdout, res.stderr)
    assert _rebuild(vault.root, embedder).encoded == 0  # the new vectors and block rows reached the caches
    keys = BlockRowCache(layout_for(open_repo(vault.root)).embeddings, 384)._table.to_arrow().column("key").to_pylist()
    assert len(keys) == len(set(keys)) >= NOTES  # each row once, however many syncs made it


def _truncated_data(table):  # type: ignore[no-untyped-def]
    for data in (table / "data").iterdir():
        with data.open("r+b") as fh:
            fh.truncate(100)


def _data_removed(table):  # type: ignore[no-untyped-def]
    for data in (table / "data").iterdir():
        data.unlink()


def _a_file_in_its_place(table):  # type: ignore[no-untyped-def]
    shutil.rmtree(table)
    table.write_text("junk")


@given(st.text(min_size=1, max_size=12), st.lists(st.tuples(st.integers(0, 500), st.integers(0, 500),
                                                            st.lists(st.text(max_size=6), max_size=2)), max_size=4),
       st.lists(st.tuples(st.integers(0, 500), st.integers(0, 500), st.lists(st.text(max_size=6), max_size=2)),
                max_size=4))
def test_cache_keys_differ_exactly_where_hash_spans_or_block_ids_differ(content, spans, other):  # type: ignore[no-untyped-def]
    def key(h, s):  # type: ignore[no-untyped-def]
        return h, tuple((a, b, tuple(ids)) for a, b, ids in s)

    assert (cache_key("m", key(content, spans)) == cache_key("m", key(content, other))) == (
        key(content, spans) == key(content, other))
    assert cache_key("m", key(content, spans)) != cache_key("m", key(content + "x", spans))
    assert cache_key("m", key(content, spans)) != cache_key("n", key(content, spans))
