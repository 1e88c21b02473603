"""Durable embedding progress (ADR-0070): a sync stopped mid-way — by an error, its hook timeout or
SIGKILL — keeps every batch that reached the embedding cache, the next sync embeds only the rest
and ends with the index a clean rebuild builds; ``vaultsync status`` shows ``n / N chunks, ETA``
while it runs and what was kept after it stopped.

Real git, SQLite and LanceDB in temporary repositories, the real multilingual-e5-small; batches of
8 chunks so that a small vault takes several.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import Vault, assert_same_index, index_state, run_cli

from vaultsync.index.progress import SyncProgress, describe, eta_seconds, read_progress

pytestmark = pytest.mark.slow

BATCH = 8
CONFIG = "vault: docs\nindex:\n  embedders: [multilingual-e5-small]\n"


class Counting:
    """The real embedder, counting what it embeds; ``on_batch(n)`` runs after the n-th batch. It offers no
    block vectors (ADR-0116), so every chunk goes through ``embed_passages`` and is counted."""

    def __init__(self, inner, on_batch=None) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.on_batch, self.texts, self.batches = inner, on_batch, [], 0

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        if name == "embed_with_blocks":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        out = self.inner.embed_passages(texts)
        self.texts.extend(texts)
        self.batches += 1
        if self.on_batch is not None:
            self.on_batch(self.batches)
        return out


class Stop(Exception):
    pass


@pytest.fixture
def small_batches(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr("vaultsync.index.embedding.FLUSH_EVERY", BATCH)


@pytest.fixture
def notes(vault: Vault) -> Vault:
    """24 one-chunk notes: 48 texts to embed (each note's chunk and its name), 6 batches."""
    vault.write(".vaultsync.yaml", CONFIG)
    for i in range(24):
        vault.write(f"docs/n{i:02d}.md", f"# Topic {i}\nThe resumable{i}x note, number {i}, about topic {i}.\n")
    vault.commit("init")
    return vault


def _sync(root: Path, embedder, rebuild: bool = False):  # type: ignore[no-untyped-def]
    from vaultsync.git import open_repo
    from vaultsync.index.sync import sync

    return sync(open_repo(root), rebuild=rebuild, embedder_factory=lambda config, name: embedder, wait=60)


def _status(root: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(run_cli(["status", "--format", "json"], root).out)


def _clean_rebuild(vault: Vault, embedder) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """The index ``index --rebuild`` builds with an empty embedding cache (through :class:`Counting`, as the
    syncs it is compared with)."""
    shutil.rmtree(vault.root / ".git/vaultsync/embeddings")
    _sync(vault.root, Counting(embedder), rebuild=True)
    return index_state(vault.root)


def test_an_interrupted_sync_resumes_embedding_only_what_is_missing(notes, embedder, small_batches):
    seen: list[dict] = []  # type: ignore[type-arg]

    def after(n: int) -> None:
        if n == 2:  # the second batch is computed but not stored yet: it is the one lost
            info = _status(notes.root)
            seen.append(info)
            seen.append({"text": run_cli(["status"], notes.root).out})
        if n == 3:
            raise Stop

    first = Counting(embedder, after)
    with pytest.raises(Stop):
        _sync(notes.root, first)
    info, text = seen[0], seen[1]["text"]
    assert info["sync_running"] and info["progress"]["done"] == BATCH and info["progress"]["total"] == 48
    assert info["progress"]["eta_s"] is not None
    assert f"progress    {BATCH} / 48 texts embedded (chunks and note names; multilingual-e5-small, embedder 1 of 1), " \
        "ETA" in text
    assert not (notes.root / ".git/vaultsync/progress.json").exists()  # the sync that ended removed it
    assert _status(notes.root)["indexed_commit"] is None  # nothing half-applied
    second = Counting(embedder)
    report = _sync(notes.root, second)
    assert report.status == "updated" and report.chunks_embedded == 48 - 2 * BATCH
    assert not set(second.texts) & set(first.texts[:2 * BATCH])  # the stored batches are never embedded again
    assert len(second.texts) == 48 - 2 * BATCH
    assert _cache_keys(notes.root) == {f"{embedder.model_id}|{h}" for h in _index_hashes(notes.root)}  # each once
    resumed = index_state(notes.root)
    assert_same_index(resumed, _clean_rebuild(notes, embedder))


def _cache_keys(root: Path) -> set[str]:
    """The embedding cache's keys; asserts that none is stored twice (a build appends its batches)."""
    from vaultsync.index.embedding_cache import EmbeddingCache

    table = EmbeddingCache(root / ".git/vaultsync/embeddings", 384)._table
    keys = table.to_arrow().column("key").to_pylist()
    assert len(keys) == len(set(keys)), "a key stored twice"
    return set(keys)


def _index_hashes(root: Path) -> set[str]:
    import sqlite3

    with sqlite3.connect(root / ".git/vaultsync/index.sqlite") as db:
        return {h for (h,) in db.execute("SELECT DISTINCT hash FROM vectors")}


@pytest.mark.parametrize("copies", [1, 2, 4])
def test_the_cache_reads_every_key_however_often_it_was_appended(tmp_path, copies):
    """Two worktrees may append the same key at once: every key still reads back, in batches of any size."""
    import numpy as np

    from vaultsync.index.embedding_cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path, 8)
    hashes = [f"h{i:05d}" for i in range(2500)]
    vectors = np.random.default_rng(copies).standard_normal((len(hashes), 8)).astype(np.float32)
    for _ in range(copies):
        cache.append("m", hashes, vectors)
    cache.put("m", hashes[:10], vectors[:10] + 1)  # put keeps what is there
    found = cache.get("m", hashes)
    assert len(found) == len(hashes) and all(np.array_equal(found[h], v) for h, v in zip(hashes, vectors, strict=True))
    assert cache.get("other", hashes[:5]) == {} and cache.get("other", hashes) == {}
    few = cache.get("m", hashes[:7] + ["absent"])  # one filtered query (the 2,500 above: one scan)
    assert set(few) == set(hashes[:7]) and all(np.array_equal(few[h], vectors[i]) for i, h in enumerate(hashes[:7]))


CHILD = textwrap.dedent("""
    import os, signal, sys, time
    import vaultsync.index.embedding as embedding
    embedding.FLUSH_EVERY = {batch}
    real, calls = embedding.default_embedder, []

    class Stopping:
        def __init__(self, inner):
            self.inner = inner
        def __getattr__(self, name):
            if name == "embed_with_blocks":  # every batch through embed_passages
                raise AttributeError(name)
            return getattr(self.inner, name)
        def embed_passages(self, texts):
            calls.append(len(texts))
            if len(calls) == {stop_at}:  # the batches before it are stored, this one is under way
                {stop}
                time.sleep(30)
            return self.inner.embed_passages(texts)

    embedding.default_embedder = lambda config, name=None: Stopping(real(config, name))
    from vaultsync.cli.main import main
    sys.exit(main(["sync", "--hook", "post-commit", "--quiet"]))
""")
STOPS = {"timeout": "signal.setitimer(signal.ITIMER_REAL, 0.01)",  # the hook's deadline, now
         "kill": "os.kill(os.getpid(), signal.SIGKILL)"}


def _stopped_hook_sync(root: Path, how: str, stop_at: int) -> dict:  # type: ignore[type-arg]
    env = {**os.environ, "VAULTSYNC_SYNC_TIMEOUT": "600"}
    child = CHILD.format(batch=BATCH, stop=STOPS[how], stop_at=stop_at)
    res = subprocess.run([sys.executable, "-c", child], cwd=root, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == (0 if how == "timeout" else -9), res.stderr
    info = _status(root)
    assert not info["sync_running"] and not info["up_to_date"] and "progress" not in info
    text = run_cli(["status"], root).out
    assert f"last error  {info['last_error']}" in text and "a sync is running" not in text
    return info


def test_a_hook_sync_killed_or_stopped_by_its_deadline_is_reported_and_resumed(notes, embedder):
    info = _stopped_hook_sync(notes.root, "kill", 3)  # SIGKILL in its third batch: two kept
    assert ("was killed before it finished after 16 / 48 texts embedded (chunks and note names; multilingual-e5-small, "
            "embedder 1 of 1), kept; the next sync resumes") in info["last_error"], info["last_error"]
    info = _stopped_hook_sync(notes.root, "timeout", 3)  # resumes from 16, stopped in its third batch
    assert info["last_error"] == ("SyncTimeout: sync timed out after 600 s (VAULTSYNC_SYNC_TIMEOUT) with 32 / 48 "
                                  "texts embedded (chunks and note names; multilingual-e5-small, embedder 1 of 1), "
                                  "kept; the next sync resumes")
    resumed = Counting(embedder)
    assert _sync(notes.root, resumed).chunks_embedded == 48 - 32 == len(resumed.texts)
    assert _status(notes.root)["up_to_date"]


def test_progress_record_is_atomic_and_gives_an_eta(tmp_path):
    path = tmp_path / "progress.json"
    progress = SyncProgress(path, bar=True)  # the bar draws on stderr; off a terminal it shows nothing
    progress.start("m", 1, 2, total=1000, done=100)
    record = read_progress(path, os.getpid())
    assert record is not None and eta_seconds(record) is None and "ETA" not in describe(record)
    record.update(embedded=100, done=200, since=0.0, updated=10.0)  # 100 chunks in 10 s: 800 left take 80 s
    assert eta_seconds(record, now=10.0) == 80.0 and eta_seconds(record, now=30.0) == 60.0
    assert describe(record, now=10.0) == "200 / 1,000 texts embedded (chunks and note names; m, embedder 1 of 2), ETA 80 s"
    progress.advance(50)
    assert read_progress(path)["done"] == 150 and read_progress(path, os.getpid() + 1) is None  # type: ignore[index]
    assert [p.name for p in tmp_path.iterdir()] == ["progress.json"]  # no temporary file left
    record.update(leg=2, done=1000)
    assert describe(record) == "1,000 / 1,000 texts embedded (chunks and note names; m, embedder 2 of 2); writing the index"
    progress.close()
    assert not path.exists() and read_progress(path) is None
    path.write_text("{not json")
    assert read_progress(path) is None
