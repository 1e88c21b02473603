"""Notes stored with Git LFS: the pointer is never read as the note (:mod:`vaultsync.lfs`).

What git-lfs leaves behind is made by hand (git-lfs need not be installed): the pointer committed or
staged as the blob, the content in ``.git/lfs/objects/<2>/<2>/<sha256>``. Real git, real SQLite and the
real model.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from conftest import Vault, adr, git, run_cli

from vaultsync.lfs import LfsObjectMissing, lfs_content


def pointer(content: bytes, extra: str = "") -> bytes:
    digest = hashlib.sha256(content).hexdigest()
    return f"version https://git-lfs.github.com/spec/v1\n{extra}oid sha256:{digest}\nsize {len(content)}\n".encode()


def store(git_dir: Path, content: bytes, under: str = "lfs") -> None:
    digest = hashlib.sha256(content).hexdigest()
    obj = git_dir / under / "objects" / digest[:2] / digest[2:4] / digest
    obj.parent.mkdir(parents=True, exist_ok=True)
    obj.write_bytes(content)


NOTE = adr("ADR-0001", body="We page the quokka rotation before any failover.\n").encode()


def lfs_vault(vault: Vault, content: bytes = NOTE, stored: bool = True) -> Vault:
    vault.write(".gitattributes", "docs/adrs/*.md filter=lfs diff=lfs merge=lfs -text\n")
    vault.write("docs/adrs/ADR-0001.md", pointer(content))
    vault.write("docs/free.md", "# Free note\nSee [[ADR-0001]].\n")
    if stored:
        store(vault.root / ".git", content)
    return vault


def test_a_pointer_reads_as_its_content_and_anything_else_as_itself(tmp_path):
    git_dir = tmp_path / ".git"
    git_dir.mkdir()
    store(git_dir, b"# Real note\n")
    assert lfs_content(git_dir, pointer(b"# Real note\n")) == b"# Real note\n"
    assert lfs_content(git_dir, pointer(b"# Real note\n", extra="ext-0-foo sha256:" + "0" * 64 + "\n")) == b"# Real note\n"
    for text in (b"version https://git-lfs.github.com/spec/v1\nsome prose about LFS\n", b"# Plain\n",
                 b"version https://git-lfs.github.com/spec/v1\n" + b"x" * 2000):
        assert lfs_content(git_dir, text) == text  # not a pointer git-lfs wrote: the file's own text
    with pytest.raises(LfsObjectMissing, match="git lfs pull"):
        lfs_content(git_dir, pointer(b"# Never fetched\n"))
    tampered = pointer(b"# Real note\n").replace(b"size 12", b"size 13")
    with pytest.raises(LfsObjectMissing):
        lfs_content(git_dir, tampered)  # the size it names is not the object's


@pytest.mark.parametrize("staged", [True, False])
def test_check_validates_the_content_of_a_note_in_lfs(vault, staged):
    """The staged blob (``--staged``) and an unsmudged working-tree file are pointers: the check reads the
    content they point to, so its frontmatter is validated and links to it resolve."""
    lfs_vault(vault, adr("ADR-0001").replace("status: accepted", "status: acepted").encode())
    vault.git("add", "-A")
    res = vault.check("--staged") if staged else vault.check()
    assert res.code == 1 and [line.split(" ")[1] for line in res.lines] == ["SC001"], res.out
    assert "acepted" in res.out and "FM012" not in res.out  # the content, not "missing frontmatter"


def test_check_says_when_the_lfs_content_is_not_in_the_clone(vault):
    lfs_vault(vault, stored=False)
    res = vault.check()
    assert res.code == 1 and "Traceback" not in res.err
    assert res.lines[0].startswith("docs/adrs/ADR-0001.md:") and "FM015" in res.lines[0] and "git lfs pull" in res.lines[0]


@pytest.mark.parametrize("ref", ["ADR-0001", "docs/adrs/ADR-0001.md", "[[ADR-0001]]"])
def test_show_refuses_a_note_whose_lfs_content_is_not_in_the_clone(vault, ref):
    """Not an empty note with exit 0: the note's text is elsewhere, and ``show`` says where to get it."""
    lfs_vault(vault, stored=False)
    vault.git("add", "-A")
    vault.git("commit", "-qm", "lfs")
    for fmt in ("text", "json"):
        res = run_cli(["show", ref, "--format", fmt], vault.root)
        assert res.code == 2 and "Traceback" not in res.err and not res.out, (res.out, res.err)  # as a note not found
        assert "docs/adrs/ADR-0001.md" in res.err and "git lfs pull" in res.err, res.err
    store(vault.root / ".git", NOTE)  # once pulled, the note shows
    res = run_cli(["show", ref, "--format", "json"], vault.root)
    assert res.code == 0 and "quokka rotation" in res.out, res.err


def test_the_index_holds_the_content_and_waits_for_content_not_fetched(vault, embedder, tmp_path):
    """The index never holds a pointer's lines. Content not in the clone is skipped with a warning and
    read by the next sync once it is there (as a partial clone's missing blob)."""
    from test_index_sync import db, search, sync

    lfs_vault(vault, stored=False)
    vault.commit("lfs")
    report = sync(vault.root)
    assert any("git lfs pull" in w for w in report.warnings)
    status = run_cli(["status", "--format", "json"], vault.root)
    assert '"up_to_date": false' in status.out and "docs/adrs/ADR-0001.md" in status.out
    assert "INCOMPLETE (1 note(s) not read)" in run_cli(["status"], vault.root).out
    found = search(vault.root, "page rotation", legs=("bm25",), graph_hops=0)
    assert any("1 note(s) of HEAD are not indexed" in w and "ADR-0001.md" in w for w in found.warnings)
    texts = [r[0] for r in db(vault.root).execute("SELECT text FROM chunks")]
    assert not any("git-lfs.github.com" in t for t in texts)
    store(vault.root / ".git", NOTE)  # `git lfs pull` fetched it
    assert not sync(vault.root).warnings
    found = search(vault.root, "quokka rotation", legs=("bm25",), graph_hops=0)
    assert found.hits[0].path == "docs/adrs/ADR-0001.md" and not found.warnings
    assert "up to date" in run_cli(["status"], vault.root).out
    texts = [r[0] for r in db(vault.root).execute("SELECT text FROM chunks")]
    assert not any("git-lfs.github.com" in t for t in texts)


def test_worktrees_and_lfs_storage_read_the_shared_store(vault, tmp_path):
    """A worktree reads the main git dir's store; ``lfs.storage`` moves it."""
    lfs_vault(vault)
    vault.commit("lfs")
    other = tmp_path / "wt"
    git(vault.root, "worktree", "add", "-q", str(other))
    assert run_cli(["check", "--rev", "HEAD"], other).code == 0
    git(vault.root, "config", "lfs.storage", "elsewhere")
    moved = tmp_path / "moved"
    git(tmp_path, "clone", "-q", str(vault.root), str(moved))
    git(moved, "config", "lfs.storage", "elsewhere")
    assert "FM015" in run_cli(["check", "--rev", "HEAD"], moved).out
    store(moved / ".git", NOTE, under="elsewhere")
    assert run_cli(["check", "--rev", "HEAD"], moved).code == 0


def test_a_commit_deleting_a_note_whose_lfs_content_is_missing_is_checked(vault):
    """``check --staged`` reads what HEAD held of a removed note (its aliases, its id); content that never
    arrived is no reason to stop the commit's check."""
    lfs_vault(vault, stored=False)
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002"))
    vault.commit("lfs")
    vault.git("rm", "-q", "docs/adrs/ADR-0001.md")
    vault.write("docs/free.md", "# Free note\n")
    vault.git("add", "-A")
    res = vault.check("--staged")
    assert res.code == 0 and "git lfs pull" not in res.err, res.out + res.err


def test_a_heading_link_into_a_note_not_fetched_is_not_judged(vault):
    """Its headings are unknown: FM015 on the note says why, and no WL003 claims a heading is missing."""
    lfs_vault(vault, stored=False)
    vault.write("docs/free.md", "# Free note\nSee [[ADR-0001#Decision]].\n")
    res = vault.check()
    assert [line.split(" ")[1] for line in res.lines] == ["FM015"], res.out


def test_content_past_any_notes_size_is_not_read_whole(tmp_path, monkeypatch):
    """A pointer may name a huge object (a video named .md): no more than ``MAX_READ`` + 1 bytes are read, and
    the note check then calls it too large; content within the bound is checked by size and hash."""
    import vaultsync.lfs as lfs

    git_dir = tmp_path / ".git"
    git_dir.mkdir()
    big = b"x" * 100
    store(git_dir, big)
    monkeypatch.setattr(lfs, "MAX_READ", 10)
    assert lfs_content(git_dir, pointer(big)) == b"x" * 11
    monkeypatch.setattr(lfs, "MAX_READ", 1000)
    assert lfs_content(git_dir, pointer(big)) == big


@pytest.mark.parametrize("staged", [True, False])
def test_a_schema_whose_lfs_content_is_missing_is_a_config_error(vault, staged):
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs, schema: s.json}\n")
    vault.write("s.json", pointer(b'{"type": "object"}'))
    vault.write("docs/adrs/ADR-0001.md", NOTE)
    vault.git("add", "-A")
    res = vault.check("--staged") if staged else vault.check()
    assert res.code == 1 and "CF003 type 'adr': schema" in res.out and "git lfs pull" in res.out, res.out + res.err
