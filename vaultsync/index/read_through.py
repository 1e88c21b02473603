"""Read the embedding cache through from the team index on a cache miss (ADR-0075).

When a sync misses at least :data:`vaultsync.index.embedding.CACHE_LOOKUP_MIN` vectors of a model in the
local cache and a team index is configured (``index.remote`` and the settings that override it), it reads
the manifest of the nearest snapshot published under this machine's fingerprint among HEAD's first parents,
downloads the embedding segments of that model whose bucket holds a missing hash and that the cache has not
merged before, checks each (size, sha256, model, format: as ``pull`` does), and merges it into the local
cache. The vectors found are used as if cached; the rest are embedded. One failure (no boto3, no network, a
refused manifest) turns the read-through off for the rest of the sync with one warning: a sync never fails
for it. Only GET, HEAD and LIST requests are made.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vaultsync.index import segments
from vaultsync.index.fetch import ANCESTOR_LIMIT, SnapshotRefused, checked_manifest, fetch_segment
from vaultsync.index.remote import Manifest, RemoteError, RemoteLocation, resolve_location

if TYPE_CHECKING:
    import pygit2

    from vaultsync.index.embedding import EmbedderFactory
    from vaultsync.index.embedding_cache import EmbeddingCache
    from vaultsync.index.layout import IndexLayout
    from vaultsync.vault.config import Config


class TeamCache:
    """The published embedding segments of the team index, as a second-level cache for one sync.

    Attributes:
        served: vectors found in the team's segments during this sync.
        warnings: at most one line, when the read-through was turned off.
    """

    def __init__(self, repo: pygit2.Repository, config: Config, config_text: str, layout: IndexLayout,
                 embedder_factory: EmbedderFactory, location: RemoteLocation) -> None:
        self._repo, self._config, self._config_text = repo, config, config_text
        self._layout, self._factory, self._location = layout, embedder_factory, location
        self._manifest: Manifest | None = None
        self._resolved = False
        self._off = False
        self._store = None
        self.served = 0
        self.warnings: list[str] = []

    @classmethod
    def configured(cls, repo: pygit2.Repository, config: Config, config_text: str, layout: IndexLayout,
                   embedder_factory: EmbedderFactory) -> TeamCache | None:
        """The team cache of ``repo``, or None when no team index is configured (or its setting is invalid:
        ``pull`` and ``publish`` report that)."""
        try:
            location = resolve_location(repo, config)
        except RemoteError:
            return None
        return cls(repo, config, config_text, layout, embedder_factory, location) if location else None

    def fill(self, cache: EmbeddingCache, model_id: str, missing: list[str]) -> dict[str, np.ndarray]:
        """Vectors of ``missing`` (content hashes of ``model_id``) found in the team's segments, which are
        merged into ``cache`` on the way. Never raises."""
        if self._off or not missing:
            return {}
        try:
            found = self._fill(cache, model_id, missing)
        except Exception as exc:  # noqa: BLE001 - an optimisation: a sync never fails for it
            self._off = True
            reason = str(exc) if isinstance(exc, RemoteError) else \
                f"{exc.name} is not installed" if isinstance(exc, ModuleNotFoundError) else \
                f"{type(exc).__name__}: {exc}"
            self.warnings.append(f"team embedding cache not read ({reason}); embedding locally")
            return {}
        self.served += len(found)
        return found

    def _fill(self, cache: EmbeddingCache, model_id: str, missing: list[str]) -> dict[str, np.ndarray]:
        manifest = self._snapshot()
        if manifest is None:
            return {}
        models = {str(m) for _, m in manifest.fingerprint_parts.get("models", [])}
        done = segments.merged(self._layout.embeddings)
        prefixes = {h[:n] for h in missing for n in range(5)}  # a bucket prefix has at most 4 hex digits
        wanted = [e for e in manifest.objects if e.kind == "embeddings" and e.model == model_id
                  and e.dim == cache.dim and e.sha256 not in done and (e.prefix is None or e.prefix in prefixes)]
        if not wanted:
            return {}
        want = set(missing)
        found: dict[str, np.ndarray] = {}
        with tempfile.TemporaryDirectory(dir=self._layout.dir, prefix="team-cache-") as tmp:
            for entry in wanted:  # one segment at a time: memory is one segment's, not the snapshot's
                hashes, vectors = fetch_segment(self._store, entry, models, Path(tmp))
                segments.merge_into_cache(self._layout.embeddings, [(entry, hashes, vectors)], {cache.dim: cache})
                found.update((h, vectors[i]) for i, h in enumerate(hashes) if h in want)
        return found

    def _snapshot(self) -> Manifest | None:
        """The manifest of the nearest published first-parent ancestor of HEAD (None: none), read once."""
        if self._resolved:
            return self._manifest
        self._resolved = True
        from vaultsync.git import first_parent_ancestors, head_commit_id
        from vaultsync.index.fingerprint import fingerprint, local_parts
        from vaultsync.index.remote import MANIFEST_MAX_BYTES, ObjectStore

        head = head_commit_id(self._repo)
        if head is None:
            return None
        self._store = store = ObjectStore(self._location)
        fp = fingerprint(local_parts(self._config, self._config_text, self._factory))
        published = set(store.list_names(self._location.key("snapshots", fp, "")))
        for commit in first_parent_ancestors(self._repo, head, ANCESTOR_LIMIT):
            if commit not in published:
                continue
            raw = store.get_bytes(self._location.snapshot_key(fp, commit, "manifest.json"), MANIFEST_MAX_BYTES)
            if raw is not None:
                try:
                    self._manifest = checked_manifest(raw, self._repo, commit, fp)
                except SnapshotRefused as exc:
                    raise RemoteError(str(exc)) from None
                return self._manifest
        return None
