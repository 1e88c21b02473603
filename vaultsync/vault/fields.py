"""Meaning of frontmatter fields shared by the checks and the index: dates and supersession status."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}\Z")  # \Z: "2024-03-01\n" (a block scalar) is no date
_DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?([Zz]|[+-](\d{2}):?(\d{2}))?\Z")
_MADR_SUPERSEDED = re.compile(r"^superseded\s+by\s+(.+)$", re.IGNORECASE)


def parse_vault_date(value: Any) -> dt.date | None:
    """The calendar date of a ``YYYY-MM-DD`` or RFC 3339 date-time string, else None."""
    if not isinstance(value, str):
        return None
    m = _DATETIME.match(value)
    if m and not _valid_time(m):
        return None
    text = m.group(1) if m else value
    if not _DATE.match(text):
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def parse_vault_instant(value: Any) -> dt.datetime | None:
    """The moment an RFC 3339 date-time with an offset (``Z``, ``+09:00``) names, as an aware datetime;
    None for a plain date, a date-time without an offset, or anything unreadable."""
    if not isinstance(value, str) or parse_vault_date(value) is None:
        return None
    m = _DATETIME.match(value)
    if m is None or not m.group(6):
        return None
    text = value.replace("t", "T", 1).replace(" ", "T", 1).replace("z", "Z")
    if m.group(7) and ":" not in value[m.start(7):]:  # +0900: the colon fromisoformat wants
        text = text[:m.start(7)] + m.group(7) + ":" + m.group(8)
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:  # a leap second (":60") names the moment before the next minute
        return dt.datetime.fromisoformat(text.replace(":60", ":59").replace("Z", "+00:00"))


def parse_vault_wall_time(value: Any) -> dt.datetime | None:
    """The wall-clock time an RFC 3339-like date-time without an offset names (``2024-01-05T10:00``), as a
    naive datetime; None for a plain date, a date-time with an offset, or anything unreadable."""
    m = _DATETIME.match(value) if isinstance(value, str) and parse_vault_date(value) is not None else None
    if m is None or m.group(6):
        return None
    second = min(int(m.group(4) or 0), 59)  # a leap second (":60") names the moment before the next minute
    micro = int((m.group(5) or ".0")[1:7].ljust(6, "0"))
    return dt.datetime.combine(dt.date.fromisoformat(m.group(1)), dt.time(int(m.group(2)), int(m.group(3)), second, micro))


def local_day(value: Any, tz: dt.tzinfo | None = None) -> dt.date | None:
    """The calendar date ``value`` falls on where "today" is counted (``tz``: the checks' time zone, None
    for the process's; ADR-0053): a moment's day there, else the date as written (also for a moment whose
    day there falls outside years 1–9999, such as ``9999-12-31T23:00:00-05:00`` in UTC)."""
    instant = parse_vault_instant(value)
    try:
        return instant.astimezone(tz).date() if instant is not None else parse_vault_date(value)
    except OverflowError:
        return parse_vault_date(value)
    except ValueError:  # a local zone 24 hours or more from UTC (TZ=UTC+24), which no place is: UTC's day
        return instant.astimezone(dt.timezone.utc).date()  # type: ignore[union-attr]


def _valid_time(m: re.Match[str]) -> bool:
    """The time and offset of an RFC 3339 date-time exist: hour ≤ 23, minute ≤ 59, second ≤ 60 (a leap second)."""
    hour, minute, second, off_h, off_m = (int(g) if g else 0 for g in m.group(2, 3, 4, 7, 8))
    return hour <= 23 and minute <= 59 and second <= 60 and off_h <= 23 and off_m <= 59


LIFECYCLE_FIELDS = ("expires", "confidence", "status", "supersedes", "superseded_by", "last_validated")
_FIELDS = frozenset(LIFECYCLE_FIELDS)
_VARIANT = re.compile(r"[- ]")  # `superseded-by`, `last validated`: the field under another spelling
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")  # `supersededBy`, `lastValidated`: a word boundary in camel case


def lifecycle_field_of(key: Any) -> str | None:
    """The lifecycle field a top-level key names in another case, with blanks around it, with ``-`` or a
    space for ``_``, or in camel case (``Expires``, ``Superseded-By``, ``last validated``, ``supersededBy``);
    None for the field itself or any other key. Only ASCII case is folded (``ſtatus`` is no ``status``)."""
    if not isinstance(key, str) or key in _FIELDS:
        return None
    name = _VARIANT.sub("_", key.strip()).lower()
    if name not in _FIELDS:
        name = _CAMEL.sub("_", key.strip()).lower()
    return name if name in _FIELDS else None


# keys other tools and teams use for a lifecycle field, folded as :func:`_letters` folds (``expiry_date``)
_OTHER_NAMES = {
    "expires": ("expired", "expiry", "expiration", "expirydate", "expirationdate", "expiresat", "expireson",
                "expireat", "expiresafter", "validuntil", "ttl"),
    "supersedes": ("replaces", "obsoletes"),
    "superseded_by": ("replacedby", "obsoletedby"),
    "confidence": ("certainty",),
    "last_validated": ("lastreviewed", "lastverified", "lastchecked"),
}


def lifecycle_fields_meant(key: Any) -> list[str]:
    """The lifecycle fields a top-level key that nothing reads was likely meant as, nearest first: a
    misspelling or a name other tools use (``expiry``, ``expired``, ``valid_until``, ``replaced_by``).
    [] for a field, a spelling :func:`lifecycle_field_of` reads, or any other key.

    A misspelling is measured on the letters without case or ``-``/``_``/blanks, as optimal string
    alignment edits. A field of 10+ letters takes up to 2 edits, one of them a changed letter
    (``superceded_by``, ``confidance``, ``superseeded``); a shorter one takes one letter added or dropped,
    or two neighbours swapped (``stauts``, ``expirs``): a changed letter there, or two in a long word,
    makes another word as often as a typo (``states``, ``empires``, ``conference``). A key may be shorter
    than its field only for fields of 7+ letters (``stats`` is no ``status``)."""
    if not isinstance(key, str) or key in _FIELDS or lifecycle_field_of(key) is not None:
        return []
    word = _letters(key)
    near = []
    for name in LIFECYCLE_FIELDS:
        field = _letters(name)
        long = len(field) >= 10
        if word in _OTHER_NAMES.get(name, ()):
            near.append((0, name))
        elif abs(len(word) - len(field)) <= 2 and (d := osa_distance(word, field)) <= (most := 2 if long else 1) \
                and osa_distance(word, field, substitution=2) <= d + (1 if long else 0) \
                and len(word) >= len(field) - (most if len(field) >= 7 else 0):
            near.append((d, name))
    return [name for _, name in sorted(near)]


def osa_distance(a: str, b: str, substitution: int = 1) -> int:
    """The optimal string alignment distance (Damerau–Levenshtein without re-editing a transposed pair:
    insertions, deletions and swaps of neighbours cost 1, a changed letter ``substitution``); Boytsov 2011,
    section 2. With ``substitution=2`` a changed letter costs what dropping and adding one does, so the
    excess over the plain distance counts the changed letters."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]) * substitution)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


def _letters(key: str) -> str:
    return re.sub(r"[-_\s]", "", key.strip().casefold())


def key_variants(frontmatter: dict[str, Any], read: bool = True) -> list[tuple[str, str]]:
    """``(key as written, lifecycle field)`` for each key :func:`lifecycle_field_of` maps to a field and that
    is read as it (the field written as-is wins, else the first such key); ``read=False``: the others,
    which nothing reads."""
    out: list[tuple[str, str]] = []
    taken = {key for key in frontmatter if key in _FIELDS}
    for key in frontmatter:
        name = lifecycle_field_of(key)
        if name is not None:
            if (name not in taken) == read:
                out.append((key, name))
            taken.add(name)
    return out


def with_lifecycle_keys(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with each lifecycle key written in another spelling (:func:`key_variants`) also under its
    field's name, so that every reader of a lifecycle field sees what the author meant (ADR-0104)."""
    read = key_variants(data) if data else []
    return {**data, **{name: data[key] for key, name in read}} if read else data


def normalised_frontmatter(data: dict[str, Any], keys: bool = True) -> dict[str, Any]:
    """Read the MADR habit ``status: superseded by [[X]]`` as ``status: superseded`` + ``superseded_by: [[X]]``,
    and (``keys``) lifecycle keys in another spelling as their fields (:func:`with_lifecycle_keys`)."""
    data = with_lifecycle_keys(data) if keys else data
    status = data.get("status")
    if isinstance(status, str) and len(status) >= 15:  # "superseded by X" at the shortest
        m = _MADR_SUPERSEDED.match(status.strip())
        if m:
            data = dict(data)
            data["status"] = "superseded"
            data.setdefault("superseded_by", m.group(1).strip())
    return data


def note_aliases(frontmatter: dict[str, Any] | None) -> list[str]:
    """A note's ``aliases``: a list of names, or one string of comma-separated names (Obsidian reads both);
    other values and blank names are left out."""
    values = frontmatter.get("aliases") if frontmatter else None
    if isinstance(values, str):
        return [name.strip() for name in values.split(",") if name.strip()]
    if not isinstance(values, list):
        return []
    return [a for a in values if isinstance(a, str) and a.strip()]
