"""``vaultsync show ID``: one note with its links, backlinks and supersession chain."""

from __future__ import annotations

import argparse

from vaultsync.cli.argtypes import add_format


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("note", help="memory_id, path or [[WikiLink]]")
    add_format(p, ("text", "markdown", "json"))
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from vaultsync.cli.memory_common import run_memory
    from vaultsync.memory.view import note_view, render_view

    def action(ws) -> int:  # type: ignore[no-untyped-def]
        print(render_view(note_view(ws.vault(), args.note), args.format))
        return 0

    return run_memory("show", action)
