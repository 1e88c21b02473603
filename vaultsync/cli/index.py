"""``vaultsync index --rebuild``: drop the derived index and build it again from HEAD."""

from __future__ import annotations

import argparse
import sys
import time

from vaultsync.cli.common import repository


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--rebuild", action="store_true", required=True, help="drop the index and rebuild it from HEAD")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    repo = repository("index")
    if repo is None:
        return 2
    from vaultsync.index.layout import layout_for
    from vaultsync.index.state import write_state
    from vaultsync.index.sync import sync
    from vaultsync.vault.config import ConfigError

    started = time.time()
    try:
        report = sync(repo, rebuild=True, progress=sys.stderr.isatty() and not args.quiet, wait=60.0)
    except ConfigError as exc:  # the committed config is invalid: its line, and the index is untouched
        print(exc, file=sys.stderr)
        return 1
    except OSError as exc:
        from vaultsync.cli.common import environment_error

        if (said := environment_error(exc)) is None:
            raise
        print(f"vaultsync index: error: {said}", file=sys.stderr)
        return 1  # a file where the index folder should be, a read-only or full disk: as `sync` says it
    if report.status == "busy":
        print("vaultsync index: another sync holds the lock; try again", file=sys.stderr)
        return 1
    write_state(layout_for(repo), last_run=started, last_status=report.status, last_commit=report.commit,
                last_seconds=round(report.seconds, 3), last_error=None, warnings=report.warnings)
    for warning in report.warnings:
        print(f"vaultsync index: warning: {warning}", file=sys.stderr)
    if not args.quiet:
        print(report.summary())
    return 0
