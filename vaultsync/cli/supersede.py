"""``vaultsync supersede OLD NEW``: NEW replaces OLD — both sides of the link and OLD's status, in one checked change."""

from __future__ import annotations

import argparse

from vaultsync.cli.argtypes import utf8_text


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("old", type=utf8_text, help="the note being replaced (memory_id, path or [[WikiLink]])")
    p.add_argument("new", type=utf8_text, help="the note that replaces it")
    p.add_argument("--commit", action="store_true", help="git commit both files")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from vaultsync.cli.memory_common import commit_written, report_uncommitted, report_written, run_memory
    from vaultsync.memory.supersede import commit_message, supersede

    def action(ws) -> int:  # type: ignore[no-untyped-def]
        written = supersede(ws, args.old, args.new)
        report_written(written)
        if args.commit:
            commit_written(ws, written.changed, commit_message(written, args.old))
        report_uncommitted(args.commit)
        return 0

    return run_memory("supersede", action, commit=args.commit)
