"""Prune multilingual-e5's 250k-piece XLM-R vocabulary to what the reranker's languages need.

The word-embedding table is most of a small encoder's bytes (250k × 384), so the
reranker keeps a subset of the SentencePiece pieces, in their original order:

1. the special pieces (``<s>``, ``<pad>``, ``</s>``, ``<unk>``, ``<mask>``);
2. every piece the full tokenizer produces on the training corpus (so every
   training text tokenizes exactly as e5 would tokenize it);
3. every single-character piece, whatever its script (no character of any
   language falls back to ``<unk>`` merely because of the pruning);
4. then the most probable pieces (highest Unigram score) whose characters all
   belong to the scripts of the evaluation and training languages (Latin,
   Cyrillic, CJK, Hangul, kana, digits, full-width forms), until ``size``.

The tokenizer keeps e5's normaliser, pre-tokenizer, template and scores: the
Unigram Viterbi over a subset of pieces returns the best segmentation within
the subset, which equals e5's wherever e5's pieces were kept, and otherwise
falls back to shorter pieces (never to ``<unk>`` for a character e5 knows).
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from vaultsync.models import cache

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
_SCRIPT_PREFIX_OK = ("LATIN", "CYRILLIC", "CJK", "HANGUL", "HIRAGANA", "KATAKANA", "DIGIT", "FULLWIDTH", "GREEK")


def source_tokenizer_path() -> Path:
    """``tokenizer.json`` of the built multilingual-e5-small (``vaultsync models build``)."""
    folder = cache.model_dir("multilingual-e5-small", 1)
    path = folder / "tokenizer.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `vaultsync models build` first")
    return path


def char_script(ch: str) -> str:
    """First word of the character's Unicode name (``LATIN``, ``CJK``, ``HANGUL``...), ``PUNCT`` for punctuation."""
    cat = unicodedata.category(ch)
    if cat.startswith("P") or cat.startswith("S") or cat.startswith("Z"):
        return "PUNCT"
    try:
        return unicodedata.name(ch).split()[0]
    except ValueError:
        return "UNKNOWN"


def piece_in_scripts(piece: str, scripts: Iterable[str]) -> bool:
    allowed = set(scripts) | {"PUNCT"}
    body = piece.replace("\u2581", "")
    return bool(body) and all(char_script(ch) in allowed for ch in body)


def used_pieces(tok: Tokenizer, texts: Iterable[str], batch: int = 512) -> Counter[int]:
    counts: Counter[int] = Counter()
    buf: list[str] = []
    for t in texts:
        buf.append(t)
        if len(buf) >= batch:
            for enc in tok.encode_batch(buf, add_special_tokens=False):
                counts.update(enc.ids)
            buf = []
    if buf:
        for enc in tok.encode_batch(buf, add_special_tokens=False):
            counts.update(enc.ids)
    return counts


def select_pieces(pieces: list[tuple[str, float]], used: Iterable[int], size: int, scripts: Iterable[str]) -> list[int]:
    """Old ids to keep, ascending (see the module docstring for the order of preference)."""
    keep: set[int] = {i for i, (p, _) in enumerate(pieces) if p in SPECIALS}
    keep.update(used)
    keep.update(i for i, (p, _) in enumerate(pieces) if len(p.replace("\u2581", "")) <= 1)
    if len(keep) < size:
        ranked = sorted((i for i in range(len(pieces)) if i not in keep and piece_in_scripts(pieces[i][0], scripts)),
                        key=lambda i: (-pieces[i][1], i))
        keep.update(ranked[: size - len(keep)])
    return sorted(keep)


def pruned_tokenizer_json(source: dict[str, Any], keep: list[int]) -> dict[str, Any]:
    """A copy of e5's ``tokenizer.json`` whose Unigram vocabulary holds only ``keep`` (renumbered in order)."""
    old_vocab = source["model"]["vocab"]
    new_id = {old: new for new, old in enumerate(keep)}
    out = json.loads(json.dumps({k: v for k, v in source.items() if k != "model"}))
    out["model"] = {**{k: v for k, v in source["model"].items() if k != "vocab"},
                    "vocab": [old_vocab[i] for i in keep],
                    "unk_id": new_id[int(source["model"]["unk_id"])]}
    for tok in out.get("added_tokens", []):
        tok["id"] = new_id[int(tok["id"])]
    pp = out.get("post_processor") or {}
    for spec in (pp.get("special_tokens") or {}).values():
        spec["ids"] = [new_id[int(i)] for i in spec["ids"]]
    out["truncation"] = None
    out["padding"] = None
    return out


def build_pruned_tokenizer(train_dir: Path, cfg: dict[str, Any], out_dir: Path,
                           say: Callable[[str], None] = print) -> dict[str, Any]:
    """Write ``tokenizer.json`` and ``vocab_ids.npy`` (kept e5 ids) into ``out_dir``; return a summary."""
    src_path = source_tokenizer_path()
    source = json.loads(src_path.read_text(encoding="utf-8"))
    full = Tokenizer.from_file(str(src_path))
    full.no_truncation()
    full.no_padding()
    texts: list[str] = []
    for name in ("tldr-pages.jsonl", "design-docs.jsonl"):
        with (train_dir / name).open(encoding="utf-8") as fh:
            texts.extend(json.loads(line)["text"] for line in fh if line.strip())
    used = used_pieces(full, texts)
    pieces = [(p, float(s)) for p, s in source["model"]["vocab"]]
    keep = select_pieces(pieces, used, int(cfg["size"]), cfg.get("keep_scripts", _SCRIPT_PREFIX_OK))
    pruned = pruned_tokenizer_json(source, keep)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "tokenizer.json").write_text(json.dumps(pruned, ensure_ascii=False), encoding="utf-8")
    np.save(out_dir / "vocab_ids.npy", np.asarray(keep, np.int64))
    # every training text must tokenize exactly as e5 does (mapped to the new ids)
    small = Tokenizer.from_file(str(out_dir / "tokenizer.json"))
    new_id = {old: new for new, old in enumerate(keep)}
    sample = texts[:: max(1, len(texts) // 3000)]
    bad = 0
    for a, b in zip(full.encode_batch(sample, add_special_tokens=True), small.encode_batch(sample, add_special_tokens=True),
                    strict=True):
        if [new_id[i] for i in a.ids] != b.ids:
            bad += 1
    info = {"source_pieces": len(pieces), "kept": len(keep), "used_in_training_corpus": len(used),
            "training_texts_checked": len(sample), "training_texts_tokenized_differently": bad,
            "source_tokenizer_sha256": _sha(src_path)}
    (out_dir / "vocab.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    if bad:
        raise RuntimeError(f"{bad} training texts tokenize differently with the pruned vocabulary")
    say(f"vocab: kept {len(keep)} of {len(pieces)} pieces ({len(used)} used by the training corpus)")
    return info


def _sha(path: Path) -> str:
    from vaultsync.models.manifest import sha256_file

    return sha256_file(path)
