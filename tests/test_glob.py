"""Ephemeral globs: git-like meaning, and time linear in the path whatever a committed pattern holds."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.vault.glob import compile_glob


def reference(pattern: str) -> re.Pattern[str]:
    """The backtracking regex the matcher replaced (same meaning, exponential time on some patterns)."""
    body, out, i = pattern.lstrip("/"), [], 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        elif body[i] == "[" and (end := body.find("]", i + 1)) > 0:
            inner = body[i + 1:end].replace("\\", "\\\\")
            out.append("[^" + inner[1:] + "]" if inner.startswith("!") else "[" + inner + "]")
            i = end + 1
        else:
            out.append(re.escape(body[i]))
            i += 1
    anywhere = "(?:.*/)?" if "/" not in body.rstrip("/") else ""
    return re.compile(anywhere + "".join(out) + "(?:/.*)?", re.DOTALL)


PIECES = ["**/", "**", "*", "?", "/", "a", "b", ".", "[ab]", "[!a]", "scratch", "\n"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=7).map("".join),
       st.lists(st.text("ab/.\nc", max_size=14), min_size=1, max_size=20))
def test_the_matcher_means_what_a_gitignore_like_regex_means(pattern, paths):
    glob, regex = compile_glob(pattern), reference(pattern)
    for path in paths:
        assert glob.match(path) == bool(regex.fullmatch(path)), (pattern, path)


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("**/scratch/**", "docs/scratch/idea.md", True), ("**/scratch/**", "docs/ascratch/idea.md", False),
    ("**/*.tmp.md", "docs/a/b/x.tmp.md", True), ("*.tmp.md", "docs/x.tmp.md", True),  # a bare name: any depth
    ("docs/*.md", "docs/a/x.md", False), ("docs/scratch", "docs/scratch/x.md", True),  # a folder holds its notes
    ("/docs/*.md", "docs/x.md", True), ("docs/[!a]*", "docs/b.md", True), ("docs/[!a]*", "docs/a.md", False),
])
def test_examples(pattern, path, expected):
    assert compile_glob(pattern).match(path) is expected


@pytest.mark.parametrize(("pattern", "path"), [
    ("*a*a*a*a*a*a*a*a*a*a*a*ab", "docs/" + "a" * 200 + "ab.md"),  # minutes for a backtracking regex
    ("**/" * 30 + "x", "/".join("a" * 400) + "/xy"),
    ("**/a/**/a/**/a/**/a/**/a/**/a/**/y", "/".join("a" * 1000) + "/ya"),
    ("*" * 500 + "b", "a" * 3000 + "bc"),
])
def test_a_hostile_pattern_costs_time_linear_in_the_path(pattern, path, monkeypatch):
    """Each of these hung a check for minutes with a backtracking regex. Here each character of the path
    costs one table lookup and at most one set step (counted, not timed), whatever the pattern."""
    from vaultsync.vault.glob import Glob

    steps = []
    step = Glob._step
    monkeypatch.setattr(Glob, "_step", lambda self, states, c: steps.append(c) or step(self, states, c))
    compile_glob.cache_clear()  # a fresh table: nothing stepped by another test
    assert compile_glob(pattern).match(path) is False  # (the path holds the pattern's plain text: it is read)
    assert 0 < len(steps) <= len(path)


def test_a_committed_hostile_ephemeral_glob_no_longer_hangs_the_check(vault):
    from conftest import CONFIG, adr

    vault.write(".vaultsync.yaml", CONFIG.replace('ephemeral: ["**/scratch/**", "**/*.tmp.md"]',
                                                  'ephemeral: ["**/scratch/**", "*a*a*a*a*a*a*a*a*a*a*a*ab"]'))
    vault.write("docs/adrs/ADR-0001.md", adr("ADR-0001"))
    vault.write("docs/" + "a" * 54 + ".md", "# a note\n")
    vault.commit("init")
    assert vault.check().code == 0
