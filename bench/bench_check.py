"""Full-vault check: wall time and peak RSS of `vaultsync check --staged` on generated vaults.

    python bench/bench_check.py [--sizes 1000 10000] [--runs 5] [--jobs 1 2] [--modes cold warm edit]

Generates realistic vaults (bench/vaultgen.py: schema-valid frontmatter, ~1.5 KB
of prose, ~3 WikiLinks per note), commits them, then times the whole command as a
user runs it (interpreter start-up included) in fresh processes, in three modes:

* ``cold``: no check cache (a fresh clone, a CI runner): the cache file is deleted before each run;
* ``warm``: the cache holds every note (a re-run, a commit that changed nothing in the vault);
* ``edit``: one note edited and staged before each run (the usual commit).

Reports the median and min wall time and the peak RSS per size, mode and worker count.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vaultgen import generate, git_commit  # noqa: E402


def run_once(repo: Path, jobs: int) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of one `vaultsync check --staged`."""
    env = {**os.environ, "VAULTSYNC_CHECK_JOBS": str(jobs)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "vaultsync", "check", "--staged"], cwd=repo, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def prepare(repo: Path, mode: str, run: int) -> None:
    """Put the repository in ``mode``'s state before a timed run."""
    cache = repo / ".git" / "vaultsync" / "check-cache.sqlite"
    if mode == "cold":
        for suffix in ("", "-wal", "-shm"):
            Path(str(cache) + suffix).unlink(missing_ok=True)
    elif mode == "edit":
        note = sorted((repo / "docs").rglob("*.md"))[run]
        note.write_text(note.read_text(encoding="utf-8") + f"\nEdited in run {run}.\n", encoding="utf-8")
        subprocess.run(["git", "add", str(note)], cwd=repo, check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--modes", nargs="+", choices=["cold", "warm", "edit"], default=["cold", "warm", "edit"])
    args = ap.parse_args()
    print(f"{'notes':>6} {'mode':>5} {'jobs':>4} {'median s':>9} {'min s':>7} {'peak RSS MiB':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            repo = Path(tmp) / f"v{size}"
            generate(repo, size)
            git_commit(repo)
            for mode in args.modes:
                for jobs in args.jobs:
                    run_once(repo, jobs)  # fills the cache for warm and edit
                    walls, rss = [], []
                    for i in range(args.runs):
                        prepare(repo, mode, i)
                        wall, peak, code = run_once(repo, jobs)
                        assert code == 0, f"check failed with exit {code}"
                        walls.append(wall)
                        rss.append(peak)
                    print(f"{size:>6} {mode:>5} {jobs:>4} {statistics.median(walls):>9.2f} {min(walls):>7.2f} "
                          f"{max(rss):>13.0f}", flush=True)


if __name__ == "__main__":
    main()
