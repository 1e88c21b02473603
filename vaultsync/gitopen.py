"""Finding and opening the repository a command runs in (pygit2 imported on first use).

A ``.git`` file (``git init --separate-git-dir``, worktrees, submodules) names the git dir; the
working tree is where that file sits. Outside every repository, ``GIT_DIR`` and ``GIT_WORK_TREE``
name one as they do for git.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pygit2


def discover(start: Path | str) -> str | None:
    """The git dir of the repository holding ``start``, searched upwards as git searches: never into a
    folder ``GIT_CEILING_DIRECTORIES`` names (``:``-separated), never across a file system. Raises
    pygit2.GitError or OSError where a ``.git`` file cannot be read."""
    import pygit2

    ceiling = os.environ.get("GIT_CEILING_DIRECTORIES")
    return pygit2.discover_repository(str(start), False, ceiling) if ceiling else pygit2.discover_repository(str(start))


def open_repo(start: Path | str = ".") -> pygit2.Repository | None:
    """The repository containing ``start``, or None.

    Opened from ``start`` itself, so a ``.git`` file (``git init --separate-git-dir``, worktrees,
    submodules) gives the working tree it sits in, not the git dir's parent. Outside every repository,
    ``GIT_DIR`` (and ``GIT_WORK_TREE``) name one as they do for git (a bare "dotfiles" repository).
    """
    import pygit2

    try:
        found = discover(start)
    except (pygit2.GitError, OSError):
        return None
    if found is None:
        return _from_environment()
    for where in (str(start), found):
        try:
            return pygit2.Repository(where)
        except (pygit2.GitError, OSError):
            continue
    return None


def _from_environment() -> pygit2.Repository | None:
    """The repository ``GIT_DIR`` names, with ``GIT_WORK_TREE`` as its working tree when set; None without."""
    import pygit2

    git_dir = os.environ.get("GIT_DIR")
    if not git_dir:
        return None
    try:
        repo = pygit2.Repository(str(Path(git_dir).resolve()))
    except (pygit2.GitError, OSError):
        return None
    if os.environ.get("GIT_WORK_TREE"):
        repo.workdir = str(Path(os.environ["GIT_WORK_TREE"]).resolve())
    return repo


def unreadable_repository(start: Path | str = ".") -> str | None:
    """Why the repository at ``start`` cannot be opened, when there is one that the installed libgit2
    cannot read (SHA-256 object ids, a malformed ``.git`` file, a damaged config); None when ``start``
    is simply not inside a repository, or it opens."""
    import pygit2

    try:
        found = discover(start)
    except (pygit2.GitError, OSError) as exc:  # e.g. a malformed `.git` file
        return f"cannot read the repository: {str(exc).split(': ', 1)[-1]}"
    if found is None:
        return None
    try:
        pygit2.Repository(found)
    except (pygit2.GitError, OSError) as exc:
        where = f"cannot read the repository at {found.rstrip('/')}"
        if "object format" in str(exc):
            return (f"{where}: {str(exc).split(': ', 1)[-1]} (the installed libgit2 "
                    f"{pygit2.LIBGIT2_VERSION} reads SHA-1 repositories only)")
        return f"{where}: {exc}"
    return None


def partial_clone(where: str) -> bool:
    """Whether the repository at ``where`` (its work tree or git dir) is a partial clone (``git clone
    --filter``): a blob may be absent on purpose, fetched from a promisor remote when git reads it."""
    import pygit2

    try:
        config = pygit2.Repository(where).config
        return "extensions.partialclone" in config or any(
            e.name.startswith("remote.") and e.name.endswith(".promisor") and config.get_bool(e.name) for e in config)
    except (pygit2.GitError, ValueError, OSError):
        return False


def why_not_opened(start: Path | str = ".") -> str:
    """Why :func:`open_repo` found no repository at ``start``, in words for the user."""
    if os.environ.get("GIT_DIR"):
        return f"not inside a git repository, and GIT_DIR={os.environ['GIT_DIR']} names none that opens"
    return unreadable_repository(start) or "not inside a git repository"
