"""Issue 12, kind 7: "today" is the local calendar day (``checks.timezone``, else ``TZ``), not UTC's."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys

import pytest
from conftest import REPO_ROOT, adr, run_cli

from vaultsync.vault.clock import local_today
from vaultsync.vault.config import Config

# 2026-03-10 22:30 UTC: already the 11th in Tokyo and Auckland, still the 10th in New York and Berlin.
INSTANT = dt.datetime(2026, 3, 10, 22, 30, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("zone, day", [
    ("Asia/Tokyo", 11), ("Pacific/Auckland", 11), ("Asia/Kolkata", 11), ("Europe/Berlin", 10),
    ("America/New_York", 10), ("UTC", 10), ("Pacific/Honolulu", 10),
])
def test_configured_zone_decides_the_day(zone, day):
    assert local_today(Config(checks={"timezone": zone}), now=INSTANT) == dt.date(2026, 3, day)


def test_an_unknown_zone_is_a_config_error(vault):
    vault.write(".vaultsync.yaml", "vault: docs\nchecks:\n  timezone: Mars/Olympus\n")
    vault.write("docs/a.md", "# a\n")
    res = vault.check()
    assert res.code == 1
    assert res.err.strip() == (".vaultsync.yaml:3:13: CF002 checks.timezone: unknown time zone 'Mars/Olympus' "
                               "(use an IANA name such as Europe/Berlin)")


@pytest.mark.parametrize("command", [["show", "ADR-0001"], ["review"], ["review", "--format", "json"],
                                     ["review", "--confirm", "ADR-0001"], ["new", "adr", "--title", "Zones"]])
@pytest.mark.parametrize("name", ["Mars/Olympus", "Europe/Berln", "../../etc/passwd"])
def test_readers_say_they_date_in_the_local_zone_when_the_zone_is_unknown(vault, command, name):
    """``show``, ``review`` and the writes carry on with an unknown ``checks.timezone`` (``check`` refuses it), and
    say so: the writes crashed (their check of the change asked the zone)."""
    vault.write(".vaultsync.yaml", f"vault: docs\ntypes:\n  adr: {{folder: docs/adrs}}\nchecks:\n  timezone: '{name}'\n")
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    res = run_cli(command, vault.root)
    assert res.code == 0 and "Traceback" not in res.err, res.err
    assert f"warning: checks.timezone: unknown time zone '{name}'" in res.err
    assert "dates are judged in this machine's zone" in res.err
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs}\nchecks:\n  timezone: Asia/Tokyo\n")
    assert "warning" not in run_cli(command, vault.root).err


def _check_in(root, tz: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TZ": tz, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run([sys.executable, "-m", "vaultsync", "check", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("tz, offset_hours", [("Pacific/Kiritimati", 14), ("Asia/Tokyo", 9), ("Etc/GMT-3", 3)])
def test_validated_today_east_of_utc_is_not_in_the_future(vault, tz, offset_hours):
    """A note validated on the local date passes whatever the UTC date is (the process's TZ decides)."""
    local = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=offset_hours)).date()
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f'last_validated: "{local}"\n'))
    res = _check_in(vault.root, tz)
    assert res.returncode == 0, res.stdout + res.stderr
    tomorrow = local + dt.timedelta(days=1)
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f'last_validated: "{tomorrow}"\n'))
    res = _check_in(vault.root, tz)
    assert res.returncode == 1 and f"is in the future (today is {local})" in res.stdout


def test_config_zone_wins_over_tz(vault):
    far_east = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=14)).date()
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs}\nchecks:\n"
                                   "  timezone: Pacific/Kiritimati\n")
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra=f'last_validated: "{far_east}"\n'))
    assert _check_in(vault.root, "Pacific/Pago_Pago").returncode == 0  # UTC-11: still yesterday there


def test_expiry_uses_the_same_day(vault):
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra='expires: "2026-03-10"\n'))
    from vaultsync.checks.lifecycle import check_dates
    from vaultsync.vault.note import parse_note

    note = parse_note("docs/adrs/ADR-0001.md", (vault.root / "docs/adrs/ADR-0001.md").read_bytes())
    tokyo = local_today(Config(checks={"timezone": "Asia/Tokyo"}), now=INSTANT)
    berlin = local_today(Config(checks={"timezone": "Europe/Berlin"}), now=INSTANT)
    assert [d.code for d in check_dates(note, tokyo)] == ["DT004"]
    assert check_dates(note, berlin) == []


@pytest.mark.parametrize("field, moment", [
    ("expires", "9999-12-31T23:00:00-05:00"),   # past datetime.max in UTC
    ("expires", "9999-12-31T23:59:60Z"),        # a leap second at the end of time, east of UTC
    ("created", "0001-01-01T00:00:00+05:00"),   # before datetime.min in UTC
    ("last_validated", "0001-01-01T03:00:00+14:00"),
])
@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo", "Pacific/Pago_Pago"])
def test_a_moment_at_the_ends_of_the_calendar_is_read_as_written(vault, field, moment, zone):
    """Moving a moment into the checks' zone may leave years 1–9999: the date as written counts, the
    other notes are still checked, and nothing crashes."""
    note = adr("ADR-0001", extra=f'{field}: "{moment}"\n')
    if field == "created":
        note = adr("ADR-0001").replace('created: "2024-03-01"', f'created: "{moment}"')
    vault.write("docs/adrs/ADR-0001.md", note)
    vault.write("docs/b.md", "[[nowhere]]\n")
    res = _check_in(vault.root, zone)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "internal error" not in res.stderr and "WL001" in res.stdout
    adr_lines = [line for line in res.stdout.splitlines() if line.startswith("docs/adrs/")]
    if field == "last_validated":
        assert len(adr_lines) == 1 and f"DT003 last_validated: {moment} is before created" in adr_lines[0]
    else:
        assert adr_lines == []


@pytest.mark.parametrize("moment", ["9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+05:00", "2024-02-29T12:00:00Z"])
@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo", "America/New_York", None])
def test_local_day_is_a_date_for_every_readable_moment(moment, zone):
    from zoneinfo import ZoneInfo

    from vaultsync.vault.fields import local_day

    day = local_day(moment, ZoneInfo(zone) if zone else None)
    assert isinstance(day, dt.date) and abs(day - dt.date.fromisoformat(moment[:10])) <= dt.timedelta(days=1)


@pytest.mark.parametrize("zone, expires, before_created", [
    ("UTC", "2024-01-01T00:30:00+14:00", True),       # 2023-12-31 10:30 UTC: the day before it was created
    ("Pacific/Kiritimati", "2024-01-01T00:30:00+14:00", False),  # still the 1st there
    ("UTC", "2024-01-01T23:30:00-01:00", False),      # the 2nd in UTC: after
    ("Asia/Tokyo", "2023-12-31T16:00:00Z", False),    # 01:00 on the 1st in Tokyo: the creation day, not before
    ("America/New_York", "2024-01-01T03:00:00Z", True),  # 22:00 on Dec 31st in New York
])
def test_expiry_before_creation_is_judged_on_the_day_dt004_names(vault, zone, expires, before_created):
    """DT002 and DT004 read a moment's day in the same zone: a note never "expired on" a day before its
    creation day without DT002 saying so."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001").replace('created: "2024-03-01"', 'created: "2024-01-01"')
                .replace("---\nBody", f'expires: "{expires}"\n---\nBody'))
    res = _check_in(vault.root, zone)
    assert ("DT002" in res.stdout) is before_created, res.stdout


def test_check_review_show_and_search_agree_on_when_a_moment_expires(vault, model_env):
    """`expires: "<today>T00:30:00+14:00"` fell on yesterday in UTC: check said expired, while search (the
    index kept the date as written) returned the note and review said "expires today"; a moment written
    west of UTC went the other way. Every reader now dates a moment where today is counted."""
    import json

    from conftest import run_cli

    today = dt.datetime.now(dt.timezone.utc).date()
    yesterday, tomorrow = today - dt.timedelta(days=1), today + dt.timedelta(days=1)
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs}\nchecks:\n  timezone: UTC\n")
    cases = {  # memory_id: (expires as written, its day in UTC)
        "ADR-0001": (f"{today}T00:30:00+14:00", yesterday),  # written today, a moment of yesterday here
        "ADR-0002": (f"{yesterday}T20:00:00-08:00", today),  # written yesterday, a moment of today here
        "ADR-0003": (f"{today}", today),
        "ADR-0004": (f"{yesterday}T23:00:00Z", yesterday),
        "ADR-0005": (f"{tomorrow}T01:00:00+0300", today),  # no colon in the offset
        "ADR-0006": (f"{today}T23:59:00-05:00", tomorrow),
    }
    for mid, (expires, _) in cases.items():
        vault.write(f"docs/adrs/{mid}.md", adr(mid, title=f"Salamander rule {mid[-1]}", extra=f'expires: "{expires}"\n',
                                               body=f"We feed salamander {mid[-1]} twice a week.\n"))
    vault.commit("notes")
    expired = {mid for mid, (_, day) in cases.items() if day < today}
    dt004 = {ln.split("/")[2][:8] for ln in vault.check().lines if " DT004 " in ln}
    assert dt004 == expired
    queue = json.loads(run_cli(["review", "--days", "1", "--format", "json"], vault.root).out)
    said = {item["memory_id"]: item["reason"] for item in queue["items"] if item["kind"] == "expiring"}
    for mid, (_, day) in cases.items():
        assert said[mid].endswith(f"({day}): renew `expires` or retire the note"), said[mid]
        assert said[mid].startswith("expired 1 day(s) ago" if day < today else "expires today" if day == today
                                    else "expires in 1 day(s)"), said[mid]
        hides = json.loads(run_cli(["show", mid, "--format", "json"], vault.root).out)["search_hides"]
        assert [h["reason"] for h in hides] == ([f"expired {day}"] if mid in expired else [])
    assert run_cli(["sync"], vault.root).code == 0
    found = json.loads(run_cli(["search", "salamander feeding", "--format", "json", "--top-k", "10",
                                "--min-relevance", "0"], vault.root).out)
    assert {h["memory_id"] for h in found["hits"]} == set(cases) - expired
    assert {n["memory_id"]: n["reason"] for n in found["hidden"]["notes"]} == {
        mid: f"expired {cases[mid][1]}" for mid in expired}


@pytest.mark.parametrize("sync_tz, search_tz", [("UTC", "Pacific/Pago_Pago"), ("UTC", "Pacific/Kiritimati"),
                                                 ("Pacific/Kiritimati", "Pacific/Pago_Pago")])
def test_search_dates_a_moment_in_its_own_zone_whatever_zone_the_index_was_built_in(vault, model_env, sync_tz,
                                                                                    search_tz):
    """The index kept a moment's day in the zone of the process that synced it: a search under another
    `TZ` returned a note `check` called expired, or hid one it found valid. The index keeps the moment
    as written; search dates it in its own zone."""
    import json

    def run(tz: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "TZ": tz, "PYTHONPATH": str(REPO_ROOT)}
        return subprocess.run([sys.executable, "-m", "vaultsync", *args], cwd=vault.root, env=env,
                              capture_output=True, text=True, timeout=300)

    now = dt.datetime.now(dt.timezone.utc)
    moments = {f"ADR-000{i}": (now + dt.timedelta(hours=h)).strftime("%Y-%m-%dT%H:%M:%S+00:00")
               for i, h in enumerate((-30, -20, -12, -6, -1, 1, 6, 12, 20, 30), start=0)}
    vault.write(".vaultsync.yaml", "vault: docs\ntypes:\n  adr: {folder: docs/adrs}\n")
    for mid, moment in moments.items():
        vault.write(f"docs/adrs/{mid}.md", adr(mid, title=f"Quokka rule {mid}", extra=f'expires: "{moment}"\n',
                                               body="Feed the zebra quokka at noon.\n"))
    vault.commit("moments")
    assert run(sync_tz, "sync").returncode == 0
    checked = run(search_tz, "check")
    expired = {ln.split("/")[2][:8] for ln in checked.stdout.splitlines() if " DT004 " in ln}
    found = json.loads(run(search_tz, "search", "zebra quokka", "--no-daemon", "--format", "json", "--top-k", "20",
                           "--min-relevance", "0").stdout)
    assert {h["memory_id"] for h in found["hits"]} == set(moments) - expired
    assert {n["memory_id"] for n in found["hidden"]["notes"]} == expired
    assert 0 < len(expired) < len(moments)


@pytest.mark.parametrize("tz", ["UTC+24", "XYZ-30", "UTC+99"])
def test_a_local_zone_no_place_has_is_named_and_dates_are_judged_in_utc(vault, tz):
    """A POSIX TZ 24 hours or more from UTC made `check` print Python's own message ("offset must be a
    timedelta strictly between …") as a CF002 at .vaultsync.yaml:1:1, which holds no such thing. The
    environment is named, dates are judged in UTC, and review and the JSON report run as well."""
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001", extra='expires: "2024-03-02"\n'))
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", extra='last_validated: "2024-03-05T10:00:00Z"\n'))  # a moment
    res = _check_in(vault.root, tz)
    assert res.returncode == 0 and "DT004 warning: expired on 2024-03-02" in res.stdout, (res.stdout, res.stderr)
    assert f"warning: TZ='{tz}' sets the local time 24 hours or more from UTC" in res.stderr
    assert "CF002" not in res.stdout + res.stderr and "timedelta" not in res.stderr
    as_json = _check_in(vault.root, tz, "--format", "json")
    assert as_json.returncode == 0 and '"CF002"' not in as_json.stdout
    review = subprocess.run([sys.executable, "-m", "vaultsync", "review"], cwd=vault.root, capture_output=True,
                            text=True, env={**os.environ, "TZ": tz})
    assert review.returncode in (0, 1) and "Traceback" not in review.stderr and "timedelta" not in review.stderr
    assert "internal error" not in res.stderr + review.stderr  # a moment's day was read in the unusable zone
