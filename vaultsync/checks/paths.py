"""Path checks: scratch files that must never be committed, and names git cannot store as UTF-8."""

from __future__ import annotations

from vaultsync.diagnostics import Diagnostic
from vaultsync.git import is_valid_utf8_path, printable_path
from vaultsync.vault.vault import Vault


def check_paths(vault: Vault) -> list[Diagnostic]:
    """``PA001`` for files matching an ``ephemeral`` glob, ``PA002`` for non-UTF-8 names (GH-05)."""
    out: list[Diagnostic] = []
    for path in vault.all_files:
        if not is_valid_utf8_path(path):
            out.append(Diagnostic(printable_path(path), 0, 0, "PA002",
                                  "path is not valid UTF-8 — rename the file with a UTF-8 name"))
            continue
        pattern = vault.config.is_ephemeral(path)
        if pattern:
            out.append(Diagnostic(path, 0, 0, "PA001",
                                  f"ephemeral/scratch file must not be committed (matches '{pattern}') "
                                  "— unstage it (git rm --cached) and add it to .gitignore"))
    return out
