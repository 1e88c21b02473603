"""What ``vaultsync status`` reports about an index: indexed commit vs HEAD, counts, a running sync
and how far its embedding has come, a killed sync, the last error and warnings, and whether the
hooks are installed."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from vaultsync.diagnostics import terminal_safe
from vaultsync.git import head_commit_id, head_tree, workdir
from vaultsync.index.damage import is_damage
from vaultsync.index.fastpath import (
    as_left,
    config_at,
    config_blob_id,
    config_key,
    config_warnings,
    lance_tables_present,
)
from vaultsync.index.format import SCHEMA_FINGERPRINT
from vaultsync.index.hooks import (
    REQUIRED_HOOKS,
    check_configured,
    check_hook,
    hooks_dir,
    hooks_path_setting,
    installed_hooks,
)
from vaultsync.index.layout import layout_for, write_problem
from vaultsync.index.lock import is_alive, read_owner
from vaultsync.index.progress import describe, eta_seconds, read_progress
from vaultsync.index.sqlite_store import SqliteStore
from vaultsync.index.state import read_state
from vaultsync.vault.config import Config, ConfigError


def collect(repo: Any) -> dict[str, Any]:
    """Status facts as a dict (what ``--format json`` prints)."""
    try:
        config = config_at(repo, head_tree(repo))[0]
    except ConfigError:  # the last good index stays readable; `check` reports the config
        config = Config()
    layout = layout_for(repo, config)
    head = head_commit_id(repo)
    info: dict[str, Any] = {"repository": str(Path(repo.path).resolve() if repo.is_bare else workdir(repo)),
                            "bare": repo.is_bare, "index_dir": str(layout.dir), "head": head}
    meta: dict[str, str] = {}
    if layout.sqlite.is_dir():  # not ours to delete: said, as `sync` says it
        info["index_problem"] = f"the index file {layout.sqlite} is a folder: remove it, then run `vaultsync sync`"
    elif layout.sqlite.exists():
        store = SqliteStore(layout.sqlite, readonly=True)
        try:
            meta = store.meta()
            info.update(store.counts())
            with contextlib.suppress(sqlite3.OperationalError):  # an index of an older schema has no such table
                info["token_vectors"] = store.db.execute("SELECT count(*) FROM tokens").fetchone()[0]  # ADR-0117
        except sqlite3.DatabaseError as exc:  # being created by a first sync, or damaged
            owner = read_owner(layout.lock)
            if is_damage(exc) and not (owner is not None and is_alive(owner)):
                info["index_damaged"] = True
                info["index_problem"] = f"the index file {layout.sqlite} is damaged ({exc}): the next sync " \
                                        "repairs it (rebuilt from HEAD), or run `vaultsync index --rebuild`"
            else:
                info["index_problem"] = f"index not readable ({exc}); the next sync repairs it"
            with contextlib.suppress(OSError):  # a read-only index folder: status still reports
                layout.dirty.touch()  # so the next sync does not stop at the fast path (ADR-0046)
        finally:
            store.close()
    if meta:
        info["indexed_commit"] = meta.get("indexed_commit") or None
        info["lancedb_behind"] = meta.get("lance_tree") != meta.get("indexed_tree") \
            or not lance_tables_present(layout.lance, meta.get("embed_models", ""))  # a table deleted
        info["embed_model"] = meta.get("embed_model")
        info["synced_at"] = meta.get("synced_at")
    else:
        info["indexed_commit"] = None
    info["unread"] = json.loads(meta.get("retry_paths") or "[]") if meta else []  # content not fetched (ADR-0098)
    if meta and meta.get("schema_fingerprint") != SCHEMA_FINGERPRINT:
        info.setdefault("index_problem", "the index was built by another vaultsync version; the next sync rebuilds it")
    elif meta and meta.get("config_key") != config_key(config_blob_id(head_tree(repo))) and head is not None \
            and info["indexed_commit"] == head:  # HEAD's config, read by another vaultsync version
        info.setdefault("index_problem", "the index was read by another vaultsync version; the next sync reads "
                                         "every note again (embeddings come from the cache)")
    owner = read_owner(layout.lock)  # read, never taken: a colliding hook's sync must find the lock free
    alive = owner is not None and is_alive(owner)
    state = read_state(layout)
    error_at = float(state.get("last_error_at") or 0)  # type: ignore[arg-type]
    if meta and not alive and not as_left(layout.sqlite, layout.verified):  # a running sync writes them
        # a sync that stopped midway (killed, timed out, out of disk) left them so; else another program did
        stopped = owner is not None or (state.get("last_error") and error_at >= _mtime(layout.verified))
        why = "a sync stopped before it finished (last error below)" if stopped else \
            "the index files changed since the last sync wrote them (not by vaultsync)"
        info.setdefault("index_problem", f"{why}; the next sync checks them and rebuilds a damaged index")
    if problem := write_problem(layout.dir):  # a read-only or full disk: the hooks' syncs fail, unrecorded
        info["write_problem"] = problem
    if not alive and info["indexed_commit"] != head and (said := hook_start_failure(layout.log, layout.verified)):
        info["hook_failed"] = said
    info["up_to_date"] = info["indexed_commit"] == head and head is not None and not info["unread"] \
        and "index_problem" not in info
    info["sync_running"] = alive
    info["sync_pid"] = owner.pid if alive else None
    record = read_progress(layout.progress, owner.pid, owner.started) if owner is not None else None
    if alive and record is not None:
        info["progress"] = {**record, "eta_s": eta_seconds(record), "text": describe(record)}
    info["last_error"] = state.get("last_error")
    if owner is not None and not alive and error_at < owner.started:
        kept = f" after {describe(record, eta=False)}, kept" if record is not None else ""
        info["last_error"] = (f"the sync started at {_iso(owner.started)} (pid {owner.pid}"
                              f"{', ' + owner.hook if owner.hook else ''}) was killed before it finished{kept}; "
                              "the next sync resumes")
    info["last_status"] = state.get("last_status")
    said = [*config_warnings(config), *(state.get("warnings") or [])]  # type: ignore[misc]
    info["warnings"] = list(dict.fromkeys(said))  # the last sync's report says the ignored ones too
    setting = hooks_path_setting(repo)  # one `git config` run for every hook looked at below
    folder = hooks_dir(repo, setting or "")
    present = installed_hooks(repo, folder)
    info["hooks"] = present
    info["check_hook"] = check_hook(repo, folder=folder)
    info["merge_check_hook"] = check_hook(repo, "pre-merge-commit", folder)
    info["check_configured"] = check_configured(repo)
    missing = [h for h in REQUIRED_HOOKS if h not in present]
    if repo.is_bare:  # no commit, merge or checkout happens here: nothing runs the hooks
        info["hooks_problem"] = "a bare repository runs no commit or checkout hooks: run `vaultsync sync` after " \
                                "each push (a post-receive hook can)"
    elif setting and missing:
        info["hooks_problem"] = f"hooks not active: core.hooksPath={setting} (unset it or chain our hooks from there)"
    elif missing:
        info["hooks_problem"] = "git hooks not installed (run `vaultsync install`)"
    return info


def _iso(ts: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).isoformat(timespec="seconds")


def unread_warning(paths: list[str]) -> str:
    """What to say about the notes of HEAD the index could not read because git has not fetched their
    content (a partial clone's missing blobs, Git LFS content not pulled: ``meta.retry_paths``)."""
    named = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    return (f"{len(paths)} note(s) of HEAD are not indexed: git has not fetched their content ({named}; a partial "
            "clone, or Git LFS: `git lfs pull`); the next `vaultsync sync` after they arrive reads them")


def _mtime(path: Path) -> float:
    """``path``'s modification time (seconds since the epoch), 0 when it is absent."""
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


# what the shell or Python write to the hook's log when the hook's interpreter cannot run vaultsync at all
_START_FAILURES = re.compile(r"No module named '?vaultsync|setsid: failed to execute|"
                             r"(?:^|[\s/])python[\d.]*: (?:not found|No such file or directory)")


def hook_start_failure(log: Path, synced: Path) -> str | None:
    """Why the git hooks' syncs never started, from the last line of their log (``hook.log``) when it was
    written after the last sync's files (``synced``): the interpreter a hook names is gone, or has no
    vaultsync (a hooks folder committed from another machine, a deleted virtualenv). Such a sync records
    no error, so status would say only "behind". None when the log says nothing of the kind."""
    try:
        if log.stat().st_mtime <= _mtime(synced):
            return None
        with log.open("rb") as f:
            f.seek(max(0, log.stat().st_size - 4096))
            last = next((line for line in reversed(f.read().decode("utf-8", "replace").splitlines()) if line.strip()), "")
    except OSError:
        return None
    if not _START_FAILURES.search(last):
        return None
    return (f"the git hooks could not start vaultsync ({terminal_safe(last.strip())[:200]}): run `vaultsync "
            f"install` again from an environment that has vaultsync, or set VAULTSYNC_PYTHON (log: {log})")

