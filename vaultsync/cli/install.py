"""``vaultsync install``: install the git hook shims and the ``git memsearch`` alias.

The shims (``githooks/``) start ``vaultsync sync`` detached after a commit, merge,
checkout or rewrite, and always exit 0. An existing hook is kept and chained
(renamed ``<hook>.vaultsync-chained`` and called by the shim). When
``core.hooksPath`` is set, git ignores ``.git/hooks``: install says so and fails
unless ``--hooks-path`` asks to install into that folder (field case GH-08).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import pygit2

from vaultsync.cli.common import repository
from vaultsync.resources import data_dir

HOOKS = ("post-commit", "post-merge", "post-checkout", "post-rewrite")
MARKER = "vaultsync git hook shim"


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hooks-path", action="store_true", help="install into the folder named by core.hooksPath")
    p.add_argument("--no-alias", action="store_true", help="do not set `git config alias.memsearch`")
    p.set_defaults(run=run)


def hooks_path_setting(repo: pygit2.Repository) -> str | None:
    """The value of ``core.hooksPath``, or None."""
    try:
        return str(repo.config["core.hooksPath"])
    except KeyError:
        return None


def hooks_dir(repo: pygit2.Repository) -> Path:
    """Where git looks for hooks in this repository."""
    setting = hooks_path_setting(repo)
    if setting:
        path = Path(setting).expanduser()
        return path if path.is_absolute() else Path(repo.workdir or repo.path) / path
    from vaultsync.index.layout import common_git_dir

    return common_git_dir(repo) / "hooks"


def installed_hooks(repo: pygit2.Repository) -> list[str]:
    """Which of our shims are present where git will run them."""
    folder = hooks_dir(repo)
    return [h for h in HOOKS if (folder / h).is_file() and MARKER in (folder / h).read_text(errors="replace")]


def _foreign(path: Path) -> bool:
    """An existing hook that is not our shim."""
    return path.exists() and MARKER not in path.read_text(errors="replace")


def shim_text() -> str:
    """The hook shim with this interpreter baked in (so hooks work outside the virtualenv)."""
    template = (data_dir("githooks") / "post-commit").read_text(encoding="utf-8")
    return template.replace("@PYTHON@", sys.executable)


def run(args: argparse.Namespace) -> int:
    repo = repository("install")
    if repo is None:
        return 2
    setting = hooks_path_setting(repo)
    if setting and not args.hooks_path:
        print(f"hooks not active: core.hooksPath={setting} (unset it or chain our hooks from there: "
              "vaultsync install --hooks-path)", file=sys.stderr)
        return 1
    folder = hooks_dir(repo)
    folder.mkdir(parents=True, exist_ok=True)
    text = shim_text()
    clashes = [h for h in HOOKS if _foreign(folder / h) and (folder / f"{h}.vaultsync-chained").exists()]
    if clashes:
        print(f"vaultsync install: {', '.join(clashes)} in {folder} is not vaultsync's and a chained hook already "
              "exists; merge them by hand (nothing was changed)", file=sys.stderr)
        return 1
    for hook in HOOKS:
        target = folder / hook
        if _foreign(target):
            chained = folder / f"{hook}.vaultsync-chained"
            target.rename(chained)
            print(f"chained existing {hook} hook as {chained.name}")
        target.write_text(text, encoding="utf-8")
        target.chmod(0o755)
    print(f"installed {', '.join(HOOKS)} in {folder}")
    if not args.no_alias:
        repo.config["alias.memsearch"] = f"!{shlex.quote(sys.executable)} -m vaultsync search"
        print("git memsearch → vaultsync search")
    return 0
