"""Is the index already at HEAD? Answered in a few milliseconds, for the hook path.

``vaultsync sync`` runs after every commit, checkout and merge; when nothing
changed it must return at once, so :func:`quick_is_current` imports nothing
heavy — not even pygit2 (~60 ms): two ``git`` plumbing calls (:func:`vaultsync.git.run_git`)
and one SQLite read.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from vaultsync import __version__
from vaultsync.git import run_git
from vaultsync.index.format import DEFAULT_TARGET_TOKENS, SCHEMA_FINGERPRINT, SCHEMA_VERSION
from vaultsync.sqlite_uri import readonly_uri

__all__ = ["CONFIG_NAME", "chunk_table_name", "config_at", "config_hash", "config_text_at", "lance_tables_present",
           "quick_is_current"]

if TYPE_CHECKING:
    import pygit2

    from vaultsync.vault.config import Config

CONFIG_NAME = ".vaultsync.yaml"


def config_text_at(repo: pygit2.Repository, tree: pygit2.Tree | None) -> str:
    """The committed ``.vaultsync.yaml`` of ``tree`` as text (``""`` when absent)."""
    if tree is None or CONFIG_NAME not in tree:
        return ""
    blob = repo[tree[CONFIG_NAME].id]
    return blob.data.decode("utf-8", errors="replace").replace("\r\n", "\n")  # type: ignore[attr-defined]


def config_at(repo: pygit2.Repository, tree: pygit2.Tree | None) -> tuple[Config, str]:
    """The config committed in ``tree`` (defaults when absent) and its text."""
    from vaultsync.git import workdir
    from vaultsync.vault.config import load_config

    text = config_text_at(repo, tree)
    return load_config(workdir(repo), text), text


def config_hash(config_text: str) -> str:
    """Fingerprint of what shapes the index besides the notes: the config, the vaultsync version,
    the SQLite schema version (a new schema rebuilds) and the default chunk size (a changed
    default re-chunks every note)."""
    return hashlib.sha256(json.dumps([config_text, __version__, SCHEMA_VERSION, DEFAULT_TARGET_TOKENS])
                          .encode()).hexdigest()[:16]


def chunk_table_name(model: str, dim: int) -> str:
    """The LanceDB vector table of embedder ``model`` (its configured name) at ``dim`` dimensions."""
    slug = "".join(ch if ch.isalnum() else "_" for ch in model)
    return f"chunks_{slug}_{dim}"


def lance_tables_present(lance_dir: Path, embed_models: str) -> bool:
    """True when every vector table named by ``meta.embed_models`` (JSON ``{name: {id, dim}}``) has
    its folder under ``lance_dir``; False when one was deleted or the JSON is unreadable."""
    try:
        models = json.loads(embed_models or "{}")
        return all((lance_dir / f"{chunk_table_name(name, int(info['dim']))}.lance").is_dir()
                   for name, info in models.items() if info.get("dim"))
    except (ValueError, TypeError, KeyError, AttributeError):
        return False


def _git(cwd: Path, *args: str) -> str | None:
    try:
        res = run_git(args, cwd, text=False)
    except OSError:
        return None
    return res.stdout.decode("utf-8", errors="replace") if res.returncode == 0 else None


def quick_is_current(cwd: Path) -> bool:
    """True when the index of the repository at ``cwd`` holds HEAD's tree and commit under the
    same config and schema, LanceDB included, and no sync was asked for meanwhile. False when in doubt."""
    out = _git(cwd, "rev-parse", "--absolute-git-dir", "HEAD", "HEAD^{tree}")
    if out is None:
        return False
    git_dir, commit, tree_id = (out.split("\n") + ["", "", ""])[:3]
    index_dir = Path(git_dir) / "vaultsync"
    sqlite_path = index_dir / "index.sqlite"
    if not sqlite_path.exists() or (index_dir / "dirty").exists():
        return False
    try:
        db = sqlite3.connect(readonly_uri(sqlite_path), uri=True, timeout=5)
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        finally:
            db.close()
    except sqlite3.Error:
        return False
    if meta.get("schema_fingerprint") != SCHEMA_FINGERPRINT:
        return False  # written by another version: the sync rebuilds it
    if not (meta.get("indexed_tree") == tree_id and meta.get("lance_tree") == tree_id
            and meta.get("indexed_commit") == commit):
        return False
    if not lance_tables_present(index_dir / "lance", meta.get("embed_models", "")):
        return False
    config = _git(cwd, "cat-file", "blob", f"HEAD:{CONFIG_NAME}") or ""
    return meta.get("config_hash") == config_hash(config.replace("\r\n", "\n"))
