"""The derived index: incremental sync from git trees into SQLite FTS5, the link graph and LanceDB.

Real git, real SQLite and LanceDB files in temporary repositories, the real
embedding model. Field cases GH-01, GH-04, GH-05, GH-12, IX-01, IX-02, IX-04,
IX-05, IX-06; rebuild equivalence on random histories; a sync killed mid-way.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from conftest import Vault, adr, assert_same_index, git, index_state, run_cli

pytestmark = pytest.mark.slow

LINKS_CONFIG = "vault: docs\n"


def sync(root: Path, rebuild: bool = False):  # type: ignore[no-untyped-def]
    from vaultsync.git import open_repo
    from vaultsync.index.sync import sync as do_sync

    return do_sync(open_repo(root), rebuild=rebuild, wait=60)


def db(root: Path) -> sqlite3.Connection:
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for

    return sqlite3.connect(layout_for(open_repo(root)).sqlite)


def vectors(root: Path, where: str | None = None) -> int:
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.vector_store import ChunkVectors

    return ChunkVectors(layout_for(open_repo(root)).lance, 384).count(where)


def search(root: Path, query: str, **opts):  # type: ignore[no-untyped-def]
    from vaultsync.git import open_repo
    from vaultsync.engine import open_searcher, options_for
    from vaultsync.vault.config import Config

    searcher, head = open_searcher(open_repo(root), Config(), rerank="none")
    try:
        return searcher.search(query, options_for(Config(), **opts), head=head)
    finally:
        searcher.close()


@pytest.fixture
def repo(vault: Vault, embedder) -> Vault:  # type: ignore[no-untyped-def]
    vault.write(".vaultsync.yaml", LINKS_CONFIG)
    return vault


def test_gh01_first_commit_without_parent(repo):
    for i in range(3):
        repo.write(f"docs/n{i}.md", f"# Note {i}\nAbout topic number {i}, see [[n{(i + 1) % 3}]].\n")
    repo.commit("init")
    report = sync(repo.root)
    assert report.status == "updated" and report.added == 3
    head = repo.git("rev-parse", "HEAD").stdout.strip()
    con = db(repo.root)
    assert con.execute("SELECT count(*) FROM notes").fetchone()[0] == 3
    assert con.execute("SELECT count(*) FROM notes_fts").fetchone()[0] == 3
    assert con.execute("SELECT value FROM meta WHERE key='indexed_commit'").fetchone()[0] == head
    chunk_count = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert vectors(repo.root, "id NOT LIKE '%#title'") == chunk_count
    assert sync(repo.root).status == "up-to-date"


def test_gh04_renames_deletes_and_case_only_renames(repo):
    repo.write("docs/adrs/ADR-0001.md", "---\ntitle: Use SQLite\n---\nWe use SQLite FTS5 for search.\n")
    repo.write("docs/incidents/INC-0002.md", "# Outage\nThe zqxghost token lives here.\n")
    repo.write("docs/rules/rule-a.md", "# Rule A\nAlways review.\n")
    repo.commit("init")
    sync(repo.root)
    repo.git("mv", "docs/adrs/ADR-0001.md", "docs/adrs/ADR-0001-sqlite.md")
    repo.commit("mv")
    report = sync(repo.root)
    assert (report.renamed, report.chunks_embedded) == (1, 0)  # same title and text: nothing re-embedded
    repo.git("rm", "-q", "docs/incidents/INC-0002.md")
    repo.commit("rm")
    sync(repo.root)
    repo.git("mv", "docs/rules/rule-a.md", "docs/rules/Rule-A.md")
    repo.commit("case")
    sync(repo.root)
    con = db(repo.root)
    paths = [p for (p,) in con.execute("SELECT path FROM notes ORDER BY path")]
    assert paths == ["docs/adrs/ADR-0001-sqlite.md", "docs/rules/Rule-A.md"]
    for old in ("docs/adrs/ADR-0001.md", "docs/incidents/INC-0002.md", "docs/rules/rule-a.md"):
        assert con.execute("SELECT count(*) FROM chunks WHERE path = ?", (old,)).fetchone()[0] == 0
        assert vectors(repo.root, f"path = '{old}'") == 0
    assert vectors(repo.root, "path = 'docs/rules/Rule-A.md' AND id NOT LIKE '%#title'") == 1
    assert search(repo.root, "zqxghost").hits == [] or all(
        "zqxghost" not in h.text for h in search(repo.root, "zqxghost").hits)


def test_gh05_path_encodings(repo):
    repo.write("docs/rules/no deploy fridays.md", "# No deploy Fridays\nFreeze window starts at noon.\n")
    nfd = "re\u0301sume\u0301"
    repo.write(f"docs/rules/{nfd}.md", "# Résumé\nKeep it short.\n")
    raw = os.fsencode(str(repo.root / "docs/rules")) + b"/caf\xe9.md"
    with open(raw, "wb") as fh:
        fh.write(b"# cafe\n")
    repo.commit("paths")
    report = sync(repo.root)
    assert report.warnings == ["skipping path with invalid UTF-8: docs/rules/caf?.md"]
    paths = {p for (p,) in db(repo.root).execute("SELECT path FROM notes")}
    assert paths == {"docs/rules/no deploy fridays.md", f"docs/rules/{nfd}.md"}
    assert search(repo.root, "Freeze window").hits[0].path == "docs/rules/no deploy fridays.md"
    check = subprocess.run([sys.executable, "-m", "vaultsync", "check", "--staged"], cwd=repo.root,
                           capture_output=True, text=True)
    assert check.returncode == 1 and "docs/rules/caf?.md:1:1: PA002 path is not valid UTF-8" in check.stdout


def test_gh12_submodules_and_symlinks_are_skipped(repo, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    (other / "x.md").write_text("# sub\n")
    git(other, "add", "-A")
    git(other, "commit", "-qm", "x")
    repo.write("README.md", "# Project\n")
    repo.write("docs/adrs/ADR-0001.md", "# Real\nA real note.\n")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other), "docs/rules/shared")
    os.symlink("../../README.md", repo.root / "docs/adrs/link.md")
    os.symlink("/etc/hostname", repo.root / "docs/adrs/evil.md")
    repo.commit("sub")
    report = sync(repo.root)
    assert report.status == "updated"
    assert {p for (p,) in db(repo.root).execute("SELECT path FROM notes")} == {"docs/adrs/ADR-0001.md"}
    assert repo.check("--staged").code == 0


@pytest.mark.parametrize("target", ["ADR-0001.md", "../../README.md", "../rules", "../../.vaultsync.yaml"])
def test_a_link_to_a_symlinked_note_resolves_and_nothing_reads_it(repo, target):
    """GH-12 / WL kind: Obsidian shows a symlinked ``.md`` as a note, so ``[[link]]`` to a symlink that
    leads to a file or folder of the repository is no dangling link; vaultsync still never reads a
    symlink. Every check mode and the index agree, and the index equals a rebuild."""
    repo.write("README.md", "# Project\n")
    repo.write("docs/adrs/ADR-0001.md", "# Real\nA real note.\n")
    repo.write("docs/rules/RULE-0001.md", "# Rule\n")
    repo.write("docs/adrs/ADR-0002.md", "# Uses\nSee [[link]], [[link#Anything]] and ![[link]].\n")
    os.symlink(target, repo.root / "docs/adrs/link.md")
    repo.git("add", "-A")
    for mode in ([], ["--staged"]):
        res = repo.check(*mode)
        assert res.code == 0 and "WL001" not in res.out, (mode, res.out)
    repo.git("commit", "-qm", "link")
    assert repo.check("--rev", "HEAD").code == 0
    sync(repo.root)
    resolved = dict(db(repo.root).execute("SELECT target, resolved FROM links WHERE source = 'docs/adrs/ADR-0002.md'"))
    assert resolved["link"] == "docs/adrs/link.md"
    assert "docs/adrs/link.md" not in {p for (p,) in db(repo.root).execute("SELECT path FROM notes")}
    incremental = index_state(repo.root)
    sync(repo.root, rebuild=True)
    assert_same_index(incremental, index_state(repo.root))
    os.remove(repo.root / "docs/adrs/link.md")
    repo.git("add", "-A")
    assert "WL001 [[link]]" in repo.check("--staged").out  # gone: dangling again


OUT, LOOP, MISSING = "which leads out of the repository", "goes round in a loop", "which is no file of the repository"
DEAD = [("missing.md", MISSING), ("/etc/hostname", OUT), ("../../../outside.md", OUT), ("link3.md", LOOP),
        ("loop-b.md", LOOP), ("../empty", MISSING), ("sub/../../../x.md", MISSING), ("bad\nname.md", MISSING),
        ("../../.git/config", OUT), ("../../.git", OUT), ("../../build/out.md", MISSING), ("a" * 300 + ".md", MISSING),
        ("ADR-0002.md/", MISSING), ("ADR-0002.md/../ADR-0002.md", MISSING),
        ("../folder-link/../adrs/ADR-0002.md", MISSING)]


def test_a_link_to_a_symlink_that_leads_nowhere_in_the_repository_dangles(repo):
    """GH-12 / WL kind: a symlink whose target is missing, outside the repository (absolute, or ``..``
    past the root, into ``.git``), a loop (itself, or through a second link), an empty folder git does not
    keep, a file git ignores, a name too long for the file system, or a file used as a folder
    (``ADR-0002.md/``, through a link too) is no note: a link to it dangles in every check mode, says
    why, and the index leaves it unresolved. Nothing is read through the link. One link per case."""
    links = " ".join(f"[[link{i}]]" for i in range(len(DEAD)))
    repo.write("docs/adrs/ADR-0002.md", f"# Uses\nSee {links} and ![[link1.md]].\n")
    repo.write(".gitignore", "build/\n")
    repo.write("build/out.md", "# Built\n")  # ignored, untracked: in no snapshot of the repository
    os.symlink("../docs/adrs/ADR-0002.md", repo.root / "docs/folder-link")  # a link to a file, used as a folder
    (repo.root / "docs/empty").mkdir(parents=True)
    os.symlink("link4.md", repo.root / "docs/adrs/loop-b.md")  # link4 → loop-b → link4
    for i, (target, _) in enumerate(DEAD):
        os.symlink(target, repo.root / f"docs/adrs/link{i}.md")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "dead links")
    for mode in ([], ["--staged"], ["--rev", "HEAD"]):
        res = repo.check(*mode)
        assert res.code == 1 and res.out.count("WL001") == len(DEAD) + 1, (mode, res.out)
        for i, (target, why) in enumerate(DEAD):
            line = next(line for line in res.lines if f"[[link{i}]]" in line)
            assert f"docs/adrs/link{i}.md is a symbolic link to '" in line and why in line, (mode, target, line)
        assert all("\n" not in line for line in res.lines)  # a control character in a target is shown escaped
    sync(repo.root)
    resolved = dict(db(repo.root).execute("SELECT target, resolved FROM links WHERE source = 'docs/adrs/ADR-0002.md'"))
    assert all(resolved[f"link{i}"] is None for i in range(len(DEAD)))


def test_a_symlink_into_a_folder_a_sparse_checkout_left_out_still_leads_there(repo):
    """GH-12 / WL kind: the working tree of a sparse checkout lacks the files outside its folders, but
    the index holds them: a link into one is as alive as in ``--staged`` and ``--rev``."""
    repo.write("src/b.md", "# B\n")
    repo.write("docs/src.md", "# Src\n[[tosrc]]\n")
    os.symlink("../src/b.md", repo.root / "docs/tosrc.md")
    repo.commit("sparse")
    repo.git("sparse-checkout", "set", "docs")
    assert not (repo.root / "src/b.md").exists()
    for mode in ([], ["--staged"], ["--rev", "HEAD"]):
        res = repo.check(*mode)
        assert res.code == 0, (mode, res.out)
