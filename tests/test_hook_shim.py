"""The plain-sh hook shims (``githooks/``) while git replays commits (field case GH-02).

A recorder stands in for the Python interpreter (``$VAULTSYNC_PYTHON``), so each
test sees exactly which hooks would have started a sync, and at which HEAD: a
rebase starts one (post-rewrite), a cherry-pick sequence one (its last pick), and
no post-commit during either starts Python at all.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO_ROOT, Vault, git

from vaultsync.git import no_git_env
from vaultsync.index.hooks import HOOKS

BARRIER = "barrier"


@pytest.fixture
def shimmed(vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Vault, Path]:
    """``vault`` with the shims installed and ``$VAULTSYNC_PYTHON`` recording "hook HEAD" lines."""
    record = tmp_path / "starts.txt"
    recorder = tmp_path / "python-recorder"
    recorder.write_text(  # $5: the --hook value; the barrier (post-merge) is told apart by its marker; a
        # replay's waiter ($6: --after-replay) is recorded as "hook+wait" and stays alive a while, as one does
        f'#!/bin/sh\nhead=$(git rev-parse HEAD); [ "$5" = post-merge ] && head={BARRIER}\n'
        f'[ "$6" = --after-replay ] && {{ echo "$5+wait $head" >> "{record}"; sleep 4; exit 0; }}\n'
        f'echo "$5 $head" >> "{record}"\n')
    recorder.chmod(0o755)
    monkeypatch.setenv("VAULTSYNC_PYTHON", str(recorder))
    install_shims(vault.root / ".git" / "hooks")
    vault.write("docs/base.md", "# base\n")
    vault.commit("base")
    syncs(starts(record))
    return vault, record


def install_shims(hooks: Path) -> None:
    """The shim under every hook name, as ``vaultsync install`` writes it (one template)."""
    hooks.mkdir(parents=True, exist_ok=True)
    for hook in HOOKS:
        shutil.copy2(REPO_ROOT / "githooks" / "post-commit", hooks / hook)


def starts(record: Path) -> list[tuple[str, str]]:
    """(hook, HEAD) of every sync the shims started, in order, once all have reported.

    The shims start the recorder detached, in no fixed order, so a barrier start (the
    post-merge shim run by hand, after git returned) is awaited, then a quiet spell.
    """
    repo = record.parent / "repo"
    subprocess.run(["sh", str(repo / ".git/hooks/post-merge"), "0"], cwd=repo, env=no_git_env(), check=True)
    deadline = time.monotonic() + 30
    seen, quiet = "", 0
    while time.monotonic() < deadline and quiet < 3:
        time.sleep(0.3)
        now = record.read_text() if record.exists() else ""
        quiet = quiet + 1 if now == seen and f" {BARRIER}\n" in now else 0
        seen = now
    lines = [tuple(line.split()) for line in seen.splitlines()]
    assert ("post-merge", BARRIER) in lines, f"the barrier never reported: {seen!r}"
    record.write_text("")
    return [line for line in lines if line != ("post-merge", BARRIER)]  # type: ignore[misc]


def syncs(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The syncs among ``found``, without the replays' waiters (``hook+wait``)."""
    return [start for start in found if not start[0].endswith("+wait")]


def test_an_ordinary_commit_starts_one_sync(shimmed):
    vault, record = shimmed
    vault.write("docs/a.md", "# a\n")
    vault.commit("a")
    assert syncs(starts(record)) == [("post-commit", vault.git("rev-parse", "HEAD").stdout.strip())]


def _feature(vault: Vault, n: int) -> None:
    vault.git("checkout", "-q", "-b", "feature")
    for i in range(n):
        vault.write(f"docs/f{i}.md", f"# f{i}\n")
        vault.commit(f"f{i}")
    vault.git("checkout", "-q", "main")
    vault.write("docs/main.md", "# main\n")
    vault.commit("main")


@pytest.mark.parametrize("backend", ["merge", "apply"])
def test_a_rebase_starts_one_sync_from_post_rewrite_and_none_per_pick(shimmed, backend):
    vault, record = shimmed
    _feature(vault, 5)
    vault.git("checkout", "-q", "feature")
    syncs(starts(record))
    vault.git("rebase", "-q", f"--{backend}", "main")
    head = vault.git("rev-parse", "HEAD").stdout.strip()
    everything = starts(record)
    found = syncs(everything)
    assert [h for h, _ in found if h == "post-commit"] == []
    assert ("post-rewrite", head) in found
    assert len([h for h, _ in everything if h.endswith("+wait")]) == 1  # one waiter for the whole replay


def test_a_cherry_pick_sequence_syncs_once_at_its_last_pick(shimmed):
    vault, record = shimmed
    _feature(vault, 4)
    syncs(starts(record))
    vault.git("cherry-pick", "main..feature")
    head = vault.git("rev-parse", "HEAD").stdout.strip()
    assert syncs(starts(record)) == [("post-commit", head)]


def test_a_single_cherry_pick_and_a_revert_sequence_still_sync(shimmed):
    vault, record = shimmed
    _feature(vault, 3)
    syncs(starts(record))
    vault.git("cherry-pick", "feature")
    assert syncs(starts(record)) == [("post-commit", vault.git("rev-parse", "HEAD").stdout.strip())]
    syncs(starts(record))
    vault.git("cherry-pick", "feature~2", "feature~1")
    vault.git("revert", "--no-edit", "HEAD", "HEAD~1")
    head = vault.git("rev-parse", "HEAD").stdout.strip()
    found = syncs(starts(record))  # one per sequence; detached, so in either order
    assert len(found) == 2 and ("post-commit", head) in found


def test_a_sequence_stopped_by_a_conflict_syncs_when_it_is_continued(shimmed):
    vault, record = shimmed
    vault.git("checkout", "-q", "-b", "side")
    vault.write("docs/base.md", "# base\nside\n")
    vault.commit("side edits base")
    vault.write("docs/s.md", "# s\n")
    vault.commit("side adds s")
    vault.git("checkout", "-q", "main")
    vault.write("docs/base.md", "# base\nmain\n")
    vault.commit("main edits base")
    syncs(starts(record))
    assert vault.git("cherry-pick", "main..side", check=False).returncode != 0  # the first pick conflicts
    vault.write("docs/base.md", "# base\nresolved\n")
    vault.git("add", "docs/base.md")
    vault.git("commit", "-q", "--no-edit")  # the resolved pick: git has removed CHERRY_PICK_HEAD, so the
    head = vault.git("rev-parse", "HEAD").stdout.strip()  # shim cannot tell it from a sequence given up
    assert syncs(starts(record)) == [("post-commit", head)]  # with reset: one sync more, never one too few
    vault.git("cherry-pick", "--continue")
    assert syncs(starts(record)) == [("post-commit", vault.git("rev-parse", "HEAD").stdout.strip())]


def test_a_rebase_in_a_linked_worktree_starts_no_sync_per_pick(shimmed, tmp_path):
    vault, record = shimmed
    _feature(vault, 3)
    wt = tmp_path / "linked wt"
    vault.git("worktree", "add", "-q", str(wt), "feature")
    syncs(starts(record))
    git(wt, "rebase", "-q", "main")
    found = syncs(starts(record))
    assert [h for h, _ in found if h == "post-commit"] == []
    assert ("post-rewrite", git(wt, "rev-parse", "HEAD").stdout.strip()) in found


def test_the_python_side_defers_like_the_shim(shimmed):
    """The pre-commit framework starts Python for every pick: ``replay_in_progress`` decides there."""
    from vaultsync.git import open_repo
    from vaultsync.index.sync import replay_in_progress

    vault, _ = shimmed
    gitdir = vault.root / ".git"
    repo = open_repo(vault.root)
    assert not replay_in_progress(repo)
    (gitdir / "sequencer").mkdir()
    (gitdir / "sequencer" / "todo").write_text("pick 1111111 one\n")
    assert not replay_in_progress(repo)  # the last pick syncs
    (gitdir / "sequencer" / "todo").write_text("# comment\npick 1111111 one\npick 2222222 two\n")
    assert not replay_in_progress(repo)  # no CHERRY_PICK_HEAD: a sequence given up with `git reset`
    (gitdir / "CHERRY_PICK_HEAD").write_text("1111111\n")
    assert replay_in_progress(repo) and not replay_in_progress(repo, "post-checkout")
    (gitdir / "CHERRY_PICK_HEAD").unlink()
    (gitdir / "sequencer" / "todo").write_text("revert 1111111 one\nrevert 2222222 two\n")
    assert replay_in_progress(repo)  # a revert sequence's picks leave no REVERT_HEAD behind
    shutil.rmtree(gitdir / "sequencer")
    (gitdir / "rebase-merge").mkdir()
    assert replay_in_progress(repo) and replay_in_progress(repo, "post-checkout")
    assert not replay_in_progress(repo, "post-rewrite")  # the rebase's end: it syncs
    (gitdir / "rebase-apply").mkdir()
    for nxt, replaying in (("2", True), ("3", False)):  # git am, patch 2 then 3 of 3
        (gitdir / "rebase-apply" / "next").write_text(nxt + "\n")
        (gitdir / "rebase-apply" / "last").write_text("3\n")
        assert replay_in_progress(repo, "post-applypatch") is replaying


def test_a_cherry_pick_sequence_given_up_with_reset_leaves_no_replay_behind(shimmed):
    """``git reset --hard`` after a conflicting first pick leaves ``sequencer/todo``, but not
    CHERRY_PICK_HEAD: the next ordinary commit syncs (it did not, field report)."""
    vault, record = shimmed
    vault.git("checkout", "-q", "-b", "side")
    for name in ("base", "s1", "s2"):
        vault.write(f"docs/{name}.md", f"# {name}\nside\n")
        vault.commit(f"side {name}")
    vault.git("checkout", "-q", "main")
    vault.write("docs/base.md", "# base\nmain\n")
    vault.commit("main edits base")
    syncs(starts(record))
    assert vault.git("cherry-pick", "main..side", check=False).returncode != 0
    vault.git("reset", "-q", "--hard")
    vault.write("docs/after.md", "# after\n")
    vault.commit("after")
    assert syncs(starts(record)) == [("post-commit", vault.git("rev-parse", "HEAD").stdout.strip())]


def test_a_rebase_given_up_with_abort_never_synced_its_upstream(shimmed):
    """The post-checkout at a rebase's start starts nothing, so ``--abort`` (which fires no hook)
    finds the index still at the commit it returns to."""
    vault, record = shimmed
    vault.git("checkout", "-q", "-b", "feature")
    vault.write("docs/base.md", "# base\nfeature\n")
    vault.commit("feature edits base")
    vault.git("checkout", "-q", "main")
    vault.write("docs/base.md", "# base\nmain\n")
    vault.commit("main edits base")
    vault.git("checkout", "-q", "feature")
    syncs(starts(record))
    assert vault.git("rebase", "-q", "main", check=False).returncode != 0
    vault.git("rebase", "--abort")
    assert syncs(starts(record)) == []


def test_git_am_syncs_once_at_its_last_patch(shimmed, tmp_path):
    vault, record = shimmed
    _feature(vault, 3)
    patches = tmp_path / "patches"
    vault.git("format-patch", "-q", "-o", str(patches), "main~1..feature")  # the three feature commits
    vault.git("reset", "-q", "--hard", "main")
    syncs(starts(record))
    vault.git("am", "-q", *sorted(str(p) for p in patches.iterdir()))
    assert syncs(starts(record)) == [("post-applypatch", vault.git("rev-parse", "HEAD").stdout.strip())]


def test_the_shim_starts_a_sync_without_setsid(shimmed, tmp_path):
    """macOS and Git for Windows ship no ``setsid``: the shim detaches with the shell alone."""
    vault, record = shimmed
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("git", "sh", "mkdir"):
        (bare / tool).symlink_to(shutil.which(tool))  # type: ignore[arg-type]
    vault.write("docs/a.md", "# a\n")
    vault.git("add", "-A")
    env = {**no_git_env(), "PATH": str(bare)}
    subprocess.run(["git", "commit", "-qm", "a"], cwd=vault.root, env=env, check=True)
    assert syncs(starts(record)) == [("post-commit", vault.git("rev-parse", "HEAD").stdout.strip())]


def test_under_pre_commits_migration_mode_the_shim_keeps_its_name_and_the_users_hook(shimmed, tmp_path, monkeypatch):
    """`pre-commit install -t post-commit` over `vaultsync install` moves the shim to post-commit.legacy and runs it
    from there: the shim took ".legacy" for its hook name, so a cherry-pick synced at every pick, the user's
    chained hook (post-commit.vaultsync-chained) never ran, and `status` called the hook missing."""
    from test_precommit_e2e import _precommit_bin

    from vaultsync.git import open_repo
    from vaultsync.index.hooks import installed_hooks

    vault, record = shimmed
    hooks = vault.root / ".git" / "hooks"
    user = hooks / "post-commit.vaultsync-chained"
    user.write_text('#!/bin/sh\necho ran >> "$(git rev-parse --git-dir)/user.txt"\n')
    user.chmod(0o755)
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    vault.write(".pre-commit-config.yaml", "repos: []\n")
    subprocess.run([_precommit_bin(), "install", "-t", "post-commit"], cwd=vault.root, check=True,
                   capture_output=True)
    assert (hooks / "post-commit.legacy").is_file() and "pre-commit" in (hooks / "post-commit").read_text()
    vault.write("docs/a.md", "# a\n")
    vault.commit("a")
    assert syncs(starts(record)) == [("post-commit", vault.git("rev-parse", "HEAD").stdout.strip())]
    assert (vault.root / ".git" / "user.txt").read_text().split() == ["ran"]
    _feature(vault, 3)
    syncs(starts(record))
    vault.git("cherry-pick", "main..feature")
    assert syncs(starts(record)) == [("post-commit", vault.git("rev-parse", "HEAD").stdout.strip())]
    assert "post-commit" in installed_hooks(open_repo(vault.root))
