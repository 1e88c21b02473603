"""Open a repository's index for searching: the SQLite file, the vector snapshot, the models.

Used in-process by ``vaultsync search`` and kept warm by ``vaultsync serve``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pygit2

from vaultsync.git import head_commit_id
from vaultsync.index.layout import layout_for
from vaultsync.resources import data_dir
from vaultsync.search.pipeline import Reranker, Searcher, SearchOptions
from vaultsync.vault.config import Config


class NoIndexError(RuntimeError):
    """The repository has no index yet."""


def check_rerank_spec(spec: str | None) -> None:
    """Raise ``ValueError`` unless ``spec`` names a rerank stage (see :func:`load_reranker`)."""
    name = (spec or "none").strip()
    if name not in ("none", "off", "maxsim") and not name.startswith("cross-encoder") and name != "":
        raise ValueError(f"unknown rerank stage {spec!r} (none, maxsim, cross-encoder[:DIR])")


def load_reranker(spec: str | None, embedder: Any, config: Config) -> Reranker | None:
    """The rerank stage named by ``spec``: ``none``, ``maxsim`` or ``cross-encoder[:DIR]``.

    A cross-encoder without a directory uses ``models.reranker_dir`` from the
    config, else the reranker that ships with vaultsync (:func:`bundled_reranker`).
    Raises ``ValueError`` for an unknown name.
    """
    spec = (spec or "none").strip()
    if spec in ("none", "off", ""):
        return None
    if spec == "maxsim":
        from vaultsync.models.maxsim import MaxSimReranker

        return MaxSimReranker(embedder)  # type: ignore[no-any-return]
    if spec.startswith("cross-encoder"):
        from vaultsync.models.cross_encoder import CrossEncoder

        folder = spec.partition(":")[2] or str(config.models.get("reranker_dir") or "") or str(bundled_reranker())
        return CrossEncoder.load(folder, threads=int(config.models.get("threads") or 2))  # type: ignore[no-any-return]
    raise ValueError(f"unknown rerank stage {spec!r} (none, maxsim, cross-encoder[:DIR])")


def bundled_reranker() -> Path:
    """Folder of vaultsync's own cross-encoder (``models/reranker/vaultsync-reranker-ml4``, see its model card)."""
    return data_dir("models") / "reranker" / "vaultsync-reranker-ml4"


DEFAULT_RERANK = "none"


def default_rerank(config: Config) -> str:
    """The rerank stage used when neither the command line nor the config names one."""
    return str(config.search.get("rerank") or DEFAULT_RERANK)


def open_searcher(repo: pygit2.Repository, config: Config, rerank: str | None = None,
                  embedder: Any = None, loaded: dict[str, Any] | None = None) -> tuple[Searcher, str | None]:
    """A :class:`Searcher` over ``repo``'s index, and HEAD's commit id.

    ``embedder`` (the primary one) and ``loaded`` (by name) let a caller reuse models it holds.

    Raises:
        NoIndexError: nothing indexed yet.
    """
    layout = layout_for(repo, config)
    if not layout.sqlite.exists():
        raise NoIndexError("no index yet: run `vaultsync sync` (and `vaultsync install` to keep it in step)")
    import sqlite3

    from vaultsync.index.fastpath import readonly_uri

    db = sqlite3.connect(readonly_uri(layout.sqlite), uri=True)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise NoIndexError(f"the index is damaged ({exc}): run `vaultsync index --rebuild`") from None
    finally:
        db.close()
    embedders: dict[str, Any] = {}
    if os.environ.get("VAULTSYNC_NO_VECTORS") != "1":
        from vaultsync.index.embedding import default_embedder

        for i, name in enumerate(json.loads(meta.get("embed_models") or "{}")):
            if i == 0 and embedder is not None:
                embedders[name] = embedder
                continue
            if loaded and name in loaded:
                embedders[name] = loaded[name]
                continue
            try:
                embedders[name] = default_embedder(config, name)
            except ImportError:
                continue  # an optional embedder that is no longer installed: its leg is skipped
    embedder = next(iter(embedders.values()), None)
    spec = rerank if rerank is not None else default_rerank(config)
    reranker = load_reranker(spec, embedder, config) if embedder is not None or spec.startswith("cross") else None
    return Searcher(layout.sqlite, embedders, reranker), head_commit_id(repo)


def options_for(config: Config, **overrides: Any) -> SearchOptions:
    """Search options: config ``search:`` section, then explicit overrides."""
    values = {k: v for k, v in config.search.items() if k != "rerank"}
    return SearchOptions.from_config(values, **overrides)
