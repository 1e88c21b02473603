"""Git's ignore rules, as the working-tree walk needs them (:class:`vaultsync.git.WorktreeSnapshot`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pygit2


class IgnoredUntracked:
    """``(rel, parent) -> bool``: git ignores ``rel`` (a folder ends in ``/``; ``parent`` is the folder
    it is in) and tracks nothing there. Inside an ignored folder, walked only for the files it tracks,
    everything untracked stays ignored: git never re-includes a path under an excluded folder, whatever
    a ``!`` rule says, though libgit2 asked about the path alone would. The index is read once, on the
    first ignored path."""

    def __init__(self, repo: pygit2.Repository | None) -> None:
        self._repo = repo
        self._tracked: set[str] | None = None
        self._ignored_dirs: set[str] = set()  # folders walked into only for what they track

    def __call__(self, rel: str, parent: str) -> bool:
        if parent not in self._ignored_dirs and not is_ignored(self._repo, rel):
            return False
        if self._tracked is None:
            self._tracked = set()
            for entry in self._repo.index:  # type: ignore[union-attr]  # is_ignored is False without a repo
                parts = entry.path.split("/")
                self._tracked.update("/".join(parts[:i]) + "/" for i in range(1, len(parts)))
                self._tracked.add(entry.path)
        if rel not in self._tracked:
            return True
        if rel.endswith("/"):
            self._ignored_dirs.add(rel)
        return False


def is_ignored(repo: pygit2.Repository | None, rel: str) -> bool:
    """Whether git's ignore rules (.gitignore, info/exclude, core.excludesFile) match ``rel``; False
    without a repository or for a name git cannot read."""
    if repo is None:
        return False
    import pygit2

    try:
        return bool(repo.path_is_ignored(rel))
    except (pygit2.GitError, UnicodeError):
        return False
