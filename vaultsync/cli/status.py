"""``vaultsync status``: indexed commit vs HEAD, counts, hooks, last sync and last error."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pygit2

from vaultsync.cli.argtypes import add_format
from vaultsync.cli.common import repository
from vaultsync.index.status import collect, unread_warning


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    add_format(p, ("text", "json"))
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    repo = repository("status")
    if repo is None:
        return 2
    info = collect(repo)
    info["daemon"] = _daemon(Path(info["index_dir"]))
    if args.format == "json":
        print(json.dumps(info, indent=2))
        return 0
    head = info["head"][:10] if info["head"] else "(no commits)"
    indexed = (info["indexed_commit"] or ("(damaged)" if info.get("index_damaged") else "(none)"))[:10]
    state = "up to date" if info["up_to_date"] else "NEEDS A REBUILD (the warning below says how)" \
        if info.get("index_damaged") else _direction(repo, info["indexed_commit"], info["head"]) \
        if info["indexed_commit"] != info["head"] \
        else f"INCOMPLETE ({len(info['unread'])} note(s) not read)" if info["unread"] \
        else "NEEDS A SYNC (the warning below says why)" if info.get("index_problem") else "nothing to index yet"
    if info["sync_running"]:
        state += f" (a sync is running, pid {info['sync_pid']})"
    print(f"repository  {info['repository']}" + (" (bare: HEAD's commit is indexed; no working tree)"
                                                  if info["bare"] else ""))
    print(f"index       {info['index_dir']}")
    print(f"indexed     {indexed}   HEAD {head}   {state}")
    if "notes" in info:
        print(f"contents    {_count(info['notes'], 'note')}, {_count(info['chunks'], 'chunk')}, "
              f"{_count(info['links'], 'link')}; "
              f"embedder {info.get('embed_model') or '-'}"
              + (f"; token vectors of {_count(info['token_vectors'], 'chunk')} (MaxSim)" if info.get("token_vectors") else ""))
    if info.get("progress"):
        print(f"progress    {info['progress']['text']}")
    if info.get("synced_at"):
        print(f"last sync   {info['synced_at']} ({info.get('last_status') or 'ok'})")
    daemon = info["daemon"]
    print(f"daemon      listening on 127.0.0.1:{daemon['port']} (searches use it)" if daemon["running"]
          else f"daemon      none: {daemon['problem']}" if daemon.get("problem")
          else "daemon      none (`vaultsync serve` keeps the models and the index warm)")
    off = "off (run `pre-commit install`: .pre-commit-config.yaml has vaultsync-check)" if info.get("check_configured") \
        else "off (add vaultsync-check to .pre-commit-config.yaml)"
    print(f"hooks       {', '.join(info['hooks']) or 'none'}; pre-commit check "
          + (("on (vaultsync-check)" + ("" if info.get("merge_check_hook") else
                                         "; merges unchecked (run `pre-commit install -t pre-merge-commit`)"))
             if info.get("check_hook") else off))
    if info["unread"]:
        print(f"warning     {unread_warning(info['unread'])}")
    if info.get("lancedb_behind") and not info["sync_running"]:  # a running sync fills it last: no damage
        print("warning     LanceDB (embedding cache, vector table) is behind; the next sync repairs it")
    for problem in ("write_problem", "index_problem", "hooks_problem", "hook_failed"):
        if info.get(problem):
            print(f"warning     {info[problem]}")
    for warning in info["warnings"]:
        print(f"warning     {warning}")
    if info.get("last_error"):
        print(f"last error  {info['last_error']}")
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _daemon(index_dir: Path) -> dict[str, Any]:
    """``{"running": bool, "port": int | None, "problem": str | None}``: whether this repository's daemon answers on the port a
    client would ask (:func:`vaultsync.serve.client.client_port`)."""
    from vaultsync.serve.client import client_port, own_daemon_answers, port_env_problem

    port = client_port(index_dir)
    return {"running": own_daemon_answers(port, index_dir), "port": port, "problem": port_env_problem()}


def _direction(repo, indexed: str | None, head: str | None) -> str:  # type: ignore[no-untyped-def]
    """``BEHIND HEAD``, or ``AHEAD OF HEAD`` when the indexed commit descends from HEAD (after a reset),
    or ``NOT AT HEAD`` when neither descends from the other (another branch)."""
    if not indexed or not head:
        return "BEHIND HEAD"
    try:
        if repo.descendant_of(indexed, head):
            return "AHEAD OF HEAD (HEAD was reset or checked out back)"
        if repo.descendant_of(head, indexed):
            return "BEHIND HEAD"
    except (KeyError, ValueError, pygit2.GitError):  # a commit this clone lacks: say only that it differs
        return "NOT AT HEAD"
    return "NOT AT HEAD (on another line of history)"
