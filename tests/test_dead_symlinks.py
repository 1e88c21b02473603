"""Which symbolic links lead nowhere in the repository (:func:`vaultsync.symlinks.dead_links`), GH-12 /
WL kind: the working tree, the staged index and a commit's tree agree with the links as the disk
resolves them, for generated chains of links to files, to other links, to missing names, out of the
repository and in loops."""

from __future__ import annotations

import errno
import os
import posixpath
import shutil
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from conftest import git

from vaultsync.git import IndexSnapshot, TreeSnapshot, WorktreeSnapshot
from vaultsync.symlinks import dead_links

FILES = ["docs/a.md", "docs/sub/b.md", "docs/sub/deep/c.png", "top.md", "other/d.md"]
LINK_DIRS = ["docs", "docs/sub", "docs/sub/deep", "other"]


def _disk_loops(root: Path, links: list[str]) -> set[str]:
    """The links the operating system gives up on: too many levels of symbolic links (ELOOP)."""
    loops = set()
    for link in links:
        try:
            os.stat(root / link)
        except OSError as e:
            if e.errno == errno.ELOOP:
                loops.add(link)
    return loops


def _disk_dead(root: Path, links: list[str]) -> set[str]:
    """The oracle: the operating system resolves each link; alive when it leads to a file inside the
    repository and outside ``.git``, through relative targets only (a folder is no WikiLink target)."""
    dead = set()
    top = root.resolve()
    for link in links:
        full = root / link
        try:
            os.stat(full)  # follows every link: ENOENT, ENOTDIR (a "/" after a file), ELOOP
            chain, here = [], full  # no absolute target on the way
            while here.is_symlink() and len(chain) < 50:
                chain.append(os.readlink(here))
                here = here.parent / chain[-1]
            real = Path(os.path.realpath(full))
            inside = real.is_relative_to(top) and real.relative_to(top).parts[:1] != (".git",)
            alive = inside and not any(t.startswith("/") for t in chain) and real.is_file()
        except OSError:
            alive = False
        if not alive:
            dead.add(link)
    return dead


targets = st.one_of(
    st.sampled_from(FILES + ["docs/missing.md", "nowhere/x.md", "docs/sub", "other", "docs", ".git/config", ".git"]),
    st.tuples(st.integers(0, 7), st.sampled_from(["", "/", "/b.md", "/../a.md", "/c.png"])).map(
        lambda t: f"@link{t[0]}{t[1]}"),  # another link of the tree (or itself), maybe as a folder
    st.sampled_from(["/etc/hostname", "../../../../outside.md"]),  # out of the repository
).flatmap(lambda t: st.sampled_from([t, t + "/"]) if not t.startswith(("@", "/", "../")) else st.just(t))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(LINK_DIRS), targets), min_size=1, max_size=8))
def test_every_snapshot_finds_the_dead_links_the_disk_finds(tmp_path, links):
    root = tmp_path / "repo"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for f in FILES:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("x\n")
    names = [f"{folder}/link{i}" + (".md" if i % 2 else "") for i, (folder, _) in enumerate(links)]
    for name, (folder, target) in zip(names, links):
        if target.startswith("@link"):
            i, rest = int(target[5]), target[6:]
            wanted = posixpath.relpath(names[i % len(names)], folder) + rest
        elif target.startswith(("/", "../")):
            wanted = target
        else:
            wanted = posixpath.relpath(target.rstrip("/"), folder) + ("/" if target.endswith("/") else "")
        os.symlink(wanted, root / name)
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "links")
    repo = pygit2.Repository(str(root))
    expected = _disk_dead(root, names)
    loops = _disk_loops(root, names)
    for snapshot in (WorktreeSnapshot(root, ["docs", "other"], repo), IndexSnapshot(repo),
                     TreeSnapshot(repo, repo.head.peel(pygit2.Commit).tree)):
        dead = dead_links(snapshot)
        assert set(dead) == expected, type(snapshot).__name__
        assert {link for link, (_, why) in dead.items() if why == "loop"} == loops, type(snapshot).__name__


@pytest.mark.parametrize("name, target", [("docs/folder.md", "sub"), ("docs/plain", "sub/"), ("docs/top.md", ".."),
                                          ("docs/chain.md", "folder.md"), ("docs/sub/up.md", "../sub")])
@pytest.mark.parametrize("staged", [False, True])
def test_a_link_to_a_folder_is_no_note_to_link_to(vault, name, target, staged):
    """A symlink named `folder.md` that leads to a folder passed as a WikiLink target, headings included,
    and the index stored the link as resolved: Obsidian shows a folder there, not a note. Relative, through
    another link, to the root, from inside the folder; in the working tree and staged."""
    vault.write("docs/sub/a.md", "# A\n")
    (vault.root / "docs/folder.md").symlink_to("sub")  # the link other links may lead through
    if name != "docs/folder.md":
        (vault.root / name).symlink_to(target)
    stem = name.rsplit("/", 1)[1].removesuffix(".md")
    vault.write("docs/b.md", f"see [[{stem}]] and [[{stem}#A]] and [[sub/a]]\n")
    if staged:
        vault.git("add", "-A")
    res = vault.check("--staged") if staged else vault.check()
    why = f"{name} is a symbolic link to '{target}', which is a folder, not a note"
    assert res.code == 1 and [line.split(": ", 1)[1] for line in res.lines if "docs/b.md" in line] == [
        f"WL001 [[{stem}]] → no such note; {why}", f"WL001 [[{stem}#A]] → no such note; {why}"], res.out
