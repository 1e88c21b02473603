"""The revalidation queue: the notes that need a person's decision, most important first.

A note is queued when it

* ``expiring`` — its ``expires`` date is within ``days`` (default 14) or already past;
* ``stale`` — its ``last_validated`` (else ``created``) is older than the type's maximum age
  (``review: {max_age_days: {rule: 90, adr: 365}}`` in ``.vaultsync.yaml``);
* ``low_confidence`` — its ``confidence`` is below the search threshold (``search.min_confidence``, 0.5),
  so search hides it;
* ``superseded_linked`` — it is superseded but an active note still links to it (outside the
  supersession fields).

Superseded notes are only queued for the last reason. ``confirm`` sets ``last_validated`` to
today with a one-line edit.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
from dataclasses import asdict, dataclass

from vaultsync.checks.report import github_escape
from vaultsync.diagnostics import terminal_safe
from vaultsync.memory import transaction
from vaultsync.memory.errors import MemoryWriteError
from vaultsync.memory.frontmatter_text import set_fields
from vaultsync.memory.lookup import find_note
from vaultsync.memory.view import backlinks, chain
from vaultsync.memory.workspace import Workspace, today
from vaultsync.vault.clock import today_in, zone_or_local
from vaultsync.vault.config import Config
from vaultsync.vault.fields import local_day, normalised_frontmatter, parse_vault_date
from vaultsync.vault.lifecycle_fields import read_lifecycle
from vaultsync.vault.vault import Vault

DEFAULT_DAYS = 14
DEFAULT_MIN_CONFIDENCE = 0.5
DEFAULT_IMPORTANCE = 5
KINDS = ("expiring", "stale", "superseded_linked", "low_confidence")  # also the tie-break order
FORMATS = ("text", "json", "markdown", "github")


@dataclass(frozen=True)
class ReviewItem:
    """One reason to look at one note.

    Attributes:
        kind: one of :data:`KINDS`.
        path, memory_id, title, type: the note.
        importance: the note's importance (5 when unset), the sort key.
        reason: one sentence for a person.
        line: the file line of the field concerned.
        due: the date the reason counts from (``YYYY-MM-DD``), or None.
    """

    kind: str
    path: str
    memory_id: str | None
    title: str | None
    type: str | None
    importance: int
    reason: str
    line: int
    due: str | None = None


def max_ages(config: Config) -> dict[str, int]:
    """``review.max_age_days`` of the config: type → days."""
    review = config.raw.get("review") or {}
    return {str(k): int(v) for k, v in (review.get("max_age_days") or {}).items()}


def queue(vault: Vault, days: int = DEFAULT_DAYS, on: dt.date | None = None) -> list[ReviewItem]:
    """Every queued reason over ``vault`` on date ``on`` (default today), sorted by importance
    (highest first), then kind (:data:`KINDS` order), then due date and path."""
    tz = zone_or_local(vault.config)  # days as `check` counts them (ADR-0053)
    on = on or today_in(tz)
    config = vault.config
    ages = max_ages(config)
    try:  # `vaultsync check` reports a bad value; here it must not stop the review
        threshold = float(config.search.get("min_confidence", DEFAULT_MIN_CONFIDENCE))
    except (TypeError, ValueError):
        threshold = DEFAULT_MIN_CONFIDENCE
    items: list[ReviewItem] = []
    superseded: set[str] = set()

    def add(path: str, kind: str, reason: str, key: str, due: dt.date | None = None) -> None:
        note = vault.notes[path]
        fm = note.frontmatter
        imp = fm.get("importance")
        items.append(ReviewItem(kind, path, fm.get("memory_id"), fm.get("title"), fm.get("type"),
                                imp if isinstance(imp, int) and not isinstance(imp, bool) else DEFAULT_IMPORTANCE,
                                reason, note.position((key,))[0] if key in fm else 1,
                                due.isoformat() if due else None))

    for path in sorted(vault.notes):
        note = vault.notes[path]
        if note.fm_state != "mapping":
            continue
        fm = normalised_frontmatter(note.frontmatter)
        if fm.get("status") == "superseded":
            superseded.add(path)
            continue
        expires = local_day(fm.get("expires"), tz)  # a moment: the day it falls on there
        if expires is not None and (expires - on).days <= days:
            left = (expires - on).days
            when = f"expired {-left} day(s) ago" if left < 0 else ("expires today" if left == 0
                                                                  else f"expires in {left} day(s)")
            add(path, "expiring", f"{when} ({expires}): renew `expires` or retire the note", "expires", expires)
        limit = ages.get(str(fm.get("type")))
        checked = parse_vault_date(fm.get("last_validated")) or parse_vault_date(fm.get("created"))
        if limit is not None and checked is not None and (on - checked).days > limit:
            key = "last_validated" if parse_vault_date(fm.get("last_validated")) else "created"
            since = "last validated" if key == "last_validated" else "created, never validated since," \
                if "last_validated" not in fm else "created (last_validated cannot be read: `vaultsync check`)"
            add(path, "stale", f"{since} {checked} ({(on - checked).days} days ago; {fm.get('type')} "
                f"notes are reviewed every {limit} days): confirm it or change it", key,
                checked + dt.timedelta(days=limit))
        conf = fm.get("confidence")
        if isinstance(conf, (int, float)) and not isinstance(conf, bool) and conf < threshold:
            add(path, "low_confidence", f"confidence {conf} is below the search threshold {threshold}: "
                "search hides it — raise it once confirmed, or retire it", "confidence")
    links = backlinks(vault)
    for path in sorted(superseded):
        successors = set(chain(vault, path)[1])  # the notes that replaced it may well cite it
        active = sorted({src for src, _, fld in links.get(path, []) if fld not in ("supersedes", "superseded_by")
                         and src not in successors
                         and not _closed(vault.notes[src].frontmatter)})
        if active:
            names = ", ".join(vault.display_name(s) for s in active)
            add(path, "superseded_linked", f"superseded, yet still linked from {names}: point those links at "
                f"its successor", "superseded_by")
    items.sort(key=lambda i: (-i.importance, KINDS.index(i.kind), i.due or "9999", i.path))
    return items


# a note in one of these states records the past: its links name what held then, and stay
CLOSED_STATUSES = frozenset({"superseded", "resolved", "rejected", "deprecated", "archived", "closed", "retired"})


def _closed(frontmatter: dict | None) -> bool:  # type: ignore[type-arg]
    return read_lifecycle(frontmatter or {}).status in CLOSED_STATUSES


def render(items: list[ReviewItem], fmt: str) -> str:
    """The queue as ``text``, ``json``, ``markdown`` (a table, for an issue) or ``github`` (annotations);
    no control character a terminal acts on (:func:`vaultsync.diagnostics.terminal_safe`)."""
    return terminal_safe(_rendered(items, fmt))


def _rendered(items: list[ReviewItem], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"count": len(items), "items": [asdict(i) for i in items]}, ensure_ascii=False, indent=2)
    if fmt == "github":
        return "\n".join(f"::warning file={github_escape(i.path, True)},line={i.line},title=review {i.kind}::"
                         f"{github_escape(f'{i.memory_id or i.path}: {i.reason}')}" for i in items)
    if fmt == "markdown":
        if not items:
            return "Nothing to review."
        rows = ["| importance | note | kind | why |", "|---|---|---|---|"]
        for i in items:
            title, reason = (i.title or "").replace("|", "\\|"), i.reason.replace("|", "\\|")
            rows.append(f"| {i.importance} | `{i.memory_id or i.path}` {title} | {i.kind} | {reason} |")
        return "\n".join(rows) + f"\n\n{len(items)} item(s). Confirm one with `vaultsync review --confirm ID` (one past " \
            "its expires with `--expires YYYY-MM-DD` too, the last day it holds)."
    if not items:
        return "nothing to review"
    return "\n".join(f"{i.path}:{i.line}: {i.kind} (importance {i.importance}) {i.memory_id or ''} {i.reason}"
                     for i in items)


def confirm(ws: Workspace, ref: str, expires: dt.date | None = None) -> tuple[str, str, str]:
    """Set the note's ``last_validated`` to today, and its ``expires`` to ``expires`` when given (one edit,
    validated). A note past its ``expires`` is confirmed only with a new one: a confirmation that leaves
    search hiding the note would record a review that changed nothing.

    Returns:
        (path, unified diff of the edit — ``""`` when it changes nothing —, and what confirming does not
        change: ``""``, or why search still hides the note: superseded).
    Raises:
        MemoryWriteError: no such note, a note past ``expires`` without a new one, an ``expires`` before
            today, or a layout that cannot be edited safely.
        WriteRefused: the edit would add errors.
    """
    with ws.lock():
        vault = ws.vault()
        path = find_note(vault, ref)
        tz = zone_or_local(vault.config)
        if expires is not None and expires < today_in(tz):
            raise MemoryWriteError(f"expires {expires.isoformat()} is before today ({today_in(tz).isoformat()}): "
                                   "give the last day the note holds")
        life = read_lifecycle(vault.notes[path].frontmatter, tz)
        if expires is None and life.expires is not None and life.expires < today_in(tz):
            raise MemoryWriteError(
                f"{path} expired on {life.expires.isoformat()}: confirmed as it is, search would go on hiding it — "
                f"give the last day it holds (`vaultsync review --confirm {ref} --expires YYYY-MM-DD`; over MCP, "
                "`expires`), or supersede it; nothing was written")
        caveat = _still_hidden(vault, path)
        before = (ws.root / path).read_bytes().decode("utf-8")
        fields = {"last_validated": today().isoformat()}
        if expires is not None:
            fields["expires"] = expires.isoformat()
        after = set_fields(before, fields)
        if after == before:
            return path, "", caveat
        transaction.apply(ws, {path: after})
    diff = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                f"a/{path}", f"b/{path}")
    return path, "".join(diff), caveat


def still_queued(vault: Vault, path: str, days: int = DEFAULT_DAYS) -> list[ReviewItem]:
    """What confirming ``path`` does not settle: its items left in the queue (an ``expires`` still near, a
    confidence under the search threshold, which search goes on hiding, a successor still linked)."""
    return [item for item in queue(vault, days) if item.path == path]


def _still_hidden(vault: Vault, path: str) -> str:
    """Why search goes on hiding a confirmed note (``""``: it does not): confirming records a review, it
    does not undo a supersession (MADR's ``status: superseded by X`` too). A note past ``expires`` is
    confirmed only with a new one (:func:`confirm`)."""
    tz = zone_or_local(vault.config)
    life = read_lifecycle(vault.notes[path].frontmatter, tz)
    if life.status == "superseded" or life.superseded_by:
        by = f" by {life.superseded_by[0]}" if life.superseded_by else ""
        return f"{path} is superseded{by}: search shows its successor instead; confirming does not change that"
    return ""
