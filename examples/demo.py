"""The quick-start demo: vaultsync on the bundled example vault, in a throw-away git repo.

    make demo            # or: python examples/demo.py [--keep]

It copies ``examples/vault`` into a temporary git repository, validates it,
shows a bad note being rejected, installs the git hooks, commits a new note
(indexed in the background), and asks the vault questions in English, German
and Japanese. The first run builds the local embedding model (~15 s).
"""

from __future__ import annotations

import argparse
import shlex
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

    if show:  # as a user would type it: `vaultsync` for this interpreter's module, arguments quoted
        shown = ["vaultsync", *cmd[3:]] if cmd[:3] == (sys.executable, "-m", "vaultsync") else list(cmd)
        print(f"\n$ {shlex.join(shown)}", flush=True)
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
    print(f"Example vault committed in {repo}" + ("" if args.keep else " (removed at the end; --keep keeps it)"))

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
    print("(the draft is dropped; a corrected RULE-0004 is written in step 3)")

    print("\n== 3. Git hooks keep the derived index in step; `git memsearch` searches it ==")
    if vaultsync(repo, "install").returncode != 0:
        return 1
    (repo / "docs/rules/RULE-0004-rotate-secrets.md").write_text(
        "---\nmemory_id: RULE-0004\ntype: rule\ntitle: Rotate database credentials every 90 days\n"
        "status: active\nenforcement: must\ncreated: \"2025-11-03\"\nconfidence: 0.9\nimportance: 7\n"
        "tags: [database, process]\nprojects: [ledger]\n---\n# Rotate database credentials every 90 days\n\n"
        "## Rule\nLedger database passwords are rotated every 90 days by the secrets job; a rotation\n"
        "restarts the writers one at a time ([[ADR-0004-canary-deploys]]).\n",
        encoding="utf-8",
    )
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "Add RULE-0004")
    print("(the post-commit hook returned at once; the index is built in the background — waiting;\n"
          " a first run also builds the local embedding model into ~/.cache/vaultsync, 15–40 s)", flush=True)
    sh(repo, sys.executable, "-m", "vaultsync", "sync", "--wait", "600", show=False)
    vaultsync(repo, "status")
    for query in (
        "how do we retry payment webhooks?",          # the superseded ADR-0003 is replaced by ADR-0007
        "Wie verhindern wir doppelte Abbuchungen?",   # German: how do we prevent double charges?
        "データベースのパスワードはいつ変更しますか",     # Japanese: when do we change database passwords?
    ):
        sh(repo, "git", "memsearch", query, "--top-k", "3", "--no-daemon")
    print("\n== 4. What an agent pastes into its context (markdown) ==")
    sh(repo, "git", "memsearch", "exchange rate cache", "--format", "markdown", "--top-k", "2", "--no-daemon")
    print("(ADR-0005 is expired, so it is hidden above; --include-expired brings it back)")
    sh(repo, "git", "memsearch", "exchange rate cache", "--include-expired", "--top-k", "3", "--no-daemon")

    if args.keep:
        print(f"\nkept: {repo}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
