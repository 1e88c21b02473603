"""``vaultsync publish``: sync the index to HEAD and upload its snapshot to the team's object store.

Run by CI on pushes to the main branch, with write credentials (the standard AWS chain). The remote is
``--remote``, else ``$VAULTSYNC_REMOTE``, ``git config vaultsync.remote`` or ``index.remote`` in the
committed ``.vaultsync.yaml`` (an ``s3://bucket/prefix`` location; ADR-0071).
"""

from __future__ import annotations

import argparse
import sys

from vaultsync.cli.common import repository

NO_REMOTE = ("no remote configured: pass --remote s3://BUCKET/PREFIX, or set $VAULTSYNC_REMOTE, "
             "`git config vaultsync.remote` or index.remote in .vaultsync.yaml")


def add_remote_options(p: argparse.ArgumentParser) -> None:
    """``--remote`` and ``--endpoint-url``, shared with ``vaultsync pull``."""
    p.add_argument("--remote", metavar="s3://BUCKET/PREFIX", help="the object store location (overrides the settings)")
    p.add_argument("--endpoint-url", metavar="URL",
                   help="an S3-compatible server (default: AWS, or $AWS_ENDPOINT_URL)")
    p.add_argument("--quiet", action="store_true", help="print errors only")


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_remote_options(p)
    p.set_defaults(run=run)


def open_store(command: str, repo, cli_remote: str | None, endpoint: str | None):  # type: ignore[no-untyped-def]
    """The :class:`ObjectStore` of the configured remote, or None after printing why (callers exit 1)."""
    from vaultsync.cli.common import committed_config
    from vaultsync.index.remote import ObjectStore, RemoteError, resolve_location

    try:
        location = resolve_location(repo, committed_config(repo), cli_remote)
    except RemoteError as exc:
        print(f"vaultsync {command}: {exc}", file=sys.stderr)
        return None
    if location is None:
        print(f"vaultsync {command}: {NO_REMOTE}", file=sys.stderr)
        return None
    try:
        return ObjectStore(location, endpoint)
    except RemoteError as exc:  # a malformed endpoint URL or region
        print(f"vaultsync {command}: {exc}", file=sys.stderr)
        return None


def with_remote(command: str, args: argparse.Namespace, action, errors: tuple[type[Exception], ...]):  # type: ignore[no-untyped-def]
    """``action(repo, store)`` for ``vaultsync publish``/``pull``: its report, or None after printing one line
    (no repository, no or a bad remote, a config error, or one of ``errors``); callers exit 1 on None."""
    repo = repository(command)
    if repo is None:
        return None
    from vaultsync.index.remote import RemoteError
    from vaultsync.vault.config import ConfigError

    store = open_store(command, repo, args.remote, args.endpoint_url)
    if store is None:
        return None
    try:
        return repo, action(repo, store)
    except (RemoteError, *errors) as exc:
        print(f"vaultsync {command}: {exc}", file=sys.stderr)
    except ConfigError as exc:
        print("\n".join(f"vaultsync {command}: {d.render()}" for d in exc.diagnostics), file=sys.stderr)
    return None


def run(args: argparse.Namespace) -> int:
    from vaultsync.index.publish import PublishError, publish

    done = with_remote("publish", args, publish, (PublishError,))
    if done is None:
        return 1
    _, report = done
    if report.sync is not None:
        for warning in report.sync.warnings:
            print(f"vaultsync publish: warning: {warning}", file=sys.stderr)
    if not args.quiet:
        print(report.summary())
    return 0
