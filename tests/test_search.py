"""The search pipeline, CLI and daemon: stages, lifecycle filters, formats, the warm daemon,
and cross-lingual queries on the real Obsidian help vault through git hooks and `git memsearch`."""

from __future__ import annotations

import datetime as dt
import json
import random
import socket
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import Vault, adr, git, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultsync.search.budget import cut
from vaultsync.search.fusion import rerank_order, rrf
from vaultsync.search.scoring import blend, recency

pytestmark = pytest.mark.slow
TODAY = dt.date.today()


def sync(root: Path):  # type: ignore[no-untyped-def]
    from vaultsync.git import open_repo
    from vaultsync.index.sync import sync as do_sync

    return do_sync(open_repo(root), wait=60)


def searcher(root: Path):  # type: ignore[no-untyped-def]
    from vaultsync.git import open_repo
    from vaultsync.engine import open_searcher
    from vaultsync.vault.config import Config

    return open_searcher(open_repo(root), Config(), rerank="none")


# --- small pure stages -------------------------------------------------------------------------

def test_rrf_weights_and_k():
    fused = rrf({"a": ["x", "y", "z"], "b": ["y", "x"]}, k=60)
    assert [k for k, _ in fused] == ["x", "y", "z"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert [k for k, _ in rrf({"a": ["x", "y"], "b": ["y", "x"]}, {"a": 0.0, "b": 1.0})] == ["y", "x"]


def test_rerank_order_alone_or_fused_with_the_first_stage():
    ids, scores = ["a", "b", "c"], [0.1, 0.2, 0.9]
    assert rerank_order(ids, scores) == rerank_order(ids, scores, 1.0) == ["c", "b", "a"]
    assert rerank_order(ids, scores, 0.0) == ["a", "b", "c"]
    assert rerank_order(ids, scores, 0.6)[0] == "c" and rerank_order(ids, scores, 0.4)[0] == "a"


def test_budget_cut_keeps_first_and_skips_what_does_not_fit():
    assert cut(["a", "b", "c", "d"], [900, 400, 200, 100], budget=1200, top_k=3) == ["a", "c", "d"]
    assert cut(["a"], [5000], budget=100, top_k=5) == ["a"]
    assert cut(["a", "b"], [1, 1], budget=100, top_k=1) == ["a"]


def test_blend_importance_and_recency():
    scores = blend([1.0, 1.0], [10, 1], [TODAY.isoformat(), "2000-01-01"], TODAY, 0.1, 0.05, 365)
    assert scores[0] > scores[1]
    assert recency(None, TODAY, 365) == 0.5 and recency(TODAY.isoformat(), TODAY, 365) == 1.0


# --- the pipeline on a vault with lifecycle fields -----------------------------------------------

def _lifecycle_vault(v: Vault) -> None:
    v.write("docs/adrs/ADR-0001.md", adr("ADR-0001", title="Retry webhooks in process", status="superseded",
                                         extra='superseded_by: "[[ADR-0002]]"\n',
                                         body="Webhook retries run inside the API worker with backoff.\n"))
    v.write("docs/adrs/ADR-0002.md", adr("ADR-0002", title="Deliver webhooks from a durable queue",
                                         extra='supersedes: ["[[ADR-0001]]"]\n',
                                         body="Webhook delivery uses an outbox and a queue with retries.\n"))
    v.write("docs/adrs/ADR-0003.md", adr("ADR-0003", title="Cache exchange rates", extra='expires: "2020-01-01"\n',
                                         body="Exchange rates are cached in Redis for sixty seconds.\n"))
    v.write("docs/adrs/ADR-0004.md", adr("ADR-0004", title="No Friday deploys", extra="confidence: 0.3\n",
                                         body="Do not deploy on Friday afternoons.\n"))


def test_lifecycle_filters_and_the_superseding_note(vault, embedder):
    _lifecycle_vault(vault)
    vault.commit("init")
    sync(vault.root)
    s, head = searcher(vault.root)
    from vaultsync.search.options import SearchOptions

    paths = lambda q, **kw: [h.path for h in s.search(q, SearchOptions(**kw)).hits]  # noqa: E731
    hits = s.search("webhook retries inside the API worker", SearchOptions())
    assert "docs/adrs/ADR-0001.md" not in [h.path for h in hits.hits]
    assert hits.hits[0].path == "docs/adrs/ADR-0002.md"
    assert "docs/adrs/ADR-0003.md" not in paths("exchange rates redis")
    assert "docs/adrs/ADR-0003.md" in paths("exchange rates redis", include_expired=True)
    assert "docs/adrs/ADR-0004.md" not in paths("Friday deploys")
    assert "docs/adrs/ADR-0004.md" in paths("Friday deploys", min_confidence=0.0)
    assert "docs/adrs/ADR-0001.md" in paths("webhook retries inside the API worker", include_superseded=True)
    s.close()


class _KeywordReranker:
    """A calibrated reranker stand-in: 0.9 for passages holding the keyword, 0.1 otherwise."""

    name, threshold, fusion_weight = "keyword", 0.5, None

    def __init__(self, keyword: str) -> None:
        self.keyword = keyword

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        return np.array([0.9 if self.keyword in p else 0.1 for p in passages], np.float32)


def test_rerank_cutoff_drops_what_a_calibrated_reranker_rejects(vault, embedder):
    _lifecycle_vault(vault)
    vault.commit("init")
    sync(vault.root)
    s, _ = searcher(vault.root)
    from vaultsync.search.options import SearchOptions

    s.reranker = _KeywordReranker("Friday")
    hits = s.search("deploy policy", SearchOptions(min_confidence=0.0, rerank_cutoff=True, min_relevance=0.0)).hits
    assert [h.path for h in hits] == ["docs/adrs/ADR-0004.md"]
    assert hits[0].trace["rerank"] == {"rank": 1, "score": 0.9}
    assert len(s.search("deploy policy", SearchOptions(min_confidence=0.0, min_relevance=0.0)).hits) > 1  # off by default
    s.reranker = _KeywordReranker("no such words")  # nothing passes: the best first-stage hit stays
    assert len(s.search("deploy policy", SearchOptions(min_confidence=0.0, rerank_cutoff=True, min_relevance=0.0)).hits) == 1
    s.close()


_fields = st.fixed_dictionaries({
    "expired": st.booleans(), "superseded": st.booleans(), "confidence": st.sampled_from([None, 0.2, 0.49, 0.5, 0.9]),
})


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(notes=st.lists(_fields, min_size=3, max_size=8), seed=st.integers(0, 10**6))
def test_property_hidden_notes_never_leak(tmp_path_factory, embedder, notes, seed):
    """On random vaults, no expired / superseded / low-confidence note is ever returned without the
    include flags, whatever the query, and every superseded note's successor can be returned."""
    from vaultsync.search.options import SearchOptions

    root = tmp_path_factory.mktemp("prop")
    git(root, "init", "-q", "-b", "main")
    v = Vault(root)
    v.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs}\n")
    rng = random.Random(seed)
    words = "queue cache deploy retry ledger redis canary backup lock schema token budget".split()
    hidden: set[str] = set()
    successors: dict[str, str] = {}
    n = len(notes)
    for i, f in enumerate(notes):
        extra = ""
        status = "accepted"
        if f["expired"]:
            extra += 'expires: "2021-01-01"\n'
        if f["confidence"] is not None:
            extra += f"confidence: {f['confidence']}\n"
        if f["superseded"] and i + 1 < n:
            status = "superseded"
            extra += f'superseded_by: "[[ADR-{i + 2:04d}]]"\n'
            successors[f"docs/adrs/ADR-{i + 1:04d}.md"] = f"docs/adrs/ADR-{i + 2:04d}.md"
        if i > 0 and notes[i - 1]["superseded"]:
            extra += f'supersedes: ["[[ADR-{i:04d}]]"]\n'
        path = f"docs/adrs/ADR-{i + 1:04d}.md"
        if f["expired"] or (f["superseded"] and i + 1 < n) or (f["confidence"] is not None and f["confidence"] < 0.5):
            hidden.add(path)
        v.write(path, adr(f"ADR-{i + 1:04d}", title=" ".join(rng.sample(words, 3)), status=status, extra=extra,
                          body=" ".join(rng.choices(words, k=40)) + "\n"))
    v.commit("init")
    sync(root)
    s, _ = searcher(root)
    try:
        for q in [" ".join(rng.sample(words, 2)) for _ in range(4)]:
            got = {h.path for h in s.search(q, SearchOptions(top_k=10, budget=10**6)).hits}
            assert not got & hidden, (q, got & hidden)
    finally:
        s.close()


# --- CLI formats, daemon --------------------------------------------------------------------------

def test_cli_formats_and_explain(vault, embedder):
    _lifecycle_vault(vault)
    vault.commit("init")
    sync(vault.root)
    md = run_cli(["search", "durable queue webhooks", "--format", "markdown", "--no-daemon", "--top-k", "3"], vault.root)
    assert md.code == 0 and "### 1. `docs/adrs/ADR-0002.md#0`" in md.out and "tokens" in md.out
    data = json.loads(run_cli(["search", "durable queue", "--format", "json", "--explain", "--no-daemon"],
                              vault.root).out)
    hit = data["hits"][0]
    assert {"fusion", "final"} <= set(hit["trace"]) and data["token_counter"].endswith("tokenizer")
    assert sum(h["tokens"] for h in data["hits"]) <= 1200
    text = run_cli(["search", "webhook", "--no-daemon", "--type", "adr", "--include-superseded"], vault.root)
    assert "ADR-0001" in text.out
    vault.write("docs/adrs/ADR-0005.md", adr("ADR-0005"))
    vault.commit("more")  # no hook installed: the index is now behind HEAD
    behind = run_cli(["search", "webhook", "--no-daemon"], vault.root)
    assert "warning: index is not at HEAD" in behind.out and "run `vaultsync sync`" in behind.out
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.lock import SyncLock

    layout = layout_for(open_repo(vault.root))
    with SyncLock(layout.lock, layout.dirty) as held:  # the hook's sync, still at work
        assert held
        syncing = run_cli(["search", "webhook", "--no-daemon"], vault.root)
    assert "index is not at HEAD" in syncing.out and "run `vaultsync sync`" not in syncing.out
    assert "a sync is running (the hook's, or another): search again in a moment" in syncing.out


def test_a_first_search_that_waits_for_a_hooks_first_sync_says_so(vault, embedder):
    """Right after the first commit, the hook's sync (which may build the model first) holds the lock: the
    search waited for it in silence after "indexing this vault for the first time", as if it did the work."""
    import os
    import time

    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.lock import SyncLock

    _lifecycle_vault(vault)
    vault.commit("init")
    layout = layout_for(open_repo(vault.root))
    held, release = threading.Event(), threading.Event()

    def hooks_sync() -> None:
        with SyncLock(layout.lock, layout.dirty) as got:
            assert got
            held.set()
            release.wait(30)

    hook = threading.Thread(target=hooks_sync)
    hook.start()
    held.wait(10)
    threading.Timer(1.0, release.set).start()  # the hook's sync ends; the waiting search then builds the index
    started = time.monotonic()
    res = run_cli(["search", "webhook", "--no-daemon"], vault.root)
    hook.join()
    assert f"the vault's first index is being built (sync pid {os.getpid()}): waiting for it" in res.err, res.err
    assert res.code == 0 and "ADR-" in res.out and time.monotonic() - started >= 1.0, (res.out, res.err)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_daemon_serves_search_status_and_health(vault, embedder, monkeypatch):
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.serve.client import request, search_via_daemon
    from vaultsync.serve.daemon import serve

    _lifecycle_vault(vault)
    vault.commit("init")
    sync(vault.root)
    port = _free_port()
    server = serve(open_repo(vault.root), "127.0.0.1", port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    index_dir = layout_for(open_repo(vault.root)).dir
    try:
        data = search_via_daemon(port, index_dir, "durable queue", {}, None)
        assert data is not None and data["hits"][0]["path"] == "docs/adrs/ADR-0002.md"
        assert search_via_daemon(port, vault.root / "no-secret-here", "x", {}, None) is None
        with pytest.raises(ValueError, match="empty query"):
            search_via_daemon(port, index_dir, "   ", {}, None)
        status, info = request(port, index_dir, "GET", "/status", None, timeout=30)
        assert status == 200 and info["notes"] >= 1
        monkeypatch.setenv("VAULTSYNC_PORT", str(port))
        res = run_cli(["search", "durable queue", "--format", "json"], vault.root)
        assert json.loads(res.out)["hits"][0]["path"] == "docs/adrs/ADR-0002.md"
        status_text = run_cli(["status"], vault.root).out
        assert f"daemon      listening on 127.0.0.1:{port} (searches use it)" in status_text
        assert json.loads(run_cli(["status", "--format", "json"], vault.root).out)["daemon"] == \
            {"running": True, "port": port, "problem": None}
        second = run_cli(["serve"], vault.root)  # the same repository, the same port
        assert second.code == 1 and "this repository's daemon already listens there" in second.err, second.err
        other = run_cli(["serve", "--port", str(_free_port())], vault.root)  # the same repository, another port
        assert other.code == 1 and f"this repository's daemon already listens on 127.0.0.1:{port}" in other.err
        vault.write("docs/adrs/ADR-0006.md", adr("ADR-0006", title="Zebra stripes", body="Zebrafication rules.\n"))
        vault.commit("new")
        sync(vault.root)
        data = search_via_daemon(port, index_dir, "zebrafication", {}, None)
        assert data["hits"][0]["path"] == "docs/adrs/ADR-0006.md"  # the daemon picked up the new index
    finally:
        server.shutdown()
        server.server_close()
    assert "daemon      none (`vaultsync serve` keeps the models and the index warm)" in run_cli(["status"], vault.root).out
    with socket.socket() as squatter:  # another program on the port
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past the daemon's TIME_WAIT
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        taken = run_cli(["serve"], vault.root)
    assert taken.code == 1 and "another repository's daemon, or another program?" in taken.err, taken.err
    for bad in ("abc", "0", "70000"):  # a daemon would have started on 30001, and clients would not find it
        monkeypatch.setenv("VAULTSYNC_PORT", bad)
        refused = run_cli(["serve"], vault.root)
        assert refused.code == 2 and f"$VAULTSYNC_PORT='{bad}' is not a port (1-65535)" in refused.err, refused.err
        assert f"daemon      none: $VAULTSYNC_PORT='{bad}' is not a port" in run_cli(["status"], vault.root).out


def test_a_warm_process_holds_the_vectors_once_for_every_rerank_stage(vault, embedder):
    """The daemon and the MCP server keep one searcher per index state; a stage is a per-request choice."""
    from vaultsync.engine import default_rerank
    from vaultsync.git import open_repo
    from vaultsync.serve.daemon import SearchService
    from vaultsync.vault.config import Config

    _lifecycle_vault(vault)
    vault.commit("init")
    sync(vault.root)
    service = SearchService(open_repo(vault.root))
    matrices = []
    for stage in ("none", "maxsim", None, "none"):
        top = service.search("durable queue", {}, stage)["hits"][0]["path"]
        assert top == "docs/adrs/ADR-0002.md"
        searcher = service._warm.searcher
        matrices.append(id(searcher.vectors.codes))
        assert (searcher.reranker is None) == ((stage or default_rerank(Config())) == "none")
    assert len(set(matrices)) == 1
    vault.write("docs/adrs/ADR-0006.md", adr("ADR-0006", title="Zebra stripes", body="Zebrafication rules.\n"))
    vault.commit("new")
    sync(vault.root)
    assert service.search("zebrafication", {}, "maxsim")["hits"][0]["path"] == "docs/adrs/ADR-0006.md"
    assert id(service._warm.searcher.vectors.codes) not in matrices  # a new index state: loaded afresh


def test_maxsim_fuses_its_rank_with_the_first_stage(vault, embedder):
    """MaxSim alone loses to the first stage it reranks; its rank is fused by plain RRF (ADR-0109)."""
    from vaultsync.engine import load_reranker
    from vaultsync.search.fusion import rerank_order
    from vaultsync.search.options import SearchOptions
    from vaultsync.vault.config import Config

    _lifecycle_vault(vault)
    vault.commit("init")
    sync(vault.root)
    s, _ = searcher(vault.root)
    opts = SearchOptions(min_confidence=0.0, min_relevance=0.0, include_expired=True, top_k=10, per_note=1)
    first = [h.path for h in s.search("durable queue for webhook retries", opts).hits]
    s.reranker = load_reranker("maxsim", s.embedder, Config())
    assert s.reranker.fusion_weight == 0.5
    hits = s.search("durable queue for webhook retries", opts).hits
    assert all(h.trace["rerank"]["fusion_weight"] == 0.5 for h in hits)
    scores = {h.path: h.trace["rerank"]["score"] for h in hits}
    assert [h.path for h in hits] == rerank_order(first, [scores[p] for p in first], 0.5)
    s.close()


def test_a_forked_child_searches_on_threads_of_its_own(vault, embedder):
    """The retrieval legs run on threads the process keeps (ADR-0108): a child forked after a search got the
    parent's pool without its threads, and its first search waited forever for legs that never ran."""
    import os
    import signal

    from vaultsync.search.options import SearchOptions

    _lifecycle_vault(vault)
    vault.commit("init")
    sync(vault.root)
    s, head = searcher(vault.root)
    expected = [h.path for h in s.search("durable queue", SearchOptions(), head).hits]
    pid = os.fork()
    if pid == 0:  # the child: a fresh searcher, no pytest teardown
        signal.alarm(60)
        try:
            s2, head2 = searcher(vault.root)
            os._exit(0 if [h.path for h in s2.search("durable queue", SearchOptions(), head2).hits] == expected else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


def test_a_search_that_fails_waits_for_its_legs(vault, embedder, monkeypatch):
    """A search whose BM25 leg fails raises only once its dense legs are done: none keeps running after it
    (into the next search of a daemon)."""
    import time

    import vaultsync.search.stages.retrieve as retrieve
    from vaultsync.search.options import SearchOptions

    _lifecycle_vault(vault)
    vault.commit("init")
    sync(vault.root)
    s, head = searcher(vault.root)
    finished: list[float] = []
    dense = retrieve._dense

    def slow_dense(*args):  # type: ignore[no-untyped-def]
        time.sleep(0.3)
        out = dense(*args)
        finished.append(time.monotonic())
        return out

    def failing_bm25(*args):  # type: ignore[no-untyped-def]
        raise RuntimeError("BM25 failed")

    monkeypatch.setattr(retrieve, "_dense", slow_dense)
    monkeypatch.setattr(retrieve, "_bm25_chunks", failing_bm25)
    with pytest.raises(RuntimeError, match="BM25 failed"):
        s.search("durable queue", SearchOptions(), head)
    raised = time.monotonic()
    assert len(finished) == len(s.legs) and all(t <= raised for t in finished)


def test_serve_refuses_non_loopback(vault):
    res = run_cli(["serve", "--host", "0.0.0.0"], vault.root)
    assert res.code == 2 and "not a loopback address" in res.err
