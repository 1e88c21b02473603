"""Is the index already at HEAD? Answered with pygit2 and sqlite3 only, for the hook path.

``vaultsync sync`` runs after every commit, checkout and merge; when nothing
changed it must return in a few tens of milliseconds, so this module imports
nothing heavy (no numpy, jsonschema, onnxruntime or LanceDB).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pygit2

from vaultsync import __version__

CONFIG_NAME = ".vaultsync.yaml"


def config_text_at(repo: pygit2.Repository, tree: pygit2.Tree | None) -> str:
    """The committed ``.vaultsync.yaml`` of ``tree`` as text (``""`` when absent)."""
    if tree is None or CONFIG_NAME not in tree:
        return ""
    blob = repo[tree[CONFIG_NAME].id]
    return blob.data.decode("utf-8", errors="replace").replace("\r\n", "\n")  # type: ignore[attr-defined]


def config_hash(config_text: str) -> str:
    """Fingerprint of what shapes the index besides the notes: the config and the vaultsync version."""
    return hashlib.sha256(json.dumps([config_text, __version__]).encode()).hexdigest()[:16]


def head_tree(repo: pygit2.Repository) -> pygit2.Tree | None:
    try:
        return repo.head.peel(pygit2.Commit).tree
    except (pygit2.GitError, KeyError):
        return None


def index_is_current(repo: pygit2.Repository, sqlite_path: Path) -> bool:
    """True when the index holds HEAD's tree under the same config, LanceDB included."""
    if not sqlite_path.exists():
        return False
    tree = head_tree(repo)
    try:
        db = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True, timeout=5)
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        finally:
            db.close()
    except sqlite3.Error:
        return False
    tree_id = str(tree.id) if tree is not None else ""
    return ("indexed_tree" in meta and meta["indexed_tree"] == tree_id and meta.get("lance_tree") == tree_id
            and meta.get("config_hash") == config_hash(config_text_at(repo, tree))
            and meta.get("indexed_commit") == (str(repo.head.target) if tree is not None else ""))
