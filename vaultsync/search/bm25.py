"""BM25 leg: SQLite FTS5 trigram MATCH, with safe quoting and a short-term fallback.

* Every term goes to MATCH as an FTS5 string (``"`` + term with ``"`` doubled +
  ``"``), so ``-``, ``:``, ``OR``, ``NEAR``, ``*``, ``C++`` or an unbalanced quote are
  plain text and never raise (field case IX-02).
* Two passes: all terms (implicit AND) first, then any term (OR) to fill up to
  ``limit``, so a keyword query ranks exact co-occurrences first and a question
  still finds the chunks that share its rare words. The OR pass's scores are scaled under the AND
  pass's (:func:`below`), as the fusion by value reads scores, not ranks. Ranking is FTS5's ``bm25()``
  (Robertson & Zaragoza 2009) with column weights title 2, heading 1.5, text 1.
* In a large index, a term held by more than half the notes (no IDF) stays out of the OR
  pass, and a query of such terms only skips the passes: the posting lists of common terms
  cost most of a search's time and move no score (:func:`vaultsync.search.weights.common_terms`).
* Trigram FTS cannot match terms under 3 characters (``CI``, ``DB``, ``東京``):
  :mod:`vaultsync.search.short_terms` finds them, ASCII terms as whole words (through the
  ``chunks_words`` index), others as substrings, intersected with the MATCH result when the
  query also has long terms (IX-01).
* CJK runs longer than 3 characters are also split into overlapping trigrams for
  the OR pass, since CJK text has no spaces.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import TypeVar

from vaultsync.search.query import Query
from vaultsync.search.short_terms import short_term_hits

K = TypeVar("K")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")  # kana, CJK ideographs, hangul: text without spaces
_WEIGHTS = "2.0, 1.5, 1.0"


def fts_string(term: str) -> str:
    """Quote ``term`` as an FTS5 string literal."""
    return '"' + term.replace('"', '""') + '"'


@dataclass(frozen=True)
class Candidate:
    """A chunk proposed by a leg: ``rowid`` of ``chunks``, leg score (higher is better), 0-based rank."""

    rowid: int
    score: float
    rank: int


def _or_terms(query: Query, skip: frozenset[str]) -> list[str]:
    terms: list[str] = []
    for term in query.long_terms:
        if term in skip:
            continue
        terms.append(term)
        if CJK.search(term) and len(term) > 3:
            terms.extend(term[i:i + 3] for i in range(len(term) - 2))
    return list(dict.fromkeys(terms))


def match_passes(query: Query, skip: frozenset[str] = frozenset()) -> list[str]:
    """The FTS5 MATCH strings of the two passes: every long term (AND), then any of them (OR; CJK runs
    also as trigrams) leaving out ``skip``: terms that carry no IDF (see
    :func:`vaultsync.search.weights.common_terms`). No pass when every long term is in ``skip``."""
    long_terms = query.long_terms
    if not long_terms or all(t in skip for t in long_terms):
        return []
    passes = [" ".join(fts_string(t) for t in long_terms)]
    or_terms = _or_terms(query, skip)
    if or_terms and (len(or_terms) > 1 or or_terms != list(long_terms)):
        passes.append(" OR ".join(fts_string(t) for t in or_terms))
    return passes


def below(rows: list[tuple[K, float]], first: dict[K, float]) -> list[tuple[K, float]]:
    """The OR pass's ``(key, score)`` rows (best first) scaled by one factor, where needed, so that each scores
    under every match of the AND pass (``first``): a fusion by value (``convex``) then keeps the order the
    passes promise. A chunk holding only ``バック`` of ``ロールバック`` outscored the notes holding the whole
    word (its trigrams counted apart): by BM25 value, over the exact matches."""
    floor = min((s for s in first.values()), default=None)
    top = rows[0][1] if rows else None
    if floor is None or top is None or top < floor or floor <= 0:
        return rows
    scale = 0.999 * floor / top
    return [(key, score * scale) for key, score in rows]


def bm25_candidates(db: sqlite3.Connection, query: Query, limit: int = 50,
                    restrict_sql: str = "", restrict_params: tuple[object, ...] = (),
                    skip: frozenset[str] = frozenset()) -> list[Candidate]:
    """Top ``limit`` chunks for ``query`` by BM25 (see the module docstring).

    Args:
        db: connection to the index's SQLite file.
        query: a parsed query.
        limit: number of candidates.
        restrict_sql: extra condition on ``chunks`` (alias ``c``), e.g. a folder scope.
        restrict_params: parameters of ``restrict_sql``.
        skip: long terms left out of the OR pass (:func:`match_passes`).
    Returns:
        Candidates best first — chunks matching every term, then the others, each
        group by BM25 — with the negated ``bm25()`` value as score (higher is better).
    """
    where = f" AND {restrict_sql}" if restrict_sql else ""
    short_terms = query.short_terms
    scored: dict[int, float] = {}  # insertion order: all-terms matches first, then any-term matches
    passes = match_passes(query, skip)
    if passes:
        for i, match in enumerate(passes):
            if len(scored) >= limit and i > 0:
                break
            rows = db.execute(
                f"SELECT c.rowid, -bm25(chunks_fts, {_WEIGHTS}) FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
                f"WHERE chunks_fts MATCH ?{where} ORDER BY bm25(chunks_fts, {_WEIGHTS}) LIMIT ?",
                (match, *restrict_params, limit * 2 if short_terms else limit),
            ).fetchall()
            for rowid, score in below(rows, scored) if i else rows:
                scored.setdefault(rowid, score)
        if short_terms and scored:
            keep = short_term_hits(db, short_terms, list(scored))
            scored = {r: s for r, s in scored.items() if r in keep} or scored
    elif short_terms:  # no long term, or none that carries an IDF: chunks with every term, then any (`ci cd`)
        found = short_term_hits(db, short_terms, None)
        if len(short_terms) > 1 and len(found) < limit:
            found |= {r: score - 1e6 for r, score in short_term_hits(db, short_terms, None, every=False).items()
                      if r not in found}  # ranked after every chunk holding them all
        if restrict_sql and found:
            marks = ",".join("?" * len(found))
            allowed = {r for (r,) in db.execute(
                f"SELECT c.rowid FROM chunks c WHERE c.rowid IN ({marks}){where}", (*found, *restrict_params))}
            found = {r: s for r, s in found.items() if r in allowed}
        scored = dict(sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))
    return [Candidate(rowid, score, rank) for rank, (rowid, score) in enumerate(list(scored.items())[:limit])]


def bm25_notes(db: sqlite3.Connection, query: Query, limit: int = 50,
               skip: frozenset[str] = frozenset()) -> list[tuple[str, float]]:
    """Top ``limit`` whole notes for ``query`` by BM25 over ``notes_fts`` (title weight 2).

    Same quoting and AND-then-OR passes as :func:`bm25_candidates`; short terms
    are left to the chunk leg. Returns ``(path, BM25 score)``: notes matching every
    term first, then the others, each group by score.
    """
    passes = match_passes(query, skip)
    ordered: dict[str, float] = {}
    for i, match in enumerate(passes):
        if len(ordered) >= limit:
            break
        rows = db.execute(
            "SELECT path, -bm25(notes_fts, 0.0, 2.0, 1.0) FROM notes_fts WHERE notes_fts MATCH ? "
            "ORDER BY bm25(notes_fts, 0.0, 2.0, 1.0) LIMIT ?", (match, limit),
        ).fetchall()
        for path, score in below(rows, ordered) if i else rows:
            ordered.setdefault(path, score)  # AND matches first, then OR matches, each by BM25
    return list(ordered.items())[:limit]
