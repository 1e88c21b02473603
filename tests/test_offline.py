"""Fully local: indexing and search leave nothing in the user's home and start no telemetry.

onnxruntime (1.2x+) starts Microsoft's 1DS telemetry when its library loads, writing a device id
under ``~/.cache/Microsoft/DeveloperTools/.onnxruntime`` and queueing events for an HTTPS endpoint,
unless ``ORT_DISABLE_TELEMETRY`` is set; :mod:`vaultsync` sets it before any model loads.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import PY, Vault

# onnxruntime leaves telemetry off where one of these says "a CI job": the test runs as on a laptop
CI_MARKERS = {"CI", "TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI", "JENKINS_URL", "TRAVIS", "CIRCLECI", "BUILDKITE",
              "TEAMCITY_VERSION", "CODEBUILD_BUILD_ID", "APPVEYOR", "SYSTEM_TEAMFOUNDATIONCOLLECTIONURI"}


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY" and k not in CI_MARKERS}
    return {**env, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}


def _files(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())


def test_sync_and_search_write_nothing_in_home(vault: Vault, model_env: Path, tmp_path: Path) -> None:
    vault.write("docs/rules/RULE-0001.md", "---\nmemory_id: RULE-0001\ntype: rule\ntitle: Deploys\n"
                "status: accepted\ncreated: 2025-01-01\n---\n# Deploys\nNo deploys on Fridays.\n")
    vault.commit()
    control, home = tmp_path / "control", tmp_path / "home"
    control.mkdir()
    home.mkdir()
    subprocess.run([PY, "-c", "import onnxruntime"], env=_env(control), check=True)  # what it does unguarded
    for args, extra in ((["sync", "--wait", "120"], {}), (["search", "deploy on friday", "--no-daemon"], {}),
                        (["search", "friday", "--no-daemon"], {"ORT_DISABLE_TELEMETRY": ""})):  # empty: still off
        res = subprocess.run([PY, "-m", "vaultsync", *args], cwd=vault.root, env=_env(home) | extra,
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
    assert "RULE-0001" in res.stdout
    assert _files(home) == [], _files(home)
    if sys.platform.startswith("linux"):  # the guard is what keeps it clean, not an onnxruntime without telemetry
        assert any("onnxruntime" in f for f in _files(control)), _files(control)
