"""Retrieval-quality smoke test: a slice of both evaluation sets through the real sync path and
pipeline, with floors a real regression would break (full table: docs/eval.md); and the Obsidian help
vault through git, the hooks and `git memsearch`. The tests of the help vault share one file, so that
one test worker indexes it once."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, prepare_eval_workspace, require_eval

from vaultsync.eval.harness import (
    evaluation_options,
    load_queries,
    run_queries,
    summarise,
)
from vaultsync.eval.metrics import hit_at, mrr_at, ndcg_at, recall_at

pytestmark = [pytest.mark.slow, pytest.mark.eval]


def test_metrics_on_a_known_ranking():
    ranking, relevant = ["a", "b", "c", "d"], {"b", "x"}
    assert recall_at(ranking, relevant, 5) == 0.5 and hit_at(ranking, relevant, 1) == 0.0
    assert mrr_at(ranking, relevant, 10) == 0.5
    assert ndcg_at(["b"], {"b"}, 10) == 1.0 and 0 < ndcg_at(ranking, relevant, 10) < 1


def _searcher(repo: Path, embedder):  # type: ignore[no-untyped-def]
    from vaultsync.git import open_repo
    from vaultsync.engine import open_searcher
    from vaultsync.vault.config import Config

    return open_searcher(open_repo(repo), Config(), rerank="none", embedder=embedder)[0]


def test_smoke_obsidian_cross_lingual(obsidian_workspace, embedder):
    data, repo = obsidian_workspace
    queries = load_queries(data, every=10)
    s = _searcher(repo, embedder)
    summary = summarise(run_queries(s, queries, evaluation_options()))
    s.close()
    notes = summary["notes"]
    print({k: v["recall@5"] for k, v in notes.items()})
    assert notes["all"]["recall@5"] >= 0.82
    assert min(v["recall@5"] for k, v in notes.items() if k.startswith("lang:")) >= 0.65


def test_smoke_locomo_two_conversations(tmp_path_factory, embedder):
    data = require_eval("locomo")
    folders = ["conv-26", "conv-30"]
    repo = prepare_eval_workspace(data, tmp_path_factory.mktemp("eval"), embedder, folders)
    queries = [q for q in load_queries(data) if q["scope"].rstrip("/") in folders][::2]
    s = _searcher(repo, embedder)
    summary = summarise(run_queries(s, queries, evaluation_options()))
    s.close()
    print(summary["notes"]["all"], summary["turns"]["all"])
    assert summary["notes"]["all"]["recall@5"] >= 0.80
    assert summary["turns"]["all"]["recall@5"] >= 0.33


def test_japanese_and_german_queries_find_the_english_note(tmp_path, model_env, obsidian_workspace):
    base, workspace = obsidian_workspace
    queries = [json.loads(line) for line in (base / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    picks = {lang: next(q for q in queries if q["lang"] == lang and q["id"].endswith(":2fa:title"))
             for lang in ("ja", "de")}
    root = tmp_path / "help"
    shutil.copytree(base / "vault", root)
    git(root, "init", "-q", "-b", "main")
    # the embedding cache is content-addressed: the workspace's copy spares the hook sync the embedding
    shutil.copytree(workspace / ".git" / "vaultsync" / "embeddings", root / ".git" / "vaultsync" / "embeddings")
    subprocess.run([sys.executable, "-m", "vaultsync", "install"], cwd=root, check=True, capture_output=True)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "help vault")
    from test_index_hooks import wait_indexed

    wait_indexed(root, timeout=600)
    for lang, q in picks.items():
        res = git(root, "memsearch", q["query"], "--format", "json", "--no-daemon")
        top3 = [h["path"] for h in json.loads(res.stdout)["hits"][:3]]
        assert q["relevant"][0] in top3, (lang, q["query"], top3)
