"""``vaultsync mcp``: the MCP server over stdio — search, get, write, supersede, promote, review for coding agents.

Register it with an MCP client (see the README); it serves the repository around the
current directory (or ``--root``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--root", type=Path, default=None, help="the repository to serve (default: current directory)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from vaultsync.memory.errors import MemoryWriteError
    from vaultsync.memory.workspace import Workspace

    try:
        ws = Workspace.open(args.root or Path.cwd())
    except MemoryWriteError as exc:
        print(f"vaultsync mcp: {exc}", file=sys.stderr)
        return 2
    try:
        from vaultsync.mcp_server.server import run_stdio
    except ModuleNotFoundError as exc:  # the SDK, or what it brings (anyio, pydantic), which the server imports first
        from vaultsync.resources import install_hint

        missing = (exc.name or "a module").split(".")[0]
        print(f"vaultsync mcp: the MCP SDK is not installed ({missing} is missing): {install_hint('search,mcp')}",
              file=sys.stderr)
        return 2
    run_stdio(ws.root)
    return 0
