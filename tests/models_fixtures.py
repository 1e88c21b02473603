"""Shared fixtures for the model tests (import the fixture names into a test module).

The real multilingual-e5-small build happens once per test process: into
``$VAULTSYNC_CACHE_DIR`` when set (CI points it at a persistent cache, so the
build is reused across runs), else into a session temporary folder. The
tiny cross-encoders are built with :mod:`vaultsync.models.convert.onnx_graph` and
tokenizers made with the ``tokenizers`` library.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from vaultsync.models.convert.encoder_config import EncoderConfig
from vaultsync.models.convert.onnx_graph import build_cross_encoder, random_weights

# one process-wide result, whichever test module asks first
_STATE: dict[str, Any] = {}

NOTES = [
    "To rotate the production Postgres credentials, run `vault write database/rotate-root/prod` and restart the API pods so they pick up the new secret.",
    "The CI pipeline caches Docker layers in the registry; a cache miss adds about eight minutes to each build.",
    "On-call handover happens every Monday at 09:00 UTC; the outgoing engineer writes a summary in the incident channel.",
    "We pin Python dependencies with uv lock files and run Renovate weekly to propose upgrades.",
    "Nightly backups of the analytics database are copied to S3 and kept for 30 days before lifecycle rules delete them.",
    "Feature flags are evaluated client-side; stale flags older than 90 days must be removed in the next sprint.",
]

_WORDS = sorted(
    set(
        " ".join(NOTES).lower().replace(";", " ").replace(",", " ").replace(".", " ").replace("`", " ").split()
        + "how do we rotate the database password when is the handover what does a cache miss cost".split()
    )
)


@pytest.fixture(scope="session")
def e5_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Cache root holding a built multilingual-e5-small (built on first use)."""
    if "cache" not in _STATE:
        env = os.environ.get("VAULTSYNC_CACHE_DIR")
        root = Path(env) if env else tmp_path_factory.mktemp("vaultsync-cache")
        from vaultsync.models.convert.build import build_model

        result = build_model("multilingual-e5-small", cache_dir=root)
        _STATE["cache"] = root
        _STATE["build"] = result
    return _STATE["cache"]


@pytest.fixture(scope="session")
def e5_build(e5_cache_dir: Path) -> Any:
    """The :class:`BuildResult` of the session's build (``built`` False when reused)."""
    return _STATE["build"]


@pytest.fixture(scope="session")
def e5(e5_cache_dir: Path) -> Any:
    """A loaded :class:`Embedder` (2 threads), shared by the session."""
    if "embedder" not in _STATE:
        from vaultsync.models.embedder import Embedder

        _STATE["embedder"] = Embedder.load(cache_dir=e5_cache_dir, threads=2)
    return _STATE["embedder"]


def _bert_tokenizer() -> Tokenizer:
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    for w in _WORDS:
        vocab.setdefault(w, len(vocab))
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    return tok


def _roberta_tokenizer() -> Tokenizer:
    pieces: list[tuple[str, float]] = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    seen = {p for p, _ in pieces}
    for w in _WORDS:
        for piece in ("▁" + w, w[:3], w[3:]):
            if piece and piece not in seen:
                seen.add(piece)
                pieces.append((piece, -float(len(pieces)) / 100))
    for ch in "abcdefghijklmnopqrstuvwxyz0123456789:/-_`'.,;?":
        if ch not in seen:
            seen.add(ch)
            pieces.append((ch, -12.0))
    tok = Tokenizer(models.Unigram(pieces, 3, False))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    return tok


def make_cross_encoder_dir(
    folder: Path, style: str, *, nested: bool = False, fused: bool = False, settings: dict[str, Any] | None = None
) -> Path:
    """Write a tiny random-weight cross-encoder export (``style`` "bert": 3 inputs, 1 logit;
    "roberta": 2 inputs, 2 logits, position offset 2) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    tok = _bert_tokenizer() if style == "bert" else _roberta_tokenizer()
    if style == "bert":
        cfg = EncoderConfig(
            hidden=32,
            layers=2,
            heads=4,
            ffn=64,
            vocab=tok.get_vocab_size(),
            max_positions=64,
            position_offset=0,
            token_type_ids_input=True,
            num_labels=1,
        )
        head = "bert"
    else:
        cfg = EncoderConfig(
            hidden=32,
            layers=2,
            heads=4,
            ffn=64,
            vocab=tok.get_vocab_size(),
            max_positions=66,
            position_offset=2,
            token_type_ids_input=False,
            num_labels=2,
        )
        head = "roberta"
    model = build_cross_encoder(cfg, random_weights(cfg, head=head, seed=7), head=head, fused=fused)  # type: ignore[arg-type]
    target = folder / "onnx" / "model.onnx" if nested else folder / "model.onnx"
    target.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(target))
    tok.save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": style,
                "max_position_embeddings": cfg.max_positions,
                "pad_token_id": 1 if style == "roberta" else 0,
            }
        )
    )
    if settings:
        (folder / "vaultsync.json").write_text(json.dumps(settings))
    return folder


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two equally shaped matrices."""
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def write_tiny_e5s1(path: Path, *, seed: int = 0) -> dict[str, Any]:
    """Write a tiny but well-formed ``E5S1`` model (H=64, 2 layers, ~200 pieces) to ``path``.

    Q4_0 blocks are random codes with fp16 scales, so the dequantised values are
    known exactly. Returns the header values and the piece list.
    """
    import struct

    rng = np.random.default_rng(seed)
    H, NL, NH, FF, MAXP, TVS = 64, 2, 4, 128, 40, 2
    pieces = ["<s>", "<pad>", "</s>", "<unk>", "▁", ":", "?", "."]
    for w in [*_WORDS, "query", "passage", "que", "ry"]:
        for p in ("▁" + w, w):
            if p not in pieces:
                pieces.append(p)
    pieces += [c for c in "abcdefghijklmnopqrstuvwxyz0123456789" if c not in pieces]
    pieces.append("<mask>")
    VOC = len(pieces) + 3
    scores = np.array([0.0] * 4 + [-(2.0 + i / 50) for i in range(len(pieces) - 5)] + [0.0], np.float32)
    norm = {0x09: [0x20], 0x0A: [0x20], 0x07: [], 0xFB01: [0x66, 0x69]}  # tab, newline → space; BEL deleted; ﬁ → fi

    def q4(rows: int, cols: int) -> bytes:
        out = bytearray()
        for _ in range(rows * cols // 32):
            out += np.float16(rng.uniform(0.002, 0.02)).tobytes() + rng.integers(0, 256, 16, dtype=np.uint8).tobytes()
        return bytes(out)

    def f32(*shape: int, scale: float = 0.02, base: float = 0.0) -> bytes:
        return (base + rng.standard_normal(shape) * scale).astype(np.float32).tobytes()

    tensors: list[tuple[str, int, int, bytes]] = [
        ("emb.word", 1, VOC * H, q4(VOC, H)),
        ("emb.pos", 0, MAXP * H, f32(MAXP, H, scale=0.1)),
        ("emb.type", 0, TVS * H, f32(TVS, H, scale=0.1)),
        ("emb.ln.w", 0, H, f32(H, base=1.0)),
        ("emb.ln.b", 0, H, f32(H)),
    ]
    for i in range(NL):
        for short, o, n in (("q", H, H), ("k", H, H), ("v", H, H), ("ao", H, H), ("fi", FF, H), ("fo", H, FF)):
            tensors.append((f"l{i}.{short}.w", 1, o * n, q4(o, n)))
            tensors.append((f"l{i}.{short}.b", 0, o, f32(o)))
        for ln in ("aln", "oln"):
            tensors.append((f"l{i}.{ln}.w", 0, H, f32(H, base=1.0)))
            tensors.append((f"l{i}.{ln}.b", 0, H, f32(H)))

    head = bytearray(
        b"E5S1"
        + struct.pack("<I", 1)
        + struct.pack("<7i", H, NL, NH, FF, VOC, MAXP, TVS)
        + struct.pack("<fi", 1e-12, 32)
    )
    blob = b"".join(p.encode() for p in pieces)
    offs = [0]
    for p in pieces:
        offs.append(offs[-1] + len(p.encode()))
    head += struct.pack("<5i", len(pieces), 0, 2, 1, 3) + struct.pack("<Q", len(blob))
    head += struct.pack(f"<{len(offs)}I", *offs) + scores.tobytes() + blob
    nm = b"".join(
        struct.pack("<I", cp) + bytes([len(out)]) + struct.pack(f"<{len(out)}I", *out)
        for cp, out in sorted(norm.items())
    )
    head += struct.pack("<iI", len(norm), len(nm)) + nm
    dir_size = 4 + sum(2 + len(n) + 1 + 4 + 16 for n, *_ in tensors)
    offset = len(head) + dir_size
    directory = bytearray(struct.pack("<i", len(tensors)))
    data = bytearray()
    for name, dtype, count, payload in tensors:
        directory += (
            struct.pack("<H", len(name))
            + name.encode()
            + bytes([dtype])
            + struct.pack("<IQQ", count, offset + len(data), len(payload))
        )
        data += payload
    path.write_bytes(bytes(head + directory + data))
    return {
        "hidden": H,
        "layers": NL,
        "heads": NH,
        "ffn": FF,
        "vocab": VOC,
        "max_positions": MAXP,
        "type_vocab": TVS,
        "pieces": pieces,
    }


def tiny_manifest(models_dir: Path, source: Path, header: dict[str, Any], table_sha: str) -> dict[str, Any]:
    """Write ``models_dir/tiny-e5.json`` for a tiny E5S1 file installed as ``tinypkg/tiny.bin``."""
    from vaultsync.models.manifest import sha256_file

    raw = json.loads(
        (Path(__file__).resolve().parents[1] / "models" / "multilingual-e5-small.json").read_text(encoding="utf-8")
    )
    raw["name"] = "tiny-e5"
    raw["sources"]["weights"].update(
        {
            "distribution": "tinypkg",
            "package": "tinypkg",
            "version": "0",
            "path": "tinypkg/tiny.bin",
            "size": source.stat().st_size,
            "sha256": sha256_file(source),
        }
    )
    raw["architecture"].update(
        {k: header[k] for k in ("hidden", "layers", "heads", "ffn", "vocab", "max_positions", "type_vocab")}
    )
    raw["dims"] = header["hidden"]
    raw["max_tokens"] = header["max_positions"]
    raw["tokenizer"].update({"later_composites": [], "table_sha256": table_sha})
    raw["probe"].update({"items": raw["probe"]["items"][:3], "first_dims": [], "cosines": [], "token_ids": []})
    models_dir.mkdir(parents=True, exist_ok=True)
    (models_dir / "tiny-e5.json").write_text(json.dumps(raw), encoding="utf-8")
    return raw
