"""``vaultsync new TYPE --title …``: write a valid new note of a type (memory_id allocated, dates filled)."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys

from vaultsync.cli.argtypes import utf8_text
from vaultsync.cli.memory_common import commit_written, parse_sets, report_uncommitted, report_written, run_memory
from vaultsync.memory.errors import MemoryWriteError


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("type", type=utf8_text, help="memory type, as configured under `types:` in .vaultsync.yaml (adr, incident, rule)")
    p.add_argument("--title", required=True, type=utf8_text, help="the note's title")
    p.add_argument("--supersedes", metavar="ID", type=utf8_text, help="the note this one replaces (memory_id, path or [[WikiLink]])")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", type=utf8_text, help="a frontmatter field, value read as YAML "
                   "(repeatable): --set tags='[payments]' --set confidence=0.8")
    p.add_argument("--body", type=utf8_text, help="Markdown body (default: the type's empty sections)")
    p.add_argument("--edit", action="store_true", help="open the new note in $VISUAL/$EDITOR, then check it")
    p.add_argument("--commit", action="store_true", help="git commit the change (only its files)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    def action(ws) -> int:  # type: ignore[no-untyped-def]
        from vaultsync.memory.create import create
        from vaultsync.memory.supersede import supersede_with_new

        fields = parse_sets(args.set)
        hides = bool(args.supersedes) and _in_force(ws, args.type, fields)  # a proposed successor hides nothing
        body = bool(args.body and args.body.strip())  # `--body " "` is no text
        if hides and args.commit and not body and not args.edit:
            raise MemoryWriteError(f"--supersedes {args.supersedes} --commit needs --body or --edit: a successor of "
                                   f"empty sections would hide {args.supersedes} behind nothing, committed")
        if args.supersedes:
            written = supersede_with_new(ws, args.supersedes, args.type, args.title, fields, args.body)
        else:
            written = create(ws, args.type, args.title, fields, args.body)
        report_written(written)
        unchanged = False
        if args.edit:
            before = (ws.root / written.path).read_bytes()
            code = _edit(ws, written.path)
            if code:
                return code
            unchanged = (ws.root / written.path).read_bytes() == before
        if hides and not body and (unchanged or not args.edit):
            # search now hides the old note behind empty sections
            empty = f"{written.memory_id} holds only the type's empty sections" + (
                " (the editor closed without a change)" if unchanged else "")
            if args.commit:
                print(f"vaultsync new: not committed: {empty}, and it supersedes {args.supersedes}, which search "
                      f"would hide behind it: fill in {written.path}, then commit {' and '.join(written.changed)}",
                      file=sys.stderr)
                return 1
            print(f"warning: {empty}, and it now supersedes {args.supersedes}, which search hides behind it: "
                  "fill it in (--body, --edit) before it is committed", file=sys.stderr)
        if args.commit and unchanged and not body:
            print(f"vaultsync new: not committed: {written.memory_id} holds only the type's empty sections (the editor "
                  f"closed without a change): fill in {written.path}, then commit it", file=sys.stderr)
            return 1
        if args.commit:
            written.commit = commit_written(ws, written.changed, f"{written.memory_id}: {args.title}")
        report_uncommitted(args.commit)
        return 0

    return run_memory("new", action, commit=args.commit)


def _edit(ws, path: str) -> int:  # type: ignore[no-untyped-def]
    """Open ``path`` in the editor, then check the vault's view of it; 1 when it has errors or the editor
    exited with a non-zero status (the edit was called off)."""
    from vaultsync.checks.runner import run_checks
    from vaultsync.diagnostics import ERROR

    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    status = subprocess.run([*shlex.split(editor), str(ws.root / path)], check=False).returncode
    if status:  # `:cq` in vim: the writer called the edit off, as `git commit` reads it
        print(f"vaultsync new: the editor exited with status {status}: nothing committed; {path} stays as the "
              "editor left it", file=sys.stderr)
        return 1
    found = [d for d in run_checks(ws.vault()) if d.path == path]
    for d in found:
        print(d.render(), file=sys.stderr)
    return 1 if any(d.severity == ERROR for d in found) else 0


def _in_force(ws, type_name: str, fields: dict) -> bool:  # type: ignore[no-untyped-def,type-arg]
    """Whether the new note's status (given, else the type's first) is in force: only then does it hide
    the note it supersedes from search (ADR-0114)."""
    from vaultsync.memory.scaffold import default_status, type_schema
    from vaultsync.vault.lifecycle_fields import in_force

    if "status" in fields:
        return in_force(fields["status"])
    spec = next((t for t in ws.config.types if t.name == type_name), None)
    try:
        return spec is None or in_force(default_status(type_schema(ws.config, str(ws.root), spec)))
    except (OSError, ValueError, KeyError):  # the type's schema unreadable: create says so
        return True
