"""Time from ``git commit`` until the post-commit hook's sync has indexed a one-note change (the SQLite
commit that makes it searchable) and until its LanceDB tables hold it too (``meta.lance_tree``: the
index complete), this checkout against another revision, runs interleaved.

    python bench/bench_searchable.py --notes 150 --runs 6 --against 48c5fa6

A generated vault (``vaultgen``) is committed under --workdir, hooks installed, indexed; then each run
appends a line to one note and commits it once per variant, polling the index's meta every 20 ms.
The other revision runs from a ``git worktree`` through ``PYTHONPATH`` (the hook shim passes the
environment on); its dependencies are this environment's. Prints the medians and every run, in seconds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_index import index_meta  # noqa: E402
from vaultgen import generate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x"}


def git(cwd: Path, *args: str, env: dict[str, str] = ENV) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=150)
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--against", help="another revision to time in the same runs")
    ap.add_argument("--workdir", type=Path, default=Path(".bench/searchable"))
    args = ap.parse_args()
    work = args.workdir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    repo = work / "vault"
    generate(repo, args.notes)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    variants = {"this checkout": ENV}
    if args.against:
        other = work / "other"
        git(ROOT, "worktree", "add", "-q", "--detach", str(other), args.against)
        variants[args.against] = {**ENV, "PYTHONPATH": str(other)}
    vaultsync = [sys.executable, "-m", "vaultsync"]
    try:
        subprocess.run([*vaultsync, "install"], cwd=repo, env=ENV, check=True, capture_output=True)
        subprocess.run([*vaultsync, "sync", "--wait", "600", "--quiet"], cwd=repo, env=ENV, check=True)
        note = sorted(p for p in repo.rglob("*.md") if ".git" not in p.parts)[0]
        times: dict[str, dict[str, list[float]]] = {name: {"searchable": [], "complete": []} for name in variants}
        for i in range(args.runs):
            for name, env in variants.items():
                with open(note, "a", encoding="utf-8") as fh:
                    fh.write(f"\n\nA one-line change, run {i}, mentioning benchtoken{i}.\n")
                git(repo, "add", "-A", env=env)
                start = time.perf_counter()
                git(repo, "commit", "-qm", f"change {i}", env=env)
                head = git(repo, "rev-parse", "HEAD").strip()
                while True:
                    now, m = time.perf_counter() - start, index_meta(repo)
                    if m.get("indexed_commit") == head:
                        if len(times[name]["searchable"]) == i:
                            times[name]["searchable"].append(now)
                        if m.get("lance_tree") == m.get("indexed_tree"):
                            times[name]["complete"].append(now)
                            break
                    if now > 600:
                        raise SystemExit("the hook's sync did not index the change")
                    time.sleep(0.02)
                subprocess.run([*vaultsync, "sync", "--wait", "600", "--quiet"], cwd=repo, env=env, check=True)
        for name, kinds in times.items():
            for kind, runs in kinds.items():
                print(f"{name}, {kind}: median {statistics.median(runs):.2f} s, runs {[round(t, 2) for t in runs]}")
    finally:
        if args.against:
            subprocess.run(["git", "worktree", "remove", "--force", str(work / "other")], cwd=ROOT, capture_output=True)


if __name__ == "__main__":
    main()
