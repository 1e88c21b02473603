"""Cross-encoder pairs through the compact tokenizer equal those of ``tokenizers`` (ADR-0087): the
check runs once, its result is cached, and any other tokenizer keeps ``tokenizers``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from models_fixtures import make_cross_encoder_dir
from tokenizers import Tokenizer

from vaultsync.models import pair_tokenizer
from vaultsync.models.pair_tokenizer import CompactPairs, RustPairs

SHIPPED = Path(__file__).resolve().parents[1] / "models" / "reranker" / "vaultsync-reranker-ml4" / "tokenizer.json"
PAIRS = [("how do we rotate keys?", "Rotate the signing keys every 90 days. " * 40),
         ("Wie verhindern wir doppelte Abbuchungen?", "Idempotenzschlüssel verhindern doppelte Abbuchungen."),
         ("數據庫憑據多久輪換一次", "データベースの認証情報は四半期ごとに更新します。"),
         ("<s>", "</s> <pad> <mask> <unk>"), ("ÀÉÎ  ẞ\u200b", "\t\n  ")]


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory):
    cache = tmp_path_factory.mktemp("pairs-cache")
    return pair_tokenizer.load(SHIPPED, cache), RustPairs(Tokenizer.from_file(str(SHIPPED))), cache


def test_shipped_tokenizer_gets_the_compact_back_end_and_agrees(shipped) -> None:
    compact, rust, _ = shipped
    assert isinstance(compact, CompactPairs)
    assert (compact.pad_id, compact.specials, compact.max_length) == (rust.pad_id, rust.specials, rust.max_length)
    for q, p in PAIRS:
        for budget, limit in ((96, 320), (5, 16), (1, 6)):
            assert compact.pairs(q, [p, q], budget, limit) == rust.pairs(q, [p, q], budget, limit)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=st.text(min_size=1, max_size=80), p=st.text(max_size=300), budget=st.integers(1, 40))
def test_compact_pairs_equal_rust_pairs_on_any_text(shipped, q, p, budget) -> None:
    compact, rust, _ = shipped
    assert compact.pairs(q, [p], budget, 64) == rust.pairs(q, [p], budget, 64)


def test_the_check_is_cached_and_a_damaged_cache_is_checked_again(shipped, monkeypatch) -> None:
    _, _, cache = shipped
    real = Tokenizer.from_file

    def refuse(path):
        raise AssertionError("tokenizers loaded again")

    monkeypatch.setattr(pair_tokenizer.Tokenizer, "from_file", refuse)
    assert isinstance(pair_tokenizer.load(SHIPPED, cache), CompactPairs)
    (meta,) = list(Path(cache).rglob("pairs.json"))
    meta.write_text(json.dumps({"format": 99}))
    monkeypatch.setattr(pair_tokenizer.Tokenizer, "from_file", real)
    again = pair_tokenizer.load(SHIPPED, cache)
    assert isinstance(again, CompactPairs)
    assert json.loads(meta.read_text())["format"] == 1


def test_other_tokenizers_keep_tokenizers(tmp_path: Path) -> None:
    bert = make_cross_encoder_dir(tmp_path / "bert", "bert") / "tokenizer.json"
    assert isinstance(pair_tokenizer.load(bert, tmp_path / "cache"), RustPairs)
    assert not list((tmp_path / "cache").rglob("pairs.json"))  # nothing cached as agreeing


def test_an_unwritable_cache_keeps_tokenizers(tmp_path: Path) -> None:
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache folder should be")
    rust = pair_tokenizer.load(SHIPPED, blocked)
    assert isinstance(rust, RustPairs) and rust.pairs("a query", ["a passage"], 10, 40)[0][0][0] == 0


@pytest.mark.parametrize("damage", ["flipped byte", "truncated", "meta list", "huge pad id", "negative limit",
                                    "fifo npz", "fifo meta", "npz is a folder"])
def test_a_damaged_cached_check_is_run_again(tmp_path: Path, damage: str) -> None:
    first = pair_tokenizer.load(SHIPPED, tmp_path)
    want = first.pairs("how do we rotate keys?", ["Rotate the signing keys."], 10, 40)
    (meta,) = list(tmp_path.rglob("pairs.json"))
    npz = meta.parent / "unigram.npz"
    if damage == "flipped byte":
        data = bytearray(npz.read_bytes())
        data[len(data) // 2] ^= 0xFF
        npz.write_bytes(bytes(data))
    elif damage == "truncated":
        npz.write_bytes(npz.read_bytes()[:5000])
    elif damage in ("fifo npz", "fifo meta"):  # a pipe would block a search that opened it
        target = npz if damage == "fifo npz" else meta
        target.unlink()
        os.mkfifo(target)
    elif damage == "npz is a folder":
        npz.unlink()
        npz.mkdir()
    else:
        doc = json.loads(meta.read_text())
        doc = [] if damage == "meta list" else {**doc, **({"pad_id": 1e400} if damage == "huge pad id" else {"max_length": -5})}
        meta.write_text(json.dumps(doc) if doc != [] else "[]")
    again = pair_tokenizer.load(SHIPPED, tmp_path)
    assert isinstance(again, CompactPairs)
    assert again.pairs("how do we rotate keys?", ["Rotate the signing keys."], 10, 40) == want
