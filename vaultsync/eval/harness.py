"""Evaluation harness: index a dataset's vault through the real sync path, run every query
through the real pipeline (any stage switchable), and score the rankings.

Dataset format (``<root>/<name>/``): ``vault/**.md`` and ``queries.jsonl`` with
``{"id", "query", "relevant": [paths], "lang", "category", "scope"?, "relevant_blocks"?}``.

Scores: note level (a note's rank is the rank of its best chunk) and, when the
dataset has ``relevant_blocks``, turn level (a block is found when a returned
chunk contains it; blocks are ranked by their chunk's rank). Metrics: recall@5,
hit@5, MRR@10, nDCG@10, overall and per category and language; per-query latency.

Trust (:func:`no_answer_queries`, :func:`summarise`): each scoped question is also asked in
another scope, where it has no answer; the summary reports the share of those left with no
hit (abstention), the tokens an agent receives per answerable query, and the expected
calibration error of the hits' relevance against note-level labels.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultsync.eval.metrics import dedupe, hit_at, mrr_at, ndcg_at, recall_at
from vaultsync.git import run_git
from vaultsync.search.budget import cut
from vaultsync.search.options import SearchOptions
from vaultsync.search.pipeline import Searcher

K_RECALL = 5
K_RANK = 10
TURN_BUDGET = 1200  # tokens: the default search budget


@dataclass(frozen=True)
class Variant:
    """One pipeline configuration: option overrides and a rerank stage name."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)
    rerank: str = "none"


def load_queries(dataset_dir: Path, limit: int | None = None, every: int = 1, offset: int = 0) -> list[dict[str, Any]]:
    """The dataset's queries (every ``every``-th from the ``offset``-th, at most ``limit``), in file order."""
    rows = [json.loads(line) for line in (dataset_dir / "queries.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    rows = rows[offset::every]
    return rows[:limit] if limit else rows


_IDENTITY = {"GIT_AUTHOR_NAME": "eval", "GIT_AUTHOR_EMAIL": "eval@example.com",
             "GIT_COMMITTER_NAME": "eval", "GIT_COMMITTER_EMAIL": "eval@example.com"}


def _git(cwd: Path, *args: str) -> str:
    return run_git(args, cwd, env=_IDENTITY, check=True).stdout  # type: ignore[no-any-return]


def prepare_workspace(dataset_dir: Path, workdir: Path, embedders: Sequence[str], chunk_tokens: int | None,
                      sync_fn: Callable[[Path], Any] | None = None, folders: Iterable[str] | None = None,
                      token_vectors: bool = False) -> Path:
    """A git repository holding the dataset's vault (or only ``folders`` of it), committed and indexed;
    ``token_vectors``: its index keeps them for MaxSim (ADR-0117; a workspace of its own, ``-tokens``).

    The workspace is reused between runs (the embedding cache lives in its
    ``.git``), so changing only search options costs no re-embedding.
    """
    picked = sorted(folders) if folders else None
    repo = workdir / (f"{dataset_dir.name}-{'+'.join(embedders)}" + (f"-{'-'.join(picked)}" if picked else "")
                      + ("-tokens" if token_vectors else ""))
    vault_src = dataset_dir / "vault"
    if not (repo / ".git").exists():
        if repo.exists():
            shutil.rmtree(repo)
        if picked:
            for folder in picked:
                shutil.copytree(vault_src / folder, repo / folder)
        else:
            shutil.copytree(vault_src, repo)
        _git(repo, "init", "-q", "-b", "main")
    config = (f"vault: .\nindex:\n  embedders: [{', '.join(embedders)}]\n"
              + (f"  chunk_tokens: {chunk_tokens}\n" if chunk_tokens else "")
              + ("  token_vectors: true\n" if token_vectors else ""))
    config_path = repo / ".vaultsync.yaml"
    if not config_path.exists() or config_path.read_text(encoding="utf-8") != config:
        config_path.write_text(config, encoding="utf-8")
    _git(repo, "add", "-A")
    status = _git(repo, "status", "--porcelain")
    if status.strip() or not (repo / ".git" / "refs" / "heads" / "main").exists():
        _git(repo, "commit", "-qm", "dataset", "--allow-empty", "--no-verify")
    if sync_fn is None:
        from vaultsync.git import open_repo
        from vaultsync.index.sync import sync

        sync(open_repo(repo), progress=True, wait=600)  # type: ignore[arg-type]
    else:
        sync_fn(repo)
    return repo


def no_answer_queries(queries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each scoped query asked again in the next other scope (scopes in sorted order), where
    nothing is relevant: ``relevant`` empty, category ``no-answer``, id suffixed ``#elsewhere``."""
    scopes = sorted({q["scope"] for q in queries if q.get("scope")})
    if len(scopes) < 2:
        return []
    nxt = {s: scopes[(i + 1) % len(scopes)] for i, s in enumerate(scopes)}
    return [{**q, "id": f"{q['id']}#elsewhere", "scope": nxt[q["scope"]], "relevant": [], "relevant_blocks": [],
             "category": "no-answer"} for q in queries if q.get("scope")]


@dataclass
class QueryOutcome:
    """The rankings one query produced, the tokens of the agent's view and each hit's (relevance, label)."""

    query: dict[str, Any]
    notes: list[str]
    blocks: list[str]
    ms: float
    tokens: int = 0
    judged: list[tuple[float, int]] = field(default_factory=list)


def run_queries(searcher: Searcher, queries: Iterable[dict[str, Any]], base: SearchOptions,
                deliver: bool = True) -> list[QueryOutcome]:
    """Search every query with ``base`` options (scope from the query when it has one); ``deliver``:
    the agent's view is the best blocks of its chunks (:meth:`Searcher.deliver`), else the chunks whole."""
    outcomes: list[QueryOutcome] = []
    for q in queries:
        opts = dataclasses.replace(base, scope=q.get("scope") or base.scope)
        start = time.perf_counter()
        result = searcher.search(q["query"], opts)
        ms = (time.perf_counter() - start) * 1000
        notes = dedupe([h.path for h in result.hits])
        # Turn level: what an agent would receive — top 5 chunks, ≤ 2 per note, within the token budget.
        per_note: dict[str, int] = {}
        agent_view = []
        for h in result.hits:
            if per_note.get(h.path, 0) < 2:
                per_note[h.path] = per_note.get(h.path, 0) + 1
                agent_view.append(h)
        agent_view = cut(agent_view, [h.tokens for h in agent_view], TURN_BUDGET, K_RECALL)
        if deliver:  # the best blocks of those chunks, as the shipped search delivers them (ADR-0116)
            agent_view = searcher.deliver(q["query"], agent_view)
        blocks = dedupe([f"{h.path}#^{b}" for h in agent_view for b in h.blocks])
        judged = [(h.relevance, int(h.path in q["relevant"])) for h in result.hits if h.relevance is not None]
        outcomes.append(QueryOutcome(q, notes, blocks, ms, sum(h.tokens for h in agent_view), judged))
    return outcomes


def _scores(ranking: list[str], relevant: list[str]) -> dict[str, float]:
    return {"recall@5": recall_at(ranking, relevant, K_RECALL), "hit@5": hit_at(ranking, relevant, K_RECALL),
            "mrr@10": mrr_at(ranking, relevant, K_RANK), "ndcg@10": ndcg_at(ranking, relevant, K_RANK)}


def _mean(rows: list[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]} | {"n": len(rows)}


def summarise(outcomes: list[QueryOutcome]) -> dict[str, Any]:
    """Metrics overall / per category / per language, note- and turn-level, plus latency."""
    levels: dict[str, dict[str, list[dict[str, float]]]] = {"notes": defaultdict(list), "turns": defaultdict(list)}
    trust = _trust(outcomes)
    outcomes = [o for o in outcomes if o.query["relevant"]]
    for o in outcomes:
        keys = ["all", f"category:{o.query.get('category', '-')}", f"lang:{o.query.get('lang', '-')}"]
        note_scores = _scores(o.notes, o.query["relevant"])
        for key in keys:
            levels["notes"][key].append(note_scores)
        if o.query.get("relevant_blocks"):
            turn_scores = _scores(o.blocks, o.query["relevant_blocks"])
            for key in keys:
                levels["turns"][key].append(turn_scores)
    latencies = sorted(o.ms for o in outcomes)
    out: dict[str, Any] = {level: {k: _mean(v) for k, v in sorted(groups.items())}
                           for level, groups in levels.items() if groups}
    out["trust"] = trust
    if latencies:
        out["latency_ms"] = {"p50": round(statistics.median(latencies), 1),
                             "p95": round(latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))], 1)}
    return out


def _trust(outcomes: list[QueryOutcome]) -> dict[str, Any]:
    """Abstention on no-answer queries, tokens per answerable query, ECE of the hits' relevance."""
    from vaultsync.search.relevance import expected_calibration_error

    answerable = [o for o in outcomes if o.query["relevant"]]
    unanswerable = [o for o in outcomes if not o.query["relevant"]]
    judged = [pair for o in outcomes for pair in o.judged]
    out: dict[str, Any] = {"tokens_per_answerable": round(statistics.mean(o.tokens for o in answerable), 1)
                           if answerable else None,
                           "answerable_with_no_hit": round(sum(not o.notes for o in answerable) / len(answerable), 4)
                           if answerable else None}
    if unanswerable:
        out["no_answer"] = {"n": len(unanswerable),
                            "abstain": round(sum(not o.notes for o in unanswerable) / len(unanswerable), 4)}
    if judged:
        out["ece"] = round(expected_calibration_error([p for p, _ in judged], [y for _, y in judged]), 4)
        out["judged_hits"] = len(judged)
    return out


def evaluation_options(**overrides: Any) -> SearchOptions:
    """Options for scoring: a deep ranking (30 whole chunks, ≤ 3 per note, no budget) from which the
    note ranking and the agent's view (top 5 within the budget, then their best blocks) are both derived.

    Lifecycle filters keep their defaults; evaluation vaults carry no lifecycle fields. The
    relevance floor is off unless a variant sets it, so every ranking row compares rankings.
    """
    base = dict(top_k=30, budget=10**9, per_note=3, min_relevance=0.0, blocks=False)
    base.update(overrides)
    return SearchOptions(**base)
