"""Every git access of vaultsync: repository discovery and file snapshots.

A *snapshot* is a read-only view of the vault's files at one moment: the
working tree, the staged index (``GIT_INDEX_FILE`` honoured, which pygit2
itself ignores), or a commit's tree. Snapshots list regular files only:
symlinks (mode 120000) and submodules (gitlinks, mode 160000) are never read
(field case GH-12). Content of index and tree snapshots comes from blobs, never
from disk, so a case-insensitive file system or an unstaged edit cannot leak
in (GH-04, GH-09).

Every ``git`` command vaultsync starts goes through :func:`run_git`, with the
environment of :func:`no_git_env`: a git hook exports ``GIT_DIR``,
``GIT_INDEX_FILE``, ``GIT_WORK_TREE`` and more, and a child git that inherits them
acts on the hook's repository instead of the one its ``cwd`` names. Only
:class:`IndexSnapshot` reads ``GIT_INDEX_FILE`` on purpose (``check --staged``).
pygit2 is imported on first use, so the hook fast path can call git without it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    import pygit2

from vaultsync.gitcmd import GIT_ENV_KEPT, no_git_env, run_git  # noqa: F401 - the git layer's API
from vaultsync.gitignore import IgnoredUntracked, is_ignored  # noqa: F401 - the git layer's API
from vaultsync.gitopen import (  # noqa: F401 - the git layer's API
    open_repo,
    partial_clone,
    unreadable_repository,
    why_not_opened,
)
from vaultsync.lfs import LFS_POINTER, lfs_content
from vaultsync.symlinks import symlinked_part


def _regular_modes() -> tuple[int, int]:
    import pygit2

    return (pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE)


def workdir(repo: pygit2.Repository) -> Path:
    """The repository's working-tree root (the git dir's parent for a bare repo)."""
    return Path(repo.workdir or Path(repo.path).parent).resolve()


_SURROGATE_ESCAPE = re.compile("[\udc80-\udcff]")


def is_valid_utf8_path(path: str) -> bool:
    """False when a path decoded from git holds surrogate escapes (non-UTF-8 bytes, GH-05)."""
    return path.isascii() or _SURROGATE_ESCAPE.search(path) is None


def printable_path(path: str) -> str:
    """The path with undecodable bytes shown as ``?``."""
    return "".join("?" if "\udc80" <= ch <= "\udcff" else ch for ch in path)


def head_tree(repo: pygit2.Repository) -> pygit2.Tree | None:
    """HEAD's tree, or None on an unborn branch."""
    import pygit2

    try:
        return repo.head.peel(pygit2.Commit).tree
    except (pygit2.GitError, KeyError):
        return None


def head_commit_id(repo: pygit2.Repository) -> str | None:
    """HEAD's commit id as hex, or None on an unborn branch."""
    import pygit2

    try:
        return str(repo.head.target)
    except (pygit2.GitError, KeyError):
        return None


def read_blob(repo: pygit2.Repository, oid: pygit2.Oid | str) -> bytes:
    """The bytes of blob ``oid``, read straight from the object database (no object is built).

    A Git LFS pointer is read as the content it points to (:mod:`vaultsync.lfs`).

    Raises:
        KeyError: no such object (:class:`vaultsync.lfs.LfsObjectMissing`: the LFS content is not here);
        ValueError: the object is not a blob.
    """
    kind, data = repo.odb.read(oid)
    if kind != 3:  # GIT_OBJECT_BLOB
        raise ValueError(f"object {oid} is not a file's content")
    return lfs_content(repo.path, data) if data.startswith(LFS_POINTER) else data  # type: ignore[no-any-return]


class Snapshot(Protocol):
    """A read-only set of files: ``paths()`` lists them, ``read(path)`` returns bytes; ``symlinks()`` lists
    the symbolic links, which are never read (a link may name one: Obsidian shows it as a note)."""

    def paths(self) -> list[str]: ...

    def read(self, path: str) -> bytes: ...

    def symlinks(self) -> list[str]: ...


class _EntriesSnapshot:
    """Files from an index-like list of (path, oid) entries."""

    def __init__(self, repo: pygit2.Repository, entries: Iterable[pygit2.IndexEntry | IndexEntry]) -> None:
        self._repo = repo
        self._oids: dict[str, pygit2.Oid] = {}
        self._links: dict[str, pygit2.Oid] = {}
        regular = _regular_modes()
        for entry in entries:
            if entry.mode in regular:
                self._oids[entry.path] = entry.id
            elif entry.mode == stat.S_IFLNK:  # 0o120000
                self._links[entry.path] = entry.id

    def paths(self) -> list[str]:
        return list(self._oids)

    def symlinks(self) -> list[str]:
        return list(self._links)

    def link_target(self, path: str) -> str:
        """What the symbolic link ``path`` holds (its target, never followed)."""
        return read_blob(self._repo, self._links[path]).decode("utf-8", "surrogateescape")

    def read(self, path: str) -> bytes:
        return read_blob(self._repo, self._oids[path])

    def oid(self, path: str) -> str:
        """The blob id (hex) of ``path``."""
        return str(self._oids[path])

    @property
    def git_dir(self) -> str:
        """The repository's git dir, where another process can read the blobs from."""
        return str(self._repo.path)


class IndexEntry(NamedTuple):
    """An index entry as :class:`_EntriesSnapshot` reads it (pygit2's have the same fields)."""

    path: str
    mode: int
    id: pygit2.Oid


def index_entries(repo: pygit2.Repository, index_file: Path | None = None) -> list[IndexEntry]:
    """The entries of ``index_file``, else of the repository's index. libgit2 cannot read every index
    git writes (a sparse index's ``sdir`` extension, ``git sparse-checkout --sparse-index``): then
    ``git ls-files -s``, which expands it, lists them. Raises ``pygit2.GitError`` when neither can."""
    return _staged(repo, index_file)[0]


def _staged(repo: pygit2.Repository, index_file: Path | None) -> tuple[list[IndexEntry], list[str]]:
    """(:func:`index_entries`, the paths held in conflict: stages 1-3 of a merge left unresolved), from one
    read of the index."""
    import pygit2

    env = {"GIT_INDEX_FILE": str(index_file)} if index_file else {}
    try:
        index = pygit2.Index(str(index_file)) if index_file else repo.index
        if index_file is None:
            index.read(False)
        conflicts = index.conflicts
        unmerged = sorted({next(e for e in stages if e is not None).path for stages in conflicts or ()})
        return _without_intent_to_add(repo, [IndexEntry(e.path, e.mode, e.id) for e in index], env), unmerged
    except pygit2.GitError:
        done = run_git(["ls-files", "-s", "-z"], workdir(repo), env=env, text=False)
        if done.returncode != 0:
            raise
    entries, conflicted = [], set()
    for record in done.stdout.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        if name:
            mode, oid, stage = meta.split()
            entries.append(IndexEntry(os.fsdecode(name), int(mode, 8), pygit2.Oid(hex=oid.decode())))
            if stage != b"0":
                conflicted.add(os.fsdecode(name))
    return _without_intent_to_add(repo, entries, env), sorted(conflicted)


def _without_intent_to_add(repo: pygit2.Repository, entries: list[IndexEntry],
                           env: dict[str, str]) -> list[IndexEntry]:
    """``entries`` less those ``git add -N`` made: placeholders (the empty blob) that no commit takes.

    ``git status`` compares the index with HEAD as a commit would, where a placeholder is absent: an
    entry it reports deleted from the index (``D?``: HEAD has the path), or unchanged from HEAD though
    HEAD lacks the path (``.A`` while the file is there, ``.D`` once it is deleted too), is one. git runs
    only when some entry holds the empty blob, on those paths alone (the hook stays fast)."""
    import pygit2

    empty = pygit2.hash(b"")
    candidates = [e.path for e in entries if e.id == empty]
    if not candidates:
        return entries
    pathspec = ["--", *candidates] if len(candidates) <= 256 else []
    done = run_git(["--literal-pathspecs", "status", "--porcelain=v2", "-z", "--no-renames", "--untracked-files=no",
                    "--ignore-submodules=all", *pathspec], workdir(repo), env={**env, "GIT_OPTIONAL_LOCKS": "0"},
                   text=False)  # never refresh (rewrite) the index a commit in progress holds
    if done.returncode != 0:
        return entries
    try:
        head = None if repo.head_is_unborn else repo.head.peel(pygit2.Tree)
    except pygit2.GitError:
        head = None
    placeholders = set()
    for record in done.stdout.split(b"\0"):
        fields = record.split(b" ", 8)
        if len(fields) == 9 and fields[0] == b"1":
            path, staged = os.fsdecode(fields[8]), fields[1][:1]
            if staged == b"D" or (staged == b"." and (head is None or path not in head)):
                placeholders.add(path)
    return [e for e in entries if e.id != empty or e.path not in placeholders]


class IndexSnapshot(_EntriesSnapshot):
    """What is staged: the index file named by ``GIT_INDEX_FILE``, else the repository's. ``unmerged``: the
    paths it holds in conflict (stages 1-3 of a merge git left unresolved), whose entries say nothing."""

    def __init__(self, repo: pygit2.Repository) -> None:
        index_file = os.environ.get("GIT_INDEX_FILE")
        path = None
        if index_file:
            path = Path(index_file)
            if not path.is_absolute():  # hooks run at the work tree root
                path = workdir(repo) / path
        entries, self.unmerged = _staged(repo, path)
        super().__init__(repo, entries)


class TreeSnapshot(_EntriesSnapshot):
    """The files of one tree (a commit's content)."""

    def __init__(self, repo: pygit2.Repository, tree: pygit2.Tree | None) -> None:
        import pygit2

        index = pygit2.Index()
        if tree is not None:
            index.read_tree(tree)
        super().__init__(repo, index)


def _sparse(repo: pygit2.Repository) -> bool:
    """Whether the working tree is a sparse checkout (``git sparse-checkout``)."""
    import pygit2

    try:
        return "core.sparseCheckout" in repo.config and repo.config.get_bool("core.sparseCheckout")
    except (pygit2.GitError, ValueError):
        return False


class WorktreeSnapshot:
    """Files on disk under ``roots`` (repo-relative), minus git-ignored ones that git does not track (a
    tracked file is never ignored: ``git add -f``), dot-folders and nested repositories (submodules);
    overlapping roots list a file once. In a sparse checkout, the files
    the index holds outside the checked-out folders count too, read from the index (the notes a
    link may name are all there, only not on disk)."""

    def __init__(self, root: Path, roots: Iterable[str] = (".",), repo: pygit2.Repository | None = None) -> None:
        self._root, self._git_dir = root, repo.path if repo is not None else None
        seen: set[str] = set()
        self._paths: list[str] = []
        self._links: list[str] = []
        ignored = self._ignored = IgnoredUntracked(repo)
        self._repo, self._sparse_tree = repo, (None if repo is not None and _sparse(repo) else {})
        for folder in roots:
            base = root if folder == "." else root / folder
            if folder != "." and (link := symlinked_part(root, folder)):  # never walked: it may lead anywhere
                self._links += [link] if link not in self._links else []
                continue
            for dirpath, dirnames, filenames in os.walk(base):
                rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
                rel_dir = "" if rel_dir == "." else rel_dir + "/"
                self._links += [rel_dir + d for d in sorted(dirnames)  # a link to a folder: git records a symlink
                                if os.path.islink(os.path.join(dirpath, d)) and not ignored(rel_dir + d, rel_dir)]
                dirnames[:] = sorted(
                    d for d in dirnames
                    if not d.startswith(".") and not ignored(rel_dir + d + "/", rel_dir)
                    and not os.path.lexists(os.path.join(dirpath, d, ".git"))  # a submodule or nested repo
                )
                for name in sorted(filenames):
                    rel = rel_dir + name
                    full = os.path.join(dirpath, name)
                    try:
                        mode = os.lstat(full).st_mode
                    except OSError:
                        continue
                    if (stat.S_ISREG(mode) or stat.S_ISLNK(mode)) and rel not in seen and not ignored(rel, rel_dir):
                        seen.add(rel)
                        (self._paths if stat.S_ISREG(mode) else self._links).append(rel)
        self._staged: dict[str, pygit2.Oid] = {}  # a sparse checkout's files left out of the tree on disk
        if repo is not None and _sparse(repo):
            import pygit2

            folders = [f.strip("/") for f in roots]
            for entry in repo.index:
                path = entry.path
                if (path in seen or os.path.lexists(root / path)
                        or not any(f in ("", ".") or path.startswith(f + "/") for f in folders)):
                    continue
                seen.add(path)
                (self._links if entry.mode == pygit2.GIT_FILEMODE_LINK else self._paths).append(path)
                self._staged[path] = entry.id

    def paths(self) -> list[str]:
        return list(self._paths)

    def symlinks(self) -> list[str]:
        return list(self._links)

    def link_target(self, path: str) -> str:
        """What the symbolic link ``path`` holds (its target, never followed). Raises OSError."""
        if path in self._staged:
            return read_blob(self._repo, self._staged[path]).decode("utf-8", "surrogateescape")
        return os.readlink(self._root / path)

    def holds(self, path: str) -> str | None:
        """What ``path``, which the walk did not list, is on disk (metadata only): ``"link"``, ``"file"``,
        ``"folder"`` (one holding a file) or None: missing, unreadable, in ``.git``, or ignored by git and
        not tracked. In a sparse checkout, a file the index holds is one. What a link may lead to."""
        if path == ".git" or path.startswith(".git/"):
            return None
        if self._sparse_tree is None:  # a sparse checkout: what it leaves out is in the index
            kinds = {e.path: "link" if e.mode == stat.S_IFLNK else "file" for e in self._repo.index}
            self._sparse_tree = {p[:i]: "folder" for p in kinds for i, c in enumerate(p) if c == "/"} | kinds
        if path in self._sparse_tree and not os.path.lexists(self._root / path):
            return self._sparse_tree[path]
        full, parent = self._root / path, path.rpartition("/")[0] + "/" if "/" in path else ""
        try:
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                return "link"
            if stat.S_ISREG(mode) and not self._ignored(path, parent):
                return "file"
            if stat.S_ISDIR(mode) and not self._ignored(path + "/", parent):
                return "folder" if any(names for _, _, names in os.walk(full)) else None
        except (OSError, ValueError):
            pass
        return None

    def read(self, path: str) -> bytes:
        if path in self._staged:  # outside the sparse checkout: as the index holds it
            return read_blob(self._repo, self._staged[path])
        data = (self._root / path).read_bytes()
        if data.startswith(LFS_POINTER) and self._git_dir:  # git-lfs is not installed here, or did not smudge it
            return lfs_content(self._git_dir, data)
        return data


def first_parent_ancestors(repo: pygit2.Repository, start: str, limit: int) -> list[str]:
    """Commit ids (hex) from ``start`` back along first parents, ``start`` first, at most ``limit`` of them.

    Stops early at a root commit or where history is cut (a shallow clone's boundary, a missing object).
    """
    import pygit2

    out: list[str] = []
    try:
        commit = repo[start].peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return out
    while len(out) < limit:
        out.append(str(commit.id))
        try:
            parent_ids = commit.parent_ids
            if not parent_ids:
                break
            commit = repo[parent_ids[0]].peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):  # shallow boundary
            break
    return out


def config_value(repo: pygit2.Repository, key: str) -> str | None:
    """``git config KEY`` as git resolves it for ``repo`` (local, global and system files), or None."""
    import pygit2

    try:
        value = repo.config[key]
    except (KeyError, pygit2.GitError, ValueError):
        return None
    return str(value) if value else None
