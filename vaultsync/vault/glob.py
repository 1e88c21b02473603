"""Gitignore-like globs (``**`` crosses folders, ``*`` and ``?`` do not, ``[...]``/``[!...]`` classes),
matched in time linear in the path, whatever the pattern.

The patterns come from a committed ``.vaultsync.yaml`` (``ephemeral:``). A backtracking regex takes time
exponential in the number of wildcards (``*a*a*a*a*a*a*ab`` against a name of 54 ``a``: minutes), so a
commit could hang every check and hook. Here a pattern is a small NFA, simulated as a DFA built lazily, one
state set per (state, character) seen (Thompson 1968; the lazy construction as in RE2, Cox 2010): each path
character costs one dict lookup once the DFA is warm, and at most one set step the first time.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache

# one character; [^/]*; .*; an optional group of the next two tokens (**/: ANY '/'; a folder's rest: '/' ANY)
ONE, STAR, ANY, GROUP = range(4)


@dataclass
class Glob:
    """A compiled glob; :meth:`match` tells whether a whole path (``/``-separated) matches it."""

    pattern: str
    _needs: str  # the longest run of plain characters every match holds: a path without it cannot match
    _kinds: list[int]
    _tests: list[re.Pattern[str] | None]  # a ONE token's one-character regex
    _states: dict[frozenset[int], int] = field(default_factory=dict)
    _sets: list[frozenset[int]] = field(default_factory=list)
    _moves: list[dict[str, int]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)  # a daemon's threads share compiled globs

    def match(self, path: str) -> bool:
        """Whether the whole of ``path`` matches (a leading ``/`` of the pattern is ignored)."""
        if self._needs not in path:  # most paths, told apart at C speed (as RE2's prefilter)
            return False
        state = self._id(self._closure({0}))
        for c in path:
            moves = self._moves[state]
            nxt = moves.get(c)
            if nxt is None:
                nxt = moves[c] = self._id(self._step(self._sets[state], c))
            state = nxt
            if not self._sets[state]:
                return False
        return len(self._kinds) in self._sets[state]

    def _id(self, states: frozenset[int]) -> int:
        with self._lock:
            found = self._states.get(states)
            if found is None:
                self._sets.append(states)
                self._moves.append({})
                found = self._states[states] = len(self._sets) - 1
            return found

    def _closure(self, states: set[int]) -> frozenset[int]:
        """``states`` and every token a wildcard may match nothing of, to the end (the accepting state)."""
        todo, out = list(states), set(states)
        while todo:
            i = todo.pop()
            if i < len(self._kinds) and self._kinds[i] != ONE:
                for j in (i + 1, i + 3) if self._kinds[i] == GROUP else (i + 1,):
                    if j not in out:
                        out.add(j)
                        todo.append(j)
        return frozenset(out)

    def _step(self, states: frozenset[int], c: str) -> frozenset[int]:
        nxt: set[int] = set()
        for i in states:
            if i == len(self._kinds):
                continue
            kind = self._kinds[i]
            if kind == ONE:
                test = self._tests[i]
                if test is not None and test.fullmatch(c):
                    nxt.add(i + 1)
            elif kind == ANY or (kind == STAR and c != "/"):  # STAR stays inside a folder name
                nxt.add(i)
        return self._closure(nxt)


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> Glob:
    """``pattern`` compiled: ``**/`` is zero or more folders, ``**`` elsewhere any text, ``*`` any text
    within one name, ``?`` one character but ``/``, ``[abc]``/``[!abc]`` one of (not one of) those. A
    pattern matches what is under a folder it matches; a bare name (no ``/`` but a last one) matches at any
    depth. Characters match as themselves, a line break included (git's globs do).

    Raises:
        re.error: a character class that is not a valid set (``[z-a]``).
    """
    kinds: list[int] = []
    tests: list[re.Pattern[str] | None] = []
    runs, run = [""], ""  # runs of plain characters outside optional groups; the current one

    def one(regex: str, plain: str = "") -> None:
        nonlocal run
        kinds.append(ONE)
        tests.append(re.compile(regex, re.DOTALL))
        run = run + plain if plain else ""
        runs.append(run)

    def wild(kind: int) -> None:
        nonlocal run
        kinds.append(kind)
        tests.append(None)
        run = ""

    def group(*two: str) -> None:  # (?:.*/)? or (?:/.*)?: neither part is needed
        wild(GROUP)
        for part in two:
            if part == "**":
                wild(ANY)
            else:
                one(re.escape(part))

    body, i = pattern.lstrip("/"), 0
    if "/" not in body.rstrip("/"):  # a bare name matches at any depth, like .gitignore
        group("**", "/")
    while i < len(body):
        c = body[i]
        if body.startswith("**/", i):
            group("**", "/")
            i += 3
        elif body.startswith("**", i):
            wild(ANY)
            i += 2
        elif c == "*":
            wild(STAR)
            i += 1
        elif c == "?":
            one("[^/]")
            i += 1
        elif c == "[" and (end := body.find("]", i + 1)) > 0:
            inner = body[i + 1:end].replace("\\", "\\\\")
            one("[^" + inner[1:] + "]" if inner.startswith("!") else "[" + inner + "]")
            i = end + 1
        else:
            one(re.escape(c), c)
            i += 1
    group("/", "**")  # a folder that matches holds what is under it
    return Glob(pattern, max(runs, key=len), kinds, tests)
