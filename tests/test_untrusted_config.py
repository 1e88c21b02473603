"""Attacks through the committed config: it must never choose where code or models load from.

Issue 16, finding 1: a committed ``.vaultsync.yaml`` set ``models.cache_dir`` to a committed folder
holding a pickle (and its sha256 sidecar), which ``sync``/``search`` unpickled on a plain checkout.
Now load locations are the user's own settings (:mod:`vaultsync.settings`), the tokenizer cache is
JSON, and rerank stages are named, never located (ADR-0032).
"""

from __future__ import annotations

import hashlib
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Vault, adr, run_cli

from vaultsync.engine import check_rerank_spec, default_rerank
from vaultsync.vault.config import ConfigError, load_config

HOSTILE_CONFIGS = [
    "models: {cache_dir: .tooling/cache}\n",
    "models:\n  threads: 2\n  reranker_dir: .tooling/ce\n",
    "vault: docs\nmodels: {reranker_dir: /tmp, cache_dir: ~/x}\n",
    "search: {rerank: 'cross-encoder:.tooling/ce'}\n",
    "search:\n  rerank: cross-encoder:/etc\n",
]


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path.write_text, (self.marker, "ran"))


def _plant(v: Vault, marker: Path) -> None:
    """A committed cache folder holding the USE tokenizer cache as a pickle with a matching sidecar
    (what an earlier version unpickled), and a forged JSON copy with its sidecar."""
    from vaultsync.models import manifest

    m = manifest.load("use-multilingual")
    stem = f".tooling/cache/models/{m.name}-v{m.version}/tokenizer-{m.sources['tokenizer'].sha256[:12]}"
    blob = pickle.dumps(_Payload(marker))
    v.write(stem + ".pickle", blob)
    v.write(stem + ".json", b'{"format": 1, "pieces": ["a"], "prefixes": {"a": 1}, "scores": "", "charsmap": ""}')
    v.write(stem + ".sha256", hashlib.sha256(blob).hexdigest() + "\n")


@pytest.mark.parametrize("text", HOSTILE_CONFIGS)
def test_a_committed_config_naming_a_load_location_is_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, text)
    d = info.value.diagnostic
    assert d.code in ("CF005", "CF002") and d.line >= 1
    assert "rerank" in d.message or "config/vaultsync/config.yaml" in d.message


def test_rerank_stages_are_names_never_folders() -> None:
    for ok in ("none", "maxsim", "cross-encoder", "", None):
        check_rerank_spec(ok)
    for bad in ("cross-encoder:/tmp", "cross-encoder:", "maxsim:/x", "../model", "/abs/folder", "x" * 10_000):
        with pytest.raises(ValueError, match="unknown rerank stage") as info:
            check_rerank_spec(bad)
        assert len(str(info.value)) < 400  # a huge value is not echoed back whole
    from vaultsync.vault.config import Config

    assert default_rerank(Config(search={"rerank": "cross-encoder:/etc"})) == "none"


def test_user_settings_choose_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vaultsync.settings import cache_root
    from vaultsync.settings import user_settings

    monkeypatch.delenv("VAULTSYNC_CACHE_DIR", raising=False)
    monkeypatch.delenv("VAULTSYNC_THREADS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "vaultsync").mkdir()
    (tmp_path / "vaultsync" / "config.yaml").write_text(
        f"models: {{cache_dir: {tmp_path / 'mine'}, threads: 3, cache: 1}}\n")
    assert user_settings().threads == 3 and cache_root() == tmp_path / "mine"
    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"  # the environment wins over the file
    (tmp_path / "vaultsync" / "config.yaml").write_text("models: [\n")
    assert user_settings().cache_dir == str(tmp_path / "env")  # a broken file is ignored, not fatal


@pytest.mark.slow
def test_checkout_merge_sync_and_search_never_run_a_committed_payload(vault: Vault, model_env, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    marker = tmp_path / "payload-ran"
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", "Use SQLite", body="We keep the ledger in SQLite.\n"))
    vault.commit("init")
    res = subprocess.run([sys.executable, "-m", "vaultsync", "install"], cwd=vault.root, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    vault.git("checkout", "-qb", "pr")
    vault.write(".vaultsync.yaml", "vault: docs\nmodels: {cache_dir: .tooling/cache, reranker_dir: .tooling/cache}\n"
                "search: {rerank: cross-encoder}\n")
    _plant(vault, marker)
    vault.commit("pr: hostile config")
    vault.git("checkout", "-q", "main")
    vault.git("checkout", "-q", "pr")  # post-checkout hook
    vault.git("checkout", "-q", "main")
    vault.git("merge", "-q", "pr")  # post-merge hook
    for args in (["sync", "--wait", "120"], ["search", "ledger", "--no-daemon"],
                 ["search", "ledger", "--no-daemon", "--rerank", "cross-encoder"]):
        subprocess.run([sys.executable, "-m", "vaultsync", *args], cwd=vault.root, capture_output=True, text=True,
                       timeout=300)
    subprocess.run([sys.executable, "-m", "vaultsync", "sync", "--wait", "120"], cwd=vault.root, timeout=300)
    assert not marker.exists()
    checked = run_cli(["check"], vault.root)
    assert checked.code == 1 and "CF005 models.cache_dir" in checked.out + checked.err


@pytest.mark.parametrize("schema", ["/etc/passwd", "~/.ssh/id_rsa.json", "../outside.json", "schemas/../../x.json",
                                    "..\\\\win.json"])
def test_a_committed_config_cannot_point_a_schema_outside_the_repository(tmp_path: Path, schema: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, f"types:\n  adr: {{folder: docs/adrs, schema: '{schema}'}}\n")
    d = info.value.diagnostic
    assert d.code == "CF002" and "types.adr.schema" in d.message and "outside the repository" in d.message
    assert load_config(tmp_path, "types:\n  adr: {folder: docs/adrs, schema: schemas/adr.json}\n").types[0].schema \
        == "schemas/adr.json"


@pytest.mark.parametrize("name", [".vaultsync.yml", "vaultsync.yaml", ".VaultSync.YAML", "vaultsync.yml"])
@pytest.mark.parametrize("mode", [[], ["--staged"], ["--rev", "HEAD"]])
def test_a_config_under_a_near_name_is_an_error_not_silently_ignored(make_vault, name, mode):
    """`.vaultsync.yml` was never read: the team's schemas silently did not apply and every check passed."""
    v = make_vault({name: "vault: docs\ntypes:\n  adr: {folder: docs/adr}\n",
                    "docs/adr/ADR-0001.md": "---\nstatus: bogus\n---\n# A\n", "docs/sub/vaultsync.yml": "x: 1\n"})
    (v.root / ".vaultsync.yaml").unlink()
    v.commit("c", "--no-verify")
    res = v.check(*mode)
    assert res.code == 1 and "Traceback" not in res.err
    assert f"{name}:1:1: CF001 vaultsync reads its settings from .vaultsync.yaml only, so none of these apply — " \
           f"rename it to .vaultsync.yaml" in res.err + res.out


def test_a_near_name_beside_the_config_is_no_error(make_vault):
    v = make_vault({".vaultsync.yaml": "vault: docs\n", ".vaultsync.yml": "old: 1\n", "docs/a.md": "# a\n"})
    v.commit()
    assert v.check().code == 0 and v.check("--staged").code == 0


@pytest.mark.slow
def test_a_committed_vaultsync_package_never_runs_from_a_hook_or_a_background_sync(vault: Vault, model_env,
                                                                                   tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A commit adding a top-level ``vaultsync/`` package ran its code at the next pull: the hooks ran
    ``python -m vaultsync`` in the worktree, whose folder Python puts first on ``sys.path``."""
    marker = tmp_path / "payload-ran"
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", "Use SQLite", body="We keep the ledger in SQLite.\n"))
    vault.commit("init")
    res = subprocess.run([sys.executable, "-P", "-m", "vaultsync", "install"], cwd=vault.root, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr
    vault.git("checkout", "-qb", "pr")
    payload = f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
    vault.write("vaultsync/__init__.py", payload)
    vault.write("vaultsync/__main__.py", payload)
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", "Use Kafka", body="Events go through Kafka.\n"))
    vault.commit("pr: notes tooling")  # post-commit hook
    vault.git("checkout", "-q", "main")  # post-checkout hook
    vault.git("merge", "-q", "pr")  # post-merge hook
    res = subprocess.run([sys.executable, "-P", "-m", "vaultsync", "sync", "--background"], cwd=vault.root,
                         capture_output=True, text=True, timeout=120)  # the pre-commit framework's stage
    assert res.returncode == 0, res.stderr
    res = subprocess.run([sys.executable, "-P", "-m", "vaultsync", "sync", "--wait", "120"], cwd=vault.root,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    found = subprocess.run([sys.executable, "-P", "-m", "vaultsync", "search", "Kafka", "--no-daemon"], cwd=vault.root,
                           capture_output=True, text=True, timeout=300)
    assert "ADR-0002" in found.stdout, found.stdout + found.stderr  # the hooks' syncs ran, the installed code
    assert not marker.exists()
