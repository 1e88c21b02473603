"""``vaultsync promote PATH --type T``: a scratch (ephemeral) note becomes a permanent note of type T."""

from __future__ import annotations

import argparse

from vaultsync.cli.argtypes import utf8_text


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("path", type=utf8_text, help="the scratch note (a path matching an `ephemeral` glob)")
    p.add_argument("--type", required=True, dest="type_name", type=utf8_text, help="the memory type it becomes")
    p.add_argument("--title", type=utf8_text, help="title (default: its frontmatter title, first heading or file name)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", type=utf8_text,
                   help="a frontmatter field, value read as YAML (repeatable): --set severity=SEV2")
    p.add_argument("--commit", action="store_true", help="git commit the new note and the scratch file's removal")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from vaultsync.cli.memory_common import commit_written, parse_sets, report_uncommitted, report_written, run_memory
    from vaultsync.memory.promote import promote, promoted_message

    def action(ws) -> int:  # type: ignore[no-untyped-def]
        written = promote(ws, args.path, args.type_name, args.title, parse_sets(args.set))
        report_written(written)
        if args.commit:
            commit_written(ws, written.changed, promoted_message(written))  # the removal too
        report_uncommitted(args.commit)
        return 0

    return run_memory("promote", action, commit=args.commit)
