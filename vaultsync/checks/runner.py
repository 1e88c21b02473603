"""Run every check over a loaded vault and collect the diagnostics, sorted by location."""

from __future__ import annotations

import datetime as dt

from vaultsync.checks.frontmatter import check_frontmatter
from vaultsync.checks.lifecycle import check_dates, check_duplicate_ids, check_supersession
from vaultsync.checks.links import check_links
from vaultsync.checks.paths import check_paths
from vaultsync.diagnostics import WARNING, Diagnostic
from vaultsync.vault.vault import Vault


def run_checks(vault: Vault, previous: Vault | None = None, today: dt.date | None = None) -> list[Diagnostic]:
    """All diagnostics for ``vault``.

    Args:
        vault: the snapshot being validated (staged index, working tree or a commit).
        previous: the vault at HEAD, used to explain links broken by this commit.
        today: the date expiry is judged against (default: today, UTC).
    Returns:
        Diagnostics sorted by path, line, column, code.
    """
    today = today or dt.datetime.now(dt.timezone.utc).date()
    config = vault.config
    out: list[Diagnostic] = list(check_paths(vault))
    for path in sorted(vault.notes):
        note = vault.notes[path]
        out.extend(note.diagnostics)
        out.extend(check_frontmatter(vault, note, config.type_for(path)))
        if note.fm_state == "mapping":
            out.extend(check_dates(note, today, config.severity("expired", WARNING)))
    out.extend(check_duplicate_ids(vault))
    out.extend(check_supersession(vault))
    out.extend(check_links(vault, previous, config.severity("empty_link", WARNING)))
    return sorted(set(out))
