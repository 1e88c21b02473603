"""An index folder vaultsync cannot use as it is: a file where a derived folder belongs, a damaged SQLite
file, a read-only or full index folder, a bare repository, an unusable model cache (real git, real SQLite
and LanceDB files in temporary folders; embedders hashed)."""

from __future__ import annotations

import json
import shutil
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
