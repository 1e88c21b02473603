"""Lifecycle filters: expired, superseded and low-confidence notes never reach the results.

The filters fail closed: a note whose lifecycle field the index could not read is
hidden by the filter that field belongs to, and shown only with that filter's
include flag (ADR-0040).

The excluded set is computed once per query from the ``notes`` table and applied
to every leg *before* fusion (so nothing filtered can leak in through any stage).
A superseded note is replaced by the note that supersedes it (followed to the end
of the chain), which is offered in its place.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sqlite3
from dataclasses import dataclass

from vaultsync.vault.fields import local_day
from vaultsync.vault.lifecycle_fields import FILTER_OF, in_force
from vaultsync.vault.yamlquote import plain_number


@dataclass(frozen=True)
class LifecyclePolicy:
    """Which notes to hide.

    Attributes:
        include_expired: keep notes whose ``expires`` is before ``today``.
        include_superseded: keep superseded notes.
        min_confidence: hide notes with ``confidence`` below this (notes without one are kept;
            an unreadable one is hidden unless this is 0 or less).
        today: the date expiry is judged against.
        zone: the time zone ``today`` is counted in: an ``expires`` moment expires on the day it falls
            on there (ADR-0111).
    """

    include_expired: bool = False
    include_superseded: bool = False
    min_confidence: float = 0.5
    today: dt.date | None = None  # None: today (UTC) at evaluation time
    zone: dt.tzinfo | None = None  # where an `expires` moment's day is counted (None: the process's)


@dataclass(frozen=True)
class Exclusions:
    """Paths hidden by the policy, with the reason (superseded, then expired, then confidence: the first
    that holds) and the others the note fails too (``also``); superseded → the superseding path offered in
    its place (``replacement``), and → the newest note of its chain, hidden or not (``latest``; a note in
    a supersession cycle maps to the note it goes round to)."""

    reasons: dict[str, str]
    replacement: dict[str, str]
    latest: dict[str, str] = dataclasses.field(default_factory=dict)
    also: dict[str, list[str]] = dataclasses.field(default_factory=dict)

    def __contains__(self, path: object) -> bool:
        return path in self.reasons


def exclusions(db: sqlite3.Connection, policy: LifecyclePolicy) -> Exclusions:
    """Evaluate ``policy`` over every note of the index.

    Fails closed: a lifecycle field the index could not read (``notes.unreadable``)
    hides the note under the filter it belongs to. Supersession is read from both
    sides (``A.supersedes`` B hides B, as ``B.superseded_by`` A does), with each
    reference resolved as a ``memory_id`` or by name (see :func:`_supersession`).
    """
    today = (policy.today or dt.datetime.now(dt.timezone.utc).date()).isoformat()
    rows = db.execute("SELECT path, memory_id, expires, status, confidence, unreadable FROM notes").fetchall()
    superseded, successor = _supersession(db, rows)
    reasons: dict[str, str] = {}
    also: dict[str, list[str]] = {}
    for path, _, expires, status, confidence, unreadable in rows:
        bad = set(json.loads(unreadable)) - {"frontmatter"} if unreadable else set()
        found = hiding_reasons(policy, today, (status or "").casefold() == "superseded" or path in superseded,
                               bad, expires, confidence)
        if found:
            reasons[path] = found[0]
            if len(found) > 1:
                also[path] = found[1:]
    replacement: dict[str, str] = {}
    latest: dict[str, str] = {}
    for path in reasons:
        if reasons[path] != "superseded":
            continue
        by, seen, last = successor.get(path), {path}, path
        while by and reasons.get(by) == "superseded" and by not in seen:
            seen.add(by)
            last, by = by, successor.get(by)
        if by:
            latest[path] = last if by in seen else by  # a cycle: the last note before it goes round
        if by and by not in reasons and by not in seen:
            replacement[path] = by
    return Exclusions(reasons, replacement, latest, also)


def hiding_reasons(policy: LifecyclePolicy, today: str, superseded: bool, unreadable: set[str],
                   expires: str | None, confidence: float | None) -> list[str]:
    """Every reason ``policy`` hides a note, in order: superseded, expired, confidence (each filter once).

    Args:
        today: ``YYYY-MM-DD``, the day expiry is judged against.
        superseded: the note is superseded (from either side, or by its status).
        unreadable: the lifecycle fields written but unreadable (ADR-0040: each hides the note under
            its filter).
        expires: ``YYYY-MM-DD``, or a moment as written (dated in ``policy.zone``, ADR-0111).
    Returns:
        ``superseded`` / ``unreadable <field>``, ``expired <day>`` / ``unreadable expires``,
        ``confidence <c> < <min>`` / ``unreadable confidence``.
    """
    hidden_by = {FILTER_OF.get(f): f for f in unreadable}
    found: list[str] = []
    if not policy.include_superseded and superseded:
        found.append("superseded")
    elif not policy.include_superseded and "superseded" in hidden_by:
        found.append(f"unreadable {hidden_by['superseded']}")
    day = expires
    if expires and len(expires) > 10:  # a moment, stored as written: the day it falls on in policy.zone
        moment_day = local_day(expires, policy.zone)
        day = moment_day.isoformat() if moment_day else expires[:10]
    if not policy.include_expired and day and day < today:
        found.append(f"expired {day}")
    elif not policy.include_expired and "expired" in hidden_by:
        found.append("unreadable expires")
    if confidence is not None and confidence < policy.min_confidence:
        found.append(f"confidence {plain_number(confidence)} < {plain_number(policy.min_confidence)}")
    elif "confidence" in hidden_by and policy.min_confidence > 0:
        found.append("unreadable confidence")
    return found


def _supersession(db: sqlite3.Connection, notes: list[tuple]) -> tuple[set[str], dict[str, str]]:
    """(superseded paths, superseded path → the note that supersedes it) from the ``refs`` table.

    A reference written without brackets is first a ``memory_id`` (when exactly one
    note has it), then a note name; a WikiLink is a name only (as ``check`` reads them).
    A note that names a successor is superseded even when the reference does not resolve. A newer
    note's ``supersedes`` takes effect only once that note is in force
    (:func:`vaultsync.vault.lifecycle_fields.in_force`): a ``draft``, ``proposed`` or ``rejected``
    successor hides nothing, as an ADR proposing to replace an accepted one leaves it standing until
    it is accepted (the older note's own ``superseded_by`` or ``status: superseded`` still hides it:
    its author said so).
    """
    pending = {path for path, _, _, status, *_ in notes if not in_force(status)}
    by_id: dict[str, list[str]] = {}
    for path, memory_id, *_ in notes:
        if memory_id:
            by_id.setdefault(memory_id, []).append(path)
    superseded: set[str] = set()
    declared: dict[str, str] = {}  # from the older note's own superseded_by (wins)
    implied: dict[str, str] = {}  # from the newer note's supersedes
    for source, field, ref, wikilink, resolved in db.execute(
            "SELECT source, field, ref, wikilink, resolved FROM refs ORDER BY rowid"):
        ids = [] if wikilink else by_id.get(ref, [])
        other = ids[0] if len(ids) == 1 else (None if ids else resolved)
        if field == "superseded_by":
            superseded.add(source)
            if other and other != source:
                declared.setdefault(source, other)
        elif other and other != source and source not in pending:
            superseded.add(other)
            implied.setdefault(other, source)
    return superseded, implied | declared

