"""End to end with real `git` and a real `pre-commit install` in temporary repositories.

The hook repository is a snapshot of this working tree (committed into a temp
repo), so the test exercises the `.pre-commit-hooks.yaml` that ships, with
pre-commit building its own virtualenv from it. Covers WL-10 (delete/rename a
linked note), GH-09 (partially staged notes), FM-14 and ephemeral paths.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CONFIG, REPO_ROOT, Vault, adr, git

pytestmark = pytest.mark.slow


def _precommit_bin() -> str:
    found = shutil.which("pre-commit") or str(Path(os.sys.executable).parent / "pre-commit")
    if not Path(found).exists():
        pytest.skip("pre-commit is not installed (pip install -e '.[test]')")
    return found


@contextlib.contextmanager
def _shared(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[tuple[Path, bool]]:
    """(folder ``name`` shared by every worker of this test run, whether it is complete yet), held under
    a lock: the first worker to get it makes it, the others wait and reuse it."""
    root = tmp_path_factory.getbasetemp()
    root = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root  # pytest-xdist: one base per run
    folder = root / name
    with open(root / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield folder, (folder / ".complete").exists()
            (folder / ".complete").touch()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This working tree, committed into a temporary repo once per test run: (path, commit sha)."""
    with _shared(tmp_path_factory, "hookrepo") as (dest, complete):
        if not complete:
            shutil.rmtree(dest, ignore_errors=True)
            listed = git(REPO_ROOT, "ls-files", "-co", "--exclude-standard", "-z").stdout.split("\0")
            for rel in filter(None, listed):
                src = REPO_ROOT / rel
                if src.is_file() and not rel.startswith(("tests/", "bench/")):
                    (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, dest / rel)
            git(dest, "init", "-q", "-b", "main")
            git(dest, "add", "-A")
            git(dest, "commit", "-qm", "snapshot", "--no-verify")
        return dest, git(dest, "rev-parse", "HEAD").stdout.strip()


@pytest.fixture(scope="session")
def precommit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache for the test run, so each hook env is built once (pre-commit locks its
    store while it builds one)."""
    if home := os.environ.get("VAULTSYNC_TEST_PRE_COMMIT_HOME"):
        return Path(home)
    with _shared(tmp_path_factory, "pre-commit-home") as (home, _):
        home.mkdir(exist_ok=True)
        return home


@pytest.fixture
def hooked(tmp_path: Path, hook_repo: tuple[Path, str], precommit_home: Path, monkeypatch) -> Vault:
    """A vault repo with `pre-commit install` done and one valid commit."""
    exe = _precommit_bin()
    monkeypatch.setenv("PRE_COMMIT_HOME", str(precommit_home))
    root = tmp_path / "vault"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    v = Vault(root)
    path, sha = hook_repo
    v.write(".pre-commit-config.yaml",
            f"default_install_hook_types: [pre-commit, pre-merge-commit]\n"  # as the README's adopt steps write it
            f"repos:\n- repo: {path}\n  rev: {sha}\n  hooks:\n  - id: vaultsync-check\n")
    v.write(".vaultsync.yaml", CONFIG)
    v.write("docs/adrs/ADR-0001.md", adr("ADR-0001", body="# ADR-0001\n## Decision\nUse SQLite.\n"))
    v.write("docs/adrs/ADR-0002.md", adr("ADR-0002", body="Builds on [[ADR-0001]].\n"))
    subprocess.run([exe, "install"], cwd=root, check=True, capture_output=True)
    first = v.git("add", "-A") and v.git("commit", "-m", "init", check=False)
    assert first.returncode == 0, first.stdout + first.stderr
    return v


def test_valid_commit_passes_and_bad_frontmatter_is_rejected(hooked):
    hooked.write("docs/adrs/ADR-0003.md", adr("ADR-0003", extra="confidence: high\n"))
    hooked.git("add", "-A")
    res = hooked.git("commit", "-m", "bad", check=False)
    assert res.returncode == 1
    assert "docs/adrs/ADR-0003.md:7:13: SC001 confidence: expected number, got 'high'" in res.stdout + res.stderr
    assert "Traceback" not in res.stdout + res.stderr


def test_wl10_deleting_a_linked_note_fails_the_commit(hooked):
    hooked.git("rm", "-q", "docs/adrs/ADR-0001.md")
    res = hooked.git("commit", "-m", "drop ADR-0001", check=False)
    assert res.returncode == 1
    assert ("docs/adrs/ADR-0002.md:8:11: WL007 [[ADR-0001]] → target removed in this commit "
            "(docs/adrs/ADR-0001.md)") in res.stdout + res.stderr


def test_wl10_renaming_a_linked_note_fails_the_commit(hooked):
    hooked.git("mv", "docs/adrs/ADR-0001.md", "docs/adrs/ADR-0001-sqlite.md")
    res = hooked.git("commit", "-m", "rename", check=False)
    assert res.returncode == 1
    assert "WL007 [[ADR-0001]] → target removed in this commit (docs/adrs/ADR-0001.md)" in res.stdout + res.stderr


@pytest.mark.parametrize("breaks", ["delete", "rename"])
def test_a_clean_merge_that_breaks_a_link_is_refused(hooked, breaks):
    """A merge without conflicts runs git's pre-merge-commit hook, not pre-commit: with plain `pre-commit
    install` a branch that deleted a note merged cleanly beside a new link to it, and the broken link
    was committed. The README's config installs both hook types."""
    hooked.git("checkout", "-q", "-b", "tidy")
    if breaks == "delete":
        hooked.git("rm", "-q", "docs/adrs/ADR-0001.md")
        hooked.write("docs/adrs/ADR-0002.md", adr("ADR-0002", body="Stands alone.\n"))
    else:
        hooked.git("mv", "docs/adrs/ADR-0001.md", "docs/adrs/ADR-0001-sqlite.md")
        hooked.write("docs/adrs/ADR-0002.md", adr("ADR-0002", body="Builds on [[ADR-0001-sqlite]].\n"))
    hooked.git("add", "-A")
    assert hooked.git("commit", "-qm", breaks, check=False).returncode == 0
    hooked.git("checkout", "-q", "main")
    hooked.write("docs/adrs/ADR-0003.md", adr("ADR-0003", body="See [[ADR-0001]].\n"))
    hooked.git("add", "-A")
    assert hooked.git("commit", "-qm", "link", check=False).returncode == 0
    head = hooked.git("rev-parse", "HEAD").stdout
    res = hooked.git("merge", "--no-edit", "tidy", check=False)
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "docs/adrs/ADR-0003.md:8:5: WL007 [[ADR-0001]] → target removed" in out, out
    assert hooked.git("rev-parse", "HEAD").stdout == head  # no merge commit


def test_the_readme_installs_the_hook_for_merges_too():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    adopt = readme.split("cat > .pre-commit-config.yaml <<YAML", 1)[1].split("YAML\n", 1)[0]
    assert "default_install_hook_types: [pre-commit, pre-merge-commit]" in adopt


def test_warnings_show_on_a_passing_commit(hooked):
    """pre-commit hides a passing hook's output unless the hook is verbose (issue 12, kind 6)."""
    hooked.write("docs/adrs/ADR-0005.md", adr("ADR-0005", extra='expires: "2024-06-01"\n'))
    hooked.git("add", "-A")
    res = hooked.git("commit", "-m", "expired but fine", check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "docs/adrs/ADR-0005.md:7:10: DT004 warning: expired on 2024-06-01" in res.stdout + res.stderr


def test_wl10_rename_names_the_new_link(hooked):
    hooked.git("mv", "docs/adrs/ADR-0001.md", "docs/adrs/ADR-0001-sqlite.md")
    res = hooked.git("commit", "-m", "rename", check=False)
    assert res.returncode == 1
    assert ("renamed to docs/adrs/ADR-0001-sqlite.md in this commit — update the link to [[ADR-0001-sqlite]]"
            in res.stdout + res.stderr)


def test_gh09_partially_staged_note_validates_what_is_staged(hooked):
    note = hooked.root / "docs/adrs/ADR-0011.md"
    hooked.write("docs/adrs/ADR-0011.md", adr("ADR-0011"))
    hooked.git("add", "docs/adrs/ADR-0011.md")
    broken = adr("ADR-0011").replace("title: A decision", "title: [unclosed")
    note.write_text(broken)
    res = hooked.git("commit", "-m", "x", check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert note.read_text() == broken  # the unstaged edit is still on disk
    committed = hooked.git("show", "HEAD:docs/adrs/ADR-0011.md").stdout
    assert committed == adr("ADR-0011")


def test_commit_all_uses_the_temporary_index(hooked):
    """`git commit -a` points GIT_INDEX_FILE at a temporary index; the hook must read that one."""
    (hooked.root / "docs/adrs/ADR-0002.md").write_text(adr("ADR-0002", body="Now links [[nowhere]].\n"))
    res = hooked.git("commit", "-am", "edit", check=False)
    assert res.returncode == 1
    assert "docs/adrs/ADR-0002.md:8:11: WL001 [[nowhere]] → no such note" in res.stdout + res.stderr


def test_fm14_bad_files_and_scratch_paths_are_rejected(hooked):
    hooked.write("docs/rules/legacy.md", b"caf\xe9\n")
    hooked.write("docs/scratch/todo.md", "# wip\n")
    hooked.git("add", "-A")
    res = hooked.git("commit", "-m", "x", check=False)
    assert res.returncode == 1
    assert "docs/rules/legacy.md:1:4: FM001 not valid UTF-8 (byte 0xE9 at offset 3) — re-save as UTF-8" in res.stdout + res.stderr
    assert "docs/scratch/todo.md:1:1: PA001 ephemeral/scratch file must not be committed" in res.stdout + res.stderr
