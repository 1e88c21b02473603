"""One loaded copy per process of an embedder whose files have not changed (vaultsync.models.shared)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from vaultsync.models import cache, manifest
from vaultsync.models.shared import shared_model

NAME = "multilingual-e5-small"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A model folder in a cache of its own, with an empty memo."""
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("vaultsync.models.shared._loaded", {})
    path = cache.model_dir(NAME, manifest.load(NAME).version)
    path.mkdir(parents=True)
    (path / "model.onnx").write_bytes(b"weights")
    return path


class Loader:
    """Counts its loads; each load is a new object."""

    def __init__(self) -> None:
        self.loads = 0

    def __call__(self) -> object:
        self.loads += 1
        return object()


def test_a_second_ask_gets_the_first_copy(folder):
    load = Loader()
    first = shared_model(NAME, 2, load)
    assert shared_model(NAME, 2, load) is first and load.loads == 1
    assert shared_model(NAME, 1, load) is not first and load.loads == 2  # another thread count: its own copy
    assert shared_model(NAME, 2, load) is first and load.loads == 2  # ... beside the first


@pytest.mark.parametrize("change", ["rewritten", "same size, newer", "added", "removed", "replaced"])
def test_a_model_whose_files_changed_is_loaded_again(folder, change):
    load = Loader()
    first = shared_model(NAME, 2, load)
    onnx = folder / "model.onnx"
    if change == "rewritten":
        onnx.write_bytes(b"other weights")
    elif change == "same size, newer":
        os.utime(onnx, ns=(time.time_ns(), onnx.stat().st_mtime_ns + 1))
    elif change == "added":
        (folder / "build.json").write_text("{}")
    elif change == "removed":
        onnx.unlink()
    else:  # a rebuild renames a new file into place: same name, size and time, another inode
        new = folder / "new.onnx"
        new.write_bytes(b"weights")
        os.utime(new, ns=(onnx.stat().st_atime_ns, onnx.stat().st_mtime_ns))
        os.replace(new, onnx)
    second = shared_model(NAME, 2, load)
    assert second is not first and load.loads == 2, change
    assert shared_model(NAME, 2, load) is second and load.loads == 2  # the new copy is the one kept


def test_another_cache_folder_loads_its_own_model(folder, tmp_path, monkeypatch):
    load = Loader()
    first = shared_model(NAME, 2, load)
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "other"))
    assert shared_model(NAME, 2, load) is not first and load.loads == 2


def test_nothing_is_kept_from_a_failed_load_or_a_model_not_built(folder):
    def failing() -> object:
        raise OSError("disk")

    with pytest.raises(OSError, match="disk"):
        shared_model(NAME, 2, failing)
    load = Loader()
    shared_model(NAME, 2, load)
    assert load.loads == 1
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()  # not built: each ask loads (and builds)
    shared_model(NAME, 2, load)
    shared_model(NAME, 2, load)
    assert load.loads == 3


def test_an_unknown_model_is_refused_before_any_load(folder):
    from vaultsync.models.manifest import ManifestError

    load = Loader()
    with pytest.raises(ManifestError):
        shared_model("no-such-model", 2, load)
    assert load.loads == 0


def test_callers_at_once_load_once(folder):
    load = Loader()
    slow = lambda: (time.sleep(0.2), load())[1]  # noqa: E731
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(shared_model(NAME, 2, slow))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert load.loads == 1 and len({id(g) for g in got}) == 1


def test_the_index_and_search_share_the_real_embedder(model_env, monkeypatch):
    from vaultsync.index.embedding import default_embedder
    from vaultsync.vault.config import Config

    monkeypatch.setattr("vaultsync.models.shared._loaded", {})
    first = default_embedder(Config())
    assert default_embedder(Config(), NAME) is first
    assert first.embed_queries(["a question"]).shape == (1, first.dim)
