"""Notes in dot-folders (``.trash/``, ``docs/.obsidian/``) are outside the vault in every mode.

Obsidian shows nothing under a folder whose name starts with ``.``, and the working tree's walk never
entered one; the staged index (the pre-commit hook) and a commit (``--rev``, CI, the index) read them
as notes, so a commit that ``vaultsync check`` passed could fail in the hook, and the other way round.
A vault folder that is itself a dot-folder (``vault: .memory``) is still read: the rule is below it.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from conftest import CONFIG, adr, git, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultsync.git import IndexSnapshot, TreeSnapshot, WorktreeSnapshot, open_repo
from vaultsync.index.sync import vault_notes
from vaultsync.vault.config import Config, load_config

MODES = (["check", "--no-cache"], ["check", "--no-cache", "--staged"], ["check", "--no-cache", "--rev", "HEAD"])


def _repo(tmp_path: Path, files: dict[str, str], config: str = CONFIG) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / ".vaultsync.yaml").write_text(config)
    for rel, text in {"docs/adrs/ADR-0001.md": adr("ADR-0001"), **files}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "notes", "--no-verify")
    return tmp_path


def _results(root: Path) -> list[tuple[int, str]]:
    out = []
    for args in MODES:
        res = run_cli(args, root)
        out.append((res.code, res.out.replace("--staged", "").strip()))
    return out


@pytest.mark.parametrize("hidden", [".trash/old.md", "docs/.obsidian/old.md", "docs/adrs/.drafts/old.md",
                                    "docs/.a/.b/old.md", "docs/.日本/old.md"])
def test_a_dangling_link_in_a_hidden_note_fails_no_mode(tmp_path, hidden):
    root = _repo(tmp_path, {hidden: "see [[gone]] and [[also-gone]]\n"})
    results = _results(root)
    assert all(code == 0 for code, _ in results), results
    assert len({out for _, out in results}) == 1, results


@pytest.mark.parametrize("hidden", ["docs/.archive/old.md", "docs/adrs/.drafts/old.md"])
def test_a_link_to_a_hidden_note_is_dangling_in_every_mode(tmp_path, hidden):
    root = _repo(tmp_path, {hidden: "old text\n", "docs/adrs/ADR-0002.md": adr("ADR-0002", body="See [[old]].\n")})
    results = _results(root)
    assert all(code == 1 and "WL001 [[old]]" in out for code, out in results), results


def test_a_vault_folder_that_is_a_dot_folder_is_read_below_its_own_dot_folders(tmp_path):
    config = CONFIG.replace("vault: docs", "vault: .memory").replace("docs/", ".memory/")
    files = {".memory/adrs/ADR-0002.md": adr("ADR-0002", body="See [[ADR-0001]] and [[gone]].\n"),
             ".memory/adrs/ADR-0001.md": adr("ADR-0001"), ".memory/.trash/x.md": "[[also-gone]]\n"}
    root = _repo(tmp_path, files, config)
    (root / "docs/adrs/ADR-0001.md").unlink()
    git(root, "add", "-A")
    results = _results(root)
    assert all(code == 1 and "WL001 [[gone]]" in out and "also-gone" not in out for code, out in results), results


def test_the_index_leaves_hidden_notes_out(tmp_path):
    root = _repo(tmp_path, {".trash/old.md": "x\n", "docs/.obsidian/t.md": "x\n", "docs/rules/r.md": "x\n"})
    repo = open_repo(root)
    notes, _ = vault_notes(TreeSnapshot(repo, repo.head.peel().tree), load_config(root))
    assert sorted(notes) == ["docs/adrs/ADR-0001.md", "docs/rules/r.md"]


_part = st.sampled_from(["a", ".a", "b", ".b", "docs", ".docs", "é", ".é"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paths=st.sets(st.lists(_part, min_size=0, max_size=3).map(lambda parts: "/".join([*parts, "n.md"])),
                     min_size=1, max_size=8),
       vault=st.sampled_from([["."], ["docs"], [".docs"], ["docs", ".a"]]),
       suffix=st.text(string.ascii_lowercase, min_size=1, max_size=3))
def test_the_working_tree_and_the_staged_index_agree_on_what_is_in_the_vault(tmp_path_factory, paths, vault, suffix):
    root = tmp_path_factory.mktemp("dots" + suffix)
    git(root, "init", "-q", "-b", "main")
    for rel in paths:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    git(root, "add", "-A")
    config = Config(vault=vault)
    repo = open_repo(root)
    on_disk = {p for p in WorktreeSnapshot(root, vault, repo).paths() if config.in_vault(p)}
    staged = {p for p in IndexSnapshot(repo).paths() if config.in_vault(p)}
    assert on_disk == staged
