"""Tokenizer back ends for the embedder: the Rust ``tokenizers`` one, or the compact one.

Both return plain id lists and agree id for id (tested); the compact one
(:mod:`vaultsync.models.compact_tokenizer`) saves ~220 MB of RSS for the 250k
XLM-R vocabulary; with its word cache it is about as fast on running text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

from tokenizers import Tokenizer

from vaultsync.models.compact_tokenizer import CompactTokenizer

Backend = Literal["auto", "compact", "rust"]


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


def load_tokenizer(folder: Path, backend: Backend = "auto") -> TokenIds:
    """Open the tokenizer of a built model.

    ``auto`` picks the compact tokenizer when the build wrote ``unigram.npz``,
    else the Rust one from ``tokenizer.json``.

    Raises:
        FileNotFoundError: the requested back end's file is missing.
    """
    compact = folder / "unigram.npz"
    if backend == "compact" or (backend == "auto" and compact.is_file()):
        if not compact.is_file():
            raise FileNotFoundError(f"{compact} is missing (rebuild with `vaultsync models build --force`)")
        return CompactTokenizer(compact)
    return RustTokenizer(folder / "tokenizer.json")
