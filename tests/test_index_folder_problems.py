"""An index folder vaultsync cannot use as it is: a file where a derived folder belongs, a damaged SQLite
file, a read-only or full index folder, a bare repository, an unusable model cache (real git, real SQLite
and LanceDB files in temporary folders; embedders hashed)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Vault, run_cli


def _synced(vault: Vault, notes: int = 3) -> Path:
    """``vault`` with ``notes`` notes committed and synced; its index folder."""
    for i in range(notes):
        vault.write(f"docs/n{i}.md", f"# n{i}\nThe note number {i}, about kestrel{i}.\n")
    vault.commit("notes")
    assert run_cli(["sync", "--quiet"], vault.root).code == 0
    return vault.root / ".git/vaultsync"


def _status(root: Path) -> dict:  # type: ignore[type-arg]
    res = run_cli(["status", "--json"], root)
    assert res.code == 0 and "Traceback" not in res.err, res.err
    return json.loads(res.out)


@pytest.mark.parametrize("blocked", ["lance", "lance/table", "embeddings"])
def test_a_file_where_a_derived_folder_belongs_is_replaced_by_the_next_sync(vault, hashed_models, blocked):
    index = _synced(vault)
    target = index / blocked if blocked != "lance/table" else sorted((index / "lance").glob("chunks_*.lance"))[0]
    shutil.rmtree(target)
    target.write_text("a stray file")
    vault.write("docs/new.md", "# new\nA note about ospreys.\n")
    vault.commit("new")
    res = run_cli(["sync", "--quiet"], vault.root)
    assert res.code == 0 and res.err == "", res.err
    assert target.is_dir()
    info = _status(vault.root)
    assert info["up_to_date"] and not info["lancedb_behind"] and not info["last_error"], info
    assert vault.git("status", "--porcelain").stdout == ""  # the notes are untouched


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlink_to_a_file_where_the_lance_folder_belongs_is_said_and_left(vault, hashed_models, tmp_path, dangling):
    """The link is the user's: never removed, and the sync says what it is, not mkdir's "File exists"."""
    index = _synced(vault)
    shutil.rmtree(index / "lance")
    (tmp_path / "elsewhere").write_text("the user's file\n")
    (index / "lance").symlink_to(tmp_path / ("gone" if dangling else "elsewhere"))
    vault.write("docs/new.md", "# new\nA note about ospreys.\n")
    vault.commit("new")
    res = run_cli(["sync", "--quiet"], vault.root)
    assert res.code == 1 and "Traceback" not in res.err, res.err
    what = "nothing (a dangling link)" if dangling else "a file"
    assert f"{index / 'lance'}: a symbolic link to {what}, where a folder belongs" in res.err, res.err
    assert (index / "lance").is_symlink() and (tmp_path / "elsewhere").read_text() == "the user's file\n"


def test_status_says_a_file_where_the_index_folder_belongs(vault, hashed_models):
    index = _synced(vault)
    shutil.rmtree(index)
    index.write_text("a stray file")
    info = _status(vault.root)
    assert f"the index folder {index} is not a folder" in info["write_problem"], info
    assert "warning     the index folder" in run_cli(["status"], vault.root).out


def test_status_says_a_read_only_index_folder_is_not_writable(vault, hashed_models):
    """Made read-only by a bind mount in a user namespace (root too); where that is not allowed, skipped."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare")
    index = _synced(vault)
    script = ("mount --bind .git/vaultsync .git/vaultsync && mount -o remount,ro,bind .git/vaultsync || exit 77; "
              f"{sys.executable} -m vaultsync status --json")
    res = subprocess.run(["unshare", "-rm", "bash", "-c", script], cwd=vault.root, capture_output=True, text=True)
    if res.returncode == 77:
        pytest.skip(f"no read-only bind mount here: {res.stderr.strip()[:200]}")
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    info = json.loads(res.stdout)
    said = f"the index folder {index} is not writable: {os.strerror(errno.EROFS)}"
    assert info["write_problem"].startswith(said), info
    assert info["up_to_date"]  # the index itself still holds HEAD


def test_status_says_a_full_disk_and_the_hooks_sync_records_why_it_failed(vault, hashed_models, monkeypatch):
    index = _synced(vault)
    vault.write("docs/new.md", "# new\nA note about ospreys.\n")
    vault.commit("new")
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def no_space(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(index / "index.sqlite"))

    monkeypatch.setattr("vaultsync.index.sync.sync", no_space)
    hook = run_cli(["sync", "--hook", "post-commit"], vault.root)
    assert hook.code == 0  # a hook never fails git
    with monkeypatch.context() as m:
        m.setattr("vaultsync.index.layout.os.fsync", lambda fd: (_ for _ in ()).throw(full))
        info = _status(vault.root)
    said = os.strerror(errno.ENOSPC)
    assert info["write_problem"].startswith(f"the index folder {index} is not writable: {said}"), info
    assert info["last_error"] == f"cannot write {index / 'index.sqlite'}: {said}", info
    assert not list(index.glob(".write-probe-*"))  # the probe leaves nothing behind
    assert "write_problem" not in _status(vault.root)  # space again: nothing to say


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_status_says_a_damaged_index_file_and_how_to_repair_it_and_a_hooks_sync_does(vault, hashed_models, damage):
    index = _synced(vault)
    sqlite = index / "index.sqlite"
    for suffix in ("-wal", "-shm"):
        Path(f"{sqlite}{suffix}").unlink(missing_ok=True)
    data = sqlite.read_bytes()
    sqlite.write_bytes({"garbage": os.urandom(len(data)), "truncated": data[:len(data) // 3], "empty": b""}[damage])
    info = _status(vault.root)
    assert info["index_damaged"] and f"the index file {sqlite} is damaged (" in info["index_problem"], info
    assert "`vaultsync index --rebuild`" in info["index_problem"] and not info["up_to_date"]
    text = run_cli(["status"], vault.root).out
    assert "(damaged)" in text and "NEEDS A REBUILD" in text and "(none)" not in text, text
    assert run_cli(["sync", "--hook", "post-commit"], vault.root).code == 0
    info = _status(vault.root)
    assert info["up_to_date"] and info["notes"] == 3 and "index_problem" not in info, info


def test_status_says_a_folder_where_the_index_file_belongs(vault, hashed_models):
    sqlite = _synced(vault) / "index.sqlite"
    for path in sqlite.parent.glob("index.sqlite*"):
        path.unlink()
    (sqlite / "something").mkdir(parents=True)
    info = _status(vault.root)
    assert info["index_problem"] == f"the index file {sqlite} is a folder: remove it, then run `vaultsync sync`"
    assert run_cli(["sync", "--hook", "post-commit"], vault.root).code == 0
    assert _status(vault.root)["last_error"] == f"cannot write {sqlite}: {os.strerror(errno.EISDIR)}"
    assert (sqlite / "something").is_dir()  # not vaultsync's to delete


def test_status_of_a_bare_repository_names_it_not_its_parent_folder(vault, hashed_models, tmp_path):
    _synced(vault)
    bare = tmp_path / "served.git"
    vault.git("clone", "-q", "--bare", str(vault.root), str(bare))
    assert run_cli(["sync", "--quiet"], bare).code == 0  # HEAD's commit is indexed from git alone
    info = _status(bare)
    assert info["repository"] == str(bare.resolve()) and info["bare"] and info["up_to_date"], info
    assert "no commit or checkout hooks" in info["hooks_problem"]
    text = run_cli(["status"], bare).out
    assert f"repository  {bare.resolve()} (bare: HEAD's commit is indexed; no working tree)" in text, text
    assert not _status(vault.root)["bare"]


@pytest.mark.parametrize("command", [["models", "build"], ["search", "kestrel1", "--no-daemon"], ["index", "--rebuild"]])
def test_a_cache_dir_that_is_a_file_is_a_one_line_error(vault, monkeypatch, tmp_path, command):
    from conftest import hash_embedders

    with monkeypatch.context() as m:
        hash_embedders(m)
        _synced(vault)
    cache = tmp_path / "cache-file"
    cache.write_text("not a folder")
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(cache))
    res = run_cli(command, vault.root)
    said = f"vaultsync {command[0]}: error: VAULTSYNC_CACHE_DIR={cache}: not a folder (a file is in its place)\n"
    assert res.code == 1 and res.err.endswith(said) and "internal error" not in res.err, res.err
    assert not (vault.root / ".git/vaultsync/crash.log").exists()
    assert cache.read_text() == "not a folder"


def test_a_read_only_cache_dir_is_a_one_line_error(vault, tmp_path):
    """Made read-only by a bind mount in a user namespace (root too); where that is not allowed, skipped."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare")
    cache = tmp_path / "cache"
    cache.mkdir()
    script = (f"mount --bind {cache} {cache} && mount -o remount,ro,bind {cache} || exit 77; "
              f"{sys.executable} -m vaultsync models build")
    res = subprocess.run(["unshare", "-rm", "bash", "-c", script], cwd=vault.root, capture_output=True, text=True,
                         env={**os.environ, "VAULTSYNC_CACHE_DIR": str(cache)})
    if res.returncode == 77:
        pytest.skip(f"no read-only bind mount here: {res.stderr.strip()[:200]}")
    said = f"vaultsync models: error: VAULTSYNC_CACHE_DIR={cache}: {os.strerror(errno.EROFS)}\n"
    assert res.returncode == 1 and res.stderr.endswith(said), res.stderr


@pytest.mark.parametrize("last, said", [
    ("/usr/bin/python3: No module named vaultsync", True),
    ("sh: 1: python3: not found", True),
    (".git/hooks/post-commit: 44: /gone/venv/bin/python: not found", True),
    ("bash: /gone/venv/bin/python3.11: No such file or directory", True),
    ("setsid: failed to execute /gone/venv/bin/python: No such file or directory", True),
    ("vaultsync sync: error: cannot write /x/.git/vaultsync/index.sqlite: No such file or directory", False),
    ("vaultsync sync: warning: docs/python.md: not found in HEAD", False),
    ("indexed 1a2b3c: +1 ~0 -0", False),
])
def test_only_a_hook_that_could_not_start_vaultsync_is_said(tmp_path, last, said):
    """The shells' and Python's own words for a missing interpreter or package, not a sync's error about a file
    (which the sync records itself), and only when the log is newer than the last sync."""
    import os

    from vaultsync.index.status import hook_start_failure

    synced, log = tmp_path / "verified", tmp_path / "hook.log"
    synced.write_text("")
    log.write_text(f"earlier line\n{last}\n\n")
    os.utime(synced, (1_000, 1_000))
    assert (hook_start_failure(log, synced) is not None) == said
    os.utime(log, (500, 500))  # written before the last sync: that sync ran, whatever the log says
    assert hook_start_failure(log, synced) is None

