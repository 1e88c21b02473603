"""Token vectors kept in the index for the MaxSim rerank stage (ADR-0117): the stored rows, what search
reads of them, and the whole path through a real sync."""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Sequence

import numpy as np
import pytest
from conftest import CONFIG, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.index import token_vectors
from vaultsync.index.chunking import chunk_note, embed_text_of
from vaultsync.index.format import DDL
from vaultsync.models.maxsim import MaxSimReranker
from vaultsync.models.token_store import TokenCodec, content_key

DIM = 8


class Letters:
    """A token encoder that needs no model: one unit vector per distinct character, counting its calls."""

    dim = DIM

    def __init__(self) -> None:
        self.passages: list[str] = []

    def token_vectors(self, texts: Sequence[str], kind: str = "passage") -> list[np.ndarray]:
        if kind == "passage":
            self.passages += texts
        out = []
        for t in texts:
            rows = np.array([[np.cos(ord(ch) * (k + 1)) for k in range(DIM)] for ch in t if not ch.isspace()],
                            np.float32).reshape(-1, DIM)
            out.append(rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12))
        return out


def _db() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.executescript(DDL)
    return db


def _chunks(body: str):  # type: ignore[no-untyped-def]
    return chunk_note("n.md", "Title", f"# Title\n\n{body}\n", target_tokens=12)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(alphabet="abcdé日本 \n", min_size=1, max_size=40), min_size=1, max_size=6))
def test_stored_rows_score_as_the_encoder_does_and_are_encoded_once(paragraphs):  # type: ignore[no-untyped-def]
    chunks = _chunks("\n\n".join(p.strip() or "x" for p in paragraphs))
    encoder, db = Letters(), _db()
    rows = token_vectors.rows_for(chunks, db, encoder)
    assert set(rows) == {c.hash for c in chunks} and len(encoder.passages) == len(rows)
    db.executemany("INSERT INTO tokens VALUES (?,?,?,?)", [(c.id, c.path, c.hash, rows[c.hash]) for c in chunks])
    again = Letters()
    assert token_vectors.rows_for(chunks, db, again) == rows and again.passages == []  # kept: nothing encoded
    texts = [c.embed_text for c in chunks]
    stored = token_vectors.read(db, [c.hash for c in chunks], DIM)
    assert set(stored) == {c.hash for c in chunks} == {content_key(t) for t in texts}
    plain, reader = MaxSimReranker(Letters()), MaxSimReranker(again)
    expected = plain.score("abc 日本", texts)
    assert np.allclose(reader.score("abc 日本", texts, stored=stored), expected, atol=0.02)
    assert again.passages == []  # every candidate came from the index


def test_a_chunk_reads_as_the_embedder_read_it():
    for chunk in _chunks("First paragraph.\n\n## Part\n\nSecond one under a heading."):
        assert embed_text_of("Title", chunk.heading, chunk.text) == chunk.embed_text


def _blob(n: int, d: int, scale: float = 0.01) -> bytes:
    return TokenCodec.to_bytes(TokenCodec().encode(np.full((n, d), scale, np.float32)))


@pytest.mark.parametrize("blob", [
    b"", b"\x00" * 7, "text", 42, _blob(3, DIM + 1), _blob(3, DIM)[:-1], _blob(3, DIM) + b"\x00",
    struct.pack("<II", 10**6, DIM) + b"\x00" * 20,
    struct.pack("<II", 1, DIM) + np.array([np.nan], "<f2").tobytes() + b"\x01" * DIM,
])
def test_a_stored_row_of_another_shape_is_encoded_on_demand(blob):  # type: ignore[no-untyped-def]
    db, text = _db(), "Title\nsome passage"
    db.execute("INSERT INTO tokens VALUES ('n.md#0', 'n.md', ?, ?)", (content_key(text), blob))
    assert token_vectors.read(db, [content_key(text)], DIM) == {}
    encoder = Letters()
    score = MaxSimReranker(encoder).score("passage", [text], stored=token_vectors.read(db, [content_key(text)], DIM))
    assert encoder.passages == [text] and score[0] > 0


def test_a_stored_row_of_another_shape_is_encoded_again_by_the_next_sync():
    (chunk,) = _chunks("a short passage")
    db, encoder = _db(), Letters()
    db.execute("INSERT INTO tokens VALUES (?, ?, ?, ?)", (chunk.id, chunk.path, chunk.hash, _blob(2, DIM + 1)))
    rows = token_vectors.rows_for([chunk], db, encoder)
    assert encoder.passages == [chunk.embed_text] and rows[chunk.hash] != _blob(2, DIM + 1)
    assert token_vectors._well_formed(rows[chunk.hash], DIM)


def test_an_index_without_the_table_reads_nothing():
    assert token_vectors.read(sqlite3.connect(":memory:"), ["x"], DIM) == {}


def test_a_real_sync_keeps_token_vectors_only_where_maxsim_reranks(vault, model_env):
    from vaultsync.engine import open_searcher, options_for
    from vaultsync.git import open_repo
    from vaultsync.models.embedder import Embedder
    from vaultsync.cli.common import committed_config

    maxsim = CONFIG + "search:\n  rerank: maxsim\n"
    vault.write(".vaultsync.yaml", maxsim)
    vault.write("docs/chats/s1.md", "# Session 1\n\n**Mia**: I adopted a greyhound last week. ^a\n\n"
                "**Jon**: 週末はパンを焼いていました。 ^b\n")
    vault.write("docs/notes/lisbon.md", "# Lisbon\n\nMy sister moved to Lisbon and works at a bakery.\n")
    vault.write("docs/notes/empty.md", "---\ntitle: Greyhound adoption\n---\n")  # a chunk of its title alone
    vault.commit("notes")
    vault.synced()
    path = vault.root / ".git/vaultsync/index.sqlite"
    db = sqlite3.connect(path)
    chunks = dict(db.execute("SELECT hash, id FROM chunks"))
    stored = dict(db.execute("SELECT hash, vectors FROM tokens"))
    assert set(stored) == set(chunks)
    texts = {content_key(embed_text_of(t, h, x)): embed_text_of(t, h, x) for t, h, x in db.execute(
        "SELECT n.title, c.heading, c.text FROM chunks c JOIN notes n USING (path)")}
    e5 = Embedder.load()
    for key, vectors in token_vectors.read(db, list(texts), e5.dim).items():  # as the encoder gives them
        (fresh,) = e5.token_vectors([texts[key]])
        assert vectors.shape == fresh.shape and float((vectors * fresh).sum(axis=1).min()) > 0.99
    db.close()

    status = run_cli(["status"], vault.root)
    assert f"token vectors of {len(chunks)} chunks (MaxSim)" in status.out, status.out
    repo = open_repo(vault.root)
    config = committed_config(repo)
    searcher = open_searcher(repo, config, rerank="maxsim")[0]
    try:
        result = searcher.search("Mia adopted a greyhound last week?", options_for(config))  # the notes' words
        assert result.rerank and result.hits[0].path == "docs/chats/s1.md"
        assert searcher.reranker.source.misses == 0  # every candidate's tokens came from the index
        assert not [w for w in result.warnings if "rerank" in w]
        assert searcher.search("greyhound", options_for(config)).rerank  # a word of most notes: still the vault's
        for foreign in ("Welchen Hund hat Mia adoptiert?", "ミアはどの犬を飼いましたか"):  # not the notes' language
            said = searcher.search(foreign, options_for(config))
            assert said.rerank is None and any("left the order alone" in w for w in said.warnings), foreign
    finally:
        searcher.close()

    vault.write("docs/notes/lisbon.md", "# Lisbon\n\nMy sister moved to Porto and works at a bakery.\n")
    vault.commit("edit")
    vault.synced()
    db = sqlite3.connect(path)
    incremental = sorted(db.execute("SELECT id, path, hash, vectors FROM tokens"))
    assert {h for _, _, h, _ in incremental} == {h for (h,) in db.execute("SELECT hash FROM chunks")}
    db.close()
    assert run_cli(["index", "--rebuild"], vault.root).code == 0
    db = sqlite3.connect(path)
    assert sorted(db.execute("SELECT id, path, hash, vectors FROM tokens")) == incremental
    db.close()

    db = sqlite3.connect(path)
    db.execute("DROP TABLE tokens")  # a table of the index's schema gone: damage, rebuilt by the next sync
    db.commit()
    db.close()
    vault.write("docs/notes/lisbon.md", "# Lisbon\n\nMy sister moved to Porto.\n")
    vault.commit("after the damage")
    vault.synced()
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM tokens").fetchone()[0] == db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    db.close()

    vault.write(".vaultsync.yaml", CONFIG)  # the rerank stage is no longer MaxSim: the rows go
    vault.commit("no maxsim")
    vault.synced()
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM tokens").fetchone() == (0,)
    db.close()
    searcher = open_searcher(repo, committed_config(repo), rerank="maxsim")[0]
    try:  # asked for on an index that keeps none: it encodes, and says how to keep them
        said = searcher.search("Mia adopted a greyhound last week?", options_for(committed_config(repo)))
        assert said.rerank and any("encoded" in w and "search.rerank: maxsim" in w for w in said.warnings)
    finally:
        searcher.close()


def test_a_primary_embedder_without_token_vectors_still_indexes(make_vault, model_env):
    v = make_vault({".vaultsync.yaml": "vault: docs\nindex:\n  embedders: [use-multilingual, multilingual-e5-small]\n"
                                       "  token_vectors: true\n", "docs/a.md": "# A\n\nPayments settle nightly.\n"})
    v.commit("init")
    v.synced()
    db = sqlite3.connect(v.root / ".git/vaultsync/index.sqlite")
    assert db.execute("SELECT count(*) FROM chunks").fetchone()[0] > 0
    assert db.execute("SELECT count(*) FROM tokens").fetchone() == (0,)  # USE has none: MaxSim encodes on demand
    db.close()
