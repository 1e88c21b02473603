"""``vaultsync review``: the revalidation queue (expiring, stale, low-confidence, superseded-but-linked notes);
``--confirm ID`` records that a note still holds (``last_validated: today``)."""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from vaultsync.cli.argtypes import add_format


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from vaultsync.memory.review import DEFAULT_DAYS, FORMATS

    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--days", type=_days, default=DEFAULT_DAYS,
                   help=f"queue notes expiring within this many days (default {DEFAULT_DAYS})")
    add_format(p, FORMATS)
    p.add_argument("--confirm", metavar="ID", help="set this note's last_validated to today (shows the diff)")
    p.add_argument("--expires", metavar="YYYY-MM-DD", type=_date,
                   help="with --confirm: also set the note's expires, the last day it holds (renews an expired note)")
    p.add_argument("--fail-on-items", action="store_true", help="exit 1 when the queue is not empty")
    p.set_defaults(run=run)


def _days(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of days, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _date(text: str) -> dt.date:
    """A ``YYYY-MM-DD`` date (``fromisoformat`` alone would also take ``20270101``)."""
    try:
        if len(text) != 10:
            raise ValueError(text)
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date as YYYY-MM-DD, got {text!r}") from None


def run(args: argparse.Namespace) -> int:
    from vaultsync.cli.memory_common import run_memory
    from vaultsync.diagnostics import visible
    from vaultsync.memory import review

    if args.expires is not None and args.confirm is None:
        print("vaultsync review: --expires goes with --confirm ID (the note to renew)", file=sys.stderr)
        return 2

    def action(ws) -> int:  # type: ignore[no-untyped-def]
        if args.confirm is not None:  # `--confirm ""` names no note: refused as any other unknown id
            path, diff, caveat = review.confirm(ws, args.confirm, args.expires)
            print(diff or f"{path}: last_validated is already today", end="" if diff else "\n")
            if caveat:
                print(f"vaultsync review: {visible(caveat)}", file=sys.stderr)  # it quotes a committed field
            for item in review.still_queued(ws.vault(), path, args.days):
                if not caveat:
                    print(f"vaultsync review: {path} stays in the queue ({item.kind}): {visible(item.reason)}",
                          file=sys.stderr)
            return 0
        items = review.queue(ws.vault(), args.days)
        text = review.render(items, args.format)
        if text:
            print(text)
        if args.format == "text" and not review.max_ages(ws.config):
            print("note: no note is queued for its age: set review.max_age_days in .vaultsync.yaml "
                  "(e.g. {rule: 90, adr: 365})", file=sys.stderr)
        if args.format == "text" and items:
            print(f"{len(items)} item(s) to review", file=sys.stderr)
        return 1 if args.fail_on_items and items else 0

    return run_memory("review", action)
