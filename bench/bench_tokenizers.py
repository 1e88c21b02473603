"""Compare the embedder's tokenizer back ends on one multilingual probe: ids, speed, load time, memory.

Command (from the repository root; needs a built e5 model in the cache, and
``pip install sentencepiece`` for the ``sentencepiece`` rows)::

    python bench/bench_tokenizers.py [--runs 3] [--per-lang 150] [--tldr ../shared/train/tldr-pages.jsonl] [--cache-dir DIR] [--json OUT]

Back ends:

* ``compact``: :class:`vaultsync.models.compact_tokenizer.CompactTokenizer`
  (Python Viterbi over ``unigram.npz``), when the build wrote that file;
* ``rust``: :class:`vaultsync.models.tokenization.RustTokenizer` (``tokenizers``
  with ``tokenizer.json``): the reference every other back end is compared with;
* ``sentencepiece``: the ``sentencepiece`` library alone, on a ModelProto made
  here from ``tokenizer.json`` (same pieces, scores and ``precompiled_charsmap``,
  the darts trie zero-padded to the 1,024-byte multiple the library requires)
  with its own ``nmt_nfkc`` normaliser; ``<s>``/``</s>`` added around its ids;
* ``sentencepiece+hf-normalizer``: ``tokenizers``' normaliser and Metaspace
  pre-tokenizer (as ``compact`` uses them), specials split out first, and the
  ``sentencepiece`` Unigram on each ``▁``-word (identity normaliser).

Probe: the manifest's golden probe items (prefixed as the embedder does, checked
against the manifest's ``token_ids``) plus up to ``--per-lang`` tldr-pages per
language (13 languages; read in place, nothing copied).

Reported per back end (medians over ``--runs``):

* ``mismatches``: texts whose ids differ from ``rust`` (and a few examples);
* ``load_s``: constructing the tokenizer (files in page cache);
* ``cold_texts_per_s`` / ``warm_texts_per_s``: the sample through
  ``encode_batch`` on a fresh instance, then again on the same instance (the
  compact one caches word segmentations);
* memory of a fresh subprocess, MB: ``tokenizer_only`` (VmRSS before and after
  loading, VmHWM after encoding the sample) and ``embedder`` (an onnxruntime
  session on ``model.onnx`` as :class:`~vaultsync.models.embedder.Embedder`
  makes it, plus the tokenizer, after embedding one 512-token passage).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BACKENDS = ("compact", "rust", "sentencepiece", "sentencepiece+hf-normalizer")
TLDR = Path(__file__).resolve().parents[2] / "shared" / "train" / "tldr-pages.jsonl"


def _status() -> dict[str, int]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS", "VmHWM")):
            k, v = line.split(":")
            out[k] = int(v.split()[0]) // 1024
    return out


def sentencepiece_proto(tokenizer_json: Path, hf_normalizer: bool) -> bytes:
    """A serialised SentencePiece ModelProto with ``tokenizer_json``'s Unigram pieces and scores.

    ``hf_normalizer=False``: SentencePiece's own normaliser on the file's
    ``precompiled_charsmap`` (dummy prefix, extra whitespace removed);
    ``True``: identity normaliser, for text already normalised and split into ``▁``-words.
    """
    from sentencepiece import sentencepiece_model_pb2 as pb

    tj = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    specials = {t["content"] for t in tj["added_tokens"] if t.get("special")}
    m = pb.ModelProto()
    for piece, score in tj["model"]["vocab"]:
        p = m.pieces.add()
        p.piece, p.score = piece, score
        if piece == "<unk>":
            p.type = pb.ModelProto.SentencePiece.UNKNOWN
        elif piece in specials:
            p.type = pb.ModelProto.SentencePiece.CONTROL
    ts = m.trainer_spec
    ts.model_type = pb.TrainerSpec.UNIGRAM
    ts.vocab_size = len(m.pieces)
    ts.unk_id = tj["model"]["unk_id"]
    ts.bos_id, ts.pad_id, ts.eos_id = (next(i for i, (p, _) in enumerate(tj["model"]["vocab"]) if p == s)
                                       for s in ("<s>", "<pad>", "</s>"))
    ns = m.normalizer_spec
    if hf_normalizer:
        ns.name = "identity"
        ns.add_dummy_prefix = ns.remove_extra_whitespaces = ns.escape_whitespaces = False
    else:
        charsmap = base64.b64decode(tj["normalizer"]["normalizers"][0]["precompiled_charsmap"])
        (size,) = struct.unpack_from("<I", charsmap)
        trie = charsmap[4 : 4 + size]
        trie += b"\0" * (-len(trie) % 1024)  # zero units are empty slots
        ns.name = "nmt_nfkc"
        ns.precompiled_charsmap = struct.pack("<I", len(trie)) + trie + charsmap[4 + size :]
        ns.add_dummy_prefix = ns.remove_extra_whitespaces = ns.escape_whitespaces = True
    return m.SerializeToString()


class SentencePieceIds:
    """``sentencepiece`` behind the embedder's tokenizer interface (see the module docstring)."""

    def __init__(self, work: Path, hf_normalizer: bool) -> None:
        import sentencepiece as spm
        from tokenizers import Regex, normalizers, pre_tokenizers

        self._sp = spm.SentencePieceProcessor(model_file=str(work / f"{'identity' if hf_normalizer else 'nmt_nfkc'}.model"))
        self.bos_id, self.eos_id, self.pad_id = self._sp.bos_id(), self._sp.eos_id(), self._sp.pad_id()
        self._hf = hf_normalizer
        if hf_normalizer:  # the pipeline of tokenizer.json, as the compact tokenizer builds it
            tj = json.loads((work / "pipeline.json").read_text(encoding="utf-8"))
            charsmap = base64.b64decode(tj["precompiled_charsmap"])
            self._normalizer = normalizers.Sequence(
                [normalizers.Precompiled(charsmap), normalizers.Replace(Regex(" {2,}"), " ")]
            )
            self._pre = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
            self._specials: dict[str, int] = tj["specials"]
            self._split = re.compile("(" + "|".join(map(re.escape, sorted(self._specials, key=len, reverse=True))) + ")")

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        if self._hf:
            ids: list[int] = []
            for seg in self._split.split(text):
                if not seg:
                    continue
                if seg in self._specials:
                    ids.append(self._specials[seg])
                    continue
                words = [w for w, _ in self._pre.pre_tokenize_str(self._normalizer.normalize_str(seg))]
                for w in self._sp.encode(words):
                    ids.extend(w)
        else:
            ids = self._sp.encode(text)
        return [self.bos_id, *ids, self.eos_id] if add_special_tokens else ids

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = True) -> list[list[int]]:
        if not self._hf:
            rows = self._sp.encode(list(texts))
            return [[self.bos_id, *r, self.eos_id] for r in rows] if add_special_tokens else rows
        return [self.encode(t, add_special_tokens) for t in texts]


def prepare(folder: Path, work: Path) -> None:
    """Write what the ``sentencepiece`` back ends load into ``work`` (as a build step would)."""
    for hf in (False, True):
        (work / f"{'identity' if hf else 'nmt_nfkc'}.model").write_bytes(sentencepiece_proto(folder / "tokenizer.json", hf))
    tj = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    pipeline = {
        "precompiled_charsmap": tj["normalizer"]["normalizers"][0]["precompiled_charsmap"],
        "specials": {t["content"]: t["id"] for t in tj["added_tokens"] if t.get("special")},
    }
    (work / "pipeline.json").write_text(json.dumps(pipeline), encoding="utf-8")


def make_loader(backend: str, folder: Path, work: Path) -> Callable[[], Any]:
    """A zero-argument constructor of ``backend`` for the model in ``folder`` (``work``: see :func:`prepare`)."""
    if backend == "compact":
        from vaultsync.models.compact_tokenizer import CompactTokenizer

        return lambda: CompactTokenizer(folder / "unigram.npz")
    if backend == "rust":
        from vaultsync.models.tokenization import RustTokenizer

        return lambda: RustTokenizer(folder / "tokenizer.json")
    if backend.startswith("sentencepiece"):
        return lambda: SentencePieceIds(work, hf_normalizer=backend.endswith("hf-normalizer"))
    raise ValueError(backend)


def probe_texts(tldr: Path, per_lang: int, seed: int = 0) -> tuple[list[str], list[str], list[list[int]]]:
    """(tldr sample, prefixed manifest probe texts, the manifest's probe token ids)."""
    from vaultsync.models import manifest as manifests

    m = manifests.load("multilingual-e5-small")
    probe = [m.prefixes[it["kind"]] + it["text"] for it in m.probe["items"]]
    by_lang: dict[str, list[str]] = defaultdict(list)
    if tldr.is_file():
        with tldr.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                by_lang[row["lang"]].append(row["text"])
    rng = random.Random(seed)
    sample = [t for lang in sorted(by_lang) for t in rng.sample(by_lang[lang], min(per_lang, len(by_lang[lang])))]
    return sample, probe, m.probe["token_ids"]


def child(backend: str, folder: Path, work: Path, mode: str, tldr: Path, per_lang: int) -> None:
    """Fresh process: memory around loading one back end (``mode``: tokenizer or embedder), printed as JSON."""
    import numpy as np  # noqa: F401  (imported by every back end; not counted as the tokenizer's)
    import tokenizers  # noqa: F401

    if backend.startswith("sentencepiece"):
        import sentencepiece  # noqa: F401
    sample, _, _ = probe_texts(tldr, per_lang)
    out: dict[str, Any] = {"before_mb": _status()["VmRSS"]}
    session = None
    if mode == "embedder":
        from vaultsync.models.embedder import make_session

        session = make_session(folder / "model.onnx", threads=2)
    tok = make_loader(backend, folder, work)()
    out["after_load"] = _status()
    if session is not None:
        import numpy as np

        ids = tok.encode(" ".join(sample[:20]))[:511] + [tok.eos_id]
        session.run(["sentence_embedding"], {"input_ids": np.array([ids], np.int64),
                                             "attention_mask": np.ones((1, len(ids)), np.int64)})
    tok.encode_batch(sample)
    out["after_use"] = _status()
    print(json.dumps(out))


def _run_child(args: argparse.Namespace, folder: Path, work: Path, backend: str, mode: str) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", backend, mode, "--folder", str(folder), "--work", str(work),
           "--tldr", str(args.tldr),
           "--per-lang", str(args.per_lang)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench(args: argparse.Namespace) -> dict[str, Any]:
    from vaultsync.models import cache
    from vaultsync.models import manifest as manifests

    m = manifests.load("multilingual-e5-small")
    folder = cache.model_dir(m.name, m.version, args.cache_dir)
    if cache.read_build_info(folder) is None:
        raise SystemExit(f"{folder} holds no build: run `vaultsync models build` first")
    sample, probe, probe_ids = probe_texts(args.tldr, args.per_lang)
    report: dict[str, Any] = {
        "folder": str(folder),
        "sample": {"texts": len(sample), "chars": sum(map(len, sample)), "probe_items": len(probe)},
        "runs": args.runs,
        "files_mb": {p.name: round(p.stat().st_size / 1e6, 1) for p in sorted(folder.iterdir()) if p.is_file()},
    }
    backends = [b for b in BACKENDS if b != "compact" or (folder / "unigram.npz").is_file()]
    try:
        import sentencepiece  # noqa: F401
    except ImportError:
        backends = [b for b in backends if not b.startswith("sentencepiece")]
        report["sentencepiece"] = "not installed"
    work = Path(tempfile.mkdtemp(prefix="bench-tok-"))
    if any(b.startswith("sentencepiece") for b in backends):
        prepare(folder, work)
    reference = make_loader("rust", folder, work)().encode_batch(sample)
    results: dict[str, Any] = {}
    for backend in backends:
        load = make_loader(backend, folder, work)
        loads, cold, warm = [], [], []
        for _ in range(args.runs):
            t = time.perf_counter()
            tok = load()
            loads.append(time.perf_counter() - t)
            t = time.perf_counter()
            got = tok.encode_batch(sample)
            cold.append(len(sample) / (time.perf_counter() - t))
            t = time.perf_counter()
            tok.encode_batch(sample)
            warm.append(len(sample) / (time.perf_counter() - t))
            del tok
        bad = [i for i, (a, b) in enumerate(zip(got, reference, strict=True)) if a != b]
        probe_bad = [i for i, (t, ids) in enumerate(zip(probe, probe_ids, strict=True)) if load().encode(t) != ids]
        results[backend] = {
            "mismatches": len(bad),
            "mismatch_examples": [sample[i][:80] for i in bad[:3]],
            "probe_mismatches": len(probe_bad),
            "load_s": round(statistics.median(loads), 2),
            "cold_texts_per_s": round(statistics.median(cold)),
            "warm_texts_per_s": round(statistics.median(warm)),
            "rss_mb": {mode: _run_child(args, folder, work, backend, mode) for mode in ("tokenizer", "embedder")},
        }
        print(f"{backend}: {json.dumps(results[backend], ensure_ascii=False)}", file=sys.stderr, flush=True)
    report["backends"] = results
    shutil.rmtree(work)
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--per-lang", type=int, default=150, help="tldr pages per language")
    ap.add_argument("--tldr", type=Path, default=TLDR)
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--json", default=None, help="write the report here too")
    ap.add_argument("--child", nargs=2, metavar=("BACKEND", "MODE"), help=argparse.SUPPRESS)
    ap.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.folder, args.work, args.child[1], args.tldr, args.per_lang)
        return
    report = bench(args)
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
