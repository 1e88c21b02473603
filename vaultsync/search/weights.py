"""Per-query leg weights for fusion: how much BM25 and each dense leg count for this query.

BM25 counts by how much of the query the vault contains at all (a query in another
language leans on the vectors); the secondary dense leg (USE multilingual) votes only
on queries in its training languages (:mod:`vaultsync.search.language`, ADR-0061) and
counts more on cross-lingual queries.
"""

from __future__ import annotations

import functools
import math
import re
import sqlite3
from collections.abc import Iterable, Sequence

from vaultsync.search.bm25 import CJK, fts_string
from vaultsync.search.language import is_cjk, use_share
from vaultsync.search.options import SearchOptions
from vaultsync.search.query import Query
from vaultsync.search.short_terms import notes_holding, paths_holding


def leg_weights(db: sqlite3.Connection, query: Query, mode: str, dense_legs: Sequence[str] = ("dense",),
                opts: SearchOptions | None = None) -> dict[str, float]:
    """Per-query leg weights for fusion.

    ``rrf`` gives equal weights; the other modes weigh BM25 by its *coverage* of
    the query: the share of the query's informative characters that occur in the
    vault at all, squared. Units are the long terms (CJK terms as 3-character
    shingles); a unit present in more than half of the notes says nothing about
    which note is meant and is left out of both sides of the ratio. A German or
    Japanese query over English notes, or "Obsidian 同步", gets a weight near 0 and
    leaves ranking to the vectors; an English query over English notes keeps both.
    A secondary dense leg (USE, where :func:`secondary_weight` lets it vote) moves linearly
    from ``secondary_weight`` on a query the vault's words cover to
    ``secondary_cross`` on one they do not: cross-lingual queries are where it is strong;
    ``secondary_cross_cjk`` on a query in a CJK script, where USE is stronger than e5-small.
    On a query in a language USE was not trained on (the leg is present but silent), the
    primary leg is the only vector voice left and BM25's partial matches (names, numbers)
    count more: its weight is coverage ** ``bm25_power_alone`` instead of coverage squared (ADR-0061).
    """
    if mode == "rrf":
        return {"bm25": 1.0, **{name: 1.0 for name in dense_legs}}
    coverage = query_coverage(db, query)
    if coverage is None:
        weights = {name: 1.0 if name == "dense" else secondary_weight(query, opts) for name in dense_legs}
        # short terms only (`ci`, `db cd`): exact letters, which the vectors read as noise; a chunk holding
        # them outweighs both vector legs' best (a CJK pair stays a weaker substring match)
        short = 0.0 if not query.short_terms else 0.5 if is_cjk(query.text) else sum(weights.values()) + 0.5
        return {"bm25": short, **weights}
    weights = {name: 1.0 if name == "dense" else secondary_weight(query, opts, coverage) for name in dense_legs}
    silent = any(w == 0 for name, w in weights.items() if name != "dense")
    bm25 = coverage ** ((opts.bm25_power_alone if opts is not None else 0.5) if silent else 2)
    # a query the vault's words do not cover is cross-lingual: there USE's vote counts more
    cross = 1.0 if opts is None else opts.secondary_cross_cjk if is_cjk(query.text) else opts.secondary_cross
    weights = {name: w if name == "dense" or w == 0 else w + (cross - w) * (1 - bm25) for name, w in weights.items()}
    return {"bm25": bm25, **weights}


def query_coverage(db: sqlite3.Connection, query: Query) -> float | None:
    """The share of the query's informative characters that occur in the vault at all, in [0, 1]
    (see :func:`leg_weights`); None when the query has no long terms."""
    units, total_notes = unit_frequencies(db, query)
    if not units:
        return None
    common = total_notes // 2 + 1
    seen = matched = 0
    for unit, df in units:
        if df >= common and total_notes > 2:
            continue
        seen += len(unit)
        matched += len(unit) if df else 0
    return matched / seen if seen else 0.25


def vault_word_share(db: sqlite3.Connection, query: Query) -> float | None:
    """The share of the query's long-term characters that occur in the vault at all, its most common words
    included, in [0, 1]: a stand-in for "the query is in the notes' language" (0 for a German query over
    English notes; 1 for ``payments`` where every note says it); None when the query has no long terms."""
    units, _ = unit_frequencies(db, query)
    if not units:
        return None
    return sum(len(unit) for unit, df in units if df) / sum(len(unit) for unit, _ in units)


# Scripts of the 16 languages USE multilingual was trained on (Yang et al. 2020).
_USE_SCRIPTS = re.compile(r"[A-Za-zÀ-ɏ\u0400-\u04ff\u0600-\u06ff\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


COVERED = 0.5  # a query at least this much covered by the vault's words is in the vault's language
FOREIGN = 0.1  # USE's languages hold less than this probability: the query is in another language


def secondary_weight(query: Query, opts: SearchOptions | None, coverage: float | None = None) -> float:
    """Weight of a secondary dense leg (USE multilingual): ``opts.secondary_weight`` on a query in one
    of USE's 16 training languages, else 0 — USE is strong where it was trained and collapses
    elsewhere, even in a script it knows (Vietnamese, Romanian, Czech are Latin), so it must not vote there.

    First the script: most letters must be in a script of USE's languages. Then a query the vault's
    words cover (``coverage`` ≥ :data:`COVERED`) keeps the vote without language ID: it is in the
    vault's language. Otherwise :func:`~vaultsync.search.language.use_share` decides: the vote is
    lost only when language ID puts less than :data:`FOREIGN` of its probability on USE's languages;
    a query too short to tell keeps it.
    """
    w = opts.secondary_weight if opts is not None else 0.5
    letters = [ch for ch in query.text if ch.isalpha()]
    if not letters:
        return 0.0
    covered = sum(1 for ch in letters if _USE_SCRIPTS.match(ch))
    if covered / len(letters) < 0.6:
        return 0.0
    if coverage is not None and coverage >= COVERED:
        return w
    share = use_share(query.text)
    return 0.0 if share is not None and share < FOREIGN else w


@functools.lru_cache(maxsize=256)
def unit_frequencies(db: sqlite3.Connection, query: Query) -> tuple[list[tuple[str, int]], int]:
    """The query's coverage units (its first 24 long terms, CJK runs as 3-character shingles) with the
    number of notes holding each (counted up to just over half the notes: :func:`match_count`), and the
    number of notes.

    Cached per (connection, query): the weights, the relevance features and the unfiltered pass of one
    search all ask, and a connection of the search handles reads one index state."""
    units = _or_units(query)[:24]
    total_notes = _rows(db, "notes_fts")[2] or 1
    return [(unit, match_count(db, "notes_fts", unit, total_notes // 2 + 1)) for unit in units], total_notes


# Past SAMPLE_ROWS rows a unit held by many rows is counted in SAMPLE_WINDOWS rowid windows spread over
# the table (SAMPLE_ROWS rows in all) and scaled: counting "capacity" in 50,000 of 100,000 notes and
# 225,000 chunks took 92 ms, nearly all of a warm search at that size.
SAMPLE_ROWS = 4096
SAMPLE_WINDOWS = 8
ESTIMATE_MIN_MATCHES = 64  # fewer matches in the windows: counted exactly (a 1/8 relative error at most ~1 sd)


@functools.lru_cache(maxsize=8192)
def match_count(db: sqlite3.Connection, table: str, unit: str, limit: int) -> int:
    """Rows of the FTS5 ``table`` matching ``unit`` (a phrase), counted up to ``limit``.

    In a table of more than :data:`SAMPLE_ROWS` rows, a unit with at least :data:`ESTIMATE_MIN_MATCHES`
    matches in the sample windows (:func:`_windows`) gets the estimate ``matches / sampled rows × rows``
    instead (capped at ``limit``): a frequent unit's count only decides "held by more than half" and
    an IDF, on which a few per cent move nothing. Cached per unit, since common words recur across
    queries (a connection of the search handles reads one index state)."""
    phrase = fts_string(unit)
    rows = _rows(db, table)[2]
    if rows > SAMPLE_ROWS:
        windows, sampled = _windows(db, table)
        matches = sum(db.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ?",
                                 (phrase, a, b)).fetchone()[0] for a, b in windows)
        if matches >= ESTIMATE_MIN_MATCHES and sampled:
            return min(limit, round(matches / sampled * rows))
    return int(db.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",
                          (phrase, limit)).fetchone()[0])


@functools.lru_cache(maxsize=64)
def _rows(db: sqlite3.Connection, table: str) -> tuple[int, int, int]:
    """(lowest rowid, highest rowid, rows) of ``table``: its rows counted in its ``_docsize`` shadow
    table (``count(*)`` over the FTS5 table itself reads every row: 3 s at 100,000 notes)."""
    lo, hi = (db.execute(f"SELECT rowid FROM {table} ORDER BY rowid {order} LIMIT 1").fetchone() for order in ("", "DESC"))
    rows = db.execute(f"SELECT count(*) FROM {table}_docsize").fetchone()[0]
    return int(lo[0]) if lo else 0, int(hi[0]) if hi else 0, int(rows)


@functools.lru_cache(maxsize=64)
def _windows(db: sqlite3.Connection, table: str) -> tuple[list[tuple[int, int]], int]:
    """:data:`SAMPLE_WINDOWS` rowid ranges evenly spread over ``table`` (evenly, not a prefix: rows are
    in the order the first build wrote them, a folder at a time), holding about :data:`SAMPLE_ROWS`
    rows together, and the number of rows they hold."""
    lo, hi, rows = _rows(db, table)
    span = hi - lo + 1
    width = max(1, span * SAMPLE_ROWS // max(rows, 1) // SAMPLE_WINDOWS)
    windows = [(lo + k * span // SAMPLE_WINDOWS, lo + k * span // SAMPLE_WINDOWS + width - 1) for k in range(SAMPLE_WINDOWS)]
    sampled = sum(db.execute(f"SELECT count(*) FROM {table} WHERE rowid BETWEEN ? AND ?", w).fetchone()[0]
                  for w in windows)
    return windows, int(sampled)


def clear_caches() -> None:
    """Forget every cached count (tests that change the thresholds or the index)."""
    for cached in (unit_frequencies, match_count, _rows, _windows, _common_in_chunks, short_term_frequency):
        cached.cache_clear()


PRUNE_MIN_NOTES = 1000  # below this many notes BM25 over every term is cheap: no term is left out


def common_terms(db: sqlite3.Connection, query: Query, level: str = "notes") -> frozenset[str]:
    """The query's long terms held by more than half of the rows of ``level`` (``notes`` for the
    note-level BM25, ``chunks`` for the chunk-level one: each leg's IDF is over its own rows), in an
    index of at least :data:`PRUNE_MIN_NOTES` notes (else none). FTS5's BM25 gives such a term an
    IDF of ~0 (the Robertson–Spärck Jones IDF ``log((N - n + 0.5) / (n + 0.5))`` is clamped at 1e-6),
    so it moves no score while its posting list makes the pass slow; the BM25 passes leave it out of
    the OR pass, and skip the long terms altogether when none is left
    (:func:`vaultsync.search.bm25.match_passes`). Counts stop at half the rows plus one."""
    units, n = unit_frequencies(db, query)
    if n < PRUNE_MIN_NOTES:
        return frozenset()
    common = frozenset(unit for unit, df in units if df > n // 2)
    # a chunk-level count only for the note-level common ones: another term is rarely common in the
    # chunks, and keeping one only costs time
    return _common_in_chunks(db, common) if level == "chunks" and common else common


@functools.lru_cache(maxsize=256)
def _common_in_chunks(db: sqlite3.Connection, units: frozenset[str]) -> frozenset[str]:
    half = (_rows(db, "chunks_fts")[2] or 1) // 2
    return frozenset(unit for unit in units if match_count(db, "chunks_fts", unit, half + 1) > half)


def informative_units(db: sqlite3.Connection, query: Query) -> list[tuple[str, int, float]]:
    """``(unit, df, weight)`` for the units held by at most half the notes: weight = length × IDF
    (``log(1 + N / (df + 1))``), so a rare or absent word counts most. Terms under 3 characters
    (``CI``, ``DB``, ``東京``), which trigram FTS cannot count, are counted in the chunks' text
    (:func:`short_term_frequency`) and weigh as 3 characters."""
    units, n = unit_frequencies(db, query)
    common = n // 2 + 1
    units = units + [(t, short_term_frequency(db, t, common)) for t in query.short_terms]
    return [(u, df, max(len(u), 3) * math.log1p(n / (df + 1))) for u, df in units if df < common or n <= 2]


@functools.lru_cache(maxsize=256)
def short_term_frequency(db: sqlite3.Connection, term: str, limit: int) -> int:
    """The number of notes (up to ``limit``) whose chunks hold ``term`` — an ASCII term as a whole word
    (:func:`vaultsync.search.short_terms.notes_holding`)."""
    return notes_holding(db, term, limit)


# How many matching rows one unit may read to find one the search may return (past it: counted as found).
SEARCHABLE_SCAN = 2000


def searchable(db: sqlite3.Connection, unit: str, allowed: set[str] | None, scope: str | None) -> bool:
    """``unit`` occurs in a note the search may return: one of ``allowed`` (None: any) under ``scope``.

    Long units are matched in ``notes_fts`` (trigram phrase), short ones as
    :func:`vaultsync.search.short_terms.contains` reads them. At most :data:`SEARCHABLE_SCAN` matching rows
    are read; a unit that common is taken as found, so a filter can only ever be blamed on evidence."""
    if len(unit) < 3:
        matches: Iterable[str] = paths_holding(db, unit, scope, SEARCHABLE_SCAN)
    else:
        where, params = ("", []) if not scope else (" AND substr(path, 1, ?) = ?", [len(scope), scope])
        rows = db.execute(f"SELECT path FROM notes_fts WHERE notes_fts MATCH ?{where} LIMIT ?",
                          (fts_string(unit), *params, SEARCHABLE_SCAN))
        matches = (p for (p,) in rows)
    seen = 0
    for path in matches:
        seen += 1
        if allowed is None or path in allowed:
            return True
    return seen >= SEARCHABLE_SCAN


def filtered_out_share(db: sqlite3.Connection, units: Sequence[tuple[str, int, float]], allowed: set[str] | None,
                       scope: str | None, notes: int) -> float:
    """How much of the query only filtered-out notes hold, in [0, 1] (ADR-0088).

    Of the query's informative units (``(unit, df, weight)``) that the vault holds, the weighted share
    that no note the search may return holds; units absent from the vault are coverage's business (a
    query in another language). Each missing unit counts by how surprising its absence is,
    ``1 - (1 - a/notes)^df``, about the chance that ``a = len(allowed)`` notes drawn at random from
    ``notes`` would hold one of its ``df``: a name held by a whole other folder counts fully, a rare
    word that a small scope lacks by chance counts little. ``allowed`` is what
    :func:`vaultsync.search.rows.allowed_paths` gives (None: no filter, so 0); ``scope`` narrows the
    scan. Near 1 when the query names what only notes outside ``--scope``/``--type``/``--tag``, or
    hidden ones, hold."""
    total = sum(w for _, df, w in units if df > 0)
    if total <= 0 or allowed is None or notes <= 0:
        return 0.0
    share, left_out = min(len(allowed) / notes, 1.0), notes - len(allowed)
    # df > left_out: some searchable note must hold the unit, no scan needed (a few hidden notes: most units)
    return sum(w * (1.0 - (1.0 - share) ** df) for u, df, w in units
               if 0 < df <= left_out and not searchable(db, u, allowed, scope)) / total


def _or_units(query: Query) -> list[str]:
    """The query's long terms as coverage units, CJK runs as overlapping 3-character shingles."""
    units: list[str] = []
    for term in query.long_terms:
        if CJK.search(term) and len(term) > 3:
            units.extend(term[i:i + 3] for i in range(len(term) - 2))
        else:
            units.append(term)
    return list(dict.fromkeys(units))
