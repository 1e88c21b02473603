"""Heading extraction: the time `find_headings` takes over every note of a real vault (code masked first).

    python bench/bench_headings.py [--vault ../shared/eval/obsidian-help/vault] [--runs 7] [--root .]

Masks each note once (:func:`vaultsync.vault.markdown.mask_code`), then times `find_headings` over all
of them ``--runs`` times and reports the median and min. ``--root`` names the checkout whose
``vaultsync`` is imported, so two versions compare in one session (``git worktree add /tmp/base <rev>``,
then ``--root /tmp/base``). Headings are read whenever a link names one (WL003) and by the index.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", default=str(Path(__file__).resolve().parents[1] / "../shared/eval/obsidian-help/vault"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    args = ap.parse_args()
    sys.path.insert(0, args.root)
    from vaultsync.vault.headings import find_headings
    from vaultsync.vault.markdown import mask_code

    notes = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(Path(args.vault).rglob("*.md"))]
    if not notes:
        sys.exit(f"no notes under {args.vault}")
    pairs = [(text, mask_code(text)) for text in notes]
    runs = []
    for _ in range(args.runs):
        started = time.perf_counter()
        for text, masked in pairs:
            find_headings(text, masked)
        runs.append((time.perf_counter() - started) * 1000)
    print(f"{args.root}: {len(notes)} notes, find_headings median {statistics.median(runs):.1f} ms, "
          f"min {min(runs):.1f} ms over {args.runs} runs")


if __name__ == "__main__":
    main()
