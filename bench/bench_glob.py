"""Ephemeral globs: the linear matcher (``vaultsync.vault.glob``) against the backtracking regex it replaced.

    python bench/bench_glob.py --paths 100000 --runs 5

Paths are laid out as a large vault's (``docs/dN/sub/N-000001-some-title-words.md``). For each pattern
the median of ``--runs`` passes over every path is printed for both, and both must agree on every path.
The hostile patterns (a committed ``.vaultsync.yaml`` may hold them) are timed for the matcher only,
with a one-pass cap of 60 s for the regex, which takes minutes on them (it reports "> cap").
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_glob import reference  # noqa: E402  (the old translation, kept as the tests' oracle)

from vaultsync.vault.glob import compile_glob  # noqa: E402

PATTERNS = ["**/scratch/**", "**/*.tmp.md", "docs/d1*/**", "*.md", "docs/*/sub/N-0000??-*.md"]
HOSTILE = [("*a*a*a*a*a*a*a*a*a*a*a*ab", "docs/" + "a" * 54 + ".md"), ("**/" * 10 + "x", "/".join("a" * 25) + "/xy")]


def _median(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _regex_once(pattern: str, path: str) -> None:
    reference(pattern).fullmatch(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--paths", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    paths = [f"docs/d{i % 50}/sub/N-{i:06d}-some-title-words.md" for i in range(args.paths)]
    print(f"{'pattern':28} {'matches':>8} {'matcher s':>10} {'regex s':>10}")
    for pattern in PATTERNS:
        glob, regex = compile_glob(pattern), reference(pattern)
        assert all(glob.match(p) == bool(regex.fullmatch(p)) for p in paths), pattern
        ours = _median(lambda: [glob.match(p) for p in paths], args.runs)  # noqa: B023
        theirs = _median(lambda: [regex.fullmatch(p) for p in paths], args.runs)  # noqa: B023
        print(f"{pattern:28} {sum(glob.match(p) for p in paths):8d} {ours:10.3f} {theirs:10.3f}")
    for pattern, path in HOSTILE:
        ours = _median(lambda: compile_glob(pattern).match(path), args.runs)  # noqa: B023
        proc = multiprocessing.Process(target=_regex_once, args=(pattern, path))
        start = time.perf_counter()
        proc.start()
        proc.join(60)
        theirs = f"{time.perf_counter() - start:10.3f}" if not proc.is_alive() else "   > cap"
        proc.kill()
        print(f"{pattern[:28]:28} {'-':>8} {ours:10.6f} {theirs:>10}")


if __name__ == "__main__":
    main()
