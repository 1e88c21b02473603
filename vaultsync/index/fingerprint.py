"""The index fingerprint: which indices of one commit are interchangeable (ADR-0071).

Two indices of a commit hold the same rows and vectors when they agree on the embedders (name and model
id, primary first), ``index.chunk_tokens``, the SQLite schema (version and DDL hash) and the sync's config
hash; the fingerprint is 16 hex digits of the sha256 of those parts.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from vaultsync.index.format import SCHEMA_FINGERPRINT, SCHEMA_VERSION

if TYPE_CHECKING:
    from vaultsync.index.embedding import EmbedderFactory
    from vaultsync.vault.config import Config


def fingerprint_parts(models: list[tuple[str, str]], chunk_tokens: int, config_hash: str,
                      schema_version: str = SCHEMA_VERSION, schema_fingerprint: str = SCHEMA_FINGERPRINT
                      ) -> dict[str, Any]:
    """What makes two indices of one commit interchangeable: the embedders (name, model id; primary first),
    ``index.chunk_tokens``, the SQLite schema (version and DDL hash), and the sync's config hash (the
    committed config, the vaultsync version, the default chunk size: :func:`fastpath.config_hash`)."""
    return {"models": [[n, m] for n, m in models], "chunk_tokens": int(chunk_tokens), "config_hash": config_hash,
            "schema_version": schema_version, "schema_fingerprint": schema_fingerprint}


def fingerprint(parts: dict[str, Any]) -> str:
    """16 hex digits of the sha256 of ``parts`` (canonical JSON)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def parts_from_meta(meta: dict[str, str]) -> dict[str, Any]:
    """:func:`fingerprint_parts` of the index whose ``meta`` table is ``meta``.

    Raises:
        ValueError: a key is missing or malformed.
    """
    try:
        models = json.loads(meta["embed_models"])
        pairs = [(str(name), str(info["id"])) for name, info in models.items()]
        return fingerprint_parts(pairs, int(meta["chunk_tokens"]), meta["config_hash"], meta["schema_version"],
                                 meta["schema_fingerprint"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"index meta is incomplete ({type(exc).__name__}: {exc})") from None


def local_parts(config: Config, config_text: str, embedder_factory: EmbedderFactory) -> dict[str, Any]:
    """:func:`fingerprint_parts` of the index this machine would build from ``config`` (the committed config
    and its text). A model id is read from the built model's info; an embedder not built yet is loaded (built)
    to learn it; an optional one that is not installed is left out, as the sync leaves its leg out."""
    from vaultsync.index.embedding import current_model_id, embedder_names
    from vaultsync.index.fastpath import config_hash
    from vaultsync.index.format import DEFAULT_TARGET_TOKENS

    models = []
    for name in embedder_names(config):
        mid = current_model_id(config, name)
        if mid is None:
            try:
                mid = embedder_factory(config, name).model_id
            except ImportError:
                continue
        models.append((name, mid))
    return fingerprint_parts(models, int(config.index.get("chunk_tokens") or DEFAULT_TARGET_TOKENS),
                             config_hash(config_text))
