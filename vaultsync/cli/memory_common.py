"""What the memory commands (new, show, supersede, promote, review) share: the workspace and error reporting."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vaultsync.memory.errors import MemoryWriteError, NotCommitted, WriteRefused
from vaultsync.memory.workspace import Workspace


def run_memory(command: str, action: Callable[[Workspace], int], commit: bool = False) -> int:
    """Open the workspace around the current directory and run ``action``; refusals become
    ``path:line:col: CODE message`` lines on stderr and exit status 1, bad requests exit 2.
    ``commit``: the write will be committed on its own (:attr:`Workspace.committing`)."""
    try:
        ws = Workspace.open(Path.cwd(), committing=commit)
        _warn_unknown_zone(command, ws)
        return action(ws)
    except WriteRefused as exc:
        for d in exc.diagnostics:
            print(d.render(), file=sys.stderr)
        print(f"vaultsync {command}: refused, nothing written ({len(exc.diagnostics)} error(s))", file=sys.stderr)
        return 1
    except NotCommitted as exc:
        print(f"vaultsync {command}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        raise  # the reader went away (`| head`): not an error of the command (main exits 0)
    except (MemoryWriteError, OSError) as exc:
        print(f"vaultsync {command}: {exc}", file=sys.stderr)
        return 2


def _warn_unknown_zone(command: str, ws: Workspace) -> None:
    """Say on stderr that dates are judged in this machine's zone where ``checks.timezone`` names no known
    zone (``check`` refuses it, CF002)."""
    from vaultsync.vault.clock import zone_warning

    if (said := zone_warning(ws.config)) is not None:
        print(f"vaultsync {command}: warning: {said}", file=sys.stderr)


def parse_sets(values: list[str] | None) -> dict[str, Any]:
    """``--set key=value`` pairs; the value is read as YAML (``0.8``, ``[a, b]``, ``true``)."""
    from vaultsync.vault.yamlload import YamlProblem, load_yaml

    out: dict[str, Any] = {}
    for item in values or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise MemoryWriteError(f"--set {item!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = load_yaml(raw).data if raw.strip() else ""
        except YamlProblem as exc:
            raise MemoryWriteError(f"--set {item!r}: {exc.render(0)}") from None
    return out


def report_uncommitted(committed: bool) -> None:
    """Say, on stderr, that a write left uncommitted is not searchable yet."""
    from vaultsync.memory.commit import NOT_COMMITTED

    if not committed:
        print(f"note: {NOT_COMMITTED.format(how='pass --commit')}", file=sys.stderr)


def commit_written(ws: Workspace, paths: list[str], message: str) -> str:
    """Commit ``paths`` (:func:`vaultsync.memory.commit.commit_paths`) and say so on stderr; the commit's id."""
    from vaultsync.memory.commit import commit_paths

    commit = commit_paths(ws, paths, message)
    print(f"committed {commit[:10]}", file=sys.stderr)
    return commit


def report_written(written: Any) -> None:
    """The changed paths on stdout, warnings on stderr."""
    for w in written.warnings:
        print(w.render(), file=sys.stderr)
    for path in written.changed:
        print(path)
