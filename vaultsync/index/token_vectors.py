"""Token vectors: each chunk's contextual token vectors, kept for the MaxSim rerank stage (ADR-0117).

MaxSim (:mod:`vaultsync.models.maxsim`; Khattab & Zaharia 2020) compares every query token with every
token of a candidate chunk. Encoding the ~20 candidates at query time costs ~16 ms a chunk on a laptop
core pair (~450 ms a search); read from the index, the stage costs a few milliseconds. A sync keeps them
when the committed config names the stage (``search.rerank: maxsim``) or asks for them
(``index.token_vectors: true``; :func:`wanted`). They are large (``dim + 2`` bytes a token, ~390 bytes at
d = 384, about three times the rest of the index), so an index whose search does not read them does not hold them.

Rows (table ``tokens``, written in the sync's one transaction by :meth:`SqliteStore.apply`): ``id`` (the
chunk's), ``path``, ``hash`` (the chunk's content hash: sha256 of the text the embedder reads,
:func:`vaultsync.index.chunking.embed_text_of`; search finds a candidate's row by it) and
``vectors`` (:meth:`vaultsync.models.token_store.TokenCodec.to_bytes`: int8 per token with a float16
scale, rows as :meth:`Embedder.token_vectors` gives them).
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import numpy as np

from vaultsync.index.chunking import Chunk
from vaultsync.models.token_store import TokenCodec
from vaultsync.vault.config import Config

ENCODE_EVERY = 64  # chunks per encoder call: a rebuild never holds more than this many chunks' float32 states


class TokenEmbedder(Protocol):
    """What token vectors need from the primary embedder."""

    dim: int

    def token_vectors(self, texts: Sequence[str], kind: Any = "passage") -> list[np.ndarray]: ...


def wanted(config: Config) -> bool:
    """Whether the config's index keeps token vectors: ``index.token_vectors``, else whether its rerank stage
    is MaxSim (``search.rerank: maxsim``)."""
    chosen = config.index.get("token_vectors")
    return chosen if isinstance(chosen, bool) else str(config.search.get("rerank") or "").strip() == "maxsim"


def rows_for(chunks: Sequence[Chunk], db: sqlite3.Connection, embedder: TokenEmbedder) -> dict[str, bytes]:
    """Content hash → stored blob for every chunk: kept in the index under the same hash, else encoded now
    (``ENCODE_EVERY`` chunks an encoder call)."""
    hashes = sorted({c.hash for c in chunks})
    rows: dict[str, bytes] = {}
    for part in _parts(hashes):
        rows.update((h, blob) for h, blob in db.execute(
            f"SELECT hash, vectors FROM tokens WHERE hash IN ({','.join('?' * len(part))})", part)
            if _well_formed(blob, embedder.dim))  # a row of another shape is encoded again, not carried on
    todo = list({c.hash: c.embed_text for c in chunks if c.hash not in rows}.items())
    codec = TokenCodec()
    for start in range(0, len(todo), ENCODE_EVERY):
        part_todo = todo[start:start + ENCODE_EVERY]
        found = embedder.token_vectors([text for _, text in part_todo], "passage")
        rows.update((h, TokenCodec.to_bytes(codec.encode(v))) for (h, _), v in zip(part_todo, found, strict=True))
    return rows


def read(db: sqlite3.Connection, hashes: Sequence[str], dim: int) -> dict[str, np.ndarray]:
    """Content hash → float32 ``[n_tokens, dim]``, rows L2-normalised, for the chunks of ``hashes`` the index
    holds token vectors of. A blob of another shape (an index pulled from a team's storage is written by
    whoever can publish there) is left out: its text is encoded on demand, never a traceback."""
    out: dict[str, np.ndarray] = {}
    try:
        for part in _parts(sorted(set(hashes))):
            for h, blob in db.execute(f"SELECT hash, vectors FROM tokens WHERE hash IN ({','.join('?' * len(part))})",
                                      part):
                if h not in out and (vectors := _decoded(blob, dim)) is not None:
                    out[h] = vectors
    except sqlite3.OperationalError:  # an index of an older schema, read while the sync replaces it
        return {}
    return out


def _well_formed(blob: Any, dim: int) -> bool:
    """A blob as :meth:`TokenCodec.to_bytes` writes it for ``dim``: u32 n, u32 d = dim, n scales, n × d codes."""
    if not isinstance(blob, bytes) or len(blob) < 8:
        return False
    n, d = struct.unpack_from("<II", blob, 0)
    return d == dim and len(blob) == 8 + n * (d + 2)


def _decoded(blob: Any, dim: int) -> np.ndarray | None:
    if not _well_formed(blob, dim):
        return None
    vectors = TokenCodec.decode(TokenCodec.from_bytes(blob))
    return vectors if np.isfinite(vectors).all() else None


def _parts(keys: Sequence[str]) -> Iterator[list[str]]:
    for start in range(0, len(keys), 500):
        yield list(keys[start:start + 500])
