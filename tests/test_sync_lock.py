"""The sync lock: inspected without being taken, no lost wake-up, dead and reused owners.

Field case GH-10c: a sync that finds the lock held marks the index dirty and
leaves; whoever holds the lock must act on that mark, including one set between
the holder's last check and its release.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import Vault

from vaultsync.index.lock import Owner, SyncLock, is_alive, owner_path, read_owner, running_sync, sync_running


def paths(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "vaultsync" / "sync.lock", tmp_path / "vaultsync" / "dirty"


def test_the_holder_is_recorded_and_the_record_goes_with_the_lock(tmp_path):
    lock_path, dirty = paths(tmp_path)
    with SyncLock(lock_path, dirty, hook="post-commit") as held:
        assert held
        owner = running_sync(lock_path)
        assert owner is not None and owner.pid == os.getpid() and owner.hook == "post-commit"
    assert not owner_path(lock_path).exists() and not sync_running(lock_path)


def test_a_colliding_sync_marks_dirty_and_the_holder_sees_it_even_after_its_last_check(tmp_path):
    lock_path, dirty = paths(tmp_path)
    holder = SyncLock(lock_path, dirty)
    assert holder.__enter__()
    holder.take_dirty()
    assert not holder.take_dirty()  # the holder's last check: nothing asked
    with SyncLock(lock_path, dirty) as other:  # a hook's sync arrives now
        assert not other
    holder.release()
    assert holder.reacquire_if_dirty()  # ... and is not lost
    assert holder.take_dirty()
    holder.release()
    assert not holder.reacquire_if_dirty()


def test_reacquire_leaves_the_mark_to_a_sync_that_took_the_lock_meanwhile(tmp_path):
    lock_path, dirty = paths(tmp_path)
    first = SyncLock(lock_path, dirty)
    assert first.__enter__()
    first.release()
    second = SyncLock(lock_path, dirty)
    assert second.__enter__()  # marks dirty before taking the lock: it runs for the mark itself
    assert not first.reacquire_if_dirty()
    assert second.take_dirty()
    second.release()


def test_a_waiting_sync_does_not_mark_dirty(tmp_path):
    lock_path, dirty = paths(tmp_path)
    with SyncLock(lock_path, dirty, wait=-1) as held:
        assert held and not dirty.exists()


def test_status_never_takes_the_lock_from_a_sync(vault: Vault):
    """Status, polled in a loop, must never make a sync find the lock busy."""
    from vaultsync.index.status import collect
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for

    vault.write("docs/a.md", "# a\n")
    vault.commit("a")
    repo = open_repo(vault.root)
    layout = layout_for(repo)
    stop = threading.Event()

    def poll() -> None:
        rounds = 0
        while not stop.is_set():
            if rounds % 50 == 0:
                collect(open_repo(vault.root))
            else:
                sync_running(layout.lock)  # what status asks, at a higher rate
            rounds += 1

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        busy = 0
        for _ in range(300):
            with SyncLock(layout.lock, layout.dirty) as held:
                busy += not held
    finally:
        stop.set()
        poller.join()
    assert busy == 0


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(proc.stdout)


def test_an_owner_that_died_is_not_running_and_status_says_it_was_killed(vault: Vault):
    from vaultsync.index.status import collect
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for

    vault.write("docs/a.md", "# a\n")
    vault.commit("a")
    layout = layout_for(open_repo(vault.root))
    layout.dir.mkdir(parents=True, exist_ok=True)
    owner_path(layout.lock).write_text(json.dumps({"pid": _dead_pid(), "started": 1.0e9, "hook": "post-commit"}))
    info = collect(open_repo(vault.root))
    assert info["sync_running"] is False
    assert "killed before it finished" in info["last_error"] and "post-commit" in info["last_error"]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process start times come from /proc")
def test_a_reused_pid_is_not_the_owner():
    assert not is_alive(Owner(os.getpid(), 0.0, None, proc_start="1"))  # same pid, another process
    assert is_alive(Owner(os.getpid(), 0.0))


def test_an_unreadable_owner_record_is_no_owner(tmp_path):
    lock_path, _ = paths(tmp_path)
    lock_path.parent.mkdir(parents=True)
    owner_path(lock_path).write_text("{not json")
    assert read_owner(lock_path) is None and not sync_running(lock_path)


def test_a_pass_that_reads_nothing_keeps_the_warnings_of_the_pass_that_indexed(vault: Vault):
    """A `vaultsync sync` typed while the hook's sync ran marked the index dirty; the hook's sync went again,
    found the tree it had just indexed, and reported that pass ("up-to-date", no warnings): the broken
    notes it had skipped vanished from `vaultsync status`."""
    from conftest import HashEmbedder
    from vaultsync.git import open_repo
    from vaultsync.index.layout import layout_for
    from vaultsync.index.sync import sync

    vault.write("docs/a.md", "---\ntitle: broken: yaml\n---\nbody\n")
    vault.write("docs/b.md", "# b\n")
    vault.commit("a", "--no-verify")
    repo = open_repo(vault.root)
    layout = layout_for(repo)
    passes = []

    def factory(config, name):  # type: ignore[no-untyped-def]
        passes.append(name)
        SyncLock(layout.lock, layout.dirty).mark_dirty()  # a sync that waits for this one, during its first pass
        return HashEmbedder(name)

    report = sync(repo, embedder_factory=factory, wait=30)
    assert passes and not layout.dirty.exists()  # the mark was taken: a second pass ran
    assert report.status == "updated" and any("docs/a.md" in w and "FM005" in w for w in report.warnings), report


def test_a_failed_write_of_the_state_or_the_owner_record_leaves_no_temporary_file(tmp_path, monkeypatch):
    """A full disk left empty `state.tmp` and `sync.owner.<pid>.tmp` in the index folder for good (a full
    disk cannot be made here: the write is made to fail as ENOSPC does, after the file is created)."""
    import errno

    from vaultsync.index.layout import IndexLayout
    from vaultsync.index.state import write_state

    def full(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError(errno.ENOSPC, "No space left on device")

    layout = IndexLayout(tmp_path, tmp_path)
    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError):
        write_state(layout, last_status="updated")
    lock_path, dirty = paths(tmp_path)
    with pytest.raises(OSError):
        with SyncLock(lock_path, dirty):
            pass
    assert not [p.name for p in tmp_path.rglob("*.tmp")]
