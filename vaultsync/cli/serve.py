"""``vaultsync serve``: keep models and the index warm behind a small JSON API on 127.0.0.1."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import os
import sys
from pathlib import Path

from vaultsync.cli.common import committed_config, repository


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    from vaultsync.serve.client import DEFAULT_PORT

    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("--port", type=int, default=None, help=f"TCP port (default: $VAULTSYNC_PORT, else search.port, else {DEFAULT_PORT})")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, loopback only)")
    p.add_argument("--allow-remote", action="store_true", help="allow binding a non-loopback address (every request stays signed with the repository's secret)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    repo = repository("serve")
    if repo is None:
        return 2
    try:
        loopback = args.host == "localhost" or ipaddress.ip_address(args.host).is_loopback
    except ValueError:
        loopback = False
    if not loopback and not args.allow_remote:
        print(f"vaultsync serve: refusing to bind {args.host}: not a loopback address (use --allow-remote)",
              file=sys.stderr)
        return 2
    from vaultsync.serve.client import DEFAULT_PORT, daemon_port, port_env_problem
    from vaultsync.serve.daemon import serve

    if args.port is None and (problem := port_env_problem()):  # it would have served on another port
        print(f"vaultsync serve: {problem}; unset it, or give --port", file=sys.stderr)
        return 2

    from vaultsync.index.layout import layout_for

    config, index_dir = committed_config(repo), layout_for(repo).dir
    port = args.port or daemon_port(config.search.get("port")) or DEFAULT_PORT
    if (running := _running_elsewhere(index_dir, port)) is not None:  # a second one would take over its port record
        print(f"vaultsync serve: this repository's daemon already listens on 127.0.0.1:{running}; one daemon "
              "serves a repository (stop it to start another)", file=sys.stderr)
        return 1
    chosen = args.port or os.environ.get("VAULTSYNC_PORT") or config.search.get("port")
    try:
        server = serve(repo, args.host, port, allow_remote=not loopback)
    except OSError as exc:
        holder = _holder(index_dir, port)
        if chosen or exc.errno != errno.EADDRINUSE or holder.startswith("this repository's"):
            print(f"vaultsync serve: cannot listen on {args.host}:{port}: {exc.strerror or exc} ({holder})",
                  file=sys.stderr)
            return 1
        server = serve(repo, args.host, 0, allow_remote=not loopback)  # the default port is another's: any free one
        port = server.server_address[1]
        print(f"vaultsync serve: port {DEFAULT_PORT} is taken by another program; this daemon takes port {port}, "
              "recorded for `vaultsync search` and `git memsearch` in this repository", file=sys.stderr)
    print(f"vaultsync serve: listening on http://{args.host}:{port} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    import signal

    signal.signal(signal.SIGTERM, _stop)  # `kill`, a service manager: close as Ctrl-C does (the port record goes)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _running_elsewhere(index_dir: Path, port: int) -> int | None:
    """The port of this repository's live daemon when it is not ``port``, else None."""
    from vaultsync.serve.client import own_daemon_answers
    from vaultsync.serve.port_file import advertised_port

    recorded = advertised_port(index_dir)
    return recorded if recorded not in (None, port) and own_daemon_answers(recorded, index_dir) else None


def _holder(index_dir: Path, port: int) -> str:
    """Who holds ``port``, as far as a signed ``/health`` tells: this repository's daemon, or another process."""
    from vaultsync.serve.client import own_daemon_answers

    if own_daemon_answers(port, index_dir):
        return "this repository's daemon already listens there: searches use it; stop it to start another"
    return ("another repository's daemon, or another program? each repository needs its own port: --port, "
            "$VAULTSYNC_PORT, or search.port in its config")


def _stop(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
