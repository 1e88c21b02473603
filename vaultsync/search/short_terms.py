"""Short terms (under 3 characters: ``CI``, ``DB``, ``v2``, ``9``, ``東京``), which trigram FTS5 cannot match.

A term of ASCII word characters is looked up in ``chunks_words`` (ADR-0106): FTS5 over each chunk's
words of at most 2 ASCII characters (:func:`vaultsync.index.format.short_words`), so ``ci`` is the word
of ``CI/CD`` and not the letters of ``decision``. Before it, every such query read each chunk holding the
letters anywhere and tested it with a regular expression: 0.4–0.6 s at 10,000 notes, growing with the
vault. Any other short term (``c#``, ``東京``) is still verified in the chunks' folded text (``norm``):
ASCII ones as whole words, others as substrings, among the rows an indexed term or a MATCH left when
there are any.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Sequence

_INDEXED = re.compile(r"[0-9a-z_]{1,2}")
# An FTS5 ranking reads this many of a term's rows at most: enough for any candidate depth, and it keeps a
# word held by most chunks (``a``, ``1``) from reading them all.
SQL_TERMS = 100  # terms SQLite narrows the scan by (its expressions stop at depth 1,000)
WORD_ROWS = 1000


def indexed(term: str) -> bool:
    """Whether ``term`` (folded) is one ``chunks_words`` holds: 1–2 ASCII letters, digits or ``_``."""
    return _INDEXED.fullmatch(term) is not None


def short_term_hits(db: sqlite3.Connection, terms: Sequence[str], rowids: list[int] | None,
                    every: bool = True) -> dict[int, float]:
    """Chunk rowid → occurrences of ``terms``, for the chunks holding every term (``every=False``: any),
    among ``rowids`` (None: all chunks; through ``chunks_words`` when the terms allow, its
    :data:`WORD_ROWS` best by BM25 per lookup)."""
    if rowids is None:
        words = [t for t in terms if indexed(t)]
        rest = [t for t in terms if not indexed(t)]
        if words and (every or not rest):
            found = _word_rows(db, words, every)
            if not rest or not found:
                return {r: float(h) for r, h in found.items()}
            more = _scan(db, rest, list(found), every=True)
            return {r: float(found[r]) + more[r] for r in more}
    return _scan(db, terms, rowids, every)


def notes_holding(db: sqlite3.Connection, term: str, limit: int) -> int:
    """The number of notes (up to ``limit``) whose chunks hold ``term``: an ASCII term as a whole word."""
    if indexed(term):
        return int(db.execute(
            "SELECT count(*) FROM (SELECT DISTINCT c.path FROM chunks_words w JOIN chunks c ON c.rowid = w.rowid "
            "WHERE chunks_words MATCH ? LIMIT ?)", (_phrase(term), limit)).fetchone()[0])
    hits = 0
    for (norm,) in db.execute("SELECT group_concat(norm, ' ') FROM chunks WHERE instr(norm, ?) > 0 GROUP BY path",
                              (term,)):
        hits += contains(norm, term)
        if hits >= limit:
            break
    return hits


def paths_holding(db: sqlite3.Connection, term: str, scope: str | None, limit: int) -> list[str]:
    """Paths of up to ``limit`` chunks holding ``term`` (as :func:`contains` reads it) under ``scope``."""
    where, params = ("", []) if not scope else (" AND substr(c.path, 1, ?) = ?", [len(scope), scope])
    if indexed(term):
        return [p for (p,) in db.execute(
            f"SELECT c.path FROM chunks_words w JOIN chunks c ON c.rowid = w.rowid WHERE chunks_words MATCH ?{where} "
            "LIMIT ?", (_phrase(term), *params, limit))]
    rows = db.execute(f"SELECT c.path, c.norm FROM chunks c WHERE instr(c.norm, ?) > 0{where} LIMIT ?",
                      (term, *params, limit))
    return [p for p, norm in rows if contains(norm, term)]


def contains(norm: str, unit: str) -> bool:
    """``unit`` occurs in ``norm``: as a substring, or as a whole word when it is ASCII and under 3 characters."""
    if len(unit) < 3 and unit.isascii():
        return _whole_word(unit).search(norm) is not None
    return unit in norm


@functools.lru_cache(maxsize=256)
def _whole_word(term: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(term) + r"(?!\w)")


def _phrase(term: str) -> str:
    return f'"{term}"'  # an indexed term holds no quote


def _word_rows(db: sqlite3.Connection, terms: Sequence[str], every: bool) -> dict[int, int]:
    match = (" AND " if every else " OR ").join(_phrase(t) for t in terms)
    found: dict[int, int] = {}
    for rowid, words in db.execute("SELECT rowid, words FROM chunks_words WHERE chunks_words MATCH ? "
                                   "ORDER BY rank LIMIT ?", (match, WORD_ROWS)):
        tokens = words.split()
        found[rowid] = sum(tokens.count(t) for t in terms)
    return found


def _scan(db: sqlite3.Connection, terms: Sequence[str], rowids: list[int] | None, every: bool) -> dict[int, float]:
    """The chunks' text read row by row (among ``rowids`` when given): ASCII terms as words, others as
    substrings. SQLite narrows the rows by the terms, by the first :data:`SQL_TERMS` of all of them or not
    at all beyond that many of any (it refuses an expression deeper than 1,000: a query of a thousand CJK
    characters); every term is checked here."""
    if rowids is not None and not rowids:
        return {}
    asked = list(dict.fromkeys(terms))
    asked = asked[:SQL_TERMS] if every else asked if len(asked) <= SQL_TERMS else []
    sql = "SELECT rowid, norm FROM chunks WHERE (" + ((" AND " if every else " OR ").join(
        "instr(norm, ?) > 0" for _ in asked) or "1") + ")"
    params: list[object] = list(asked)
    if rowids is not None:
        sql += f" AND rowid IN ({','.join('?' * len(rowids))})"
        params.extend(rowids)
    words = [_whole_word(t) for t in terms if t.isascii()]
    others = [t for t in terms if not t.isascii()]
    found: dict[int, float] = {}
    for rowid, norm in db.execute(sql, params):
        hits = [len(w.findall(norm)) for w in words] + [norm.count(t) for t in others]
        if all(hits) if every else any(hits):
            found[rowid] = float(sum(hits))
    return found
