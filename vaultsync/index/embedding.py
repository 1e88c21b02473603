"""Embeddings for the index: which embedders, their vectors (index → shared cache → model, each
computed batch stored in the cache at once: ADR-0070), and LanceDB kept in step after each SQLite
commit (see ADR-0006 and ADR-0009)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from vaultsync.index.block_vectors import Key, Row, embed_spans, rows_for
from vaultsync.index.layout import IndexLayout
from vaultsync.index.progress import SyncProgress
from vaultsync.index.sqlite_store import NoteRecord, SqliteStore
from vaultsync.index.token_vectors import rows_for as token_rows
from vaultsync.index.token_vectors import wanted
from vaultsync.settings import user_settings
from vaultsync.vault.config import PRIMARY, Config

if TYPE_CHECKING:
    from vaultsync.index.embedding_cache import BlockRowCache, EmbeddingCache


class PassageEmbedder(Protocol):
    """What the index needs from an embedder."""

    model_id: str
    dim: int

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


EmbedderFactory = Callable[[Config, str], PassageEmbedder]


class SecondLevelCache(Protocol):
    """Where vectors missing from the local cache may be found (the team index: ADR-0075)."""

    def fill(self, cache: EmbeddingCache, model_id: str, missing: list[str]) -> dict[str, np.ndarray]: ...


DEFAULT_EMBEDDERS = (PRIMARY, "use-multilingual")


def embedder_names(config: Config) -> list[str]:
    """The embedders of the index, primary first: ``index.embedders`` (or ``index.embedder``), else
    multilingual-e5-small + USE multilingual (two dense legs; see docs/eval.md)."""
    names = config.index.get("embedders") or config.index.get("embedder") or list(DEFAULT_EMBEDDERS)
    return [str(n) for n in ([names] if isinstance(names, str) else names)]


def default_embedder(config: Config, name: str | None = None) -> PassageEmbedder:
    """Embedder ``name`` (default: the primary one), built on first use; loaded once per process while
    its files stay the same (:mod:`vaultsync.models.shared`)."""
    from vaultsync.models.shared import shared_model

    threads = user_settings().threads or int(config.models.get("threads") or min(2, os.cpu_count() or 1))
    name = name or embedder_names(config)[0]
    return shared_model(name, threads, lambda: _load(name, threads))


def _load(name: str, threads: int) -> PassageEmbedder:
    from vaultsync.models.embedder import Embedder, ModelNotBuiltError

    try:
        return Embedder.load(name, threads=threads)  # type: ignore[return-value]
    except ModelNotBuiltError:  # first use: build it (about 15 s, once)
        from vaultsync.models.convert.build import load_embedder

        return load_embedder(name, threads=threads)  # type: ignore[return-value]


CACHE_LOOKUP_MIN = 32  # below this many new vectors, embedding is cheaper than importing LanceDB
FLUSH_EVERY = 64  # chunks embedded between two writes to the embedding cache (what a kill may lose)


def configured_models(config: Config, meta: dict[str, str]) -> dict[str, str | None]:
    """Configured embedder name → its model id when known without loading it."""
    known = json.loads(meta.get("embed_models") or "{}")
    return {name: current_model_id(config, name) or known.get(name, {}).get("id") for name in embedder_names(config)}


def current_model_id(config: Config, name: str) -> str | None:
    """A built embedder's model id from its build info, without loading it (None if not built or not a build)."""
    try:
        from vaultsync.models import cache, manifest
        from vaultsync.models.embedder import model_id

        spec = manifest.load(name)
        if spec.kind == "use-numpy":  # runs from its package: the id is known from the manifest
            from vaultsync.models.use_embedder import model_id as use_model_id

            return use_model_id(spec)
        info = cache.read_build_info(cache.model_dir(name, spec.version))
        return model_id(spec.name, spec.version, info) if info else None
    except Exception:  # noqa: BLE001 - any doubt: decided when the embedder loads
        return None


def manifest_dim(name: str) -> int | None:
    try:
        from vaultsync.models import manifest

        return int(manifest.load(name).dims)
    except Exception:  # noqa: BLE001 - unknown model: no cache lookup
        return None


def vectors_for(items: list, store: SqliteStore, layout: IndexLayout, config: Config, name: str,  # type: ignore[type-arg]
                embedder_factory: EmbedderFactory, model_id: str, tracker: SyncProgress,
                leg: tuple[int, int] = (1, 1), flush_every: int | None = None, team: SecondLevelCache | None = None,
                blocks: dict[str, tuple[list[tuple[int, int]], np.ndarray]] | None = None,
                ) -> tuple[dict[str, np.ndarray], PassageEmbedder | None, int, int, list[str]]:
    """Vectors by content hash for ``items`` from embedder ``name``: from this index, then the shared
    cache, then the team's published cache (``team``, ADR-0075), then the embedder — batch by batch, each
    batch stored in the cache as soon as it is computed (from ``CACHE_LOOKUP_MIN`` missing on), so a
    killed sync resumes where it stopped (ADR-0070). ``leg``: (this embedder's place, how many), for the
    progress record; ``flush_every``: chunks per batch (default :data:`FLUSH_EVERY`); ``blocks``, when
    given: filled with the block vectors of the chunks embedded here (hash → (their spans in ``embed_text``,
    float32 ``[n_blocks, dim]``)), from the same pass where the embedder can (:mod:`vaultsync.index.block_vectors`). Returns (vectors,
    the embedder if loaded, embedded, reused, the hashes embedded but not yet in the cache)."""
    flush_every = flush_every or FLUSH_EVERY
    hashes = sorted({c.hash for c in items})
    found = {h: np.frombuffer(b, dtype="<f4").copy() for h, b in store.vectors_by_hash(model_id, hashes).items()}
    missing = [h for h in hashes if h not in found]
    cache = None
    if len(missing) >= CACHE_LOOKUP_MIN and model_id:
        dim = json.loads(store.meta().get("embed_models") or "{}").get(name, {}).get("dim") or manifest_dim(name)
        if dim:
            cache = _cache(layout, int(dim))
            found.update(cache.get(model_id, missing))
            missing = [h for h in hashes if h not in found]
            if team is not None and len(missing) >= CACHE_LOOKUP_MIN:
                found.update(team.fill(cache, model_id, missing))
                missing = [h for h in hashes if h not in found]
    embedder = embedder_factory(config, name) if missing or not model_id else None
    durable = False
    if missing:
        text_of = {c.hash: c.embed_text for c in items}
        spans_of = {c.hash: embed_spans(c) for c in items} if blocks is not None else {}
        missing.sort(key=lambda h: (-len(text_of[h]), h))  # similar lengths share a batch: little padding
        # From CACHE_LOOKUP_MIN on, the next sync looks the cache up: store every batch at once. Fewer
        # are embedded again after a kill (cheaper than opening the cache, ADR-0006).
        durable = len(missing) >= CACHE_LOOKUP_MIN
        if durable and (cache is None or cache.dim != embedder.dim):  # type: ignore[union-attr]
            cache = _cache(layout, int(embedder.dim))  # type: ignore[union-attr]
            found.update(cache.get(embedder.model_id, missing))  # type: ignore[union-attr]  # not looked up yet
            missing = [h for h in missing if h not in found]
        if durable:
            tracker.start(name, *leg, total=len(hashes), done=len(hashes) - len(missing))
        for start in range(0, len(missing), flush_every):
            part = missing[start:start + flush_every]
            texts = [text_of[h] for h in part]
            if blocks is not None and hasattr(embedder, "embed_with_blocks"):  # late chunking, same pass (ADR-0116)
                new, per_block = embedder.embed_with_blocks(texts, [spans_of[h] for h in part])
                blocks.update((h, (spans_of[h], b)) for h, b in zip(part, per_block, strict=True) if len(b))
            else:
                new = embedder.embed_passages(texts)  # type: ignore[union-attr]
            new = np.asarray(new, dtype=np.float32)
            found.update(zip(part, new))
            if durable:
                cache.append(embedder.model_id, part, new)  # type: ignore[union-attr]  # found missing above
                tracker.advance(len(part))
        tracker.finish_leg()
        if durable:
            cache.maintain()  # type: ignore[union-attr]
    return found, embedder, len(missing), len(hashes) - len(missing), [] if durable else missing


def _cache(layout: IndexLayout, dim: int) -> EmbeddingCache:
    from vaultsync.index.embedding_cache import EmbeddingCache

    return EmbeddingCache(layout.embeddings, dim)


def update_lance(store: SqliteStore, layout: IndexLayout, config: Config, models: dict[str, dict[str, object]],
                  touched: list[str], records: list[NoteRecord], vectors: dict[str, dict[str, np.ndarray]],
                  full: bool, unsaved: dict[str, list[str]], block_rows: dict[str, Row]) -> list[str]:
    """Bring LanceDB in step with the committed SQLite state (cache, vector tables, ANN index); returns the
    warnings of caches this sync could not use (:func:`vaultsync.index.embedding_cache.take_problems`).

    Args:
        vectors: model id → content hash → vector, for every chunk of ``records``; emptied as
            each model is done (a full refill reads SQLite's rows instead).
        unsaved: model id → the hashes of ``vectors`` that are not in the embedding cache yet.
        block_rows: the primary embedder's block rows made in this sync, by cache key, for the row cache.
    """
    from vaultsync.index.embedding_cache import BlockRowCache, EmbeddingCache, take_problems
    from vaultsync.index.fastpath import chunk_table_name
    from vaultsync.index.vector_store import ANN_MIN_ROWS, ChunkVectors, drop_other_tables

    versions, ann = {}, []
    for i, (name, info) in enumerate(models.items()):
        model_id, dim = str(info["id"]), int(info["dim"])  # type: ignore[call-overload]
        by_hash = vectors.pop(model_id, {})  # consumed: a full refill frees them before LanceDB buffers rows
        if hashes := sorted(h for h in unsaved.get(model_id, []) if h in by_hash):
            cache = EmbeddingCache(layout.embeddings, dim)
            cache.put(model_id, hashes, np.stack([by_hash[h] for h in hashes]))
            cache.maintain()
        if i == 0 and block_rows:  # the primary embedder's
            blocks = BlockRowCache(layout.embeddings, dim)
            blocks.put(block_rows)
            blocks.maintain()
        table = ChunkVectors(layout.lance, dim, name)
        try:
            if full or table.fresh:  # a new, or replaced, table gets every row, streamed from SQLite
                by_hash = {}
                table.replace_all(store.iter_vectors(model_id))
            else:
                items = [(c, kind) for r in records for kind, of in (("chunk", r.chunks), ("name", r.name_chunks))
                         for c in of if c.hash in by_hash]
                hashes = [c.hash for c, _ in items]
                matrix = np.stack([by_hash[h] for h in hashes]) if items else np.zeros((0, dim), np.float32)
                table.apply(touched, [c.id for c, _ in items], [c.path for c, _ in items], [k for _, k in items],
                            hashes, matrix)
            table.maintain()
        except (OSError, RuntimeError, ValueError):  # files of the table are missing or damaged: refill it
            table = ChunkVectors(layout.lance, dim, name, recreate=True)
            table.replace_all(store.iter_vectors(model_id))
        table.repair_ann_index()
        table.ensure_ann_index(int(config.index.get("ann_min_rows") or ANN_MIN_ROWS))
        versions[name] = table.version  # what search reads: these rows and, past the threshold, the index
        if table.has_ann_index():
            ann.append(name)
    store.set_meta({"lance_tree": store.meta().get("indexed_tree", ""), "lance_versions": json.dumps(versions),
                    "lance_ann": json.dumps(ann)})
    # after the meta names only these tables: no reader opened later looks for a removed one
    drop_other_tables(layout.lance, {chunk_table_name(name, int(info["dim"]))  # type: ignore[call-overload]
                                     for name, info in models.items()})
    return take_problems()


def count_tokens(records: list[NoteRecord], embedder: PassageEmbedder) -> None:
    """Replace the chunks' estimated token counts by the embedder tokenizer's counts (what the
    search token budget uses)."""
    texts = [c.text for r in records for c in r.chunks]
    counts = iter(embedder.count_tokens(texts))  # type: ignore[attr-defined]
    for r in records:
        r.chunks = [dataclasses.replace(c, tokens=int(next(counts))) for c in r.chunks]


def primary_extras(records: list[NoteRecord], store: SqliteStore, embedder: object,
                   fresh: dict[str, tuple[list[tuple[int, int]], np.ndarray]],
                   config: Config, layout: IndexLayout) -> tuple[bool, dict[Key, Row], dict[str, Row], dict[str, bytes]]:
    """What the primary embedder adds to the records' chunks: their token counts by its tokenizer, their
    block rows (:func:`vaultsync.index.block_vectors.rows_for`; ``fresh``: the block vectors of the chunks
    it embedded in this sync; the rest from the index, then the block row cache beside ``layout``'s
    embedding cache) and, where the config's rerank stage reads them, their token vectors
    (:mod:`vaultsync.index.token_vectors`). Returns (whether it counted the tokens, the block rows, the
    block rows made here by cache key, for :func:`update_lance` to cache, the token rows)."""
    if not records or not hasattr(embedder, "count_tokens"):
        return False, {}, {}, {}
    count_tokens(records, embedder)  # type: ignore[arg-type]
    chunks = [c for r in records for c in r.chunks]
    blocks: dict[Key, Row] = {}
    made: dict[str, Row] = {}
    if hasattr(embedder, "embed_with_blocks"):
        def open_cache() -> BlockRowCache:
            from vaultsync.index.embedding_cache import BlockRowCache

            return BlockRowCache(layout.embeddings, int(embedder.dim))  # type: ignore[attr-defined]

        blocks, made = rows_for(chunks, store.db, embedder, fresh, open_cache, CACHE_LOOKUP_MIN)  # type: ignore[arg-type]
    tokens: dict[str, bytes] = {}
    if wanted(config) and hasattr(embedder, "token_vectors"):
        with contextlib.suppress(NotImplementedError):  # a primary embedder without them (USE): MaxSim encodes
            tokens = token_rows(chunks, store.db, embedder)  # type: ignore[arg-type]
    return True, blocks, made, tokens
