"""The hook's no-change answer (``vaultsync.index.fastpath.quick_is_current``): one ``git rev-parse``, one
SQLite read, and never True when a sync would change something. Real git and a real index built with the
hashing embedder."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import HashEmbedder, Vault

from vaultsync.git import open_repo
from vaultsync.index.fastpath import quick_is_current
from vaultsync.index.layout import layout_for
from vaultsync.index.sync import sync


def do_sync(v: Vault) -> str:
    return sync(open_repo(v.root), embedder_factory=lambda config, name: HashEmbedder(name), wait=30).status


def set_meta(v: Vault, key: str, value: str | None) -> None:
    db = sqlite3.connect(layout_for(open_repo(v.root)).sqlite)
    with db:
        db.execute("DELETE FROM meta WHERE key = ?", (key,))
        if value is not None:
            db.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, value))
    db.close()


@pytest.fixture(params=["with config", "without config"])
def indexed(request, vault: Vault) -> Vault:  # type: ignore[no-untyped-def]
    if request.param == "without config":
        (vault.root / ".vaultsync.yaml").unlink()
    vault.write("docs/a.md", "# Alpha\nAlpha note, see [[b]].\n")
    vault.write("docs/b.md", "# Beta\nBeta note.\n")
    vault.commit("init")
    assert do_sync(vault) == "updated"
    return vault


def test_current_after_a_sync_and_after_an_empty_commit_is_synced(indexed: Vault):
    assert quick_is_current(indexed.root)
    indexed.git("commit", "-q", "--allow-empty", "-m", "empty")
    assert not quick_is_current(indexed.root)  # another commit, same tree: the index must record it
    assert do_sync(indexed) == "up-to-date"
    assert quick_is_current(indexed.root)


@pytest.mark.parametrize("change", ["note", "config added or changed", "config removed", "dirty mark",
                                    "another version", "another reader", "index of an older version",
                                    "lance table gone"])
def test_not_current_whenever_a_sync_has_work(indexed: Vault, change: str):
    had_config = (indexed.root / ".vaultsync.yaml").exists()
    if change == "note":
        indexed.write("docs/b.md", "# Beta\nBeta note, edited.\n")
        indexed.commit("edit")
    elif change == "config added or changed":
        indexed.write(".vaultsync.yaml", "vault: .\nindex:\n  chunk_tokens: 90\n")
        indexed.commit("config")
    elif change == "config removed":
        if not had_config:
            pytest.skip("no config to remove")
        indexed.git("rm", "-q", ".vaultsync.yaml")
        indexed.commit("no config")
    elif change == "dirty mark":
        (layout_for(open_repo(indexed.root)).dirty).write_text("")
    elif change == "another version":
        set_meta(indexed, "config_key", "|0.0.1|1|100")
    elif change == "another reader":  # notes read by older code (another YAML, heading or message reading)
        import vaultsync.index.fastpath as fastpath_module

        key = fastpath_module.config_key(fastpath_module.config_blob_id(open_repo(indexed.root).head.peel().tree))
        parts = key.split("|")
        parts[-2] = str(int(parts[-2]) - 1)
        set_meta(indexed, "config_key", "|".join(parts))
    elif change == "index of an older version":
        set_meta(indexed, "config_key", None)
    else:
        import shutil

        shutil.rmtree(layout_for(open_repo(indexed.root)).lance)
    assert not quick_is_current(indexed.root)
    if change != "dirty mark":
        assert do_sync(indexed) in ("updated", "up-to-date")
        assert quick_is_current(indexed.root)  # the sync records what the fast path compares


def test_outside_a_repository_or_before_the_first_commit(tmp_path, vault: Vault):
    assert not quick_is_current(tmp_path)
    assert not quick_is_current(vault.root)  # HEAD unborn


def test_the_written_out_schema_fingerprint_is_the_ddl_hash():
    import hashlib

    from vaultsync.index.format import DDL, SCHEMA_FINGERPRINT, SCHEMA_VERSION

    assert SCHEMA_FINGERPRINT == hashlib.sha256((SCHEMA_VERSION + DDL).encode()).hexdigest()[:16]


@pytest.mark.parametrize("name", ["plain", "with space", "a#b?c%d", "ünï 日本", "tab\tand'quote", "~_.-"])
def test_readonly_uri_equals_pathlibs_and_sqlite_opens_it(tmp_path, name: str):
    from pathlib import Path

    from vaultsync.sqlite_uri import readonly_uri

    folder = tmp_path / name
    folder.mkdir()
    db = folder / "x.sqlite"
    sqlite3.connect(db).execute("CREATE TABLE t (v)").connection.commit()
    assert readonly_uri(db) == Path(db).absolute().as_uri() + "?mode=ro"
    ro = sqlite3.connect(readonly_uri(db), uri=True)
    assert ro.execute("SELECT name FROM sqlite_master").fetchall() == [("t",)]
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        ro.execute("INSERT INTO t VALUES (1)")
    ro.close()


def test_the_no_change_answer_imports_neither_pathlib_nor_hashlib(indexed: Vault):
    import subprocess
    import sys

    code = ("import sys; from vaultsync.index.fastpath import quick_is_current; assert quick_is_current('.'); "
            "print(sorted(m for m in ('pathlib', 'hashlib', 'typing', 'pygit2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=indexed.root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_full_page_check_runs_only_when_the_sqlite_files_changed_since_the_last_sync(indexed: Vault,
                                                                                        monkeypatch):
    import os

    import vaultsync.index.damage as damage

    checked: list[str] = []
    real = damage.sqlite_healthy
    monkeypatch.setattr(damage, "sqlite_healthy", lambda path: checked.append(str(path)) or real(path))
    sqlite_path = layout_for(open_repo(indexed.root)).sqlite
    indexed.git("commit", "-q", "--allow-empty", "-m", "empty")
    assert do_sync(indexed) == "up-to-date" and checked == []  # as the last sync left it: not read again

    os.utime(sqlite_path, ns=(1, 1))  # same bytes, another mtime: someone touched it
    indexed.git("commit", "-q", "--allow-empty", "-m", "empty 2")
    assert do_sync(indexed) == "up-to-date" and len(checked) == 1

    data = bytearray(sqlite_path.read_bytes())  # garbage in the middle of the file: found and rebuilt
    data[len(data) // 2:len(data) // 2 + 4096] = os.urandom(4096)
    sqlite_path.write_bytes(bytes(data))
    Path(f"{sqlite_path}-wal").unlink(missing_ok=True)
    indexed.write("docs/c.md", "# Gamma\nGamma note.\n")
    indexed.commit("more")
    assert do_sync(indexed) == "updated" and len(checked) == 2
    db = sqlite3.connect(sqlite_path)
    assert db.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    assert {p for (p,) in db.execute("SELECT path FROM notes")} == {"docs/a.md", "docs/b.md", "docs/c.md"}
    db.close()


def test_a_reader_that_only_opened_the_index_does_not_cost_the_page_check(indexed: Vault, monkeypatch):
    import vaultsync.index.damage as damage
    from vaultsync.sqlite_uri import readonly_uri

    checked: list[str] = []
    real = damage.sqlite_healthy
    monkeypatch.setattr(damage, "sqlite_healthy", lambda path: checked.append(str(path)) or real(path))
    reader = sqlite3.connect(readonly_uri(layout_for(open_repo(indexed.root)).sqlite), uri=True)
    assert reader.execute("SELECT count(*) FROM notes").fetchone()[0] == 2  # a search's read
    reader.close()
    indexed.git("commit", "-q", "--allow-empty", "-m", "empty")
    assert do_sync(indexed) == "up-to-date" and checked == []


@pytest.mark.parametrize("kind", ["folder", "submodule"])
@pytest.mark.parametrize("command", [["sync"], ["index", "--rebuild"], ["search", "alpha", "--no-daemon"]])
def test_a_committed_config_that_is_a_folder_is_a_clear_error(vault: Vault, command: list[str], kind: str):
    from conftest import run_cli

    (vault.root / ".vaultsync.yaml").unlink()
    vault.write("docs/a.md", "# Alpha\nAlpha note.\n")
    if kind == "folder":
        vault.write(".vaultsync.yaml/inner.yaml", "vault: docs\n")
        vault.commit("a folder where the config goes")
    else:  # a gitlink (mode 160000) where the config goes
        vault.commit("notes")
        head = vault.git("rev-parse", "HEAD").stdout.strip()
        vault.git("update-index", "--add", "--cacheinfo", f"160000,{head},.vaultsync.yaml")
        vault.git("commit", "-qm", "a submodule where the config goes")
    res = run_cli(command, vault.root)
    assert res.code == 1, res.out + res.err
    assert (f".vaultsync.yaml:1:1: CF001 cannot read config: .vaultsync.yaml is a {kind}, not a file"
            in res.out + res.err)
    assert "Traceback" not in res.err and "internal error" not in res.err


@pytest.fixture
def locked():  # type: ignore[no-untyped-def]
    """Makes a folder one nothing can be created in (chmod for a user, `chattr +i` for root), and undoes it."""
    import contextlib
    import os
    import subprocess

    undo: list[tuple[Path, int | None]] = []

    def lock(folder: Path) -> None:
        if os.geteuid() == 0:
            if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
                pytest.skip("root, and no `chattr +i` here: a folder cannot be made unwritable")
            undo.append((folder, None))
        else:
            undo.append((folder, folder.stat().st_mode))
            folder.chmod(0o555)
        with contextlib.suppress(OSError):
            (folder / "probe").touch()
            pytest.skip("the folder could still be written")

    yield lock
    for folder, mode in reversed(undo):
        if mode is None:
            subprocess.run(["chattr", "-i", str(folder)], check=False)
        else:
            folder.chmod(mode)


def _without_wal_files(db: Path) -> None:
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)


def test_a_wal_database_in_a_folder_that_cannot_be_written_is_read(tmp_path, locked):
    """A WAL database whose -shm went with its last writer: `mode=ro` must make that file again, which a
    read-only folder or a full disk refuses ("unable to open database file")."""
    from vaultsync.sqlite_uri import connect_readonly, readonly_uri

    db = tmp_path / "x.sqlite"
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE t (v)")
    writer.execute("INSERT INTO t VALUES (7)")
    writer.commit()
    writer.close()
    _without_wal_files(db)
    locked(tmp_path)
    with pytest.raises(sqlite3.OperationalError):
        sqlite3.connect(readonly_uri(db), uri=True).execute("SELECT v FROM t").fetchall()
    assert connect_readonly(db).execute("SELECT v FROM t").fetchall() == [(7,)]
    with pytest.raises(sqlite3.OperationalError):
        connect_readonly(tmp_path / "missing.sqlite")


def test_a_current_index_in_a_read_only_folder_is_searched_not_rebuilt(indexed: Vault, locked):
    """A read-only index folder (or a full disk) read as "no index": search said "indexing this vault for
    the first time…" and failed, and status said the index was behind HEAD."""
    from vaultsync.engine import open_searcher, options_for
    from vaultsync.vault.config import Config

    layout = layout_for(open_repo(indexed.root))
    _without_wal_files(layout.sqlite)
    locked(layout.dir)
    assert quick_is_current(str(indexed.root))
    searcher, head = open_searcher(open_repo(indexed.root), Config(), rerank="none")
    try:
        hits = searcher.search("alpha", options_for(Config(), legs=("bm25",), min_relevance=0.0), head=head).hits
    finally:
        searcher.close()
    assert hits
