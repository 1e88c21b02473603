"""Shared fixtures: real git repositories in temporary directories, and the CLI run in-process."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from vaultsync.cli.main import main

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared"
EVAL = SHARED / "eval"

CONFIG = """vault: docs
types:
  adr: {folder: docs/adrs}
  incident: {folder: docs/incidents}
  rule: {folder: docs/rules}
vocabulary:
  tags: [database, search, ops, security]
ephemeral: ["**/scratch/**", "**/*.tmp.md"]
"""


def adr(mid: str, title: str = "A decision", status: str = "accepted", extra: str = "", body: str = "Body.\n") -> str:
    """A schema-valid ADR note with optional extra frontmatter lines."""
    return (f"---\nmemory_id: {mid}\ntype: adr\ntitle: {title}\nstatus: {status}\n"
            f'created: "2024-03-01"\n{extra}---\n{body}')


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return [line for line in self.out.splitlines() if line and "notes checked" not in line]


def run_cli(args: list[str], cwd: Path) -> Result:
    """Run ``vaultsync ARGS`` in-process with ``cwd`` as the working directory."""
    out, err = io.StringIO(), io.StringIO()
    old = Path.cwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = main(args)
    finally:
        os.chdir(old)
    return Result(code, out.getvalue(), err.getvalue())


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run real git in ``cwd`` (author identity and a fixed default branch set)."""
    full_env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", **(env or {})}
    return subprocess.run(["git", *args], cwd=cwd, env=full_env, text=True, capture_output=True, check=check)


class Vault:
    """A temporary git repository holding a vault."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, rel: str, content: str | bytes) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
        return path

    def git(self, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
        return git(self.root, *args, **kw)  # type: ignore[arg-type]

    def commit(self, message: str = "c", *extra: str) -> subprocess.CompletedProcess[str]:
        self.git("add", "-A")
        return self.git("commit", "-qm", message, *extra)

    def check(self, *args: str) -> Result:
        return run_cli(["check", *args], self.root)


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    """An initialised git repo with the test config committed."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    v = Vault(root)
    v.write(".vaultsync.yaml", CONFIG)
    return v


@pytest.fixture
def make_vault(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Vault]:
    """Build a repo from ``{path: content}`` (config included unless overridden)."""
    def build(files: dict[str, str | bytes]) -> Vault:
        root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        v = Vault(root)
        if ".vaultsync.yaml" not in files:
            v.write(".vaultsync.yaml", CONFIG)
        for rel, content in files.items():
            v.write(rel, content)
        return v
    return build


def require_eval(name: str) -> Path:
    """The evaluation data folder ``name``, or skip the test cleanly."""
    path = EVAL / name
    if not path.is_dir():
        pytest.skip(f"evaluation data {path} is absent")
    return path


PY = sys.executable
