"""Is the index already at HEAD? Answered in a few milliseconds, for the hook path.

``vaultsync sync`` runs after every commit, checkout and merge; when nothing
changed it must return at once, so :func:`quick_is_current` imports nothing
heavy — not even pygit2 (~60 ms) or hashlib: one ``git rev-parse`` (:func:`vaultsync.git.run_git`)
and one SQLite read. The config is compared by blob id (:func:`config_key`), not by content.
"""

from __future__ import annotations

import json
import os
import sqlite3

from vaultsync import __version__
from vaultsync.gitcmd import run_git
from vaultsync.index.format import DEFAULT_TARGET_TOKENS, READER_VERSION, SCHEMA_FINGERPRINT, SCHEMA_VERSION
from vaultsync.sqlite_uri import connect_readonly

__all__ = ["CONFIG_NAME", "chunk_table_name", "config_at", "config_hash", "config_key", "config_text_at",
           "lance_tables_present", "quick_is_current"]

TYPE_CHECKING = False  # not typing's: the hook path imports neither typing nor pathlib
if TYPE_CHECKING:

    import pygit2

    from vaultsync.vault.config import Config

CONFIG_NAME = ".vaultsync.yaml"


def config_text_at(repo: pygit2.Repository, tree: pygit2.Tree | None) -> str:
    """The committed ``.vaultsync.yaml`` of ``tree`` as text (``""`` when absent).

    Raises:
        ConfigError: ``CF001`` when it is a folder or a submodule, not a file.
    """
    if tree is None or CONFIG_NAME not in tree:
        return ""
    entry = tree[CONFIG_NAME]
    if entry.type_str != "blob" or entry.filemode == 0o120000:
        from vaultsync.vault.config import config_is_a_folder

        raise config_is_a_folder({"commit": "a submodule", "tree": "a folder"}.get(entry.type_str, "a symbolic link"))
    blob = repo[entry.id]
    return blob.data.decode("utf-8", errors="replace").replace("\r\n", "\n")  # type: ignore[attr-defined]


def config_at(repo: pygit2.Repository, tree: pygit2.Tree | None) -> tuple[Config, str]:
    """The config committed in ``tree`` (defaults when absent), with the type schemas committed in
    ``tree`` (``schema_texts``: never the working tree's copies), and the text that shapes the index:
    the config's, then each committed schema's (what :func:`config_hash` fingerprints, so a committed
    schema change re-checks every note)."""
    from vaultsync.git import read_blob, workdir
    from vaultsync.vault.config import load_config, read_committed_schemas

    text = config_text_at(repo, tree)
    config = load_config(workdir(repo), text, lenient=True)  # ADR-0119, ADR-0129

    def kind(path: str) -> str | None:  # a schema only the working tree holds is missing: as a rebuild sees it
        entry = tree[path] if tree is not None and path in tree else None
        if entry is None:
            return None
        return ("link" if entry.filemode == 0o120000 else "file") if entry.type_str == "blob" else "folder"

    read_committed_schemas(config, kind, lambda path: read_blob(repo, tree[path].id))  # type: ignore[index]
    return config, text + "".join(f"\n# schema {k}\n{v}" for k, v in sorted(config.schema_texts.items()))


def config_warnings(config: Config) -> list[str]:
    """What a committed config left to its defaults, one warning each (the sync's report, status and every
    search say them): refused values of sections no index is built from (ADR-0119, ADR-0129) and an
    unknown ``checks.timezone``."""
    from vaultsync.vault.clock import zone_warning
    from vaultsync.vault.schema_words import ignored_setting

    return [*map(ignored_setting, config.ignored), *filter(None, [zone_warning(config)])]


def config_hash(config_text: str) -> str:
    """Fingerprint of what shapes the index besides the notes: the config, the vaultsync version,
    the SQLite schema version (a new schema rebuilds), the reader version (a new one re-reads every
    note) and the default chunk size (a changed default re-chunks every note)."""
    import hashlib

    shape = [config_text, __version__, SCHEMA_VERSION, READER_VERSION, DEFAULT_TARGET_TOKENS]
    return hashlib.sha256(json.dumps(shape).encode()).hexdigest()[:16]


def config_key(config_blob: str) -> str:
    """What :func:`config_hash` covers, with the committed config named by its blob id (``""``: none), for
    the hook path to compare without reading or hashing the config. Stored as ``meta.config_key``."""
    return f"{config_blob}|{__version__}|{SCHEMA_VERSION}|{READER_VERSION}|{DEFAULT_TARGET_TOKENS}"


def config_blob_id(tree: pygit2.Tree | None) -> str:
    """The blob id of the committed ``.vaultsync.yaml`` in ``tree`` (``""`` when absent)."""
    return str(tree[CONFIG_NAME].id) if tree is not None and CONFIG_NAME in tree else ""


def chunk_table_name(model: str, dim: int) -> str:
    """The LanceDB vector table of embedder ``model`` (its configured name) at ``dim`` dimensions."""
    slug = "".join(ch if ch.isalnum() else "_" for ch in model)
    return f"chunks_{slug}_{dim}"


def lance_tables_present(lance_dir: str | os.PathLike[str], embed_models: str) -> bool:
    """True when every vector table named by ``meta.embed_models`` (JSON ``{name: {id, dim}}``) has
    its folder under ``lance_dir``; False when one was deleted or the JSON is unreadable."""
    try:
        models = json.loads(embed_models or "{}")
        return all(os.path.isdir(os.path.join(lance_dir, f"{chunk_table_name(name, int(info['dim']))}.lance"))
                   for name, info in models.items() if info.get("dim"))
    except (ValueError, TypeError, KeyError, AttributeError):
        return False


def head_lookup(cwd: str | os.PathLike[str], *revs: str) -> tuple[list[str], str] | None:
    """One ``git rev-parse --absolute-git-dir REVS... HEAD:.vaultsync.yaml`` in ``cwd``: ([the git dir, then
    each rev's id], the committed config's blob id or ``""`` without one), or None when git cannot tell
    (not a repository, an unborn HEAD among ``revs``, git missing). Without a committed config git exits
    128 and echoes the last spec: that is read as "no config", never as an id."""
    spec = f"HEAD:{CONFIG_NAME}"
    try:
        res = run_git(["rev-parse", "--absolute-git-dir", *revs, spec], cwd, text=False)
    except OSError:
        return None
    lines = res.stdout.decode("utf-8", errors="replace").split("\n")
    if len(lines) < len(revs) + 2 or not os.path.isabs(lines[0]) or not all(map(_is_oid, lines[1:len(revs) + 1])):
        return None
    blob = lines[len(revs) + 1]
    if res.returncode != 0:
        if blob != spec:
            return None
        blob = ""
    elif not _is_oid(blob):
        return None
    return lines[:len(revs) + 1], blob


def quick_is_current(cwd: str | os.PathLike[str]) -> bool:
    """True when the index of the repository at ``cwd`` holds HEAD's tree and commit under the
    same config and schema, LanceDB included, no sync was asked for meanwhile, and its SQLite files are as
    the last sync left them. False when in doubt."""
    found = head_lookup(cwd, "HEAD", "HEAD^{tree}")
    if found is None:
        return False
    (git_dir, commit, tree_id), blob = found
    index_dir = os.path.join(git_dir, "vaultsync")
    sqlite_path = os.path.join(index_dir, "index.sqlite")
    if not os.path.exists(sqlite_path) or os.path.exists(os.path.join(index_dir, "dirty")):
        return False
    try:
        db = connect_readonly(sqlite_path, timeout=5)
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        finally:
            db.close()
    except sqlite3.Error:
        return False
    if meta.get("schema_fingerprint") != SCHEMA_FINGERPRINT:
        return False  # written by another version: the sync rebuilds it
    if not (meta.get("indexed_tree") == tree_id and meta.get("lance_tree") == tree_id
            and meta.get("indexed_commit") == commit and meta.get("config_key") == config_key(blob)
            and meta.get("retry_paths", "[]") == "[]"):  # a note whose blob was missing is read again
        return False
    # written since the last sync (a disk fault, a stray tool): the full sync checks its pages (ADR-0046)
    return lance_tables_present(os.path.join(index_dir, "lance"), meta.get("embed_models", "")) \
        and as_left(sqlite_path, os.path.join(index_dir, "sqlite.verified"))


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def file_signature(path: str | os.PathLike[str]) -> str:
    """Size, mtime (ns) and inode of the SQLite file at ``path`` and of its WAL: any write, truncation or
    replacement changes it; ``""`` parts for files that do not exist, and for an empty WAL (a reader's
    first open creates one: that is no write)."""
    parts = []
    for p in (os.fspath(path), f"{os.fspath(path)}-wal"):
        try:
            st = os.stat(p)
            parts.append(f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}" if st.st_size else "")
        except OSError:
            parts.append("")
    return "|".join(parts)


def record_as_left(path: str | os.PathLike[str], record: str | os.PathLike[str]) -> None:
    """Write :func:`file_signature` of the SQLite file at ``path`` into ``record``."""
    with open(record, "w", encoding="ascii") as f:
        f.write(file_signature(path))


def as_left(path: str | os.PathLike[str], record: str | os.PathLike[str]) -> bool:
    """True when the SQLite files at ``path`` still have the signature written into ``record``."""
    try:
        with open(record, encoding="ascii") as f:
            return f.read() == file_signature(path)
    except (OSError, ValueError):  # unreadable or damaged record: check the files
        return False
