"""Fetch a published snapshot's objects and check them (ADR-0071): its manifest against the local history,
each object's size and sha256 against the manifest, each embedding segment's model and format.

Used by ``pull`` (the whole snapshot) and by the sync's read-through of the team's embedding cache
(ADR-0075). Only GET requests are made.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vaultsync.index import segments
from vaultsync.index.fingerprint import fingerprint
from vaultsync.index.remote import SQLITE_NAME, Manifest, ObjectEntry, ObjectStore, parse_manifest

if TYPE_CHECKING:
    import pygit2

ANCESTOR_LIMIT = 200  # first-parent commits searched for a published snapshot, HEAD included


class SnapshotRefused(Exception):
    """A snapshot failed verification: ``snapshot <commit> refused: <reason>``. The local index is untouched."""

    def __init__(self, commit: str, reason: str) -> None:
        super().__init__(f"snapshot {commit[:12]} refused: {reason}")
        self.commit, self.reason = commit, reason


def checked_manifest(raw: bytes, repo: pygit2.Repository, commit: str, fp: str) -> Manifest:
    """The manifest of snapshot ``commit`` under fingerprint ``fp`` from its untrusted bytes, checked against
    the local history. Raises :class:`SnapshotRefused`."""
    try:
        manifest = parse_manifest(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SnapshotRefused(commit, f"unreadable manifest.json ({exc})") from None
    if manifest.commit != commit or manifest.tree != str(repo[commit].tree_id):  # type: ignore[attr-defined]
        raise SnapshotRefused(commit, f"manifest.json names commit {manifest.commit[:12]}, tree {manifest.tree[:12]}")
    if manifest.fingerprint != fp or fingerprint(manifest.fingerprint_parts) != fp:
        raise SnapshotRefused(commit, "fingerprint mismatch in manifest.json")
    if manifest.object(SQLITE_NAME) is None or [o.kind for o in manifest.objects].count("sqlite") != 1:
        raise SnapshotRefused(commit, f"manifest.json lists no single {SQLITE_NAME}")
    return manifest


def fetch(store: ObjectStore, key: str, entry: ObjectEntry, dest: Path) -> None:
    """Download ``key`` to ``dest``. Raises ValueError (a size or sha256 other than ``entry``'s), RemoteError."""
    sha = store.download(key, dest, entry.size)
    if sha != entry.sha256 or dest.stat().st_size != entry.size:
        raise ValueError(f"checksum mismatch for {entry.name}")


def fetch_segment(store: ObjectStore, entry: ObjectEntry, models: set[str], tmp: Path
                  ) -> tuple[list[str], np.ndarray]:
    """Download embedding segment ``entry`` into folder ``tmp``, check it and decode it: (hashes, vectors).

    Raises:
        ValueError: another size or sha256 than the manifest's, a model outside ``models``, a malformed
            segment, one over ``MAX_SEGMENT_BYTES`` (the message names the object).
        RemoteError: the store failed.
    """
    if entry.size > segments.MAX_SEGMENT_BYTES:
        raise ValueError(f"{entry.name} is larger than {segments.MAX_SEGMENT_BYTES} bytes")
    dest = tmp / f"{entry.sha256}.vsemb"
    fetch(store, store.location.segment_key(entry.sha256), entry, dest)
    if entry.model not in models:
        raise ValueError(f"{entry.name} holds vectors of a model outside the fingerprint")
    try:
        return segments.decode(dest.read_bytes(), entry)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"{entry.name}: {exc}") from None
    finally:
        dest.unlink()
