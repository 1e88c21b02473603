"""The composition root of search: a repository's index, embedders and rerankers wired into a
:class:`~vaultsync.search.pipeline.Searcher`.

Used in-process by ``vaultsync search`` and ``vaultsync eval``, and kept warm by ``vaultsync serve``.
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import Any

import pygit2

from vaultsync import heap
from vaultsync.git import head_commit_id
from vaultsync.index.layout import layout_for
from vaultsync.resources import data_dir
from vaultsync.search.handles import Reranker
from vaultsync.search.options import SearchOptions
from vaultsync.search.pipeline import Searcher
from vaultsync.settings import UserSettings, user_settings
from vaultsync.vault.config import Config


class NoIndexError(RuntimeError):
    """The repository has no index yet."""


RERANK_STAGES = ("none", "off", "maxsim", "cross-encoder")


def check_rerank_spec(spec: str | None) -> None:
    """Raise ``ValueError`` unless ``spec`` names a rerank stage: one of :data:`RERANK_STAGES`.

    Stages are named, never located: a model folder comes only from the user's own settings
    (:mod:`vaultsync.settings`), so neither a commit nor a daemon request can pick what is loaded.
    """
    if (spec or "none").strip() not in RERANK_STAGES + ("",):
        shown = spec if len(spec or "") <= 40 else (spec or "")[:40] + "…"
        raise ValueError(f"unknown rerank stage {shown!r} (one of: none, maxsim, cross-encoder; a model folder "
                         "is set with models.reranker_dir in ~/.config/vaultsync/config.yaml or $VAULTSYNC_RERANKER_DIR)")


def load_reranker(spec: str | None, embedder: Any, config: Config, settings: UserSettings | None = None) -> Reranker | None:
    """The rerank stage named by ``spec``: ``none``, ``maxsim`` or ``cross-encoder``.

    The cross-encoder is the user's ``reranker_dir`` (see :mod:`vaultsync.settings`), else the
    reranker that ships with vaultsync (:func:`bundled_reranker`).
    Raises ``ValueError`` for an unknown name.
    """
    check_rerank_spec(spec)
    spec = (spec or "none").strip()
    settings = settings or user_settings()
    if spec in ("none", "off", ""):
        return None
    if spec == "maxsim":
        from vaultsync.models.maxsim import MaxSimReranker

        return MaxSimReranker(embedder)  # type: ignore[no-any-return]
    from vaultsync.models.cross_encoder import CrossEncoder

    folder = settings.reranker_dir or str(verified_bundled_reranker())
    threads = settings.threads or int(config.models.get("threads") or 2)
    return CrossEncoder.load(folder, threads=threads)  # type: ignore[no-any-return]


def bundled_reranker() -> Path:
    """Folder of vaultsync's own cross-encoder (``models/reranker/vaultsync-reranker-ml4``, see its model card)."""
    return data_dir("models") / "reranker" / "vaultsync-reranker-ml4"


def verified_bundled_reranker() -> Path:
    """:func:`bundled_reranker` after checking its files against the sha256 sums in the manifest that
    ships with the package. Raises ``vaultsync.models.cross_encoder.CrossEncoderError`` on a mismatch."""
    from vaultsync.models.cross_encoder import CrossEncoderError
    from vaultsync.models.manifest import sha256_file

    folder = bundled_reranker()
    files = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["files"]
    for name in ("model.onnx", "tokenizer.json"):
        if sha256_file(folder / name) != files[name]["sha256"]:
            raise CrossEncoderError(f"{folder / name} does not match its shipped sha256: reinstall vaultsync")
    return folder


DEFAULT_RERANK = "none"


def default_rerank(config: Config) -> str:
    """The rerank stage used when the command line names none: the config's, else :data:`DEFAULT_RERANK`."""
    spec = str(config.search.get("rerank") or DEFAULT_RERANK)
    return spec if spec in RERANK_STAGES else DEFAULT_RERANK


def open_searcher(repo: pygit2.Repository, config: Config, rerank: str | None = None,
                  embedder: Any = None, loaded: dict[str, Any] | None = None) -> tuple[Searcher, str | None]:
    """A :class:`Searcher` over ``repo``'s index, and HEAD's commit id.

    ``embedder`` (the primary one) and ``loaded`` (by name) let a caller reuse models it holds.

    Raises:
        NoIndexError: nothing indexed yet, or the index has another schema version (a sync rebuilds it).
    """
    layout = layout_for(repo, config)
    if not layout.sqlite.exists():
        raise NoIndexError("no index yet: run `vaultsync sync` (and `vaultsync install` to keep it in step)")
    import sqlite3

    from vaultsync.sqlite_uri import connect_readonly

    db = connect_readonly(layout.sqlite)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise NoIndexError(f"the index is damaged ({exc}): run `vaultsync index --rebuild`") from None
    finally:
        db.close()
    from vaultsync.index.format import SCHEMA_VERSION

    if meta.get("schema_version") != SCHEMA_VERSION:
        raise NoIndexError("the index was built by another vaultsync version: run `vaultsync sync`")
    embedders: dict[str, Any] = {}
    if os.environ.get("VAULTSYNC_NO_VECTORS") != "1":
        from vaultsync.index.embedding import default_embedder

        names = list(json.loads(meta.get("embed_models") or "{}"))
        # secondaries first: USE reads its weights in a background thread, beside the primary's load
        for i in sorted(range(len(names)), key=lambda i: i == 0):
            name = names[i]
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
        embedders = {name: embedders[name] for name in names if name in embedders}  # primary first
    embedder = next(iter(embedders.values()), None)
    spec = rerank if rerank is not None else default_rerank(config)
    reranker = load_reranker(spec, embedder, config) if embedder is not None or spec.startswith("cross") else None
    return Searcher(layout.sqlite, embedders, reranker, open_table=partial(open_vector_table, layout.lance)), \
        head_commit_id(repo)


def open_vector_table(lance_dir: Path, name: str, dim: int, version: int) -> Any:
    """Leg ``name``'s LanceDB vector table at ``version`` (imports LanceDB only for a leg past the ANN threshold)."""
    from vaultsync.index.vector_store import ChunkVectors

    return ChunkVectors.at_version(lance_dir, dim, name, version)


def options_for(config: Config, **overrides: Any) -> SearchOptions:
    """Search options: config ``search:`` section, then explicit overrides. TTLs are judged against
    today's date in the checks' time zone (``checks.timezone``, else local), as ``vaultsync check`` does."""
    from vaultsync.index.fastpath import config_warnings
    from vaultsync.vault.clock import today_in, zone_or_local

    values = {k: v for k, v in config.search.items() if k != "rerank"}
    tz = zone_or_local(config)  # a committed unknown zone: `check` refuses it (CF002); search says so, goes on
    said = tuple(config_warnings(config))
    values.setdefault("today", today_in(tz))
    values.setdefault("zone", tz)
    refused = config.refused[0].render() if config.refused else ""
    return SearchOptions.from_config(values, **{**overrides, "config_warnings": said, "config_refused": refused})


def search_checked(config: Config) -> Config:
    """``config`` with its ``search:`` section left out where the search options refuse a value of it (a
    range, a name: what the schema cannot judge), those refusals added to ``ignored`` (ADR-0119); else
    ``config`` itself. What every search reads: the CLI, the daemon and the MCP server."""
    from dataclasses import replace

    from vaultsync.search.options import config_problems

    if not config.search or not (refused := config_problems(config)):
        return config
    raw = {k: v for k, v in config.raw.items() if k != "search"}
    return replace(config, search={}, raw=raw, ignored=[*config.ignored, *refused])


class WarmSearcher:
    """One :class:`Searcher` per index state, shared by every rerank stage, for a long-lived process
    (the daemon, the MCP server): the index's vectors are held once, not once per stage.

    Callers serialise :meth:`get` and the search that follows (the stage is set on the shared
    searcher). A stage's models are loaded on first use and kept across index states.
    """

    def __init__(self) -> None:
        self.searcher: Searcher | None = None
        self.embedders: dict[str, Any] = {}
        self._rerankers: dict[str, Reranker | None] = {}
        self._stamp: str | None = None

    def drop(self) -> None:
        """Forget the searcher (the index changed); the models stay loaded."""
        if self.searcher is not None:
            self.searcher.close()
        self.searcher = None

    def get(self, repo: pygit2.Repository, config: Config, rerank: str | None) -> Searcher:
        """The searcher over ``repo``'s current index with the stage ``rerank`` (None or "": the config's).

        Raises:
            NoIndexError: as :func:`open_searcher`.
            ValueError: an unknown stage.
        """
        spec = (rerank or "").strip() or default_rerank(config)
        stamp = index_stamp(layout_for(repo, config).sqlite)
        if stamp != self._stamp:
            self.drop()
            self._stamp = stamp
        loaded = self.searcher is None or spec not in self._rerankers
        if self.searcher is None:
            self.searcher, _ = open_searcher(repo, config, rerank=spec, loaded=self.embedders)
            self.embedders.update({leg.name: leg.embedder for leg in self.searcher.legs})
            self._rerankers.setdefault(spec, self.searcher.reranker)
        if spec not in self._rerankers:
            embedder = self.searcher.embedder
            self._rerankers[spec] = load_reranker(spec, embedder, config) \
                if embedder is not None or spec.startswith("cross") else None
        self.searcher.reranker = self._rerankers[spec]
        if loaded:
            heap.trim()  # the load's transient objects are freed: their pages go back to the system
        return self.searcher


def index_stamp(db: Path) -> str:
    """What changes when a sync writes ``db``: its mtime, and its WAL's while the WAL holds pages
    (a reader's first open creates an empty WAL, which is no change)."""
    parts = []
    for f in (db, db.with_name(db.name + "-wal")):
        try:
            info = f.stat()
        except OSError:
            parts.append("")
            continue
        parts.append(f"{info.st_mtime_ns}:{info.st_size}" if info.st_size or f == db else "")
    return "|".join(parts)
