"""Notes stored with Git LFS: a blob (or an unsmudged file) that holds a pointer, not the note.

A pointer (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md) is under 1024 bytes:
``version https://git-lfs.github.com/spec/v1``, then ``oid sha256:<64 hex>`` and ``size <bytes>``. The
content is in the repository's LFS store, ``<common git dir>/lfs/objects/<2 hex>/<2 hex>/<oid>`` (or
under ``lfs.storage``), where ``git lfs`` put it when the file was staged or fetched. It is read from
there, checked against its size and hash; the pointer text is never read as the note (field case: a
note in LFS was indexed and searched as its three pointer lines). Nothing is fetched: a clone that has
not run ``git lfs pull`` gets :class:`LfsObjectMissing`.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

LFS_POINTER = b"version https://git-lfs.github.com/spec/v1\n"
_MAX_POINTER = 1024
MAX_READ = 64 << 20  # bytes of LFS content read at most: above the 20 MB a note may hold (FM014)
_OID = re.compile(rb"^oid sha256:([0-9a-f]{64})$", re.MULTILINE)
_SIZE = re.compile(rb"^size ([0-9]{1,15})$", re.MULTILINE)


class LfsObjectMissing(KeyError):
    """The note is stored with Git LFS and its content is not in this clone's LFS store."""

    def __str__(self) -> str:
        return str(self.args[0])


def common_dir(git_dir: str | Path) -> Path:
    """The git dir shared by all worktrees (``.git`` of the main worktree) of the one at ``git_dir``."""
    gitdir = Path(git_dir)
    pointer = gitdir / "commondir"
    if pointer.is_file():
        return (gitdir / pointer.read_text(encoding="utf-8").strip()).resolve()
    return gitdir.resolve()


def lfs_content(git_dir: str | Path, data: bytes) -> bytes:
    """The content ``data`` points to when it is a Git LFS pointer, else ``data`` itself.

    Args:
        git_dir: the repository's git dir (a worktree's is fine).
    Raises:
        LfsObjectMissing: a pointer whose object is absent, or not the size and hash it names.
    """
    if not data.startswith(LFS_POINTER) or len(data) >= _MAX_POINTER:
        return data
    oid, size = _OID.search(data), _SIZE.search(data)
    if oid is None or size is None:
        return data  # not a pointer git-lfs wrote: the file's own text
    digest = oid.group(1).decode()
    obj = _store(str(git_dir)) / digest[:2] / digest[2:4] / digest
    declared = int(size.group(1))
    try:
        with obj.open("rb") as f:
            content = f.read(min(declared, MAX_READ) + 1)
    except OSError:
        content = None
    if content is not None and declared > MAX_READ and len(content) > MAX_READ:
        return content  # past any note's size: read no further (the note check says it is too large)
    if content is None or len(content) != declared or hashlib.sha256(content).hexdigest() != digest:
        raise LfsObjectMissing(f"stored with Git LFS, and its content (sha256 {digest[:12]}…) is not in this "
                               "clone: run `git lfs pull`")
    return content


@lru_cache(maxsize=8)
def _store(git_dir: str) -> Path:
    """The LFS object store: under ``lfs.storage`` from the repository's config when set, else ``lfs``."""
    import pygit2

    common = common_dir(git_dir)
    try:
        configured = pygit2.Repository(git_dir).config["lfs.storage"]
    except Exception:  # noqa: BLE001 - unset (KeyError) or an unreadable config: the default place
        configured = None
    return (common / configured if configured else common / "lfs") / "objects"
