"""Read the lifecycle fields of a frontmatter, failing closed.

The lifecycle fields decide whether search may show a note: ``expires`` (TTL),
``confidence``, ``status``, ``supersedes`` and ``superseded_by``; ``last_validated``
only feeds the recency score. A value that is present but cannot be read (a
malformed date, a number written as a string, ``.nan``, a list where a scalar
belongs, ``false``...) is never taken as "not set": it is returned in
``unreadable``, the index hides the note (see :mod:`vaultsync.search.lifecycle`)
and ``check`` reports it as LC001, in every folder. The checker and the index
both read the fields here, so they always agree.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field
from typing import Any

from vaultsync.vault.fields import LIFECYCLE_FIELDS, local_day, normalised_frontmatter, parse_vault_date

# a successor with one of these statuses hides nothing yet: its `supersedes` waits until it is in force
NOT_IN_FORCE = frozenset({"draft", "proposed", "rejected"})


def in_force(status: object) -> bool:
    """Whether a note of this ``status`` value is in force (its ``supersedes`` takes effect): any status
    but ``draft``, ``proposed`` and ``rejected`` (:data:`NOT_IN_FORCE`, case-blind), or none (ADR-0114)."""
    return not (isinstance(status, str) and status.strip().casefold() in NOT_IN_FORCE)

# unreadable field -> the search filter it belongs to (None: hides nothing)
FILTER_OF = {"expires": "expired", "confidence": "confidence", "status": "superseded",
             "supersedes": "superseded", "superseded_by": "superseded", "last_validated": None}

EXPECTED = {  # what each lifecycle field holds, for messages
    "expires": "a date (YYYY-MM-DD)",
    "last_validated": "a date (YYYY-MM-DD)",
    "confidence": "a number from 0 to 1",
    "status": "a word such as accepted or superseded",
    "supersedes": 'a list of "[[WikiLinks]]" or memory_ids',
    "superseded_by": 'one "[[WikiLink]]" or memory_id',
}
_TOP_LEVEL_KEY = re.compile(r"^(" + "|".join(f.replace("_", "[-_ ]") for f in LIFECYCLE_FIELDS) + r")[ \t]*:",
                            re.MULTILINE | re.IGNORECASE)


@dataclass(frozen=True)
class Unreadable:
    """A lifecycle field that is present but cannot be read.

    Attributes:
        field: the frontmatter key (one of ``LIFECYCLE_FIELDS``).
        value: the loaded YAML value.
        expected: what the field should hold, for the message.
    """

    field: str
    value: Any
    expected: str


@dataclass
class Lifecycle:
    """The readable lifecycle values of one note.

    ``status`` is stripped and case-folded (``Superseded`` reads as ``superseded``);
    ``supersedes`` / ``superseded_by`` are the references as written (WikiLinks
    keep their brackets); dates are :class:`datetime.date`.
    """

    status: str | None = None
    expires: dt.date | None = None
    last_validated: dt.date | None = None
    confidence: float | None = None
    supersedes: list[str] = field(default_factory=list)
    superseded_by: list[str] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)


def read_lifecycle(frontmatter: dict[str, Any], tz: dt.tzinfo | None = None) -> Lifecycle:
    """The lifecycle fields of a loaded frontmatter mapping (MADR ``status: superseded by X`` included).

    A key that is absent or null (``expires:``) is not set; any other value must
    be readable or it lands in ``unreadable``. A date-time with an offset is a moment: its date is the
    day it falls on in ``tz`` (the checks' time zone, None for the process's; ADR-0053), as ``check``
    counts it, so that check, review and search agree on when a note expires. Never raises.
    """
    fm = normalised_frontmatter(frontmatter)
    out = Lifecycle()

    def bad(key: str) -> None:
        out.unreadable.append(Unreadable(key, fm[key], EXPECTED[key]))

    for key in ("expires", "last_validated"):
        if fm.get(key) is not None:
            date = parse_vault_date(fm[key])
            if date is None:
                bad(key)
            setattr(out, key, date and local_day(fm[key], tz))
    value = fm.get("confidence")
    if value is not None:
        number = _finite(value)
        if number is None or not 0 <= number <= 1:  # 80 (a percentage) or 2: no probability to filter by
            bad("confidence")
        else:
            out.confidence = number
    value = fm.get("status")
    if value is not None:
        if isinstance(value, str) and value.strip():
            out.status = value.strip().casefold()
        else:
            bad("status")
    for key, many in (("supersedes", True), ("superseded_by", False)):
        if fm.get(key) is None:
            continue
        refs = _refs(fm[key], many)
        if refs is None:
            bad(key)
        else:
            setattr(out, key, refs)
    return out


def _finite(value: Any) -> float | None:
    """``value`` as a finite float, None for anything else (booleans, strings, ``.nan``, huge integers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _refs(value: Any, many: bool) -> list[str] | None:
    """Non-empty reference strings, or None when ``value`` is not one (or, when ``many``, a list of them)."""
    if isinstance(value, str):
        return [value.strip()] if value.strip() else None
    if many and isinstance(value, list):
        if all(isinstance(v, str) and v.strip() for v in value):
            return [v.strip() for v in value]
    return None


def keys_in_unloadable(yaml_text: str) -> list[str]:
    """Lifecycle keys written at the top level of frontmatter YAML that failed to load.

    Such a note's lifecycle cannot be read at all, so each key found counts as unreadable.
    """
    return sorted({re.sub(r"[- ]", "_", key).lower() for key in _TOP_LEVEL_KEY.findall(yaml_text)})
