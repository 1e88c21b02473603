"""Shared fixtures: real git repositories in temporary directories, and the CLI run in-process."""

from __future__ import annotations

import hashlib
import io
import os
import re
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from vaultsync.cli.main import main
from vaultsync.git import no_git_env, run_git

# Run from a git hook (a pre-commit hook in a linked worktree, say), the environment names the
# surrounding repository (GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE, ...): drop it for this process
# and every git, hook and CLI subprocess the tests start, so they act on their temporary repos only.
for _name in set(os.environ) - set(no_git_env()):
    del os.environ[_name]
# a machine without a global git identity (a fresh CI box) can still commit in the tests' repos
for _name, _value in (("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@example.com"),
                      ("GIT_COMMITTER_NAME", "t"), ("GIT_COMMITTER_EMAIL", "t@example.com")):
    os.environ.setdefault(_name, _value)

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"
EVAL = SHARED / "eval"

CONFIG = """vault: docs
types:
  adr: {folder: docs/adrs}
  incident: {folder: docs/incidents}
  rule: {folder: docs/rules}
vocabulary:
  tags: [database, search, ops, security]
ephemeral: ["**/scratch/**", "**/*.tmp.md"]
"""


class HashEmbedder:
    """Deterministic 16-dimensional unit vectors from a text's hash, for index tests that need no model;
    every text embedded is appended to ``record`` when one is given."""

    dim = 16

    def __init__(self, name: str, record: list[str] | None = None) -> None:
        self.name = name
        self.model_id = f"hash-{name}"
        self.record = record

    def embed_passages(self, texts):  # type: ignore[no-untyped-def]
        if self.record is not None:
            self.record.extend(texts)
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], np.uint8).astype(np.float32) + 1
                for t in texts]
        m = np.stack(rows) if rows else np.zeros((0, self.dim), np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)


class QueryHash(HashEmbedder):
    """:class:`HashEmbedder` that embeds queries the same way (a search needs both)."""

    def embed_queries(self, texts):  # type: ignore[no-untyped-def]
        return self.embed_passages(texts)


def hash_embedders(mp: pytest.MonkeyPatch, make=lambda name: QueryHash(name)) -> None:  # type: ignore[no-untyped-def]
    """Make every embedder a sync or search loads ``make(name)`` (no model files, no build), with an
    empty process-wide model memo for as long as ``mp`` holds (the real copies stay out of reach)."""
    from vaultsync.models.embedder import Embedder

    mp.setattr("vaultsync.index.embedding.current_model_id", lambda config, name: None)
    mp.setattr(Embedder, "load", lambda name=None, **kw: make(name or "multilingual-e5-small"))
    mp.setattr("vaultsync.models.shared._loaded", {})


@pytest.fixture
def hashed_models(monkeypatch):  # type: ignore[no-untyped-def]
    """Every embedder a sync or search loads is a :class:`QueryHash` (no model files, no build)."""
    hash_embedders(monkeypatch)


def adr(mid: str, title: str = "A decision", status: str = "accepted", extra: str = "", body: str = "Body.\n") -> str:
    """A schema-valid ADR note with optional extra frontmatter lines."""
    return (f"---\nmemory_id: {mid}\ntype: adr\ntitle: {title}\nstatus: {status}\n"
            f'created: "2024-03-01"\n{extra}---\n{body}')


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return [line for line in self.out.splitlines() if line and not re.match(r"\d+ notes? checked: ", line)]


def run_cli(args: list[str], cwd: Path) -> Result:
    """Run ``vaultsync ARGS`` in-process with ``cwd`` as the working directory."""
    out, err = io.StringIO(), io.StringIO()
    old = Path.cwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(args)
    finally:
        os.chdir(old)
    return Result(code, out.getvalue(), err.getvalue())


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True,
        timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """Run real git in ``cwd`` (author identity set; no hook environment leaks in)."""
    full_env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", **(env or {})}
    return run_git(args, cwd, env=full_env, check=check, timeout=timeout)


class Vault:
    """A temporary git repository holding a vault."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, rel: str, content: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
        return path

    def git(self, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
        return git(self.root, *args, **kw)  # type: ignore[arg-type]

    def commit(self, message: str = "c", *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        self.git("add", "-A")
        return self.git("commit", "-qm", message, *extra, env=env)

    def check(self, *args: str) -> Result:
        return run_cli(["check", *args], self.root)

    def synced(self) -> None:
        """``vaultsync sync`` in-process, which must succeed without a traceback."""
        res = run_cli(["sync", "--wait", "60"], self.root)
        assert res.code == 0 and "Traceback" not in res.err, res.err


def init_vault(root: Path, config: str = CONFIG) -> Vault:
    """A new git repository at ``root`` (created if missing) with ``config`` written, not committed."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    v = Vault(root)
    v.write(".vaultsync.yaml", config)
    return v


def hashed_index(root: Path, notes: dict[str, str], config: str = "vault: .\n") -> Path:
    """The SQLite index file of a new git repository at ``root`` holding ``notes`` (path → text) and
    ``config``, committed and synced with the :class:`HashEmbedder`."""
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.sync import sync

    v = init_vault(root, config)
    for path, text in notes.items():
        v.write(path, text)
    v.commit("notes")
    sync(open_repo(root), embedder_factory=lambda config, name: HashEmbedder(name), wait=30)
    return layout_for(open_repo(root)).sqlite


def synced_searcher(root: Path):  # type: ignore[no-untyped-def]
    """Sync ``root`` in-process with the real models and open a searcher over it (rerank off)."""
    from vaultsync.engine import open_searcher
    from vaultsync.git import open_repo
    from vaultsync.index.sync import sync
    from vaultsync.vault.config import Config

    sync(open_repo(root), wait=60)
    return open_searcher(open_repo(root), Config(), rerank="none")[0]


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    """An initialised git repo with the test config written."""
    return init_vault(tmp_path / "repo")


@pytest.fixture
def make_vault(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Vault]:
    """Build a repo from ``{path: content}`` (config included unless overridden)."""
    def build(files: dict[str, str | bytes]) -> Vault:
        root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        v = Vault(root)
        if ".vaultsync.yaml" not in files:
            v.write(".vaultsync.yaml", CONFIG)
        for rel, content in files.items():
            v.write(rel, content)
        return v
    return build


@pytest.fixture
def hooked(vault: Vault, model_env: Path) -> Vault:
    """``vault`` (config ``vault: docs``) with the git hook shims installed by ``vaultsync install``."""
    vault.write(".vaultsync.yaml", "vault: docs\n")
    res = subprocess.run([sys.executable, "-m", "vaultsync", "install"], cwd=vault.root, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return vault


def require_eval(name: str) -> Path:
    """The evaluation data folder ``name``, or skip the test cleanly."""
    path = EVAL / name
    if not path.is_dir():
        pytest.skip(f"evaluation data {path} is absent")
    return path


PY = sys.executable


# --- the real embedding model for index and search tests -------------------------------------

@pytest.fixture(scope="session")
def model_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built multilingual-e5-small; ``$VAULTSYNC_CACHE_DIR`` points at it for this process and
    every subprocess (git hooks, CLI) the tests start."""
    from models_fixtures import _STATE

    if "cache" not in _STATE:
        root = Path(os.environ.get("VAULTSYNC_CACHE_DIR") or tmp_path_factory.mktemp("vaultsync-cache"))
        from vaultsync.models.convert.build import build_model

        _STATE["build"] = build_model("multilingual-e5-small", cache_dir=root)
        _STATE["cache"] = root
    os.environ["VAULTSYNC_CACHE_DIR"] = str(_STATE["cache"])
    return Path(_STATE["cache"])


def factory_with(primary):  # type: ignore[no-untyped-def]
    """An embedder factory for ``sync()`` that reuses an already loaded primary embedder."""
    from vaultsync.index.embedding import default_embedder

    return lambda config, name: primary if name == getattr(primary, "name", "multilingual-e5-small") \
        else default_embedder(config, name)


@pytest.fixture(scope="session")
def embedder(model_env: Path):  # type: ignore[no-untyped-def]
    """The real embedder, loaded once per session."""
    from models_fixtures import _STATE

    if "embedder" not in _STATE:
        from vaultsync.models.embedder import Embedder

        _STATE["embedder"] = Embedder.load(cache_dir=model_env, threads=2)
    return _STATE["embedder"]


def prepare_eval_workspace(data: Path, tmp: Path, embedder, folders=None) -> Path:  # type: ignore[no-untyped-def]
    """An evaluation dataset's vault committed and indexed with the default embedders (the harness's workspace)."""
    from vaultsync.eval.harness import prepare_workspace
    from vaultsync.git import open_repo
    from vaultsync.index.embedding import DEFAULT_EMBEDDERS
    from vaultsync.index.sync import sync

    return prepare_workspace(data, tmp, DEFAULT_EMBEDDERS, None, folders=folders,
                             sync_fn=lambda r: sync(open_repo(r), embedder_factory=factory_with(embedder), wait=600))


@pytest.fixture(scope="session")
def obsidian_workspace(tmp_path_factory: pytest.TempPathFactory, embedder) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """(dataset folder, indexed workspace) of the Obsidian help vault, built once per session: its
    embedding cache also serves the tests that index the same notes through the hooks."""
    data = require_eval("obsidian-help")
    return data, prepare_eval_workspace(data, tmp_path_factory.mktemp("eval"), embedder)


def index_state(root: Path) -> dict[str, object]:
    """Everything the derived index holds, keyed so that two indices of the same commit compare
    equal whatever sequence of syncs built them (SQLite rowids and LanceDB row order aside)."""
    import json as _json
    import sqlite3

    import numpy as np

    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for

    layout = layout_for(open_repo(root))
    db = sqlite3.connect(layout.sqlite)
    try:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        state: dict[str, object] = {
            "notes": sorted(db.execute("SELECT * FROM notes")),
            "chunks": sorted(db.execute(
                "SELECT id, path, n, heading, text, norm, hash, start_line, end_line, tokens, blocks FROM chunks")),
            "lance_tree": meta.get("lance_tree"),
            "chunks_fts": sorted(db.execute(
                "SELECT c.id, f.title, f.heading, f.text FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid")),
            "notes_fts": sorted(db.execute("SELECT path, title, body FROM notes_fts")),
            "links": sorted(db.execute("SELECT source, target, anchor, kind, resolved, line FROM links"),
                            key=lambda r: _json.dumps(r)),
            "indexed_tree": meta.get("indexed_tree"),
            "blocks": sorted(db.execute("SELECT id, path, hash, spans, vectors FROM blocks")),
        }
    finally:
        db.close()
    from vaultsync.index.sqlite_store import SqliteStore

    store = SqliteStore(layout.sqlite, readonly=True)
    models = [model for (model,) in store.db.execute("SELECT DISTINCT model FROM vectors ORDER BY model")]
    vectors = {model: store.all_vectors(model) for model in models}
    store.close()
    state["vector_ids"] = {model: ids for model, (ids, _, _, _) in vectors.items()}
    state["vectors"] = {model: np.stack([np.frombuffer(b, "<f4") for b in blobs]) for model, (_, _, _, blobs)
                        in vectors.items()}
    return state


def assert_same_index(a: dict[str, object], b: dict[str, object]) -> None:
    """Two :func:`index_state` results are the same index (vectors within float tolerance)."""
    import numpy as np

    for key in a:
        if key == "vectors":
            assert a[key].keys() == b[key].keys()  # type: ignore[union-attr]
            for model in a[key]:  # type: ignore[union-attr]
                np.testing.assert_allclose(a[key][model], b[key][model], atol=1e-5)  # type: ignore[index]
        else:
            assert a[key] == b[key], key
