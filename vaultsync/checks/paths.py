"""Path checks: scratch files that must never be committed, and names git cannot store as UTF-8."""

from __future__ import annotations

import shlex

from vaultsync.diagnostics import Diagnostic, visible
from vaultsync.git import is_ignored, is_valid_utf8_path, printable_path
from vaultsync.gitopen import open_repo
from vaultsync.vault.vault import Vault


def check_paths(vault: Vault) -> list[Diagnostic]:
    """``PA001`` for files matching an ``ephemeral`` glob, ``PA002`` for non-UTF-8 names (GH-05)."""
    out: list[Diagnostic] = []
    repo, opened = None, False
    for path in vault.all_files:
        if not is_valid_utf8_path(path):
            out.append(Diagnostic(printable_path(path), 0, 0, "PA002",
                                  "path is not valid UTF-8 — rename the file with a UTF-8 name"))
            continue
        pattern = vault.config.is_ephemeral(path)
        if pattern:
            if not opened:
                repo, opened = open_repo(vault.root), True
            out.append(Diagnostic(path, 0, 0, "PA001",
                                  f"ephemeral/scratch file must not be committed (matches '{pattern}') "
                                  f"— {_untrack_advice(path, is_ignored(repo, path))}"))
    return out


def _untrack_advice(path: str, ignored: bool) -> str:
    """How to take a scratch file out of the commit while keeping it on disk, as a command that works
    pasted from any folder of the repository (``:(top,literal)``: from its top, no glob or pathspec
    magic in the name) in a POSIX shell."""
    untrack = f"git rm --cached -- {shell_word(':(top,literal)' + path)}"
    if ignored:  # added with -f, or tracked before the rule: the rule stands, only the index holds it
        return f"unstage it ({untrack}); an ignore rule already matches it, so it stays out after that"
    return f"unstage it ({untrack}) and add it to .gitignore"


def shell_word(text: str) -> str:
    """``text`` quoted for a POSIX shell so that it survives :func:`vaultsync.diagnostics.visible`: in
    ``$'…'`` (bash, zsh) when it holds a character that the message writes as an escape (a line break, a tab,
    U+00A0, a Hangul filler drawn blank), which ``$'…'`` reads back; else as :func:`shlex.quote` does."""
    if visible(text) == text:
        return shlex.quote(text)
    return "$'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
