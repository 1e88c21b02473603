"""Run every check over a vault and collect the diagnostics, sorted by location.

Per-note checks (parsing, schema, vocabulary) run in :func:`analyse_note`, which
:func:`load_checked_vault` may spread over worker processes; checks across notes
(links, supersession, duplicate ids) run afterwards in :func:`run_checks`.
"""

from __future__ import annotations

import datetime as dt
import os
from functools import partial
from pathlib import Path

from vaultsync.checks.folders import check_folders
from vaultsync.checks.frontmatter import check_frontmatter, check_vocabulary_fields, declared_keys
from vaultsync.checks.lifecycle import check_dates, check_duplicate_ids
from vaultsync.checks.lifecycle_values import check_lifecycle_fields
from vaultsync.checks.links import check_links
from vaultsync.checks.one_per_mistake import one_per_mistake
from vaultsync.checks.paths import check_paths
from vaultsync.checks.supersession import check_supersession
from vaultsync.diagnostics import WARNING, Diagnostic
from vaultsync.git import Snapshot
from vaultsync.vault.clock import today_in, zone_or_local
from vaultsync.vault.config import Config
from vaultsync.vault.note import Note
from vaultsync.vault.resolve import LinkIndex
from vaultsync.vault.vault import NoteCache, Vault, load_vault


def analyse_note(config: Config, root: Path, note: Note) -> list[Diagnostic]:
    """Per-note diagnostics: reading, frontmatter shape, schema, vocabulary.

    Also computes the note's links, headings and block ids, which the checks across notes read,
    so that a worker process returns them ready.
    """
    found = list(note.diagnostics) + check_frontmatter(config, root, note)
    if note.readable:
        _ = note.links, note.headings, note.block_ids
    return found


def load_checked_vault(snapshot: Snapshot, config: Config, root: Path, jobs: int | None = None,
                       cache: NoteCache | None = None) -> Vault:
    """Load ``snapshot`` and run the per-note checks (in parallel on large vaults).

    ``jobs`` defaults to ``$VAULTSYNC_CHECK_JOBS`` or the number of CPUs (at most 4). With
    ``cache`` (:class:`vaultsync.checks.cache.CheckCache`), unchanged notes are not parsed again.
    """
    if jobs is None:
        jobs = int(os.environ.get("VAULTSYNC_CHECK_JOBS") or min(4, os.cpu_count() or 1))
    return load_vault(snapshot, config, root, analyse=partial(analyse_note, config, root), jobs=jobs, cache=cache)


def run_checks(vault: Vault, previous: LinkIndex | None = None, today: dt.date | None = None,
               renamed: dict[str, str] | None = None) -> list[Diagnostic]:
    """All diagnostics for ``vault``.

    Args:
        vault: the snapshot being validated (staged index, working tree or a commit),
            loaded by :func:`load_checked_vault` (or :func:`load_vault`, then per-note
            checks run here).
        previous: link resolution over the vault at HEAD, to explain links broken by this commit.
        today: the date expiry is judged against (default: today in the checks' time zone,
            :func:`vaultsync.vault.clock.zone_or_local`).
        renamed: ``{path at HEAD: new path}`` of notes renamed by this commit.
    Returns:
        Diagnostics sorted by path, line, column, code.
    """
    config = vault.config
    tz = zone_or_local(config)  # an unknown zone is CF002 in `check`; the write path carries on (and warns)
    today = today or today_in(tz)
    out: list[Diagnostic] = list(check_paths(vault))
    out.extend(check_folders(vault))
    out.extend(check_vocabulary_fields(vault))
    for path in sorted(vault.notes):
        note = vault.notes[path]
        found = vault.findings.get(path)
        found = list(found if found is not None else analyse_note(config, vault.root, note))
        if note.fm_state == "mapping":
            found.extend(check_dates(note, today, config.severity("expired", WARNING), tz))
            found.extend(check_lifecycle_fields(note, declared_keys(config, vault.root, note)))
        out.extend(one_per_mistake(note, found))
    out.extend(check_duplicate_ids(vault))
    out.extend(check_supersession(vault))
    out.extend(check_links(vault, previous, config.severity("empty_link", WARNING), renamed))
    return sorted(set(out))
