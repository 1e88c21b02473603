"""A committed ``search:`` section the schema refuses: the index is still built, search says it uses its
default settings, and ``vaultsync check`` refuses the config.

It happened: with ``search.rerank: bogus`` committed (``--no-verify``, or a merge made where no hook runs),
search warned "using the default settings" and advised a sync, and every sync failed on that same CF002,
so the vault could not be searched at all until the config was fixed.
"""

from __future__ import annotations

import json

import pytest
from conftest import CONFIG, adr, run_cli

NOTE = "docs/adrs/ADR-0001.md"


@pytest.mark.parametrize("section, said", [
    ("search:\n  rerank: bogus\n", "search.rerank: 'bogus' is not one of: none, off, maxsim, cross-encoder"),
    ("search:\n  rerank: maxsm\n", "did you mean 'maxsim'?"),
    ("search: [top_k]\n", "search: expected a mapping, got a list"),
    ("search:\n  rerank: [maxsim]\n", "search.rerank: a list is not one of: none, off, maxsim, cross-encoder\n"),
    ("search:\n  port: http\n", "search.port: expected a whole number, got 'http'"),
    ("search:\n  port: 70000\n", "search.port: 70000 must be at most 65535"),
    # values only the search options judge (ranges, names): left out the same way
    ("search:\n  min_relevance: 5\n", "search.min_relevance: min_relevance must be between 0 and 1, got 5"),
    ("search:\n  fusion: bogus\n", "search.fusion: fusion must be one of"),
    ("search:\n  top_k: 0\n", "search.top_k: top_k must be"),
    ("search:\n  scope: ../..\n", "search.scope: scope '../..' leaves the repository"),
    ("search:\n  rerank: maxsim\n  topk: 3\n", "search.topk: unknown search option(s): topk — did you mean 'top_k'?"),
])
def test_a_refused_search_section_leaves_the_index_and_search_working(vault, hashed_models, section, said):
    vault.write(".vaultsync.yaml", CONFIG + section)
    vault.write(NOTE, adr("ADR-0001", title="Idempotency keys on payment calls", body="Retries reuse the key.\n"))
    vault.commit("c", "--no-verify")
    check = vault.check()
    assert check.code == 1 and said in check.err + "\n", check.err
    synced = run_cli(["sync", "--wait", "60"], vault.root)
    assert synced.code == 0 and "Traceback" not in synced.err, synced.err
    status = run_cli(["status"], vault.root)
    by_schema = any(f"CF002 search{k}" in check.err for k in (".rerank", ".port", ": "))  # what the sync reads
    assert status.code == 0 and status.out.count("using the default search settings") == by_schema, status.out
    assert ("using the default search settings" in synced.out + synced.err) == by_schema, synced.err
    found = run_cli(["search", "idempotency keys", "--no-daemon", "--format", "json"], vault.root)
    assert found.code == 0, found.err
    data = json.loads(found.out)
    assert data["hits"][0]["path"] == NOTE
    warnings = [w for w in data["warnings"] if "CF002" in w]
    assert warnings and all(w.endswith("using the default search settings") for w in warnings), data["warnings"]
    text = run_cli(["search", "idempotency keys", "--no-daemon"], vault.root)
    assert text.code == 0 and "using the default search settings" in text.out and NOTE in text.out


@pytest.mark.parametrize("section, said", [
    ("checks:\n  expired: warn\n", "checks.expired: 'warn' is not one of: error, warning, off — did you mean 'warning'?"),
    ("checks:\n  empty_link: 3\n", "checks.empty_link: "),
    ("checks:\n  timezone: ''\n", "checks.timezone: should not be empty"),
    ("checks:\n  expird: warning\n", "checks: unknown key 'expird' — did you mean 'expired'?"),
    ("review:\n  max_age_days: {rule: 0}\n", "review.max_age_days.rule: 0 must be at least 1"),
    ("review: [rule]\n", "review: expected a mapping, got a list"),
    ("checks:\n  expired: warn\nreview:\n  max_age_days: {adr: -1}\nsearch:\n  rerank: bogus\n", "review.max_age_days.adr"),
])
def test_a_refused_section_no_index_is_built_from_leaves_the_index_working(vault, hashed_models, section, said):
    """The check's severities and time zone and the review ages shape no index either (ADR-0129): a typo landed
    with ``--no-verify`` froze every sync, so a note committed after it could not be found."""
    vault.write(".vaultsync.yaml", CONFIG + section)
    vault.commit("c", "--no-verify")
    vault.write(NOTE, adr("ADR-0001", title="Idempotency keys on payment calls", body="Retries reuse the key.\n"))
    vault.commit("after the typo", "--no-verify")
    check = vault.check()
    assert check.code == 1 and said in check.err, check.err
    synced = run_cli(["sync", "--wait", "60"], vault.root)
    assert synced.code == 0 and "Traceback" not in synced.err and said in synced.err, synced.err
    status = run_cli(["status"], vault.root)
    assert status.code == 0 and "up to date" in status.out and said in status.out, status.out
    found = run_cli(["search", "idempotency keys", "--no-daemon", "--format", "json"], vault.root)
    data = json.loads(found.out)
    assert found.code == 0 and data["hits"][0]["path"] == NOTE, found.err
    sections = {w.split(" CF002 ", 1)[1].split(":")[0].split(".")[0] for w in data["warnings"] if "CF002" in w}
    assert sections and all(f"using the default {name} settings" in " ".join(data["warnings"]) for name in sections)


@pytest.mark.parametrize("zone", ["Mars/Olympus", "Europe/Berln", "../../etc/passwd"])
def test_a_committed_unknown_time_zone_is_said_and_search_goes_on(vault, hashed_models, zone):
    """The schema cannot know zone names: ``check`` refuses it (CF002) and search used to exit on it."""
    vault.write(".vaultsync.yaml", CONFIG + f"checks:\n  timezone: '{zone}'\n")
    vault.write(NOTE, adr("ADR-0001", title="Idempotency keys on payment calls", body="Retries reuse the key.\n"))
    vault.commit("c", "--no-verify")
    said = "unknown time zone"
    assert vault.check().code == 1 and "CF002" in vault.check().err
    synced = run_cli(["sync", "--wait", "60"], vault.root)
    assert synced.code == 0 and said in synced.err and "judged in this machine's zone" in synced.err, synced.err
    status = run_cli(["status", "--json"], vault.root)
    assert any(said in w for w in json.loads(status.out)["warnings"]), status.out
    for fmt in ("json", "text"):
        found = run_cli(["search", "idempotency keys", "--no-daemon", "--format", fmt], vault.root)
        assert found.code == 0 and NOTE in found.out and "Traceback" not in found.err, found.err
        assert said in found.out + found.err and "judged in this machine's zone" in found.out + found.err


@pytest.mark.parametrize("section", ["index:\n  embedder: bogus\n", "vault: 3\n", "checks:\n  expired: warn\nvault: 3\n"])
def test_a_refused_value_outside_search_still_stops_the_sync(vault, hashed_models, section):
    """Only sections no index is built from are left out: one that shapes the index is never guessed at,
    whatever else is refused beside it."""
    vault.write(".vaultsync.yaml", CONFIG.replace("vault: docs\n", "") + section + ("vault: docs\n" if "vault" not in section else ""))
    vault.write(NOTE, adr("ADR-0001"))
    vault.commit("c", "--no-verify")
    synced = run_cli(["sync", "--wait", "60"], vault.root)
    assert synced.code != 0 and "CF002" in synced.err and "Traceback" not in synced.err, synced.err


@pytest.mark.parametrize("section", ["search_defaults: {}\n", "index:\n  embedder: bogus\n", "vault: [notes\n"])
def test_search_over_an_index_a_refused_config_holds_back_says_what_mends_it(vault, hashed_models, section):
    """A committed config the sync refuses (an unknown key from a newer version, a YAML error) froze the index,
    and search advised `vaultsync sync`, which fails on that same config (an attacker's finding): the result
    says the config is invalid, where, and that fixing and committing it is what lets a sync run."""
    vault.write(".vaultsync.yaml", CONFIG)
    vault.write(NOTE, adr("ADR-0001", title="Idempotency keys on payment calls", body="Retries reuse the key.\n"))
    vault.commit("c")
    assert run_cli(["sync", "--wait", "60"], vault.root).code == 0
    vault.write(".vaultsync.yaml", CONFIG + section)
    vault.write("docs/adrs/ADR-0002.md", adr("ADR-0002", title="Second"))
    vault.commit("bad config", "--no-verify")
    assert run_cli(["sync", "--wait", "60"], vault.root).code == 1
    found = run_cli(["search", "idempotency keys", "--no-daemon", "--format", "json"], vault.root)
    assert found.code == 0 and json.loads(found.out)["hits"][0]["path"] == NOTE, found.err
    (stale,) = [w for w in json.loads(found.out)["warnings"] if "index is not at HEAD" in w]
    assert "the committed .vaultsync.yaml is invalid (.vaultsync.yaml:" in stale and "run `vaultsync sync`" not in stale
