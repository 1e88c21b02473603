"""``vaultsync pull``: start the local index from the team's published snapshot, then sync what is newer.

Finds the nearest of HEAD's first-parent ancestors (``--max-ancestors``, 200) published with this
machine's index fingerprint, verifies every object (sha256, size, fingerprint, SQLite quick_check, the
notes against the commit's tree) and installs it only then; the incremental sync indexes the commits
after it. Read-only credentials suffice (GET, HEAD and LIST only). Exit 1 when no snapshot is found or
one is refused; the local index is then left as it was (ADR-0071).
"""

from __future__ import annotations

import argparse
import sys
import time

from vaultsync.cli.publish import add_remote_options, with_remote


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_remote_options(p)
    p.add_argument("--max-ancestors", type=int, default=200, metavar="N",
                   help="first-parent commits to look through, HEAD included (default 200)")
    p.add_argument("--force", action="store_true",
                   help="replace the local index even when it is as new as the nearest snapshot")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from vaultsync.index.layout import layout_for
    from vaultsync.index.pull import PullError, SnapshotRefused, pull
    from vaultsync.index.state import write_state

    started = time.time()
    done = with_remote("pull", args, lambda repo, store: pull(
        repo, store, limit=max(1, args.max_ancestors), force=args.force,
        progress=sys.stderr.isatty() and not args.quiet), (PullError, SnapshotRefused))
    if done is None:
        return 1
    repo, report = done
    synced = report.sync
    warnings = report.warnings + (synced.warnings if synced is not None else [])
    if synced is not None and synced.status != "busy":
        write_state(layout_for(repo), last_run=started, last_status=synced.status, last_commit=synced.commit,
                    last_seconds=round(synced.seconds, 3), last_error=None, warnings=warnings)
    for warning in warnings:
        print(f"vaultsync pull: warning: {warning}", file=sys.stderr)
    if not args.quiet:
        print(report.summary())
        if synced is not None:
            print(synced.summary())
    return 0
