"""Git access under a hook's environment: ``no_git_env``/``run_git``, the detached sync, and the
test suite itself run from a pre-commit hook of a linked worktree.

A git hook exports GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE (and more); a child git
that inherits them acts on the hook's repository, not on the one its cwd names.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import PY, REPO_ROOT, adr, git, init_vault, run_cli

from vaultsync.git import no_git_env, run_git

HOOK_ENV = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
            "GIT_PREFIX", "GIT_REFLOG_ACTION", "GIT_EDITOR", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES")


def test_no_git_env_drops_repository_selection_and_keeps_transport_settings():
    base = {name: "x" for name in HOOK_ENV} | {
        "PATH": "/usr/bin", "HOME": "/home/u", "GIT_SSH_COMMAND": "ssh -i k", "GIT_ASKPASS": "ask",
        "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.x", "GIT_CONFIG_VALUE_0": "1", "GIT_EXEC_PATH": "/g",
        "GIT_SSL_NO_VERIFY": "1", "GIT_HTTP_PROXY_AUTHMETHOD": "basic", "GIT_ALLOW_PROTOCOL": "https"}
    env = no_git_env(base, GIT_AUTHOR_NAME="a")
    assert not set(HOOK_ENV) & set(env)
    assert env["GIT_SSH_COMMAND"] == "ssh -i k" and env["GIT_CONFIG_KEY_0"] == "core.x"
    assert env["PATH"] == "/usr/bin" and env["GIT_AUTHOR_NAME"] == "a"
    assert set(env) == set(base) - set(HOOK_ENV) | {"GIT_AUTHOR_NAME"}


def _outer(tmp_path: Path) -> tuple[Path, Path]:
    """A repository with one commit and a linked worktree on branch ``wt``."""
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q", "-b", "main")
    (outer / "README.md").write_text("outer\n")
    git(outer, "add", "-A")
    git(outer, "commit", "-qm", "outer")
    wt = tmp_path / "wt"
    git(outer, "worktree", "add", "-q", "-b", "wt", str(wt))
    return outer, wt


def test_run_git_acts_on_its_cwd_whatever_the_hook_exported(tmp_path, monkeypatch):
    outer, wt = _outer(tmp_path)
    gitdir = git(wt, "rev-parse", "--absolute-git-dir").stdout.strip()
    monkeypatch.setenv("GIT_DIR", gitdir)
    monkeypatch.setenv("GIT_WORK_TREE", str(wt))
    monkeypatch.setenv("GIT_INDEX_FILE", str(Path(gitdir) / "index"))
    other = tmp_path / "other"
    other.mkdir()
    run_git(["init", "-q", "-b", "main"], other, check=True)
    assert run_git(["rev-parse", "--show-toplevel"], other, check=True).stdout.strip() == str(other.resolve())
    assert (other / ".git").is_dir()


def test_the_detached_sync_gets_no_hook_environment(tmp_path, monkeypatch):
    from vaultsync.cli import sync as cli_sync

    seen: dict[str, object] = {}

    class Recorder:
        def __init__(self, args, **kwargs):  # type: ignore[no-untyped-def]
            seen.update(kwargs)

    monkeypatch.setenv("GIT_INDEX_FILE", "/elsewhere/index")
    monkeypatch.setenv("GIT_DIR", "/elsewhere/.git")
    monkeypatch.setattr(cli_sync.subprocess, "Popen", Recorder)
    cli_sync.spawn_detached(["sync"], tmp_path / "hook.log")
    env = seen["env"]
    assert isinstance(env, dict) and "GIT_INDEX_FILE" not in env and "GIT_DIR" not in env and "PATH" in env


def _refs(repo: Path) -> dict[str, str]:
    out = git(repo, "for-each-ref", "--format=%(refname) %(objectname)").stdout.split("\n")
    return dict(line.split(" ", 1) for line in out if line)


def _snapshot(outer: Path, wt: Path) -> dict[str, object]:
    """What a test run must leave alone: config, worktrees, stashes, both work trees' files."""
    def files(root: Path) -> list[str]:
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".git" not in p.parts)

    return {
        "config": (outer / ".git" / "config").read_text(),
        "worktrees": [line for line in git(outer, "worktree", "list", "--porcelain").stdout.split("\n")
                      if line.startswith(("worktree ", "branch "))],
        "status": git(outer, "status", "--porcelain", "--ignored").stdout,
        "stash": git(outer, "stash", "list").stdout,
        "files": files(outer), "wt_files": files(wt),
    }


SUITE = ("tests/test_frontmatter.py", "tests/test_sync_lock.py",
         "tests/test_git_env.py::test_run_git_acts_on_its_cwd_whatever_the_hook_exported")


def test_the_suite_run_from_a_linked_worktrees_pre_commit_hook_leaves_the_repository_alone(tmp_path):
    outer, wt = _outer(tmp_path)
    log, seen_env = tmp_path / "suite.log", tmp_path / "hook.env"
    hook = outer / ".git" / "hooks" / "pre-commit"
    hook.write_text(  # git exports GIT_INDEX_FILE (and, in some setups, GIT_DIR): make sure of all three
        "#!/bin/sh\n"
        '[ -n "$SUITE_IN_HOOK" ] && exit 0  # a leak would commit to this repo and recurse: stop at one level\n'
        "SUITE_IN_HOOK=1; export SUITE_IN_HOOK\n"
        'GIT_DIR="$(git rev-parse --absolute-git-dir)"; GIT_WORK_TREE="$PWD"\n'
        ': "${GIT_INDEX_FILE:=$GIT_DIR/index}"\n'
        "export GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE\n"
        f'env | grep "^GIT_" > "{seen_env}"\n'
        f'cd "{REPO_ROOT}" && exec "{PY}" -m pytest -q -p no:cacheprovider --basetemp="{tmp_path}/inner" '
        f'{" ".join(SUITE)} > "{log}" 2>&1\n')
    hook.chmod(0o755)
    (wt / "staged.md").write_text("staged\n")
    git(wt, "add", "staged.md")
    refs, before = _refs(outer), _snapshot(outer, wt)
    res = git(wt, "commit", "-qm", "from the worktree", check=False, timeout=600)
    assert res.returncode == 0, log.read_text() if log.exists() else res.stderr
    assert " passed" in log.read_text() and " failed" not in log.read_text() and " error" not in log.read_text()
    assert all(f"{name}=" in seen_env.read_text() for name in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"))
    new_head = git(wt, "rev-parse", "HEAD").stdout.strip()
    assert _refs(outer) == {**refs, "refs/heads/wt": new_head}  # only the commit itself moved a ref
    assert git(wt, "log", "--format=%s", "wt").stdout.split("\n")[:2] == ["from the worktree", "outer"]
    assert git(wt, "show", "--name-only", "--format=", new_head).stdout.split() == ["staged.md"]
    assert _snapshot(outer, wt) == before
    assert git(wt, "status", "--porcelain").stdout == ""


@pytest.mark.parametrize("cone", [True, False])
def test_a_sparse_checkout_checks_links_to_notes_left_off_the_disk(tmp_path, cone):
    """The notes outside a sparse checkout are in the index, only not on disk: a link to one is no
    dangling link (a link to a note that exists nowhere still is)."""

    origin = init_vault(tmp_path / "origin", "vault: docs\n")
    origin.write("docs/adrs/ADR-0001.md", adr("ADR-0001", body="See [[RULE-0001]] and [[incidents/INC-0001]].\n"))
    origin.write("docs/rules/RULE-0001.md", "# Rule\n## Why\n")
    origin.write("docs/incidents/INC-0001.md", "# Incident\n")
    origin.commit("init")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin.root), str(clone))
    git(clone, "sparse-checkout", "set", *(["docs/adrs"] if cone else ["--no-cone", "/docs/adrs/", "/.vaultsync.yaml"]))
    assert not (clone / "docs/rules/RULE-0001.md").exists()
    assert run_cli(["check"], clone).code == 0
    (clone / "docs/adrs/ADR-0002.md").write_text(adr("ADR-0002", body="[[RULE-0001#Why]] [[RULE-0404]]\n"))
    res = run_cli(["check"], clone)
    assert res.code == 1 and [line.split(" ", 2)[1] for line in res.lines] == ["WL001"] and "RULE-0404" in res.out


@pytest.mark.parametrize("command", [["status"], ["check"], ["install", "--no-alias"],
                                     ["new", "adr", "--title", "x"]])
def test_a_ceiling_directory_stops_the_search_for_the_repository_as_it_stops_git(tmp_path, monkeypatch, command):
    """With GIT_CEILING_DIRECTORIES naming the repository's root, git says "not a git repository" in a folder
    below it; vaultsync found the repository anyway, and `install` and `new` wrote into it."""
    outer = tmp_path / "outer"
    init_vault(outer)
    inner = outer / "inner"
    inner.mkdir()
    before = sorted(p.relative_to(outer) for p in outer.rglob("*") if ".git/objects" not in p.as_posix())
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(outer))
    assert subprocess.run(["git", "status"], cwd=inner, capture_output=True).returncode != 0  # (git() drops it)
    res = run_cli(command, inner)
    assert "not inside a git" in res.err, res.err  # (`check` goes on as for a folder, as outside any repository)
    assert sorted(p.relative_to(outer) for p in outer.rglob("*") if ".git/objects" not in p.as_posix()) == before
    monkeypatch.delenv("GIT_CEILING_DIRECTORIES")
    assert run_cli(["status"], inner).code == 0
