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


@pytest.mark.parametrize("section", ["index:\n  embedder: bogus\n", "vault: 3\n"])
def test_a_refused_value_outside_search_still_stops_the_sync(vault, hashed_models, section):
    """Only ``search:`` is left out: a section that shapes the index is never guessed at."""
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
