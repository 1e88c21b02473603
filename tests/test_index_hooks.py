"""Git hooks end to end: `vaultsync install` shims and the pre-commit framework's post-* stages.

Field cases GH-01 (first commit), GH-02 (rebase, cherry-pick, amend), GH-03
(merges), GH-08 (core.hooksPath), GH-10 (hooks never block or fail git), and the
`git memsearch` alias. The hooks start detached syncs, so each test waits for the
index to reach HEAD.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import assert_same_index, git, index_state, run_cli
from test_precommit_e2e import _precommit_bin, hook_repo, precommit_home  # noqa: F401

pytestmark = pytest.mark.slow


def status(root: Path) -> dict:  # type: ignore[type-arg]
    res = subprocess.run([sys.executable, "-m", "vaultsync", "status", "--format", "json"], cwd=root,
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout)


def wait_indexed(root: Path, timeout: float = 120) -> dict:  # type: ignore[type-arg]
    """Wait until the index holds HEAD, no sync runs and none was asked for (read, never taking the
    lock: a hook's sync colliding with this check would find the index busy)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = status(root)
        if info["up_to_date"] and not info["sync_running"] and not (root / ".git/vaultsync/dirty").exists():
            return info
        time.sleep(0.3)
    raise AssertionError(f"index did not reach HEAD: {status(root)}; log: {_log(root)}")


def _log(root: Path) -> str:
    log = root / ".git/vaultsync/hook.log"
    return log.read_text() if log.exists() else "(no log)"


def memsearch(root: Path, query: str) -> list[str]:
    res = git(root, "memsearch", query, "--format", "json", "--no-daemon")
    return [h["path"] for h in json.loads(res.stdout)["hits"]]


def test_gh01_first_commit_is_indexed_by_the_post_commit_hook(hooked):
    for i, word in enumerate(("alpha", "bravo", "charlie")):
        hooked.write(f"docs/{word}.md", f"# {word}\nThe {word}zulu marker lives in note {i}.\n")
    start = time.monotonic()
    hooked.commit("init")
    returned = time.monotonic() - start
    info = wait_indexed(hooked.root)
    assert info["notes"] == 3 and info["indexed_commit"] == hooked.git("rev-parse", "HEAD").stdout.strip()
    assert memsearch(hooked.root, "charliezulu")[0] == "docs/charlie.md"
    assert returned < 5  # the hook returned long before an index build could finish (timings: bench/)


def test_gh02_rebase_defers_to_post_rewrite_and_matches_a_rebuild(hooked):
    hooked.write("docs/base.md", "# base\nBase note.\n")
    hooked.commit("base")
    hooked.git("checkout", "-q", "-b", "feature")
    for i in range(5):
        hooked.write(f"docs/feature-{i}.md", f"# feature {i}\nFeature work {i}, see [[base]].\n")
        hooked.commit(f"feature {i}")
    hooked.git("checkout", "-q", "main")
    hooked.write("docs/main-only.md", "# main\nMain moved on.\n")
    hooked.commit("main")
    wait_indexed(hooked.root)
    hooked.git("checkout", "-q", "feature")
    hooked.git("rebase", "-q", "main")
    info = wait_indexed(hooked.root)
    assert info["notes"] == 7
    incremental = index_state(hooked.root)
    subprocess.run([sys.executable, "-m", "vaultsync", "index", "--rebuild", "--quiet"], cwd=hooked.root, check=True)
    assert_same_index(incremental, index_state(hooked.root))


def test_gh02_cherry_pick_of_an_invalid_note_and_amend(hooked):
    hooked.write("docs/ok.md", "# ok\nFine.\n")
    hooked.commit("ok")
    hooked.git("checkout", "-q", "-b", "side")
    hooked.write("docs/bad.md", "---\ntitle: [unclosed\n---\nBody with xyzzyplugh.\n")
    hooked.commit("bad", "--no-verify")
    sha = hooked.git("rev-parse", "HEAD").stdout.strip()
    hooked.git("checkout", "-q", "main")
    hooked.git("cherry-pick", sha)
    wait_indexed(hooked.root)
    assert memsearch(hooked.root, "xyzzyplugh")[0] == "docs/bad.md"
    con = __import__("sqlite3").connect(hooked.root / ".git/vaultsync/index.sqlite")
    warnings = json.loads(con.execute("SELECT warnings FROM notes WHERE path='docs/bad.md'").fetchone()[0])
    assert any("FM005" in w for w in warnings)
    hooked.write("docs/ok.md", "# ok\nAmended with quuxfrob.\n")
    hooked.git("add", "-A")
    hooked.git("commit", "-q", "--amend", "--no-edit")
    wait_indexed(hooked.root)
    assert memsearch(hooked.root, "quuxfrob")[0] == "docs/ok.md"


def _drop_all(vault) -> None:  # type: ignore[no-untyped-def]
    vault.git("rebase", "-q", "-i", "HEAD~1", env={"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/drop/"})


def _fast_forward(vault) -> None:  # type: ignore[no-untyped-def]
    vault.git("checkout", "-q", "-b", "behind", "HEAD~1")
    vault.git("rebase", "-q", "main")  # only a fast-forward: no pick, no post-rewrite


def _skip_the_empty_last_pick(vault) -> None:  # type: ignore[no-untyped-def]
    fennec = vault.git("rev-parse", "HEAD").stdout.strip()
    vault.git("checkout", "-q", "-b", "side", "HEAD~1")
    vault.write("docs/side.md", "# side\nSide work with the gazpachoword marker.\n")
    vault.commit("side")
    vault.git("cherry-pick", fennec)  # side: base, side, then main's last change again
    vault.git("checkout", "-q", "main")
    wait_indexed(vault.root)
    res = vault.git("cherry-pick", "side~1", "side", check=False)  # its last pick is empty on main: git stops
    assert res.returncode != 0
    vault.git("cherry-pick", "--skip")


@pytest.mark.parametrize("replay", [_drop_all, _fast_forward, _skip_the_empty_last_pick])
def test_gh02_a_replay_that_ends_without_a_hook_still_reaches_head(hooked, replay):
    """Git runs no post-rewrite (nor a last post-commit) when a rebase only fast-forwards or drops every
    pick, or when a sequence's last pick is skipped; the shim's one waiter syncs once git is done."""
    hooked.write("docs/base.md", "# base\nBase note.\n")
    hooked.commit("base")
    hooked.write("docs/fennec.md", "# fennec\nThe foxtrotfennec marker.\n")
    hooked.commit("fennec")
    wait_indexed(hooked.root)
    replay(hooked)
    waiter = hooked.root / ".git/vaultsync/replay-wait.pid"
    deadline = time.monotonic() + 60
    while waiter.exists() and time.monotonic() < deadline:  # the waiter leaves once git is done
        time.sleep(0.3)
    assert not waiter.exists()
    info = wait_indexed(hooked.root)
    assert info["indexed_commit"] == hooked.git("rev-parse", "HEAD").stdout.strip()
    tree = hooked.git("ls-tree", "-r", "--name-only", "HEAD", "docs").stdout.split()
    assert sorted(row[0] for row in index_state(hooked.root)["notes"]) == sorted(tree)  # type: ignore[attr-defined]


def test_gh03_merge_and_fast_forward_fire_post_merge(hooked):
    hooked.write("docs/start.md", "# start\nStart.\n")
    hooked.commit("start")
    hooked.git("checkout", "-q", "-b", "feat")
    hooked.write("docs/rules/RULE-0009.md", "# RULE-0009\nThe plonkverbatim rule.\n")
    hooked.commit("rule")
    hooked.git("checkout", "-q", "main")
    hooked.git("merge", "-q", "--no-ff", "-m", "merge feat", "feat")
    wait_indexed(hooked.root)
    assert memsearch(hooked.root, "plonkverbatim")[0] == "docs/rules/RULE-0009.md"
    hooked.git("checkout", "-q", "-b", "ff")
    hooked.write("docs/ff.md", "# ff\nThe fastforwardium note.\n")
    hooked.commit("ff")
    hooked.git("checkout", "-q", "main")
    hooked.git("merge", "-q", "--ff-only", "ff")
    wait_indexed(hooked.root)
    assert memsearch(hooked.root, "fastforwardium")[0] == "docs/ff.md"


def _wait_error(root: Path) -> dict:  # type: ignore[type-arg]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not status(root).get("last_error"):
        time.sleep(0.3)
    return status(root)


def test_gh10_model_unavailable_never_fails_the_commit(hooked, tmp_path):
    hooked.write("docs/a.md", "# a\nAlpha.\n")
    hooked.commit("a")
    wait_indexed(hooked.root)
    broken = tmp_path / "not-a-folder"
    broken.write_text("the model cache cannot live here")
    hooked.write("docs/b.md", "# b\nBravo.\n")
    start = time.monotonic()
    res = hooked.commit("b", env={"VAULTSYNC_CACHE_DIR": str(broken)})  # the hook's sync cannot load a model
    assert res.returncode == 0 and time.monotonic() - start < 5
    info = _wait_error(hooked.root)
    assert info["last_error"] and not info["up_to_date"]
    search = subprocess.run([sys.executable, "-m", "vaultsync", "search", "Alpha", "--no-daemon"], cwd=hooked.root,
                            capture_output=True, text=True)
    assert "warning: index is not at HEAD" in search.stdout
    subprocess.run([sys.executable, "-m", "vaultsync", "sync", "--quiet"], cwd=hooked.root, check=True)
    assert status(hooked.root)["up_to_date"]


def test_gh10_lancedb_unavailable_keeps_search_current(hooked):
    hooked.write("docs/a.md", "# a\nAlpha.\n")
    hooked.commit("a")
    wait_indexed(hooked.root)
    lance = hooked.root / ".git/vaultsync/lance"
    shutil.rmtree(lance)
    (hooked.root / ".git/elsewhere").write_text("not a directory")
    lance.symlink_to(hooked.root / ".git/elsewhere")  # LanceDB cannot be opened (a user's link stays)
    hooked.write("docs/b.md", "# b\nThe brontosaurus note.\n")
    assert hooked.commit("b").returncode == 0
    info = _wait_error(hooked.root)
    assert "lance" in info["last_error"] and info["up_to_date"] and info["lancedb_behind"]
    assert memsearch(hooked.root, "brontosaurus")[0] == "docs/b.md"  # SQLite already holds text and vectors
    lance.unlink()
    subprocess.run([sys.executable, "-m", "vaultsync", "sync", "--quiet"], cwd=hooked.root, check=True)
    assert not status(hooked.root)["lancedb_behind"]


def test_gh10_two_quick_commits_end_with_head_indexed(hooked):
    for i in range(2):
        hooked.write(f"docs/q{i}.md", f"# q{i}\nQuick commit {i}.\n")
        hooked.commit(f"q{i}")
        time.sleep(0.2)
    info = wait_indexed(hooked.root)
    assert info["notes"] == 2


def test_gh08_core_hookspath_is_reported_not_ignored(vault, tmp_path):
    hooks = tmp_path / "githooks"
    vault.git("config", "core.hooksPath", str(hooks))
    res = subprocess.run([sys.executable, "-m", "vaultsync", "install"], cwd=vault.root, capture_output=True, text=True)
    assert res.returncode == 1
    assert f"hooks not active: core.hooksPath={hooks} (unset it or chain our hooks from there" in res.stderr
    assert "core.hooksPath" in status(vault.root)["hooks_problem"]
    (hooks).mkdir()
    (hooks / "post-commit").write_text("#!/bin/sh\necho chained-ran >> \"$(git rev-parse --git-dir)/chained.txt\"\n")
    (hooks / "post-commit").chmod(0o755)
    res = subprocess.run([sys.executable, "-m", "vaultsync", "install", "--hooks-path"], cwd=vault.root,
                         capture_output=True, text=True)
    assert res.returncode == 0
    assert (hooks / "post-commit.vaultsync-chained").exists()
    assert status(vault.root)["hooks"] == ["post-commit", "post-merge", "post-checkout", "post-rewrite", "post-applypatch"]
    assert status(vault.root)["check_hook"] is False  # the shims index; validation is pre-commit's job
    vault.write("docs/a.md", "# a\n")
    vault.commit("a")
    assert (vault.root / ".git/chained.txt").read_text().strip() == "chained-ran"


def test_gh08_hooks_committed_with_the_repository_run_on_a_machine_without_the_installers_python(vault, model_env):
    """A hooks folder in the work tree (``core.hooksPath=.githooks``) is committed with the shims, which name
    the installing machine's interpreter. Install says so, and on a machine where that path is absent the
    shim runs ``python3`` from PATH: the commit is indexed, not silently skipped ("setsid: failed to execute")."""
    vault.write(".vaultsync.yaml", "vault: docs\n")
    vault.git("config", "core.hooksPath", ".githooks")
    res = subprocess.run([sys.executable, "-m", "vaultsync", "install", "--hooks-path", "--no-alias"], cwd=vault.root,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "is in the work tree, so the hooks may be committed" in res.stdout and sys.executable in res.stdout
    shim = vault.root / ".githooks" / "post-commit"
    shim.write_text(shim.read_text().replace(sys.executable, "/nonexistent/other-machine/bin/python"))
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # PATH's python3 has vaultsync
    vault.write("docs/away.md", "# away\nThe quillwort marker came from another machine.\n")
    assert vault.commit("away", env={"PATH": path}).returncode == 0
    wait_indexed(vault.root)
    assert memsearch_installed(vault.root, "quillwort") == "docs/away.md"


def test_status_says_when_the_hooks_could_not_start_vaultsync(vault, model_env, tmp_path):
    """The shim's interpreter is gone and PATH's python3 has no vaultsync: the hook's sync never starts, so
    it records no error, and status said only "behind". It now names the log's line and the remedy."""
    bare = shutil.which("python3", path="/usr/bin:/bin")
    probe = subprocess.run([bare or "python3", "-c", "import vaultsync"], cwd=tmp_path, capture_output=True,
                           env={"PATH": "/usr/bin:/bin"})
    if bare is None or probe.returncode == 0:
        pytest.skip("no python3 without vaultsync on this machine")
    vault.write(".vaultsync.yaml", "vault: docs\n")
    assert run_cli(["install", "--no-alias"], vault.root).code == 0
    shim = vault.root / ".git" / "hooks" / "post-commit"
    shim.write_text(shim.read_text().replace(sys.executable, "/nonexistent/venv/bin/python"))
    vault.write("docs/a.md", "# a\nThe lost interpreter.\n")
    assert vault.commit("a", env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ""}).returncode == 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "No module named" not in _log(vault.root):
        time.sleep(0.2)
    info = status(vault.root)
    assert "could not start vaultsync (" in info.get("hook_failed", "") and "No module named" in info["hook_failed"]
    assert "warning     the git hooks could not start vaultsync" in run_cli(["status"], vault.root).out
    assert run_cli(["sync", "--quiet"], vault.root).code == 0  # a sync run by hand mends it: said no more
    assert "hook_failed" not in status(vault.root)


def test_install_says_nothing_of_committing_hooks_kept_in_the_git_folder(vault, tmp_path):
    vault.git("config", "core.hooksPath", str(tmp_path / "outside"))
    res = run_cli(["install", "--hooks-path", "--no-alias"], vault.root)
    assert res.code == 0 and "work tree" not in res.out
    vault.git("config", "core.hooksPath", ".git/custom-hooks")
    res = run_cli(["install", "--hooks-path", "--no-alias"], vault.root)
    assert res.code == 0 and "work tree" not in res.out


HUSKY_H = 'n=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ ! -f "$s" ] && exit 0\nsh -e "$s" "$@"\n'


@pytest.mark.parametrize("shebang", ["#!/usr/bin/env sh", "#!/bin/sh", "#!/usr/bin/env bash", "python"])
def test_gh08_a_dispatching_hook_keeps_finding_the_users_script(vault, shebang):
    """husky's dispatcher (.husky/_/post-commit → h) picks the user's script by `basename "$0"`: chained as
    post-commit.vaultsync-chained, it looked for .husky/post-commit.vaultsync-chained and silently ran
    nothing. A hook in another language is executed as before."""
    husky = vault.root / ".husky"
    (husky / "_").mkdir(parents=True)
    (husky / "_" / "h").write_text(HUSKY_H)
    if shebang == "python":
        dispatcher = (f"#!{sys.executable}\nimport pathlib, subprocess\n"
                      "pathlib.Path(subprocess.check_output(['git', 'rev-parse', '--git-dir'], text=True).strip(),"
                      " 'user.txt').write_text('python-ran')\n")
    else:
        dispatcher = f'{shebang}\n. "$(dirname "$0")/h"\n'
        (husky / "post-commit").write_text('echo user-ran > "$(git rev-parse --git-dir)/user.txt"\n')
    (husky / "_" / "post-commit").write_text(dispatcher)
    (husky / "_" / "post-commit").chmod(0o755)
    vault.git("config", "core.hooksPath", ".husky/_")
    res = subprocess.run([sys.executable, "-m", "vaultsync", "install", "--hooks-path", "--no-alias"], cwd=vault.root,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    vault.write("docs/a.md", "# a\n")
    vault.commit("a")
    assert (vault.root / ".git/user.txt").read_text().strip() == ("python-ran" if shebang == "python" else "user-ran")


def test_pre_commit_framework_post_commit_stage_indexes(vault, hook_repo, precommit_home, model_env, monkeypatch):  # noqa: F811
    exe = _precommit_bin()
    monkeypatch.setenv("PRE_COMMIT_HOME", str(precommit_home))
    path, sha = hook_repo
    vault.write(".vaultsync.yaml", "vault: docs\n")
    vault.write(".pre-commit-config.yaml", f"repos:\n- repo: {path}\n  rev: {sha}\n  hooks:\n"
                                           "  - id: vaultsync-check\n  - id: vaultsync-index\n")
    subprocess.run([exe, "install", "--hook-type", "pre-commit", "--hook-type", "post-commit", "--hook-type",
                    "post-merge", "--hook-type", "post-checkout", "--hook-type", "post-rewrite"],
                   cwd=vault.root, check=True, capture_output=True)
    vault.write("docs/fw.md", "# fw\nIndexed through the frameworkium.\n")
    res = vault.commit("fw")
    assert res.returncode == 0, res.stdout + res.stderr
    info = wait_indexed(vault.root, timeout=300)
    assert memsearch_installed(vault.root, "frameworkium") == "docs/fw.md"
    assert len(info["hooks"]) == 4 and "hooks_problem" not in info  # the framework's hooks count as ours
    assert info["check_hook"] is True and "pre-commit check on" in run_cli(["status"], vault.root).out
    assert "merges unchecked (run `pre-commit install -t pre-merge-commit`)" in run_cli(["status"], vault.root).out
    subprocess.run([exe, "install", "-t", "pre-merge-commit"], cwd=vault.root, check=True, capture_output=True)
    assert status(vault.root)["merge_check_hook"] is True
    assert "pre-commit check on (vaultsync-check)\n" in run_cli(["status"], vault.root).out
    assert run_cli(["install", "--alias-only"], vault.root).code == 0
    assert vault.git("config", "alias.memsearch").stdout.strip().endswith(("vaultsync search", "-m vaultsync search"))
    found = subprocess.run(["git", "memsearch", "--scope", "..", "frameworkium", "--no-daemon", "--format", "json"],
                           cwd=vault.root / "docs", capture_output=True, text=True)  # from a subfolder: '..' is the top
    assert found.returncode == 0 and json.loads(found.stdout)["hits"][0]["path"] == "docs/fw.md", found.stderr
    assert not (vault.root / ".git/hooks/post-commit").read_text().count("vaultsync git hook shim")


def memsearch_installed(root: Path, query: str) -> str:
    res = subprocess.run([sys.executable, "-m", "vaultsync", "search", query, "--format", "json", "--no-daemon"],
                         cwd=root, capture_output=True, text=True, check=True)
    return json.loads(res.stdout)["hits"][0]["path"]


def test_hook_manifest_declares_the_index_stages():
    import yaml
    from conftest import REPO_ROOT

    hooks = {h["id"]: h for h in yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())}
    index = hooks["vaultsync-index"]
    assert set(index["stages"]) >= {"post-commit", "post-merge", "post-rewrite", "post-checkout"}
    assert index["always_run"] is True and index["pass_filenames"] is False
    check = hooks["vaultsync-check"]
    assert check["always_run"] is True and check["pass_filenames"] is False
    assert os.access(REPO_ROOT / "githooks" / "post-commit", os.X_OK)


@pytest.mark.parametrize("how", ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT"])
def test_gh08_a_hooks_path_set_where_only_git_reads_it_is_reported(vault, tmp_path, monkeypatch, how):
    """GH-08: libgit2 reads no GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM or GIT_CONFIG_COUNT; a core.hooksPath
    set there went unseen: install said "installed" into .git/hooks, which git never ran, and status
    agreed. The setting is read as git reads it."""
    hooks = tmp_path / "elsewhere"
    if how == "GIT_CONFIG_COUNT":
        monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
        monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.hooksPath")
        monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(hooks))
    else:
        (tmp_path / "cfg").write_text(f"[core]\n\thooksPath = {hooks}\n")
        monkeypatch.setenv(how, str(tmp_path / "cfg"))
    res = subprocess.run([sys.executable, "-m", "vaultsync", "install"], cwd=vault.root, capture_output=True, text=True)
    assert res.returncode == 1 and f"hooks not active: core.hooksPath={hooks}" in res.stderr, res.stderr
    assert not (vault.root / ".git/hooks/post-commit").exists() or "vaultsync" not in \
        (vault.root / ".git/hooks/post-commit").read_text()
    assert "core.hooksPath" in status(vault.root)["hooks_problem"]
