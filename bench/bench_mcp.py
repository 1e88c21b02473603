"""MCP search round trip: `vaultsync mcp` over stdio, driven by the MCP SDK's client.

    python bench/bench_mcp.py --vault locomo                  # ../shared/eval/locomo (indexed once under --workdir)
    python bench/bench_mcp.py --vault examples                # examples/vault, small and quick
    python bench/bench_mcp.py --repo PATH --queries FILE.jsonl
    python bench/bench_mcp.py --vault locomo --compare        # + the same searches in-process, interleaved

It starts the server in an indexed repository, times the first `search` (models and index
loaded), then reports p50/p95 of --runs warm `search` tool calls (request sent → result
parsed by the client), the median of a refused empty query (the protocol's own cost), of
`get`, and of a refused `write` (unknown type: no vault check).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_QUERIES = ["why do we deliver webhooks from a queue?", "Wie verhindern wir doppelte Abbuchungen?",
                   "金曜日にデプロイしてもいいですか", "idempotency keys", "replica lag at month end",
                   "how long are exchange rates cached?", "backward compatible migrations"]


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def prepare(args: argparse.Namespace) -> tuple[Path, list[str]]:
    if args.repo:
        queries = EXAMPLE_QUERIES
        if args.queries:
            queries = [json.loads(line)["query"] for line in args.queries.read_text(encoding="utf-8").splitlines()]
        return args.repo, queries
    if args.vault == "examples":
        repo = Path(tempfile.mkdtemp(prefix="vaultsync-bench-mcp-")) / "vault"
        shutil.copytree(ROOT / "examples" / "vault", repo)
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
               "GIT_COMMITTER_EMAIL": "b@x"}
        for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "vault"]):
            subprocess.run(["git", *cmd], cwd=repo, check=True, env=env)
        return repo, EXAMPLE_QUERIES
    from vaultsync.eval.harness import prepare_workspace

    dataset = ROOT.parent / "shared" / "eval" / args.vault
    repo = prepare_workspace(dataset, args.workdir, ["multilingual-e5-small", "use-multilingual"], None)
    rows = [json.loads(line)["query"] for line in (dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    return repo, rows


async def measure(repo: Path, queries: list[str], runs: int, compare: bool = False) -> dict[str, object]:
    rng = random.Random(7)
    picked = [rng.choice(queries) for _ in range(runs)]
    params = StdioServerParameters(command=sys.executable, args=["-m", "vaultsync", "mcp"], cwd=str(repo),
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        t0 = time.perf_counter()
        first = await session.call_tool("search", {"query": queries[0]})
        first_s = time.perf_counter() - t0
        assert not first.is_error, first.content
        warm: list[float] = []
        local: list[float] = []
        in_process = None
        if compare:  # the same pipeline in this process, interleaved, so both see the same machine load
            from vaultsync.mcp_server.warm_search import WarmSearch

            in_process = WarmSearch(repo)
            in_process.search(queries[0], {})
        for q in picked:
            t0 = time.perf_counter()
            res = await session.call_tool("search", {"query": q})
            warm.append((time.perf_counter() - t0) * 1000)
            assert not res.is_error, res.content
            if in_process is not None:
                t0 = time.perf_counter()
                in_process.search(q, {})
                local.append((time.perf_counter() - t0) * 1000)
        hit = (first.structured_content or {}).get("hits", [{}])[0].get("path")
        gets, writes, empty = [], [], []
        for _ in range(5):
            t0 = time.perf_counter()
            await session.call_tool("search", {"query": " "})  # refused before any retrieval: the protocol's cost
            empty.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            await session.call_tool("get", {"note": hit})
            gets.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            res = await session.call_tool("write", {"type": "no-such-type", "title": "x", "body": "x"})
            writes.append((time.perf_counter() - t0) * 1000)
    return {"repo": str(repo), "first_search_s": round(first_s, 2), "runs": runs,
            "warm_search_p50_ms": round(statistics.median(warm), 1), "warm_search_p95_ms": round(pct(warm, 0.95), 1),
            **({"in_process_search_p50_ms": round(statistics.median(local), 1)} if local else {}),
            "protocol_round_trip_p50_ms": round(statistics.median(empty), 1),
            "get_p50_ms": round(statistics.median(gets), 1), "refused_write_p50_ms": round(statistics.median(writes), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", default="locomo", help="locomo, obsidian-help (../shared/eval) or examples")
    ap.add_argument("--repo", type=Path, help="an already indexed repository instead of --vault")
    ap.add_argument("--queries", type=Path, help="queries.jsonl for --repo")
    ap.add_argument("--workdir", type=Path, default=ROOT / ".bench" / "mcp")
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--compare", action="store_true", help="also time the same searches in-process, interleaved")
    args = ap.parse_args()
    repo, queries = prepare(args)
    print(json.dumps(anyio.run(measure, repo, queries, args.runs, args.compare), indent=2))


if __name__ == "__main__":
    main()
