"""Helpers shared by the commands that work on a repository."""

from __future__ import annotations

import sys
from pathlib import Path

import pygit2

from vaultsync.git import open_repo, why_not_opened
from vaultsync.vault.config import Config


def repository(command: str) -> pygit2.Repository | None:
    """The repository around the current directory, or None after printing why (callers exit 2)."""
    repo = open_repo(Path.cwd())
    if repo is None:
        print(f"vaultsync {command}: {why_not_opened(Path.cwd())}", file=sys.stderr)
    return repo


def committed_config(repo: pygit2.Repository) -> Config:
    """The ``.vaultsync.yaml`` committed at HEAD (the config the index was built with).

    An invalid committed config is reported on stderr and the defaults are used, so
    status and search keep working on the last good index; an invalid ``search:`` section alone is
    left out (``Config.ignored``; each search result says so, ADR-0119).
    """
    from vaultsync.git import head_tree
    from vaultsync.index.fastpath import config_at
    from vaultsync.vault.config import ConfigError

    try:
        return config_at(repo, head_tree(repo))[0]
    except ConfigError as exc:
        for diagnostic in exc.diagnostics:
            print(f"vaultsync: warning: {diagnostic.render()} — using the default settings", file=sys.stderr)
        return Config(refused=list(exc.diagnostics))
