"""Commands that need no model start without importing one: ``--version`` imports no command module
(not even argparse), ``--help`` no command module, and ``status`` neither numpy, nor the sync, nor
the checks (see ADR-0070)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Vault

PROBE = """
import sys
from vaultsync.cli.main import main
try:
    main({argv!r})
except SystemExit:  # argparse's --help
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("vaultsync", "numpy", "argparse", "typing",
                                                                   "jsonschema", "lancedb", "onnxruntime")))),
      file=sys.stderr)
"""


def loaded(argv: list[str], cwd: Path) -> tuple[str, set[str]]:
    res = subprocess.run([sys.executable, "-c", "import json\n" + PROBE.format(argv=argv)], cwd=cwd,
                         capture_output=True, text=True, timeout=120)
    return res.stdout, set(json.loads(res.stderr.strip().splitlines()[-1]))


def test_version_imports_nothing_but_the_entry_point(tmp_path):
    out, modules = loaded(["--version"], tmp_path)
    assert out.startswith("vaultsync ") and modules == {"vaultsync", "vaultsync.cli", "vaultsync.cli.main"}


def test_help_imports_no_command_module(tmp_path):
    out, modules = loaded(["--help"], tmp_path)
    assert "status" in out and "argparse" in modules
    assert not {m for m in modules if m.startswith("vaultsync.")
                and m not in ("vaultsync.cli", "vaultsync.cli.main", "vaultsync.cli.parser")}  # the parser itself


def test_status_imports_no_model_sync_or_checks(vault: Vault):
    vault.write("docs/a.md", "# a\nText.\n")
    vault.commit("a")
    out, modules = loaded(["status", "--format", "json"], vault.root)
    assert json.loads(out)["indexed_commit"] is None
    heavy = {m for m in modules if m.split(".")[0] in ("numpy", "lancedb", "onnxruntime")
             or m.startswith(("vaultsync.index.sync", "vaultsync.index.embedding", "vaultsync.checks",
                              "vaultsync.models"))}
    assert heavy == set()


def test_a_sync_with_nothing_to_do_is_answered_before_argparse(monkeypatch, tmp_path):
    import vaultsync.index.fastpath as fastpath
    from vaultsync.cli.main import _sync_has_nothing_to_do, main

    asked: list[Path] = []
    monkeypatch.setattr(fastpath, "quick_is_current", lambda cwd: asked.append(cwd) or True)
    monkeypatch.chdir(tmp_path)
    for argv in (["sync"], ["sync", "--quiet"], ["sync", "--quiet", "--hook", "post-commit"],
                 ["sync", "--hook", "post-checkout", "a1", "b2", "1"]):
        assert _sync_has_nothing_to_do(argv), argv
    assert len(asked) == 4
    for argv in (["sync", "--background"], ["sync", "--bogus"], ["sync", "--wait", "0"], ["sync", "--hook"],
                 ["sync", "--quiet", "--hook", "post-commit", "--wait", "0"], ["status"], ["sync", "-h"], []):
        assert not _sync_has_nothing_to_do(argv), argv
    assert len(asked) == 4  # the forms argparse must judge never reach the index test
    assert main(["sync", "--quiet"]) == 0
    monkeypatch.setattr(fastpath, "quick_is_current", lambda cwd: asked.append(cwd) or False)
    assert not _sync_has_nothing_to_do(["sync", "--quiet"])  # then the full command runs
    asked.clear()
    assert main(["sync", "--quiet"]) == 2  # not a repository; the index was asked about once, not twice
    assert len(asked) == 1


def test_a_config_that_passed_its_schema_is_not_validated_again(vault: Vault, tmp_path, monkeypatch):
    """The first command validates the committed config with jsonschema and leaves a marker in the
    user cache; later commands with the same text skip jsonschema. Another text, even one character
    more, is validated again, and an invalid config is never marked."""
    from conftest import run_cli

    monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))
    vault.write(".vaultsync.yaml", "vault: docs\nsearch: {top_k: 4}\n")
    vault.write("docs/a.md", "# a\nText.\n")
    vault.commit("a")
    markers = tmp_path / "cache" / "checked-configs"
    assert "jsonschema" in loaded(["status"], vault.root)[1] and len(list(markers.iterdir())) == 1
    assert "jsonschema" not in loaded(["status"], vault.root)[1]
    vault.write(".vaultsync.yaml", "vault: docs\nsearch: {top_k: 4} \n")
    vault.commit("space")
    assert "jsonschema" in loaded(["status"], vault.root)[1] and len(list(markers.iterdir())) == 2
    vault.write(".vaultsync.yaml", "vault: docs\nindex: {chunk_tokens: 4}\n")
    for _ in range(2):
        res = run_cli(["check"], vault.root)
        assert res.code == 1 and ".vaultsync.yaml:2:23: CF002 index.chunk_tokens: 4 must be at least 32" in res.err, res
    assert len(list(markers.iterdir())) == 2


def test_an_unusable_user_cache_only_costs_the_validation(vault: Vault, monkeypatch):
    from conftest import run_cli

    def no_home(*args):  # type: ignore[no-untyped-def]
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr("vaultsync.settings.cache_root", no_home)
    vault.write(".vaultsync.yaml", "vault: docs\nindex: {chunk_tokens: 4}\n")
    vault.write("docs/a.md", "# a\nText.\n")
    res = run_cli(["check"], vault.root)
    assert res.code == 1 and "CF002 index.chunk_tokens" in res.err, res
    vault.write(".vaultsync.yaml", "vault: docs\n")
    assert run_cli(["check"], vault.root).code == 0


@pytest.mark.parametrize("missing", ["mcp", "anyio", "pydantic"])
def test_mcp_without_its_sdk_names_the_extra(vault: Vault, missing: str) -> None:
    """`pip install .` (validation only): the server imports anyio before the SDK, and a missing anyio was
    an internal error (exit 3) instead of the extra to install."""
    code = (f"import sys\nsys.modules[{missing!r}] = None  # as if not installed\n"
            "from vaultsync.cli.main import main\nsys.exit(main(['mcp']))\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=vault.root, capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL)
    assert res.returncode == 2 and "Traceback" not in res.stderr and "internal error" not in res.stderr, res.stderr
    assert f"vaultsync mcp: the MCP SDK is not installed ({missing} is missing): pip install" in res.stderr
    assert "[search,mcp]" in res.stderr
