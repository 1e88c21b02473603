"""Which calendar day "today" is for date checks (expiry, ``last_validated`` in the future).

Dates in notes are calendar dates written by people, so they are compared with
the date on the author's wall clock, not the UTC date: east of UTC a note
validated this morning is not "in the future" until UTC catches up. The time zone
is, in order: ``checks.timezone`` in ``.vaultsync.yaml`` (an IANA name such as
``Asia/Tokyo``, for a team that shares one, or a CI runner that runs in UTC),
then the process's local zone (``TZ``, else the system setting). See ADR-0053.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from vaultsync.diagnostics import visible
from vaultsync.vault.config import Config


def zone(config: Config | None) -> dt.tzinfo | None:
    """The configured time zone, or None for the process's local zone (UTC where that zone cannot be
    used: :func:`local_zone_problem`).

    Raises:
        ValueError: ``checks.timezone`` names no known time zone.
    """
    name = (config.checks.get("timezone") if config is not None else None) or None
    if name is None:
        return None if local_zone_problem() is None else dt.timezone.utc
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"checks.timezone: unknown time zone {name!r} "
                         "(use an IANA name such as Europe/Berlin)") from exc


@functools.cache
def local_zone_problem() -> str | None:
    """Why the process's local zone cannot be used (``TZ=UTC+24``: 24 hours or more from UTC, which no
    place is and Python cannot represent), else None. :func:`zone` then counts in UTC."""
    try:
        dt.datetime.now(dt.timezone.utc).astimezone()
    except (ValueError, OverflowError):
        shown = f"TZ={os.environ['TZ']!r}" if "TZ" in os.environ else "the system's time zone"
        return (f"{shown} sets the local time 24 hours or more from UTC, which no place is: dates are judged "
                "in UTC — set TZ to a zone such as Europe/Berlin, or checks.timezone in .vaultsync.yaml")
    return None


def zone_or_local(config: Config | None) -> dt.tzinfo | None:
    """:func:`zone`, or the process's local zone (None) where ``checks.timezone`` names no known zone:
    for readers that must not fail on it (the index, the review queue); ``check`` reports it (CF002)."""
    try:
        return zone(config)
    except ValueError:
        return zone(None)


def zone_warning(config: Config | None) -> str | None:
    """``…: unknown time zone 'X' (…); dates are judged in this machine's zone`` where ``checks.timezone``
    names no known zone (``check`` refuses it, CF002; sync, status, search and the memory commands go on in
    the local zone and say this), else None."""
    try:
        zone(config)
    except ValueError as exc:
        return f"{visible(str(exc))}; dates are judged in this machine's zone"
    return None


def today_in(tz: dt.tzinfo | None) -> dt.date:
    """Today's date in ``tz`` (None: the process's local zone)."""
    return dt.datetime.now(dt.timezone.utc).astimezone(tz).date()


def local_today(config: Config | None = None, now: dt.datetime | None = None) -> dt.date:
    """Today's date in the checks' time zone (see the module doc).

    Args:
        config: the repository config (``checks.timezone``).
        now: an aware instant to use instead of the current time (tests).
    """
    tz = zone(config)
    instant = now or dt.datetime.now(dt.timezone.utc)
    return instant.astimezone(tz).date() if tz is not None else instant.astimezone().date()
