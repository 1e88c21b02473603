"""Repositories whose git dir is not ``.git`` beside the notes (GH kind): ``git init --separate-git-dir``
(a ``.git`` file names the git dir) and a git dir named only by ``GIT_DIR``/``GIT_WORK_TREE`` (the bare
"dotfiles" layout). Every command must take the working tree git takes, never the git dir's parent."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CONFIG, adr, git, run_cli

from vaultsync.git import open_repo, workdir


def _separate(tmp_path: Path) -> tuple[Path, Path]:
    root, store = tmp_path / "notes", tmp_path / "gitdirs" / "notes.git"
    root.mkdir()
    store.parent.mkdir()
    git(root, "init", "-q", "-b", "main", f"--separate-git-dir={store}")
    (root / ".vaultsync.yaml").write_text(CONFIG)
    (root / "docs/adrs").mkdir(parents=True)
    (root / "docs/adrs/ADR-0001.md").write_text(adr("ADR-0001"))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    return root, store


@pytest.mark.parametrize("start", [".", "docs", "docs/adrs"])
def test_a_separate_git_dir_opens_on_the_working_tree(tmp_path, start):
    root, store = _separate(tmp_path)
    (tmp_path / "gitdirs" / "stray.md").write_text("---\nbroken: [\n---\n")  # beside the git dir: not the vault
    repo = open_repo(root / start)
    assert repo is not None and workdir(repo) == root.resolve() and Path(repo.path).resolve() == store.resolve()


def test_check_status_and_new_use_the_working_tree_of_a_separate_git_dir(tmp_path):
    root, _ = _separate(tmp_path)
    (tmp_path / "gitdirs" / "stray.md").write_text("---\nbroken: [\n---\n")
    (root / "docs/adrs/ADR-0002.md").write_text("---\nmemory_id: [broken\n---\n")
    res = run_cli(["check"], root)
    assert res.code == 1 and "docs/adrs/ADR-0002.md:2:" in res.out and "stray" not in res.out, res.out
    assert run_cli(["check", "."], root / "docs").code == 1
    (root / "docs/adrs/ADR-0002.md").unlink()
    assert run_cli(["status"], root).out.splitlines()[0].split()[-1] == str(root.resolve())
    new = run_cli(["new", "adr", "--title", "Separate git dir"], root)
    assert new.code == 0 and (root / new.out.strip().splitlines()[-1]).is_file(), new.out + new.err


def test_git_dir_and_work_tree_from_the_environment(tmp_path, monkeypatch):
    store, tree = tmp_path / "store.git", tmp_path / "home"
    tree.mkdir()
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(store))
    env = {"GIT_DIR": str(store), "GIT_WORK_TREE": str(tree)}
    git(tree, "config", "core.bare", "false", env=env)
    (tree / ".vaultsync.yaml").write_text(CONFIG)
    (tree / "docs/adrs").mkdir(parents=True)
    (tree / "docs/adrs/ADR-0001.md").write_text(adr("ADR-0001"))
    git(tree, "add", "-A", env=env)
    git(tree, "commit", "-qm", "init", env=env)
    assert run_cli(["status"], tree).out.startswith("not inside") or run_cli(["status"], tree).code != 0
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    repo = open_repo(tree)
    assert repo is not None and workdir(repo) == tree.resolve()
    assert run_cli(["check", "--staged"], tree).code == 0
    (tree / "docs/adrs/ADR-0002.md").write_text("---\nmemory_id: [broken\n---\n")
    assert run_cli(["check"], tree).code == 1
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere.git"))
    res = run_cli(["status"], tree)
    assert res.code != 0 and "GIT_DIR=" in res.err + res.out


@pytest.mark.parametrize("mode", [[], ["--staged"], ["--rev", "HEAD"]])
def test_a_sparse_partial_clone_checks_its_cone_and_names_what_is_not_fetched(tmp_path, make_vault, mode):
    """A ``--filter=blob:none --sparse`` clone holds no blob outside its cone: every check refused each such
    note (FM015, an error), so every commit was blocked. They are named in one warning; the cone is checked."""
    origin = make_vault({"docs/adrs/ADR-0001.md": adr("ADR-0001"),
                         **{f"docs/rules/r{i}.md": f"# Rule {i}\nSee [[ADR-0001]].\n" for i in range(3)}})
    origin.commit("init")
    git(origin.root, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "partial"
    git(tmp_path, "clone", "-q", "--filter=blob:none", "--sparse", f"file://{origin.root}", str(clone))
    git(clone, "sparse-checkout", "set", "docs/adrs")
    res = run_cli(["check", *mode], clone)
    assert res.code == 0 and res.lines == [
        "docs/rules/r0.md:1:1: FM015 warning: not checked, nor 2 more notes like it: its git object is not fetched "
        "into this partial clone yet (git fetches a note when it is read)"], res.out
    (clone / "docs/adrs/ADR-0001.md").write_text("---\nmemory_id: [broken\n---\n")  # the cone is checked
    git(clone, "add", "-A")
    assert run_cli(["check", *mode], clone).code == (0 if "--rev" in mode else 1)


def test_a_missing_object_outside_a_partial_clone_is_still_an_error(make_vault):
    """Only a partial clone's objects are missing on purpose: elsewhere a missing object is damage (FM015)."""
    vault = make_vault({"docs/notes/r.md": "# Rule\n", "docs/notes/s.md": "# Other\n"})
    vault.commit("init")
    blob = git(vault.root, "rev-parse", "HEAD:docs/notes/r.md").stdout.strip()
    (vault.root / ".git/objects" / blob[:2] / blob[2:]).unlink()  # a loose object lost
    res = run_cli(["check", "--rev", "HEAD"], vault.root)
    assert res.code == 1 and res.lines == ["docs/notes/r.md:1:1: FM015 cannot read file: its git object is missing "
                                           "from the repository (a partial or damaged clone?)"], res.out
