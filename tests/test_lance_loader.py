"""LanceDB imported without its REST client's package ``__init__`` (ADR-0125): every LanceDB operation a
sync and a search make runs without it, a caller that reads the package gets it whole, and the deferral
changes nothing where it cannot apply."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from conftest import adr

from vaultsync.index.lance_loader import _defer_init

API = "lance_namespace_urllib3_client.api"

# A vault past the ANN threshold: the sync builds the vector index, compacts, and the search reads it.
SCRIPT = textwrap.dedent("""
    import json, sys
    import pytest
    from conftest import hash_embedders
    from vaultsync.engine import open_searcher
    from vaultsync.git import open_repo
    from vaultsync.index.sync import sync
    from vaultsync.search.options import SearchOptions
    from vaultsync.vault.config import Config

    mp = pytest.MonkeyPatch()
    hash_embedders(mp)
    repo = open_repo(sys.argv[1])
    sync(repo, wait=60)
    sync(repo, rebuild=True, wait=60)
    searcher = open_searcher(repo, Config(), rerank="none")[0]
    hits = searcher.search("replica latency", SearchOptions(top_k=3, min_relevance=0.0)).hits
    import sqlite3
    from vaultsync.index.layout import layout_for
    with sqlite3.connect(layout_for(repo).sqlite) as db:
        meta = dict(db.execute("SELECT key, value FROM meta"))
    print(json.dumps({"api": "%s" in sys.modules, "lancedb": "lancedb" in sys.modules,
                      "ann": meta["lance_ann"], "hits": len(hits)}))
""" % API)


def test_a_sync_and_an_ann_search_never_run_the_rest_clients_init(make_vault):
    words = "cache index shard replica latency budget rollout canary queue retry".split()
    notes = {f"docs/adr/ADR-{i:04d}.md": adr(f"ADR-{i:04d}", f"Decision {i}", body="".join(
        f"## Part {j}\n{' '.join(words[(i + j + k) % len(words)] for k in range(30))}.\n\n" for j in range(5)))
        for i in range(60)}
    v = make_vault({".vaultsync.yaml": "vault: docs\nindex:\n  ann_min_rows: 256\n", **notes})
    v.commit("init")
    tests = Path(__file__).parent
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(v.root)], cwd=tests, capture_output=True,
                         text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(tests)})
    assert out.returncode == 0, out.stderr
    state = json.loads(out.stdout.splitlines()[-1])
    assert "multilingual-e5-small" in json.loads(state.pop("ann"))  # the search read the ANN index
    assert state == {"api": False, "lancedb": True, "hits": 3}


def test_reading_the_package_runs_its_init_once_and_whole():
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from vaultsync.index.lance_loader import import_lancedb
        import_lancedb()
        before = "{API}" in sys.modules
        import lance_namespace_urllib3_client as client
        names = client.ApiClient.__name__, client.Configuration.__name__
        print(before, "{API}" in sys.modules, *names)
    """)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "ApiClient", "Configuration"]


def _package(root: Path, name: str, init: str) -> None:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text(init, encoding="utf-8")
    (root / name / "models.py").write_text("MODEL = 'model'\n", encoding="utf-8")


@pytest.fixture
def on_path(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.syspath_prepend(str(tmp_path))
    names: list[str] = []
    yield tmp_path, names
    for name in list(sys.modules):
        if name.split(".")[0] in names:
            del sys.modules[name]


def test_submodules_import_without_the_init_and_threads_run_it_once(on_path):
    root, names = on_path
    names += ["vs_deferred", "vs_runs"]
    (root / "vs_runs.py").write_text("count = []\n", encoding="utf-8")
    _package(root, "vs_deferred", "import time, vs_runs\nvs_runs.count.append(1)\ntime.sleep(0.05)\nVALUE = 7\n")
    _defer_init("vs_deferred")
    from vs_deferred.models import MODEL  # type: ignore[import-not-found]

    import vs_runs  # type: ignore[import-not-found]

    assert MODEL == "model" and vs_runs.count == []
    import vs_deferred  # type: ignore[import-not-found]

    seen: list[int] = []
    threads = [threading.Thread(target=lambda: seen.append(vs_deferred.VALUE)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [7] * 8 and vs_runs.count == [1]
    with pytest.raises(AttributeError, match="no attribute 'ABSENT'"):
        vs_deferred.ABSENT  # noqa: B018


def test_an_init_that_fails_fails_as_an_import_does(on_path):
    root, names = on_path
    names.append("vs_broken")
    _package(root, "vs_broken", "raise ImportError('needs a server')\n")
    _defer_init("vs_broken")
    import vs_broken  # type: ignore[import-not-found]

    with pytest.raises(ImportError, match="needs a server"):
        vs_broken.anything  # noqa: B018
    assert "vs_broken" not in sys.modules


@pytest.mark.parametrize("case", ["absent", "module", "imported"])
def test_nothing_changes_where_the_deferral_cannot_apply(on_path, case):
    root, names = on_path
    names.append("vs_plain")
    if case == "module":
        (root / "vs_plain.py").write_text("VALUE = 1\n", encoding="utf-8")
    elif case == "imported":
        _package(root, "vs_plain", "VALUE = 1\n")
        import vs_plain  # type: ignore[import-not-found]  # noqa: F401
    before = sys.modules.get("vs_plain")
    _defer_init("vs_plain")
    assert sys.modules.get("vs_plain") is before
