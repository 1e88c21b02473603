"""Start the local index from the team's published snapshot, then sync the local delta (ADR-0071).

Walk HEAD's first parents (at most ``limit``) to the nearest commit published under this machine's
index fingerprint; download its manifest and objects into a staging folder beside the index; check each
object's size and sha256, the manifest against the commit, and the SQLite file with
:func:`snapshot.verify_index`; merge the embedding segments into the local cache; install the SQLite file
under the sync lock; run the normal incremental sync. Anything refused leaves the local index as it was.
Only GET, HEAD and LIST requests are made.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vaultsync.git import first_parent_ancestors, head_commit_id, head_tree
from vaultsync.index import segments
from vaultsync.index.embedding import default_embedder
from vaultsync.index.fastpath import config_at, record_as_left
from vaultsync.index.fetch import ANCESTOR_LIMIT, SnapshotRefused, checked_manifest, fetch, fetch_segment
from vaultsync.index.fingerprint import fingerprint, local_parts
from vaultsync.index.layout import IndexLayout, layout_for
from vaultsync.index.lock import SyncLock
from vaultsync.index.remote import (
    MANIFEST_MAX_BYTES,
    SQLITE_NAME,
    Manifest,
    ObjectEntry,
    ObjectStore,
    RemoteError,
    resolve_location,
)
from vaultsync.index.snapshot import install, verify_index
from vaultsync.index.sync import SyncReport, sync

if TYPE_CHECKING:
    import pygit2

    from vaultsync.index.embedding import EmbedderFactory


class PullError(Exception):
    """No snapshot could be used (none configured, none published, HEAD unborn); one line."""


@dataclass
class PullReport:
    """What :func:`pull` did: the snapshot's commit, how many first-parent commits it is behind HEAD,
    bytes downloaded, embedding-cache rows merged, and the sync that followed (None when not asked)."""

    commit: str
    fingerprint: str
    url: str
    behind: int
    bytes_downloaded: int = 0
    cache_rows: int = 0
    sync: SyncReport | None = None
    warnings: list[str] = field(default_factory=list)
    kept_local: bool = False  # the local index was as new as any snapshot: nothing downloaded

    def summary(self) -> str:
        behind = "HEAD itself" if self.behind == 0 else f"{self.behind} commits behind HEAD"
        if self.kept_local:
            return (f"kept the local index: it holds {self.commit[:12]} ({behind}), as new as any published "
                    f"snapshot at {self.url}")
        return (f"pulled snapshot {self.commit[:12]} ({behind}, fingerprint {self.fingerprint}) from {self.url}: "
                f"{self.bytes_downloaded / 1e6:.1f} MB, {self.cache_rows} embedding-cache entries merged")


def pull(repo: pygit2.Repository, store: ObjectStore, *, embedder_factory: EmbedderFactory = default_embedder,
         limit: int = ANCESTOR_LIMIT, sync_after: bool = True, progress: bool = False,
         only_if_missing: bool = False, force: bool = False) -> PullReport:
    """Install the nearest published snapshot of HEAD's first-parent history as the local index.

    Args:
        repo: the repository (any worktree).
        store: the object store.
        embedder_factory: loads an embedder (to learn a model id not built yet, and for the sync).
        limit: first-parent commits to consider, HEAD included.
        sync_after: run the incremental sync to HEAD afterwards.
        progress: progress bar in that sync.
        only_if_missing: install only if there is no local index and no sync runs (what a hook's sync asks:
            it never waits); else PullError.
        force: replace the local index even when it already holds a commit at least as near HEAD as any
            snapshot (by default it is kept: a pull never goes back from what this machine indexed).
    Raises:
        PullError: HEAD unborn, or no snapshot with this fingerprint among the ancestors.
        SnapshotRefused: the chosen snapshot failed a check (the local index is left as it was).
        RemoteError: the store failed (network, credentials, permissions).
    """
    head = head_commit_id(repo)
    if head is None:
        raise PullError("HEAD has no commit yet; nothing to pull")
    config, config_text = config_at(repo, head_tree(repo))
    fp = fingerprint(local_parts(config, config_text, embedder_factory))
    location = store.location
    published = set(store.list_names(location.key("snapshots", fp, "")))
    layout = layout_for(repo)
    layout.dir.mkdir(parents=True, exist_ok=True)
    ancestors = first_parent_ancestors(repo, head, limit)
    local = None if force else _local_commit(layout)
    for behind, commit in enumerate(ancestors):
        if commit == local:  # never go back from what this machine already indexed
            report = PullReport(commit, fp, location.url, behind, kept_local=True)
            if sync_after:
                report.sync = sync(repo, wait=-1.0, embedder_factory=embedder_factory, progress=progress)
            return report
        if commit not in published:
            continue
        raw = store.get_bytes(location.snapshot_key(fp, commit, "manifest.json"), MANIFEST_MAX_BYTES)
        if raw is None:  # a publish that has not finished (the manifest is written last)
            continue
        report = PullReport(commit, fp, location.url, behind)
        with tempfile.TemporaryDirectory(dir=layout.dir, prefix="pull-") as tmp:
            manifest = checked_manifest(raw, repo, commit, fp)
            staged, decoded = _download(store, manifest, fp, Path(tmp), report)
            problem = verify_index(staged, repo, commit, fp)
            if problem:
                raise SnapshotRefused(commit, problem)
            try:
                report.cache_rows = segments.merge_into_cache(layout.embeddings, decoded)
            except Exception as exc:  # noqa: BLE001 - the cache is an optimisation: the index is still good
                report.warnings.append(f"embedding cache not merged: {type(exc).__name__}: {exc}")
            _install(staged, layout, commit, only_if_missing)
        if sync_after:
            report.sync = sync(repo, wait=-1.0, embedder_factory=embedder_factory, progress=progress)
        return report
    raise PullError(_not_found(store, fp, len(ancestors), published))


def _local_commit(layout: IndexLayout) -> str | None:
    """The commit the local index holds, or None (no index, or one that cannot be read)."""
    import sqlite3

    from vaultsync.sqlite_uri import connect_readonly

    if not layout.sqlite.exists():
        return None
    try:
        db = connect_readonly(layout.sqlite)
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'indexed_commit'").fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return str(row[0]) if row and row[0] else None


def _download(store: ObjectStore, manifest: Manifest, fp: str, tmp: Path, report: PullReport
              ) -> tuple[Path, list[tuple[ObjectEntry, list[str], np.ndarray]]]:
    """Every object, each checked against its manifest size and sha256; segments decoded and checked
    against the fingerprint's models."""
    commit = manifest.commit
    models = {str(m) for _, m in manifest.fingerprint_parts.get("models", [])}
    decoded = []
    staged = tmp / SQLITE_NAME
    for entry in manifest.objects:
        try:
            if entry.kind == "sqlite":
                fetch(store, store.location.snapshot_key(fp, commit, SQLITE_NAME), entry, staged)
            else:
                decoded.append((entry, *fetch_segment(store, entry, models, tmp)))
        except ValueError as exc:
            raise SnapshotRefused(commit, str(exc)) from None
        report.bytes_downloaded += entry.size
    return staged, decoded


def _install(staged: Path, layout: IndexLayout, commit: str, only_if_missing: bool) -> None:
    with SyncLock(layout.lock, layout.dirty, wait=0.0 if only_if_missing else -1.0) as held:
        if only_if_missing and (not held or layout.sqlite.exists()):
            raise PullError("another sync is building the index")
        install(staged, layout, commit)
        record_as_left(layout.sqlite, layout.verified)  # verified page by page above (verify_index)


def _not_found(store: ObjectStore, fp: str, limit: int, published: set[str]) -> str:
    message = (f"no published snapshot of this index (fingerprint {fp}) among the {limit} first-parent commit(s) "
               f"up to HEAD at {store.location.url}")
    if published:
        message += f" ({len(published)} published for older or other commits)"
    else:
        others = [n for n in store.list_names(store.location.key("snapshots", "")) if n != fp]
        if others:
            message += (f"; snapshots exist under {len(others)} other fingerprints (another vaultsync version, "
                        "committed config, chunk size or embedding model)")
    return message + "; CI publishes them with `vaultsync publish`"


def bootstrap(repo: pygit2.Repository, store: ObjectStore | None = None, *,
              embedder_factory: EmbedderFactory = default_embedder) -> tuple[PullReport | None, list[str]]:
    """For ``sync`` and ``publish``: when this worktree has no index at all and a remote is configured (or
    ``store`` given), install the nearest published snapshot without syncing (the caller syncs next).

    Never raises: returns (the pull's report, or None when nothing was installed; warnings, one line each:
    a remote that fails, a refused snapshot, none published).
    """
    layout = layout_for(repo)
    if layout.sqlite.exists():
        return None, []
    from vaultsync.vault.config import ConfigError

    try:
        if store is None:
            try:
                config = config_at(repo, head_tree(repo))[0]
            except ConfigError:
                return None, []  # the sync that follows reports it
            location = resolve_location(repo, config)
            if location is None:
                return None, []
            store = ObjectStore(location)
        report = pull(repo, store, embedder_factory=embedder_factory, sync_after=False, only_if_missing=True)
    except ModuleNotFoundError as exc:
        from vaultsync.resources import install_hint

        return None, [f"team index not used: {exc.name} is not installed ({install_hint('remote')}); "
                      "building the index locally"]
    except Exception as exc:  # noqa: BLE001 - a hook's sync never fails: build locally instead
        reason = str(exc) if isinstance(exc, (PullError, SnapshotRefused, RemoteError)) else \
            f"{type(exc).__name__}: {exc}"
        return None, [f"team index not used ({reason}); building the index locally"]
    return report, report.warnings
