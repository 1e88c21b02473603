"""Tokenizer back ends for the embedder: ``sentencepiece`` (default) or ``tokenizers``.

Both run XLM-R's pipeline and return the same plain id lists (tested, and
checked at build time). ``tokenizers`` alone keeps the 250k pieces in a
per-character trie that costs ~270 MB of RSS; :class:`SentencePieceTokenizer`
keeps ``tokenizers``' normaliser and pre-tokenizer (small) and runs the
Unigram Viterbi in ``sentencepiece``, whose double-array trie costs ~40 MB
(``bench/bench_tokenizers.py``, ADR-0060).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

from tokenizers import Regex, Tokenizer, normalizers, pre_tokenizers

Backend = Literal["auto", "sentencepiece", "rust"]
SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")  # XLM-R's added tokens, split out before normalising
SENTENCEPIECE_FILES = ("sentencepiece.model", "charsmap.bin")


class TokenIds(Protocol):
    """What the embedder needs from a tokenizer."""

    bos_id: int
    eos_id: int
    pad_id: int
    special_ids: set[int]

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]: ...

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = True) -> list[list[int]]: ...

    def token_to_id(self, token: str) -> int | None: ...


class RustTokenizer:
    """``tokenizers.Tokenizer`` behind :class:`TokenIds` (no truncation, no padding)."""

    def __init__(self, path: Path) -> None:
        self._tok = Tokenizer.from_file(str(path))
        self._tok.no_truncation()
        self._tok.no_padding()
        self.special_ids = {i for i, t in self._tok.get_added_tokens_decoder().items() if t.special}
        ids = {name: self._tok.token_to_id(name) for name in ("<s>", "</s>", "<pad>")}
        missing = [k for k, v in ids.items() if v is None]
        if missing:
            raise ValueError(f"{path} lacks {missing}")
        self.bos_id, self.eos_id, self.pad_id = (int(ids[k]) for k in ("<s>", "</s>", "<pad>"))  # type: ignore[arg-type]

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=add_special_tokens).ids)

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = True) -> list[list[int]]:
        return [list(e.ids) for e in self._tok.encode_batch(list(texts), add_special_tokens=add_special_tokens)]

    def token_to_id(self, token: str) -> int | None:
        return self._tok.token_to_id(token)


class SentencePieceTokenizer:
    """XLM-R tokenization equal to ``tokenizer.json`` under ``tokenizers``, Viterbi in ``sentencepiece``.

    Per text: the special tokens written literally are split out (as
    ``tokenizers``' added vocabulary does); each other segment goes through
    ``tokenizers``' ``Precompiled`` + ``Replace`` normaliser and ``Metaspace``
    pre-tokenizer, and its ``▁``-words, joined (no piece holds an inner ``▁``,
    so the Viterbi never crosses a word), through ``sentencepiece``'s Unigram.
    Reads the build's ``sentencepiece.model`` (see
    :func:`vaultsync.models.convert.spm_tokenizer.sentencepiece_model`) and
    ``charsmap.bin`` (the ``precompiled_charsmap``).

    Attributes:
        bos_id, eos_id, pad_id, unk_id: special ids; special_ids: all special token ids.

    Raises:
        OSError: a file is missing or unreadable; ValueError: a special piece is missing.
    """

    def __init__(self, folder: Path) -> None:
        import sentencepiece

        model, charsmap = (Path(folder) / f for f in SENTENCEPIECE_FILES)
        self._sp = sentencepiece.SentencePieceProcessor(model_file=str(model), num_threads=1)
        self.unk_id: int = self._sp.unk_id()
        self._unk_alias = self._sp.piece_to_id("<unk>")  # the text "<unk>": a normal piece, reported as unk_id
        self._specials = {t: self.unk_id if t == "<unk>" else self._sp.piece_to_id(t) for t in SPECIAL_TOKENS}
        if any(self._sp.id_to_piece(i) != t for t, i in self._specials.items() if t != "<unk>"):
            raise ValueError(f"{model} lacks one of {SPECIAL_TOKENS}")
        self.special_ids = set(self._specials.values())
        self.bos_id, self.eos_id, self.pad_id = (self._specials[t] for t in ("<s>", "</s>", "<pad>"))
        self._split = re.compile("(" + "|".join(map(re.escape, sorted(SPECIAL_TOKENS, key=len, reverse=True))) + ")")
        self._normalizer = normalizers.Sequence(
            [normalizers.Precompiled(charsmap.read_bytes()), normalizers.Replace(Regex(" {2,}"), " ")]
        )
        self._pre = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)

    def token_to_id(self, token: str) -> int | None:
        """Id of a piece, or None."""
        if token == "<unk>":
            return self.unk_id
        i = self._sp.piece_to_id(token)
        return i if self._sp.id_to_piece(i) == token else None

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """Token ids of ``text`` (``<s> … </s>`` around them when ``add_special_tokens``)."""
        return self.encode_batch([text], add_special_tokens)[0]

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = True) -> list[list[int]]:
        """:meth:`encode` for each text; one ``sentencepiece`` call for all segments."""
        plans: list[list[int | None]] = []  # per text: special ids, None where a segment's ids go
        words: list[str] = []
        for text in texts:
            plan: list[int | None] = []
            for segment in self._split.split(text):
                if segment in self._specials:
                    plan.append(self._specials[segment])
                elif segment:
                    norm = self._normalizer.normalize_str(segment)
                    words.append("".join(w for w, _ in self._pre.pre_tokenize_str(norm)))
                    plan.append(None)
            plans.append(plan)
        encoded = iter(self._sp.encode(words) if words else [])
        out: list[list[int]] = []
        for plan in plans:
            ids = [self.bos_id] if add_special_tokens else []
            for item in plan:
                ids.extend(self._fix_unk(next(encoded)) if item is None else (item,))
            if add_special_tokens:
                ids.append(self.eos_id)
            out.append(ids)
        return out

    def _fix_unk(self, ids: list[int]) -> list[int]:
        """Map the ``<unk>`` text piece to ``unk_id`` and fuse the unknowns it then touches (as ``tokenizers``)."""
        if self._unk_alias not in ids:
            return ids
        unk = self.unk_id
        out: list[int] = []
        for i in ids:
            i = unk if i == self._unk_alias else i
            if not (i == unk and out and out[-1] == unk):
                out.append(i)
        return out


def load_tokenizer(folder: Path, backend: Backend = "auto") -> TokenIds:
    """Open the tokenizer of a built model.

    ``auto`` picks :class:`SentencePieceTokenizer` when the build wrote its
    files (:data:`SENTENCEPIECE_FILES`), else the Rust one from ``tokenizer.json``
    (builds made before those files existed).

    Raises:
        FileNotFoundError: the requested back end's file is missing.
    """
    have = all((folder / f).is_file() for f in SENTENCEPIECE_FILES)
    if backend == "sentencepiece" or (backend == "auto" and have):
        if not have:
            raise FileNotFoundError(
                f"{folder} lacks {' or '.join(SENTENCEPIECE_FILES)} (rebuild with `vaultsync models build --force`)"
            )
        return SentencePieceTokenizer(folder)
    return RustTokenizer(folder / "tokenizer.json")
