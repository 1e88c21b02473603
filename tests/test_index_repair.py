"""Syncs that must not be lost, stuck or left unrepaired (real git, real model, hooks installed).

* damaged or foreign derived stores — a SQLite file with garbage pages, one written by
  an older schema, a LanceDB table with another schema — converge to what
  ``index --rebuild`` builds, on the next hook sync;
* a hook's sync stopped by its timeout is reported as an error, not as running;
* a user's ``vaultsync sync`` waits for a running sync and leaves the index at HEAD;
* a repository path holding ``#``, ``?``, ``%`` and spaces works end to end;
* syncs and status interleaved for hundreds of rounds never leave the index behind.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import Vault, assert_same_index, factory_with, git, index_state, run_cli
from test_index_hooks import memsearch, status, wait_indexed

pytestmark = pytest.mark.slow


def rebuilt(root: Path) -> dict[str, object]:
    subprocess.run([sys.executable, "-m", "vaultsync", "index", "--rebuild", "--quiet"], cwd=root, check=True)
    return index_state(root)


def _notes(vault: Vault, n: int, word: str = "marker") -> None:
    for i in range(n):
        vault.write(f"docs/{word}-{i}.md", f"# {word} {i}\nThe {word}{i}x note, number {i}, links [[{word}-0]].\n")


def _commit_and_wait(vault: Vault, message: str) -> dict:  # type: ignore[type-arg]
    vault.commit(message)
    return wait_indexed(vault.root)


def _garble(db_path: Path) -> None:
    """Overwrite every page but the first two (header, meta) with random bytes."""
    db = sqlite3.connect(db_path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page, pages = db.execute("PRAGMA page_size").fetchone()[0], db.execute("PRAGMA page_count").fetchone()[0]
    db.close()
    with open(db_path, "r+b") as f:
        for n in range(2, pages):
            f.seek(n * page)
            f.write(os.urandom(page))


def test_a_sqlite_file_with_garbage_pages_is_rebuilt_by_the_next_hook_sync(hooked):
    _notes(hooked, 6)
    _commit_and_wait(hooked, "init")
    _garble(hooked.root / ".git/vaultsync/index.sqlite")
    hooked.write("docs/after.md", "# after\nThe aftercorruption note.\n")
    info = _commit_and_wait(hooked, "after")
    assert info["notes"] == 7 and "index_problem" not in info and not info["last_error"]
    assert memsearch(hooked.root, "aftercorruption")[0] == "docs/after.md"
    assert_same_index(index_state(hooked.root), rebuilt(hooked.root))


def test_status_finding_garbage_pages_keeps_its_promise_of_a_repair(hooked):
    _notes(hooked, 4)
    _commit_and_wait(hooked, "init")
    _garble(hooked.root / ".git/vaultsync/index.sqlite")
    assert "the next sync repairs it" in status(hooked.root)["index_problem"]
    subprocess.run([sys.executable, "-m", "vaultsync", "sync", "--quiet"], cwd=hooked.root, check=True)  # same HEAD
    info = status(hooked.root)
    assert "index_problem" not in info and info["up_to_date"] and info["notes"] == 4
    assert_same_index(index_state(hooked.root), rebuilt(hooked.root))


@pytest.mark.parametrize("page", [2, 3, -1])
def test_one_damaged_page_is_found_by_a_typed_sync_at_the_same_head_and_search_says_so(hooked, page):
    """A damaged page where the meta table stays readable: `vaultsync sync` answered "index up-to-date" at its
    fast path, status called the index up to date, and search ended in "internal error" (exit 3)."""
    _notes(hooked, 6)
    _commit_and_wait(hooked, "init")
    db_path = hooked.root / ".git/vaultsync/index.sqlite"
    size = 4096
    pages = db_path.stat().st_size // size
    with open(db_path, "r+b") as f:
        f.seek((page if page >= 0 else pages + page) * size)
        f.write(os.urandom(size))
    info = status(hooked.root)
    assert not info["up_to_date"] and "changed since the last sync" in info["index_problem"], info
    found = subprocess.run([sys.executable, "-m", "vaultsync", "search", "marker3x", "--no-daemon"], cwd=hooked.root,
                           capture_output=True, text=True)
    assert found.returncode in (0, 1) and "internal error" not in found.stderr, found.stderr
    assert found.returncode == 0 or "the index is damaged" in found.stderr, found.stderr
    subprocess.run([sys.executable, "-m", "vaultsync", "sync", "--quiet"], cwd=hooked.root, check=True)  # same HEAD
    info = status(hooked.root)
    assert "index_problem" not in info and info["up_to_date"] and info["notes"] == 6
    assert_same_index(index_state(hooked.root), rebuilt(hooked.root))


def test_an_index_written_by_an_older_schema_is_rebuilt_by_the_next_hook_sync(hooked):
    _notes(hooked, 4)
    _commit_and_wait(hooked, "init")
    db = sqlite3.connect(hooked.root / ".git/vaultsync/index.sqlite")
    with db:  # schema 9: one vector per chunk, no kind column, no fingerprint
        db.execute("DROP TABLE vectors")
        db.execute("CREATE TABLE vectors (model TEXT, id TEXT, vector BLOB)")
        db.execute("UPDATE meta SET value = '9' WHERE key = 'schema_version'")
        db.execute("DELETE FROM meta WHERE key = 'schema_fingerprint'")
    db.close()
    hooked.write("docs/new.md", "# new\nThe newschemaword note.\n")
    info = _commit_and_wait(hooked, "new")
    assert info["notes"] == 5 and not info["last_error"]
    assert memsearch(hooked.root, "newschemaword")[0] == "docs/new.md"
    assert_same_index(index_state(hooked.root), rebuilt(hooked.root))


def test_a_hook_sync_after_an_older_schema_does_not_stop_at_the_fast_path(hooked):
    _notes(hooked, 3)
    _commit_and_wait(hooked, "init")
    db = sqlite3.connect(hooked.root / ".git/vaultsync/index.sqlite")
    with db:
        db.execute("UPDATE meta SET value = 'old' WHERE key = 'schema_fingerprint'")
    db.close()
    hooked.git("commit", "-q", "--allow-empty", "-m", "empty")  # same tree: only the schema is stale
    wait_indexed(hooked.root)
    fingerprint = sqlite3.connect(hooked.root / ".git/vaultsync/index.sqlite").execute(
        "SELECT value FROM meta WHERE key = 'schema_fingerprint'").fetchone()[0]
    from vaultsync.index.format import SCHEMA_FINGERPRINT

    assert fingerprint == SCHEMA_FINGERPRINT


@pytest.mark.parametrize("key, value, said", [
    ("schema_fingerprint", "0123456789abcdef", "built by another vaultsync version; the next sync rebuilds it"),
    ("config_key", "|0.0.1|17|5|100", "read by another vaultsync version; the next sync reads every note again"),
])
def test_status_does_not_call_an_index_of_another_version_up_to_date(hooked, key, value, said):
    """An index an older vaultsync wrote (another schema, or notes read by another reader) was reported "up to
    date" while the next sync would rebuild or re-read it."""
    _notes(hooked, 2)
    assert _commit_and_wait(hooked, "init")["up_to_date"] is True
    db = sqlite3.connect(hooked.root / ".git/vaultsync/index.sqlite")
    with db:
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
    db.close()
    info = status(hooked.root)
    assert info["up_to_date"] is False and said in info["index_problem"], info
    assert said in run_cli(["status"], hooked.root).out
    assert run_cli(["sync", "--wait", "60"], hooked.root).code == 0
    info = status(hooked.root)
    assert info["up_to_date"] is True and "index_problem" not in info, info


def test_a_lancedb_table_with_another_schema_is_rebuilt_by_the_next_hook_sync(hooked):
    import lancedb
    import pyarrow as pa

    _notes(hooked, 5)
    _commit_and_wait(hooked, "init")
    lance = hooked.root / ".git/vaultsync/lance"
    db = lancedb.connect(str(lance))
    name = "chunks_multilingual_e5_small_384"
    db.drop_table(name)
    old = pa.schema([("id", pa.string()), ("vector", pa.list_(pa.float32(), 384))])  # no path, no hash
    db.create_table(name, data=pa.table({"id": ["x#0"], "vector": pa.FixedSizeListArray.from_arrays(
        pa.array([0.0] * 384, pa.float32()), 384)}, schema=old))
    hooked.write("docs/lance.md", "# lance\nThe lanceschemaword note.\n")
    info = _commit_and_wait(hooked, "lance")
    assert not info["last_error"] and not info["lancedb_behind"]
    table = lancedb.connect(str(lance)).open_table(name)
    assert "hash" in table.schema.names
    incremental = sorted(table.to_arrow().column("id").to_pylist())
    rebuilt(hooked.root)
    assert incremental == sorted(lancedb.connect(str(lance)).open_table(name).to_arrow().column("id").to_pylist())


def test_a_deleted_vector_table_is_noticed_even_when_sqlite_is_current(hooked):
    import shutil

    _notes(hooked, 3)
    _commit_and_wait(hooked, "init")
    table = hooked.root / ".git/vaultsync/lance/chunks_multilingual_e5_small_384.lance"
    shutil.rmtree(table)
    assert status(hooked.root)["lancedb_behind"]  # status said "up to date" and nothing else
    subprocess.run([sys.executable, "-m", "vaultsync", "sync", "--quiet"], cwd=hooked.root, check=True)
    assert table.is_dir() and not status(hooked.root)["lancedb_behind"]


def test_a_hook_sync_stopped_by_its_timeout_is_an_error_not_running(vault, model_env):
    vault.write(".vaultsync.yaml", "vault: docs\n")
    _notes(vault, 40)  # far more than a fraction of a second of embedding
    vault.commit("init")
    env = {**os.environ, "VAULTSYNC_SYNC_TIMEOUT": "0.2"}
    res = subprocess.run([sys.executable, "-m", "vaultsync", "sync", "--hook", "post-commit", "--quiet"],
                         cwd=vault.root, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0  # a hook never fails
    info = status(vault.root)
    assert info["last_error"], (res.stderr, (vault.root / ".git/vaultsync/state.json").read_text())
    assert "timed out after 0.2 s" in info["last_error"]
    assert info["sync_running"] is False and info["up_to_date"] is False
    text = subprocess.run([sys.executable, "-m", "vaultsync", "status"], cwd=vault.root, capture_output=True,
                          text=True, check=True).stdout
    assert "last error  SyncTimeout: sync timed out" in text and "a sync is running" not in text
    assert "not by vaultsync" not in text  # its own sync stopped midway, not another program (an attacker's finding)
    assert "index_problem" not in info or info["index_problem"].startswith("a sync stopped before it finished"), info
    subprocess.run([sys.executable, "-m", "vaultsync", "sync", "--quiet"], cwd=vault.root, check=True)
    info = status(vault.root)
    assert info["up_to_date"] and info["notes"] == 40 and not info["last_error"]


def test_a_users_sync_waits_for_the_running_hook_sync_and_ends_at_head(vault, model_env):
    vault.write(".vaultsync.yaml", "vault: docs\n")
    _notes(vault, 40)
    vault.commit("init")
    hook = subprocess.Popen([sys.executable, "-m", "vaultsync", "sync", "--hook", "post-commit", "--quiet"],
                            cwd=vault.root)
    try:
        deadline = time.monotonic() + 120
        while not status(vault.root)["sync_running"]:
            assert hook.poll() is None and time.monotonic() < deadline, "the hook's sync never started"
            time.sleep(0.05)
        vault.write("docs/late.md", "# late\nThe latecomerword note.\n")
        vault.commit("late")  # no hooks installed: only the user's sync will see this commit
        user = subprocess.run([sys.executable, "-m", "vaultsync", "sync"], cwd=vault.root, capture_output=True,
                              text=True, timeout=600)
    finally:
        hook.wait(timeout=600)
    assert user.returncode == 0, user.stderr
    assert "waiting for the running sync" in user.stderr and "busy" not in user.stdout
    info = status(vault.root)
    assert info["up_to_date"] and info["notes"] == 41
    res = subprocess.run([sys.executable, "-m", "vaultsync", "search", "latecomerword", "--no-daemon"],
                         cwd=vault.root, capture_output=True, text=True, check=True)
    assert "docs/late.md" in res.stdout and "behind" not in res.stdout


def test_a_repository_path_with_uri_characters_works_end_to_end(tmp_path, model_env):
    parent = tmp_path / "odd parent"
    root = parent / "vault #1 ?x=y %41 100%"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    vault = Vault(root)
    vault.write(".vaultsync.yaml", "vault: docs\n")
    vault.write("docs/odd.md", "# odd\nThe hashquestionpercent note.\n")
    vault.commit("odd")
    before = sorted(p.name for p in parent.iterdir())
    outside = sorted(p.name for p in tmp_path.iterdir())
    sync = subprocess.run([sys.executable, "-m", "vaultsync", "sync", "--quiet"], cwd=root, capture_output=True,
                          text=True)
    assert sync.returncode == 0, sync.stderr
    info = status(root)
    assert info["up_to_date"] and info["notes"] == 1 and "index_problem" not in info
    res = subprocess.run([sys.executable, "-m", "vaultsync", "search", "hashquestionpercent", "--no-daemon"],
                         cwd=root, capture_output=True, text=True)
    assert res.returncode == 0 and "docs/odd.md" in res.stdout, res.stdout + res.stderr
    hook = subprocess.run([sys.executable, "-m", "vaultsync", "sync", "--hook", "post-commit", "--quiet"], cwd=root,
                          capture_output=True, text=True)
    assert hook.returncode == 0 and not status(root)["last_error"]
    assert sorted(p.name for p in parent.iterdir()) == before  # no stray files beside the repository
    assert sorted(p.name for p in tmp_path.iterdir()) == outside


ROUNDS = int(os.environ.get("VAULTSYNC_SYNC_ROUNDS", "50"))  # ~15 s on a 2-core machine; set 2000 to soak


def test_syncs_and_status_interleaved_never_leave_the_index_behind(vault, embedder):
    """Each round commits, then races two hook-style syncs (no waiting) against status; once the
    round's syncs have returned, the index must hold HEAD, whichever sync did the work."""
    from vaultsync.index.status import collect
    from vaultsync.git import head_commit_id, open_repo
    from vaultsync.index.sync import sync

    vault.write(".vaultsync.yaml", "vault: docs\nindex:\n  embedders: [multilingual-e5-small]\n")
    factory = factory_with(embedder)
    behind: list[int] = []
    for r in range(ROUNDS):
        vault.write(f"docs/r{r % 7}.md", f"# round {r % 7}\nRevision {r}.\n")
        vault.commit(f"r{r}")
        threads = [threading.Thread(target=sync, args=(open_repo(vault.root),),
                                    kwargs={"embedder_factory": factory, "wait": 0.0}) for _ in range(2)]
        threads.append(threading.Thread(target=collect, args=(open_repo(vault.root),)))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        info = collect(open_repo(vault.root))
        if info["indexed_commit"] != head_commit_id(open_repo(vault.root)) or info["sync_running"]:
            behind.append(r)
    assert behind == []


def _real_error(kind: str, tmp: Path) -> sqlite3.DatabaseError:
    """A real SQLite error of ``kind``: ``full`` (SQLITE_FULL, a page budget spent), ``notadb``, ``readonly``."""
    path = tmp / f"{kind}.sqlite"
    try:
        if kind == "full":
            db = sqlite3.connect(path)
            db.execute("CREATE TABLE t (x BLOB)")
            db.execute("PRAGMA max_page_count = 3")
            db.execute("INSERT INTO t VALUES (?)", (os.urandom(64_000),))
        elif kind == "notadb":
            path.write_bytes(os.urandom(8192))
            sqlite3.connect(path).execute("SELECT * FROM sqlite_master").fetchall()
        else:
            sqlite3.connect(path).execute("CREATE TABLE t (x)")
            sqlite3.connect(f"file:{path}?mode=ro", uri=True).execute("INSERT INTO t VALUES (1)")
    except sqlite3.DatabaseError as exc:
        return exc
    raise AssertionError(f"no {kind} error")


@pytest.mark.parametrize("kind", ["full", "readonly"])
def test_a_full_disk_mid_sync_keeps_the_last_good_index(vault, model_env, monkeypatch, tmp_path, kind):
    """GH-10: SQLITE_FULL (or a read-only file) mid-sync is the machine's state, not damage: dropping the
    index to rebuild it lost the last good one, and the rebuild failed the same way."""
    from vaultsync.git import open_repo
    from vaultsync.index import sync as sync_module

    _notes(vault, 3)
    vault.commit("init")
    sync_module.sync(open_repo(vault.root))
    before = index_state(vault.root)
    error = _real_error(kind, tmp_path)
    vault.write("docs/more.md", "# more\nThe morenote.\n")
    vault.commit("more")
    monkeypatch.setattr(sync_module, "_sync_once", lambda *a, **k: (_ for _ in ()).throw(error))
    with pytest.raises(sqlite3.DatabaseError):
        sync_module.sync(open_repo(vault.root))
    assert_same_index(index_state(vault.root), before)  # still there, still the last good commit's
    monkeypatch.undo()
    sync_module.sync(open_repo(vault.root))
    assert "docs/more.md" in {row[0] for row in index_state(vault.root)["notes"]}


def test_only_a_damaged_file_counts_as_damage(tmp_path):
    from vaultsync.index.damage import is_damage as _damage

    assert _damage(_real_error("notadb", tmp_path))
    assert not _damage(_real_error("full", tmp_path)) and not _damage(_real_error("readonly", tmp_path))
    assert not _damage(sqlite3.OperationalError("database is locked"))
    assert _damage(sqlite3.DatabaseError("database disk image is malformed"))


@pytest.mark.parametrize("blocked", ["vaultsync/lance", "vaultsync/embeddings", "vaultsync"])
@pytest.mark.parametrize("command", [["sync"], ["index", "--rebuild"], ["index", "--rebuild", "--quiet"]])
def test_a_file_where_an_index_folder_belongs_is_an_environment_error(vault, model_env, blocked, command):
    """``index --rebuild`` called a file where the index's folder belongs an internal error (exit 3, a crash
    report), where ``sync`` says what it cannot write (exit 1). Both say it; the notes are untouched. A
    file where the vectors' or the caches' folder belongs (derived, like all under it) is replaced by the
    folder, and the command succeeds."""
    from conftest import run_cli

    _notes(vault, 2)
    vault.commit("init")
    assert run_cli(["sync", "--quiet"], vault.root).code == 0
    target = vault.root / ".git" / blocked
    shutil.rmtree(target, ignore_errors=True)
    target.write_text("x")
    vault.write("docs/new.md", "# new\nA note that needs indexing.\n")
    vault.commit("new")  # (no hooks installed here)
    res = run_cli(command, vault.root)
    if blocked != "vaultsync":  # a derived cache's folder: the file is replaced by it
        assert res.code == 0 and "warning" not in res.err and target.is_dir(), res.err
        assert not list((vault.root / ".git/vaultsync").glob("*.rebuilding-old"))
        info = json.loads(run_cli(["status", "--json"], vault.root).out)
        assert info["up_to_date"] and not info["lancedb_behind"] and not info["last_error"], info
        return
    assert res.code == 1 and "internal error" not in res.err, res.err
    assert f"vaultsync {command[0]}: " in res.err and "cannot" in res.err, res.err
    assert not (vault.root / ".git" / "vaultsync" / "crash.log").exists() or blocked == "vaultsync"
    assert vault.git("status", "--porcelain").stdout.strip() == ""


@pytest.mark.parametrize("left", ["empty", "partial-with-wal", "no-new-file"])
def test_a_rebuild_killed_before_it_finished_gets_its_old_index_back(vault, model_env, left):
    """SIGKILL skips the rebuild's own put-back: the next sync puts the old index back (its "-wal" never
    replayed into it), brings it to HEAD incrementally, and leaves no aside copy behind."""
    from conftest import run_cli

    from vaultsync.git import open_repo
    from vaultsync.index.aside import set_aside
    from vaultsync.index.layout import layout_for
    from vaultsync.vault.config import load_config

    _notes(vault, 4)
    vault.commit("init")
    assert run_cli(["sync", "--quiet"], vault.root).code == 0
    index_dir = vault.root / ".git/vaultsync"
    layout = layout_for(open_repo(vault.root), load_config(vault.root))
    set_aside(layout)  # where a killed `index --rebuild` stops: old files aside, a new index begun
    if left != "no-new-file":
        sqlite3.connect(index_dir / "index.sqlite").execute("CREATE TABLE t (x)").connection.commit()
    if left == "partial-with-wal":
        (index_dir / "index.sqlite-wal").write_bytes(os.urandom(4096))
    vault.write("docs/late.md", "# late\nA note committed after the kill.\n")
    vault.commit("late")
    res = run_cli(["sync", "--quiet"], vault.root)
    assert res.code == 0, res.err
    assert not list(index_dir.glob("*.rebuilding-old"))
    assert_same_index(index_state(vault.root), rebuilt(vault.root))


def test_a_rebuild_clears_stale_aside_copies_of_every_name(vault, model_env):
    from conftest import run_cli

    _notes(vault, 2)
    vault.commit("init")
    index_dir = vault.root / ".git/vaultsync"
    assert run_cli(["sync", "--quiet"], vault.root).code == 0
    for name in ("index.sqlite-wal.rebuilding-old", "index.sqlite-shm.rebuilding-old"):
        (index_dir / name).write_bytes(b"stale")
    assert run_cli(["index", "--rebuild", "--quiet"], vault.root).code == 0
    assert not list(index_dir.glob("*.rebuilding-old"))


def test_a_search_during_a_rebuild_says_the_index_is_being_rebuilt(vault, model_env):
    """Readers between a rebuild's set-aside and its end see the new, partial index: the answer says so,
    not "behind HEAD" nor "no embeddings". After a killed rebuild (no sync holds the lock), it says how
    to get the old index back."""
    import json

    from conftest import run_cli

    from vaultsync.git import open_repo
    from vaultsync.index.aside import put_back, set_aside
    from vaultsync.index.layout import layout_for
    from vaultsync.vault.config import load_config

    _notes(vault, 3)
    vault.commit("init")
    assert run_cli(["sync", "--quiet"], vault.root).code == 0
    layout = layout_for(open_repo(vault.root), load_config(vault.root))
    moved = set_aside(layout)
    try:
        from vaultsync.index.lock import SyncLock
        from vaultsync.index.sqlite_store import SqliteStore

        SqliteStore(layout.sqlite).close()  # the new index, begun
        with SyncLock(layout.lock, layout.dirty) as held:  # the rebuild's sync holds the lock
            assert held
            res = run_cli(["search", "--no-daemon", "marker1x", "--format", "json"], vault.root)
        assert res.code == 0, res.err
        warnings = json.loads(res.out)["warnings"]
        assert len(warnings) == 1 and warnings[0].startswith("the index is being rebuilt"), warnings
        # killed: the aside copies stay, no sync runs
        res = run_cli(["search", "--no-daemon", "marker1x", "--format", "json"], vault.root)
        warnings = json.loads(res.out)["warnings"]
        assert len(warnings) == 1 and warnings[0].startswith("a rebuild (`vaultsync index --rebuild`) was stopped") \
            and "run `vaultsync sync`" in warnings[0], warnings
    finally:
        put_back(moved, failed=True)
    res = run_cli(["search", "--no-daemon", "marker1x", "--format", "json"], vault.root)
    assert json.loads(res.out)["warnings"] == [] and json.loads(res.out)["hits"]


def test_a_search_of_an_index_with_no_notes_says_so(vault, model_env):
    import json

    from conftest import run_cli

    vault.write(".vaultsync.yaml", "vault: nosuchdir\n")
    vault.write("docs/a.md", "# A\nmarker\n")
    vault.commit("init")
    assert run_cli(["sync", "--quiet"], vault.root).code == 0
    res = run_cli(["search", "--no-daemon", "marker", "--format", "json"], vault.root)
    assert json.loads(res.out)["warnings"] == [
        "the index holds no notes (is `vault:` in .vaultsync.yaml the folder of the notes?)"], res.out


def test_a_full_disk_during_an_index_transaction_reports_the_full_disk(tmp_path):
    """SQLite may roll a transaction back by itself when the disk fills (SQLITE_FULL, here from a page
    limit): the error that reaches the user is "database or disk is full", not "cannot rollback", and the
    command says so as an environment error (exit 1), not an internal one."""
    import sqlite3

    from vaultsync.cli.common import environment_error as _environment_error
    from vaultsync.index.sqlite_store import _Transaction

    db = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    db.execute("CREATE TABLE t (x BLOB)")
    db.execute("CREATE INDEX t_x ON t (x)")
    db.execute("PRAGMA max_page_count = 12")
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full") as caught:
        with _Transaction(db) as tx:
            for _ in range(200):
                tx.execute("INSERT INTO t VALUES (randomblob(3000))")
    assert not db.in_transaction and db.execute("SELECT count(*) FROM t").fetchone() == (0,)  # nothing half-applied
    assert _environment_error(RuntimeError("writing the index failed")) is None  # ours: an internal error
    wrapped = RuntimeError("sync failed")
    wrapped.__cause__ = caught.value
    assert "the disk is full" in (_environment_error(wrapped) or "")
    assert "the disk is full" in (_environment_error(RuntimeError("lance error: No space left on device (os error 28)"))
                                  or "")


def test_an_embedder_dropped_from_the_config_leaves_no_vector_table(make_vault, hashed_models):
    """Dropping an embedder from `index.embedders` re-indexes without it; its LanceDB table went on
    taking disk (the chunk vectors of every note) although nothing read it any more."""
    from vaultsync.git import open_repo
    from vaultsync.index.fastpath import chunk_table_name
    from vaultsync.index.layout import layout_for

    two = "vault: docs\nindex:\n  embedders: [multilingual-e5-small, use-multilingual]\n"
    v = make_vault({".vaultsync.yaml": two, "docs/a.md": "# A\nRetry budget.\n", "docs/b.md": "# B\nCanary.\n"})
    v.commit("init")
    v.synced()
    lance = layout_for(open_repo(v.root)).lance
    tables = lambda: sorted(p.name for p in lance.glob("chunks_*.lance"))  # noqa: E731
    assert tables() == [f"{chunk_table_name(m, 16)}.lance" for m in ("multilingual-e5-small", "use-multilingual")]
    v.write(".vaultsync.yaml", two.replace(", use-multilingual", ""))
    v.commit("one embedder")
    v.synced()
    assert tables() == [f"{chunk_table_name('multilingual-e5-small', 16)}.lance"]
    res = run_cli(["search", "canary", "--no-daemon", "--format", "json", "--min-relevance", "0"], v.root)
    assert res.code == 0 and json.loads(res.out)["hits"][0]["path"] == "docs/b.md", res.out + res.err


@pytest.mark.parametrize("config", ["vault: docs\ntypes: [\n", "vault: [docs\n", "vault: docs\nsearch: {top_k: 0\n"])
@pytest.mark.parametrize("hook", [None, "post-commit"])
def test_a_committed_config_that_cannot_be_read_is_the_last_error_status_shows(vault, model_env, config, hook):
    """A broken committed config (a commit made with --no-verify) keeps the index behind HEAD; a sync typed by
    hand said why but kept nothing, so `vaultsync status` said only "BEHIND HEAD"."""
    vault.write(".vaultsync.yaml", "vault: docs\n")
    vault.write("docs/a.md", "# A\nAlpha.\n")
    vault.commit("init")
    run_cli(["sync", "--quiet"], vault.root)
    vault.write(".vaultsync.yaml", config)
    vault.commit("bad config")
    res = run_cli(["sync", "--quiet", *(["--hook", hook] if hook else [])], vault.root)
    assert res.code == (0 if hook else 1) and ".vaultsync.yaml:" in res.err, res.err  # a hook never fails git
    shown = run_cli(["status"], vault.root).out
    (line,) = [ln for ln in shown.splitlines() if ln.startswith("last error")]
    assert line.startswith("last error  the committed config is invalid: .vaultsync.yaml:") and "BEHIND" in shown, shown
    vault.write(".vaultsync.yaml", "vault: docs\n")
    vault.commit("mended")
    assert run_cli(["sync", "--quiet"], vault.root).code == 0
    assert "last error" not in run_cli(["status"], vault.root).out


@pytest.mark.parametrize("junk", ["[1, 2]", '"str"', "null", '{"warnings": 5, "last_error": 3}',
                                  '{"warnings": [1], "last_error_at": "soon", "last_status": true}'])
def test_a_state_file_of_another_shape_is_replaced_not_a_crash(hooked, junk):
    """``state.json`` holding valid JSON that is not the state's object crashed `status` (internal error) and
    failed every sync (AttributeError) for good: nothing rewrote it."""
    _notes(hooked, 2)
    _commit_and_wait(hooked, "init")
    (hooked.root / ".git/vaultsync/state.json").write_text(junk)
    assert status(hooked.root)["notes"] == 2  # read as no state
    hooked.write("docs/after.md", "# after\nThe afterjunk note.\n")
    info = _commit_and_wait(hooked, "after")
    assert info["notes"] == 3 and not info["last_error"] and info["last_status"] == "updated", info
    assert json.loads((hooked.root / ".git/vaultsync/state.json").read_text())["last_commit"]
