"""Which symbolic links lead nowhere in the repository (:func:`vaultsync.symlinks.dead_links`), GH-12 /
WL kind: the working tree, the staged index and a commit's tree agree with the links as the disk
resolves them, for generated chains of links to files, to other links, to missing names, out of the
repository and in loops."""

from __future__ import annotations

import os
import posixpath
import shutil
from pathlib import Path

import pygit2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from conftest import git

from vaultsync.git import IndexSnapshot, TreeSnapshot, WorktreeSnapshot
from vaultsync.symlinks import MAX_HOPS, dead_links

FILES = ["docs/a.md", "docs/sub/b.md", "docs/sub/deep/c.png", "top.md", "other/d.md"]
LINK_DIRS = ["docs", "docs/sub", "docs/sub/deep", "other"]


def _disk_dead(root: Path, links: list[str]) -> set[str]:
    """The oracle: follow each link on disk with readlink; absolute or past the root or missing is dead."""
    dead = set()
    for link in links:
        here = link
        for _ in range(MAX_HOPS + 1):
            full = root / here
            if not full.is_symlink():
                alive = full.is_file()
                break
            target = os.readlink(full)
            here = posixpath.normpath(posixpath.join(posixpath.dirname(here), target))
            if target.startswith("/") or here == ".." or here.startswith("../"):
                alive = False
                break
        else:
            alive = False
        if not alive:
            dead.add(link)
    return dead


targets = st.one_of(
    st.sampled_from(FILES + ["docs/missing.md", "nowhere/x.md"]),  # a file, or a name that is not one
    st.integers(0, 7).map(lambda i: f"@link{i}"),  # another link of the same tree (or itself)
    st.sampled_from(["/etc/hostname", "@abs", "../../../../outside.md"]),  # out of the repository
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(LINK_DIRS), targets), min_size=1, max_size=8))
def test_every_snapshot_finds_the_dead_links_the_disk_finds(tmp_path, links):
    root = tmp_path / "repo"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for f in FILES:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("x\n")
    names = [f"{folder}/link{i}.md" for i, (folder, _) in enumerate(links)]
    for name, (folder, target) in zip(names, links):
        if target == "@abs":
            wanted = str(root / "top.md")  # in the repository on this disk, yet absolute: no file of the repository
        elif target.startswith("@link"):
            wanted = posixpath.relpath(names[int(target[5:]) % len(names)], folder)
        else:
            wanted = posixpath.relpath(target, folder) if not target.startswith(("/", "../")) else target
        os.symlink(wanted, root / name)
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "links")
    repo = pygit2.Repository(str(root))
    expected = _disk_dead(root, names)
    assert set(dead_links(WorktreeSnapshot(root, ["docs", "other"], repo))) == expected
    assert set(dead_links(IndexSnapshot(repo))) == expected
    assert set(dead_links(TreeSnapshot(repo, repo.head.peel(pygit2.Commit).tree))) == expected
