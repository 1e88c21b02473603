"""Cost of the git hooks on a long rebase: `git rebase` of N commits with vs without the shims.

    python bench/bench_rebase.py [--commits 200] [--runs 3]

Builds a repository with a feature branch of N one-note commits and one commit on
main, then times `git rebase main` (median of ``--runs``, each on a fresh copy of
the branch) without hooks and with `vaultsync install`. During the rebase the
post-commit shim starts nothing; the rebase's own post-checkout and its post-rewrite
start one detached sync each, which git does not wait for (ADR-0047). Syncs left
from one run are waited for before the next. Target: with hooks <= 2x without.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from vaultsync.git import run_git  # noqa: E402

IDENTITY = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def git(repo: Path, *args: str) -> str:
    return run_git(args, repo, env=IDENTITY, check=True).stdout  # type: ignore[no-any-return]


def build(repo: Path, commits: int) -> None:
    """main: one note; ``feature``: ``commits`` commits of one note each, forked before main's."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".vaultsync.yaml").write_text("vault: docs\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "base.md").write_text("# base\nThe base note.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    for i in range(commits):
        (repo / "docs" / f"f{i:04d}.md").write_text(f"# feature {i}\nFeature note {i}, see [[base]].\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"feature {i}", "--no-verify")
    git(repo, "checkout", "-q", "main")
    (repo / "docs" / "main.md").write_text("# main\nMain moved on.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "main", "--no-verify")
    git(repo, "branch", "-q", "feature-orig", "feature")
    git(repo, "checkout", "-q", "feature")


def time_rebase(repo: Path) -> float:
    """Seconds for `git rebase main` of a fresh copy of the feature branch (reset back with
    `git reset --hard`, which fires no hook, so no sync from the set-up competes)."""
    git(repo, "reset", "-q", "--hard", "feature-orig")
    start = time.perf_counter()
    git(repo, "rebase", "-q", "main")
    return time.perf_counter() - start


def wait_syncs(repo: Path, timeout: float = 600) -> None:
    """Wait until no detached sync holds the lock (read from its owner record)."""
    from vaultsync.index.lock import sync_running

    lock = repo / ".git" / "vaultsync" / "sync.lock"
    deadline = time.monotonic() + timeout
    time.sleep(0.5)  # let the detached post-rewrite sync take the lock
    while sync_running(lock) and time.monotonic() < deadline:
        time.sleep(0.2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commits", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        build(repo, args.commits)
        bare = [time_rebase(repo) for _ in range(args.runs)]
        subprocess.run([sys.executable, "-m", "vaultsync", "install"], cwd=repo, check=True, capture_output=True)
        hooked = []
        for _ in range(args.runs):
            wait_syncs(repo)
            hooked.append(time_rebase(repo))
        without, with_hooks = statistics.median(bare), statistics.median(hooked)
        print(f"rebase of {args.commits} commits: without hooks {without:.2f} s, with hooks {with_hooks:.2f} s "
              f"(median of {args.runs}); ratio {with_hooks / without:.2f}x")


if __name__ == "__main__":
    main()
