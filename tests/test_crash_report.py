"""An unexpected error shows one line naming a crash log that holds the traceback and the versions
(in the manner of pre-commit's error handler); logs stay bounded."""

from __future__ import annotations

import os

import pytest
from conftest import Vault, run_cli

from vaultsync.logs import CRASH_EXIT, MAX_LOG_BYTES, rotate


def test_an_internal_error_names_its_crash_log(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    import vaultsync.cli.status as status_cmd

    def broken(args):  # type: ignore[no-untyped-def]
        raise KeyError("lost-key-7f3")

    monkeypatch.setattr(status_cmd, "run", broken)
    monkeypatch.delenv("VAULTSYNC_DEBUG", raising=False)
    res = run_cli(["status"], vault.root)
    log = vault.root / ".git" / "vaultsync" / "crash.log"
    assert res.code == CRASH_EXIT and "Traceback" not in res.err and str(log) in res.err
    assert len(res.err.strip().splitlines()) == 1
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "lost-key-7f3" in text and "broken" in text
    assert "vaultsync status" in text and "pygit2 " in text and "python " in text


def test_outside_a_repository_the_crash_log_goes_to_the_user_cache(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import vaultsync.cli.status as status_cmd

    monkeypatch.setattr(status_cmd, "run", lambda args: 1 / 0)
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "plain").mkdir()
    res = run_cli(["status"], tmp_path / "plain")
    assert res.code == CRASH_EXIT and "ZeroDivisionError" in (tmp_path / "cache" / "crash.log").read_text()


def test_logs_rotate_past_their_bound(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "hook.log"
    log.write_bytes(b"x" * (MAX_LOG_BYTES + 1))
    rotate(log)
    assert not log.exists() and (tmp_path / "hook.log.1").stat().st_size == MAX_LOG_BYTES + 1
    log.write_text("small")
    rotate(log)
    assert log.read_text() == "small"
    rotate(tmp_path / "absent.log")  # never raises
    os.chmod(tmp_path, 0o500)
    try:
        log.write_bytes(b"y" * (MAX_LOG_BYTES + 1)) if os.access(log, os.W_OK) else None
        rotate(log)  # an unwritable folder: nothing happens, nothing raises
    finally:
        os.chmod(tmp_path, 0o700)


def test_a_missing_search_extra_is_named_not_a_crash(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    import vaultsync.cli.status as status_cmd

    def light_install(args):  # type: ignore[no-untyped-def]
        raise ModuleNotFoundError("No module named 'numpy'", name="numpy")

    monkeypatch.setattr(status_cmd, "run", light_install)
    res = run_cli(["status"], vault.root)
    assert res.code == 2 and "[search]'" in res.err and "pip install '" in res.err and "internal error" not in res.err
    assert not (vault.root / ".git" / "vaultsync" / "crash.log").exists()


@pytest.mark.parametrize("url, expected", [
    ("file:///home/a/vault%20sync", "pip install '/home/a/vault sync[search]'"),
    ("git+https://example.org/team/vaultsync.git", "pip install 'vaultsync[search] @ git+https://example.org/team/vaultsync.git'"),
    (None, "pip install '.[search]' in a clone of vaultsync"),
    ("file:///home/o'brien/vs", "pip install '/home/o'\"'\"'brien/vs[search]'"),  # still one shell word
])
def test_the_install_hint_names_where_vaultsync_came_from(monkeypatch, url, expected):
    """vaultsync is not on PyPI: the hint installs the extra from the folder or URL pip used (PEP 610)."""
    import importlib.metadata
    import json

    from vaultsync.resources import install_hint

    class Dist:
        def read_text(self, name):  # noqa: ANN001, ANN201
            return json.dumps({"url": url}) if url and name == "direct_url.json" else None

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Dist())
    assert install_hint("search") == expected


@pytest.mark.parametrize("command", ["check", "new", "search", "sync", "index", "status", "install", "mcp"])
def test_help_shows_code_as_single_backticks(command):
    """Command descriptions are the modules' docstrings, written in reST: ``x`` shows as `x`."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "vaultsync", command, "--help"], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0 and "``" not in res.stdout and "usage: vaultsync" in res.stdout, res.stdout
