"""Derived-index benchmark: build, no-change sync, hook cost, time until a one-note change is searchable.

    python bench/bench_index.py --vault locomo            # ../shared/eval/locomo/vault
    python bench/bench_index.py --vault generated --notes 10000
    python bench/bench_index.py --vault generated --notes 10000 --workdir .bench/index --keep

For the chosen vault (committed into a git repository under --workdir) it reports:

* full build (``vaultsync index --rebuild`` in a fresh process, empty embedding
  cache): wall time, chunks, chunks/s, peak RSS;
* rebuild from the caches (``vaultsync index --rebuild`` again: every embedding and block row comes
  from the caches, as in a new worktree; ADR-0121): wall time, peak RSS;
* no-change ``vaultsync sync`` (fresh process): median wall time over --runs;
* the post-commit hook shim alone (what ``git commit`` waits for): median ms;
* ``git commit`` with the shim installed, and with the pre-commit framework's
  post-commit stage (its own start-up included): median ms;
* a one-note change: time from ``git commit`` until the background sync has
  indexed it, and until a cold ``vaultsync search`` process returns it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vaultgen import generate, git_commit  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x"}


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """(wall s, peak RSS MiB, stdout) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read().decode() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return time.perf_counter() - start, usage.ru_maxrss / 1024, out


def vaultsync(*args: str) -> list[str]:
    return [sys.executable, "-m", "vaultsync", *args]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True)


def index_meta(repo: Path) -> dict[str, str]:
    """The ``meta`` table of ``repo``'s index (empty while there is none)."""
    import sqlite3

    db = sqlite3.connect(repo / ".git/vaultsync/index.sqlite")
    try:
        return dict(db.execute("SELECT key, value FROM meta"))
    except sqlite3.Error:
        return {}
    finally:
        db.close()


def indexed_commit(repo: Path) -> str:
    return index_meta(repo).get("indexed_commit", "")


def prepare(args: argparse.Namespace) -> Path:
    repo = args.workdir.resolve() / (f"generated-{args.notes}" if args.vault == "generated" else "locomo")
    if (repo / ".git").exists():
        return repo
    if args.vault == "generated":
        generate(repo, args.notes)
    else:
        shutil.copytree(Path(__file__).resolve().parents[1].parent / "shared/eval/locomo/vault", repo)
        (repo / ".vaultsync.yaml").write_text("vault: .\n")
    git_commit(repo, "benchmark vault")
    return repo


def framework_commit_ms(repo: Path, note: Path, runs: int) -> float | None:
    """Median ``git commit`` time with the pre-commit framework's post-commit stage running our entry."""
    exe = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    if not Path(exe).exists():
        return None
    for hook in ("post-commit", "post-merge", "post-checkout", "post-rewrite"):
        (repo / ".git/hooks" / hook).unlink(missing_ok=True)
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n  - id: vaultsync-index\n    name: vaultsync index\n"
        f"    entry: {sys.executable} -m vaultsync sync --background --quiet\n    language: system\n"
        "    always_run: true\n    pass_filenames: false\n    stages: [post-commit]\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "pre-commit config", "--no-verify", "--allow-empty")
    subprocess.run([exe, "install", "-t", "post-commit"], cwd=repo, env=ENV, check=True, capture_output=True)
    walls = []
    for i in range(runs):
        with open(note, "a", encoding="utf-8") as fh:
            fh.write(f"\nframework change {i}\n")
        git(repo, "add", "-A")
        start = time.perf_counter()
        git(repo, "commit", "-qm", f"fw {i}")
        walls.append(time.perf_counter() - start)
        subprocess.run(vaultsync("sync", "--wait", "600", "--quiet"), cwd=repo, env=ENV, check=True)
    return round(statistics.median(walls) * 1000, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", choices=("locomo", "generated"), default="locomo")
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--workdir", type=Path, default=Path(".bench/index"))
    ap.add_argument("--skip-build", action="store_true", help="reuse an existing index")
    ap.add_argument("--keep", action="store_true", help="keep the workspace (bench_search reuses it)")
    args = ap.parse_args()
    repo = prepare(args)
    results: dict[str, object] = {"vault": args.vault, "repo": str(repo)}
    if not args.skip_build:
        shutil.rmtree(repo / ".git/vaultsync", ignore_errors=True)  # index and embedding cache
        wall, rss, out = timed(vaultsync("index", "--rebuild", "--quiet"), repo)
        import sqlite3

        chunks = sqlite3.connect(repo / ".git/vaultsync/index.sqlite").execute("SELECT count(*) FROM chunks").fetchone()[0]
        results["build"] = {"seconds": round(wall, 1), "chunks": chunks, "chunks_per_s": round(chunks / wall, 1),
                            "peak_rss_mib": round(rss)}
        print("build", results["build"], flush=True)
        wall, rss, _ = timed(vaultsync("index", "--rebuild", "--quiet"), repo)
        results["rebuild_from_caches"] = {"seconds": round(wall, 1), "peak_rss_mib": round(rss)}
        print("rebuild from caches", results["rebuild_from_caches"], flush=True)
    walls = [timed(vaultsync("sync", "--quiet"), repo)[0] for _ in range(args.runs)]
    results["no_change_sync_ms"] = round(statistics.median(walls) * 1000, 1)
    print("no-change sync ms", results["no_change_sync_ms"], flush=True)

    for old in (repo / ".git/hooks").glob("post-*"):  # a kept workspace may hold the framework's hooks
        old.unlink()
    subprocess.run(vaultsync("install"), cwd=repo, env=ENV, check=True, capture_output=True)
    hook = repo / ".git/hooks/post-commit"
    shim = [timed([str(hook)], repo)[0] * 1000 for _ in range(args.runs)]
    results["hook_shim_ms"] = round(statistics.median(shim), 1)
    print("hook shim ms", results["hook_shim_ms"], flush=True)
    subprocess.run(vaultsync("sync", "--wait", "600", "--quiet"), cwd=repo, env=ENV, check=True)

    note = next(p for p in sorted(repo.rglob("*.md")) if ".git" not in p.parts)
    commits, searchable, visible = [], [], []
    for i in range(args.runs):
        token = f"benchtoken{i}x{int(time.time())}"
        with open(note, "a", encoding="utf-8") as fh:
            fh.write(f"\n\nA one-line change mentioning {token}.\n")
        git(repo, "add", "-A")
        start = time.perf_counter()
        git(repo, "commit", "-qm", f"change {i}")
        commits.append(time.perf_counter() - start)
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
        while indexed_commit(repo) != head:
            time.sleep(0.02)
            if time.perf_counter() - start > 600:
                raise SystemExit("the background sync did not finish")
        searchable.append(time.perf_counter() - start)
        _, _, out = timed(vaultsync("search", token, "--format", "json", "--no-daemon", "--top-k", "1"), repo)
        visible.append(time.perf_counter() - start)
        assert json.loads(out)["hits"][0]["path"] == note.relative_to(repo).as_posix()
        subprocess.run(vaultsync("sync", "--wait", "600", "--quiet"), cwd=repo, env=ENV, check=True)
    results["git_commit_with_shim_ms"] = round(statistics.median(commits) * 1000, 1)
    results["git_commit_with_pre_commit_framework_ms"] = framework_commit_ms(repo, note, args.runs)
    results["one_note_change_indexed_s"] = round(statistics.median(searchable), 2)
    results["one_note_change_found_by_cold_search_s"] = round(statistics.median(visible), 2)
    print(json.dumps(results, indent=2))
    if not args.keep:
        shutil.rmtree(repo)


if __name__ == "__main__":
    main()
