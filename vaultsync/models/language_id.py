"""py3langid's model (Lui & Baldwin 2012), prepared once into arrays read row by row (ADR-0086).

The wheel ships its model as an LZMA-compressed npz: loading it decompresses 67 MB
(~0.7 s on a laptop core, on the first ambiguous query of every process) and keeps
~75 MB of arrays and lists resident for good. :func:`load` decodes it once, with
py3langid's own loader, into plain ``.npy`` files in the model cache
(``<cache>/models/py3langid-<model sha256[:12]>/``); after that the DFA and the naive-Bayes
table are read with ``pread`` (:class:`~vaultsync.models.file_array.FileArray`), a few hundred
rows a query, and never held. The identifier is py3langid's own
:class:`~py3langid.langid.LanguageIdentifier` over those arrays, so its answers are exactly
py3langid's.

Reading a ``.npy`` file (``allow_pickle=False``) can never run code, whoever wrote it
(ADR-0032); the folder is written into a staging sibling and renamed into place, so it is
complete or absent, and a folder whose arrays do not fit together is written again.
"""

from __future__ import annotations

import json
import os
from array import array
from pathlib import Path
from typing import Any

import numpy as np

from vaultsync.models import cache
from vaultsync.models.file_array import NPY_HEADERS, FileArray, crc32_file, regular_file
from vaultsync.models.manifest import sha256_file
from vaultsync.settings import cache_root

_FORMAT = 1
_ARRAYS = ("ptc", "pc", "nextmove", "row", "output")


def model_file() -> Path:
    """The model inside the installed py3langid wheel."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE

    return Path(MODEL_DIR) / MODEL_FILE


def load(cache_dir: str | os.PathLike[str] | None = None) -> Any:
    """py3langid's identifier with normalised probabilities, over the prepared arrays.

    Prepares the arrays on first use, and again when a file no longer matches the CRC-32 written
    with it or the arrays do not fit together (best effort: when the cache cannot be written, the
    identifier is built from py3langid's own loader, in memory, as before).

    Args:
        cache_dir: the model cache (see :mod:`vaultsync.models.cache`); None: the user's.
    """
    from py3langid.langid import LanguageIdentifier

    source = model_file()
    folder = cache_root(cache_dir) / "models" / f"py3langid-{sha256_file(source)[:12]}"
    try:
        arrays = _open(folder)
    except Exception:  # noqa: BLE001 - any damage: prepare again
        arrays = None
    if arrays is None:
        arrays = _prepare(source, folder)
    ptc, pc, classes, nextmove, row, output = arrays
    return LanguageIdentifier(ptc, pc, classes, nextmove, output, norm_probs=True, tk_row=row)


def _prepare(source: Path, folder: Path) -> tuple[Any, ...]:
    """Decode ``source`` with py3langid's loader and write its arrays into ``folder``; the arrays
    themselves (read from the written files when writing worked, else in memory)."""
    from py3langid.modelio import load_model

    ptc, pc, classes, nextmove, row, output = load_model(source)
    arrays = {
        "ptc": np.asarray(ptc), "pc": np.asarray(pc),
        "nextmove": np.frombuffer(nextmove, dtype=np.dtype(nextmove.typecode)),
        # uint32: the identifier shifts each row index left by 8 bits in the array's own type
        "row": np.frombuffer(row, dtype=np.dtype(row.typecode)).astype(np.uint32),
        "output": np.asarray(output, dtype=np.int32),
    }
    try:
        with cache.build_lock(folder), cache.staging(folder) as tmp:
            for name in _ARRAYS:
                np.save(tmp / f"{name}.npy", arrays[name], allow_pickle=False)
            crc = {name: crc32_file(tmp / f"{name}.npy") for name in _ARRAYS}
            (tmp / "classes.json").write_text(json.dumps({"format": _FORMAT, "classes": classes, "crc32": crc}),
                                              encoding="utf-8")
        opened = _open(folder)
    except Exception:  # noqa: BLE001 - an unwritable or contested cache: the arrays in memory
        opened = None
    if opened is not None:
        return opened
    return arrays["ptc"], arrays["pc"], classes, arrays["nextmove"], arrays["row"], arrays["output"]


def _open(folder: Path) -> tuple[Any, ...] | None:
    """The prepared arrays of ``folder`` (the two large ones as :class:`FileArray`), or None when it
    holds none. Raises (``ValueError`` and others) when a file is damaged or they do not fit together."""
    meta_path = folder / "classes.json"
    if not meta_path.is_file():
        return None
    meta = json.loads(regular_file(meta_path).read_text(encoding="utf-8"))
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise ValueError("unknown layout")
    classes, crc = meta["classes"], meta["crc32"]
    if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
        raise ValueError("classes is not a list of names")
    if any(crc32_file(folder / f"{name}.npy") != crc[name] for name in _ARRAYS):
        raise ValueError("a file changed after it was written")
    ptc, nextmove = FileArray(folder / "ptc.npy"), FileArray(folder / "nextmove.npy")
    with NPY_HEADERS:
        pc, row, output = [np.load(regular_file(folder / f"{name}.npy"), allow_pickle=False)
                           for name in ("pc", "row", "output")]
    fits = (
        len(ptc.shape) == 2 and ptc.shape[1] == len(classes) == len(pc) and ptc.dtype == np.float16
        and len(nextmove.shape) == 1 and nextmove.shape[0] % 256 == 0 and nextmove.dtype in (np.uint16, np.uint32)
        and row.ndim == output.ndim == 1 and len(output) == len(row) and row.dtype == np.uint32
        and output.dtype == np.int32 and pc.dtype == np.float32
    )
    if not fits:
        raise ValueError("arrays do not fit together")
    # the DFA is walked one byte at a time: arrays index as fast as a list and hold Python ints
    return ptc, pc, classes, nextmove, array("I", row.tobytes()), array("i", output.tobytes())
