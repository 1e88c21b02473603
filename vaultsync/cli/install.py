"""``vaultsync install``: install the git hook shims and the ``git memsearch`` alias.

The shims (``githooks/``) start ``vaultsync sync`` detached after a commit, merge,
checkout or rewrite, and always exit 0. An existing hook is kept and chained
(renamed ``<hook>.vaultsync-chained`` and called by the shim), except the pre-commit framework's
when its config runs ``vaultsync-index``, which syncs already. When
``core.hooksPath`` is set, git ignores ``.git/hooks``: install says so and fails
unless ``--hooks-path`` asks to install into that folder (field case GH-08).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

import pygit2

from vaultsync.cli.common import repository
from vaultsync.index.hooks import HOOKS, foreign_hook, framework_syncs, hooks_dir, hooks_path_setting, shim_text


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hooks-path", action="store_true", help="install into the folder named by core.hooksPath")
    p.add_argument("--no-alias", action="store_true", help="do not set `git config alias.memsearch`")
    p.add_argument("--alias-only", action="store_true",
                   help="only set the `git memsearch` alias (hooks come from the pre-commit framework)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    repo = repository("install")
    if repo is None:
        return 2
    if args.alias_only:
        _set_alias(repo)
        return 0
    setting = hooks_path_setting(repo)
    if setting and not args.hooks_path:
        print(f"hooks not active: core.hooksPath={setting} (unset it or chain our hooks from there: "
              "vaultsync install --hooks-path)", file=sys.stderr)
        return 1
    folder = hooks_dir(repo, setting or "")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # core.hooksPath=/dev/null (hooks switched off), a file, a read-only place
        why = "not a folder" if folder.exists() and not folder.is_dir() else exc.strerror or str(exc)
        print(f"vaultsync install: cannot install hooks in {folder}: {why} (nothing was changed)", file=sys.stderr)
        return 1
    text = shim_text()
    clashes = [h for h in HOOKS if foreign_hook(folder / h) and (folder / f"{h}.vaultsync-chained").exists()]
    if clashes:
        print(f"vaultsync install: {', '.join(clashes)} in {folder} is not vaultsync's and a chained hook already "
              "exists; merge them by hand (nothing was changed)", file=sys.stderr)
        return 1
    kept = [hook for hook in HOOKS if framework_syncs(repo, hook, folder)]
    if kept:
        print(f"{', '.join(kept)}: the pre-commit framework's hook runs vaultsync-index already: left as is")
    for hook in (h for h in HOOKS if h not in kept):
        target = folder / hook
        if foreign_hook(target):
            chained = folder / f"{hook}.vaultsync-chained"
            target.rename(chained)
            print(f"chained existing {hook} hook as {chained.name}")
        if target.is_symlink():
            target.unlink()  # our shim behind a link: written here, never through the link to where it points
        target.write_text(text, encoding="utf-8")
        target.chmod(0o755)
    print(f"installed {', '.join(h for h in HOOKS if h not in kept)} in {folder}")
    if _in_worktree(repo, folder):
        print(f"note: {folder} is in the work tree, so the hooks may be committed: each names this machine's "
              f"Python ({sys.executable}); where that path is absent they run `python3` from PATH, which "
              "needs vaultsync installed (or set VAULTSYNC_PYTHON)")
    if not args.no_alias:
        _set_alias(repo)
    return 0


def _in_worktree(repo: pygit2.Repository, folder: Path) -> bool:
    """Whether ``folder`` lies in the work tree (outside ``.git``), where ``git add -A`` would take it."""
    if repo.workdir is None:
        return False
    top, where = Path(repo.workdir).resolve(), folder.resolve()
    return where.is_relative_to(top) and not where.is_relative_to(Path(repo.path).resolve())


def _set_alias(repo: pygit2.Repository) -> None:
    """``git memsearch``: this interpreter's ``vaultsync`` script when it has one beside it (it starts ~4 ms
    sooner than ``python -m``, which loads runpy), else ``python -m vaultsync``; either way this install,
    run in the folder ``git memsearch`` was called from (``-P``: without that folder on ``sys.path``, where a
    committed ``vaultsync/`` package would be imported first)."""
    script = Path(sys.executable).parent / "vaultsync"
    command = shlex.quote(str(script)) if os.access(script, os.X_OK) else f"{shlex.quote(sys.executable)} -P -m vaultsync"
    # git runs a shell alias from the top folder and names the folder it was called from in GIT_PREFIX:
    # going back there first reads --scope and other paths as `vaultsync search` would read them there
    repo.config["alias.memsearch"] = f'!cd "./$GIT_PREFIX" && exec {command} search'
    print("git memsearch → vaultsync search")
