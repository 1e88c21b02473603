"""What a build holds at once: one embedder's weights at a time (two models loaded together were
~375 MiB of a 10,000-note build's 1.2 GiB peak), with token counts still from the primary's tokenizer.

Real git, SQLite and LanceDB; the embedders are the hashing stand-in, so that the test can see
which of them are still alive when the next one loads. Peak RSS is measured by bench/bench_index.py.
"""

from __future__ import annotations

import json
import sqlite3
import weakref

import pytest
from conftest import HashEmbedder, Vault

pytestmark = pytest.mark.slow

CONFIG = "vault: docs\nindex:\n  embedders: [multilingual-e5-small, use-multilingual]\n"


class Tokenising(HashEmbedder):
    def count_tokens(self, texts):  # type: ignore[no-untyped-def]
        return [len(t.split()) + 1000 for t in texts]  # unlike any estimate


@pytest.mark.parametrize("notes", [3, 40])  # below and past the batch-by-batch cache writes
def test_a_build_loads_one_embedder_at_a_time_and_counts_tokens_with_the_primary(vault: Vault, monkeypatch, notes):
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.sync import sync

    monkeypatch.setattr("vaultsync.index.embedding.current_model_id", lambda config, name: None)
    vault.write(".vaultsync.yaml", CONFIG)
    for i in range(notes):
        vault.write(f"docs/n{i:02d}.md", f"# Note {i}\nWords of note {i} about topic {i % 5}.\n")
    vault.commit("init")
    alive: list[weakref.ref[Tokenising]] = []
    loads: list[tuple[str, int]] = []  # (embedder, how many earlier embedders were still alive)

    def factory(config, name):  # type: ignore[no-untyped-def]
        loads.append((name, sum(ref() is not None for ref in alive)))
        embedder = Tokenising(name)
        alive.append(weakref.ref(embedder))
        return embedder

    report = sync(open_repo(vault.root), rebuild=True, embedder_factory=factory, wait=60)
    assert report.chunks_embedded == 2 * notes
    assert loads == [("multilingual-e5-small", 0), ("use-multilingual", 0)]
    with sqlite3.connect(layout_for(open_repo(vault.root)).sqlite) as db:
        texts = dict(db.execute("SELECT text, tokens FROM chunks"))
        meta = dict(db.execute("SELECT key, value FROM meta"))
        models = {m for (m,) in db.execute("SELECT DISTINCT model FROM vectors")}
    assert texts == {t: len(t.split()) + 1000 for t in texts}
    assert meta["token_counter"] == "hash-multilingual-e5-small tokenizer"
    assert models == {"hash-multilingual-e5-small", "hash-use-multilingual"}
    assert json.loads(meta["embed_models"])["use-multilingual"]["dim"] == 16
