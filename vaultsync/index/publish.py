"""Publish the index of HEAD to the team's object store (what CI runs on pushes to main; ADR-0071).

A runner without an index (CI) first installs the nearest published snapshot, as ``vaultsync pull`` would,
so that only the commits after it are embedded. Order, so that a reader never sees half a snapshot:
sync to HEAD; copy the SQLite index under the sync
lock (backup API); check the copy is HEAD's index (:func:`snapshot.verify_index`: committed,
non-ephemeral notes of HEAD's tree only); upload ``index.sqlite``, then the embedding segments that the
store lacks (content-addressed: HEAD request, then PUT), and ``manifest.json`` last.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync import __version__
from vaultsync.git import head_commit_id, head_tree
from vaultsync.index import segments
from vaultsync.index.embedding import default_embedder
from vaultsync.index.fastpath import config_at, config_hash
from vaultsync.index.fingerprint import fingerprint, parts_from_meta
from vaultsync.index.layout import layout_for
from vaultsync.index.lock import SyncLock
from vaultsync.index.pull import bootstrap
from vaultsync.index.remote import SQLITE_NAME, Manifest, ObjectEntry, ObjectStore, file_sha256
from vaultsync.index.snapshot import copy_index, verify_index
from vaultsync.index.sync import SyncReport, sync

if TYPE_CHECKING:
    import pygit2

    from vaultsync.index.embedding import EmbedderFactory


class PublishError(Exception):
    """Nothing was published; ``str(exc)`` is one line saying why."""


@dataclass
class PublishReport:
    """What :func:`publish` did. ``bytes_uploaded`` in bytes; ``segments_reused``: segments already stored."""

    status: str  # "published" or "already published"
    commit: str
    fingerprint: str
    url: str
    bytes_uploaded: int = 0
    segments_uploaded: int = 0
    segments_reused: int = 0
    sync: SyncReport | None = None
    started_from: str | None = None  # the published snapshot the index was started from, if any

    def summary(self) -> str:
        if self.status != "published":
            return f"snapshot {self.commit[:12]} (fingerprint {self.fingerprint}) is already published at {self.url}"
        start = f"; index started from snapshot {self.started_from[:12]}" if self.started_from else ""
        return (f"published snapshot {self.commit[:12]} (fingerprint {self.fingerprint}) to {self.url}: "
                f"{self.bytes_uploaded / 1e6:.1f} MB, {self.segments_uploaded} embedding segments uploaded, "
                f"{self.segments_reused} already there{start}")


def publish(repo: pygit2.Repository, store: ObjectStore, *,
            embedder_factory: EmbedderFactory = default_embedder) -> PublishReport:
    """Sync ``repo``'s index to HEAD and upload HEAD's snapshot to ``store`` (see the module docstring).

    Returns:
        A :class:`PublishReport` (``already published`` when the store holds this commit and fingerprint).
    Raises:
        PublishError: HEAD unborn, or the index does not reflect HEAD.
        RemoteError: the store failed (network, credentials, permissions).
        ConfigError, pygit2.GitError, OSError, sqlite3.Error: from the sync.
    """
    commit = head_commit_id(repo)
    tree = head_tree(repo)
    if commit is None or tree is None:
        raise PublishError("HEAD has no commit yet; nothing to publish")
    store.list_names(store.location.key("snapshots", ""))  # a store that cannot be used fails here, before any work
    # a CI runner starts without an index: start from the last published snapshot, sync only the delta
    pulled, warnings = bootstrap(repo, store, embedder_factory=embedder_factory)
    report = sync(repo, wait=-1.0, embedder_factory=embedder_factory)
    report.warnings[:0] = [w for w in warnings if "no published snapshot" not in w]
    if head_commit_id(repo) != commit:
        raise PublishError(f"HEAD moved from {commit[:12]} while the index was synced; run it again")
    _, config_text = config_at(repo, tree)
    layout = layout_for(repo)
    location = store.location
    with tempfile.TemporaryDirectory(dir=layout.dir, prefix="publish-") as tmp:
        copy = Path(tmp) / SQLITE_NAME
        with SyncLock(layout.lock, layout.dirty, wait=-1.0):  # no sync moves the index while it is copied
            meta = copy_index(layout.sqlite, copy)
        try:
            parts = parts_from_meta(meta)
        except ValueError as exc:
            raise PublishError(f"the index cannot be published: {exc}") from None
        if parts["config_hash"] != config_hash(config_text):
            raise PublishError(f"the index was built with another config than HEAD {commit[:12]}'s; nothing published")
        fp = fingerprint(parts)
        problem = verify_index(copy, repo, commit, fp)
        if problem:
            raise PublishError(f"the index does not reflect HEAD {commit[:12]}: {problem}; nothing published")
        out = PublishReport("published", commit, fp, location.url, sync=report,
                            started_from=pulled.commit if pulled is not None else None)
        manifest_key = location.snapshot_key(fp, commit, "manifest.json")
        if store.exists(manifest_key):
            out.status = "already published"
            return out
        sqlite_key = location.snapshot_key(fp, commit, SQLITE_NAME)
        sha, size = file_sha256(copy)
        entries = [ObjectEntry(SQLITE_NAME, "sqlite", sha, size, key=sqlite_key)]
        store.upload(sqlite_key, copy)
        out.bytes_uploaded += size
        for entry, path in segments.export(copy, Path(tmp)):
            key = location.segment_key(entry.sha256)
            if store.exists(key):
                out.segments_reused += 1
            else:
                store.upload(key, path)
                out.segments_uploaded += 1
                out.bytes_uploaded += entry.size
            entries.append(dataclasses.replace(entry, key=key))
        manifest = Manifest(commit=commit, tree=str(tree.id), fingerprint=fp, fingerprint_parts=parts,
                            vaultsync_version=__version__,
                            created=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), objects=entries)
        store.put_bytes(manifest_key, manifest.to_json())
    return out
