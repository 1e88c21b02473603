"""Notes a query names by ``memory_id``: ``ADR-0034``, ``[[INC-0007]]``, ``why did adr-0034 pick 0.35?``.

An identifier is no meaning an embedding holds nor a phrase BM25 ranks first (the notes that cite
``ADR-0034`` hold it too; the note itself holds it only in its frontmatter), so a query that names a
note's ``memory_id`` is a known-item lookup: that note goes first, as relevant as an answer can be
(:data:`NAMED_RELEVANCE`), and a query of nothing but names gets each note from its start.

A name is a query word (split at spaces, brackets, ``|``, ``#`` and quotes; the punctuation and
symbols around it left off: ``«ADR-0034»,``), or a run of ASCII letters, digits, ``-``, ``_`` and ``.`` in one (a query in a
script written without spaces: ``ADR-0034について``), equal to a ``memory_id`` case-blind, among the
words that could be one: with a digit, ``-`` or ``_`` in it (``ADR-0034``, ``inc_7``). A query
without such a word reads no table.
"""

from __future__ import annotations

import re
import sqlite3
import unicodedata
from collections.abc import Callable

NAMED_RELEVANCE = 0.95  # an exact identifier: the note is what was asked for (a prior, not fitted)
_WORD = re.compile(r"[^\s\[\]|#\"'`<>(){}]+")
_ASCII_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_COULD_BE_ID = re.compile(r"[\d_-]")


def memory_ids(db: sqlite3.Connection) -> dict[str, list[str]]:
    """``{casefolded memory_id: note paths}`` of the index (one pass over ``notes``)."""
    out: dict[str, list[str]] = {}
    for path, memory_id in db.execute("SELECT path, memory_id FROM notes WHERE memory_id IS NOT NULL ORDER BY path"):
        out.setdefault(str(memory_id).strip().casefold(), []).append(path)
    return out


def query_names(text: str) -> list[str]:
    """The query's words that could be a ``memory_id``, casefolded, in order, each once."""
    words = [_bare(w) for w in _WORD.findall(text)]
    runs = [r.rstrip(".") for w in words if not w.isascii() for r in _ASCII_RUN.findall(w)]
    return list(dict.fromkeys(w.casefold() for w in words + runs if w and _COULD_BE_ID.search(w)))


def _bare(word: str) -> str:
    """``word`` without the punctuation and symbols around it (``«ADR-0034»,`` → ``ADR-0034``)."""
    edge = [ch not in "-_" and unicodedata.category(ch)[0] in "PS" for ch in word]
    start = next((i for i, e in enumerate(edge) if not e), len(word))
    end = len(word) - next((i for i, e in enumerate(reversed(edge)) if not e), len(word))
    return word[start:end]


def named_notes(text: str, ids: Callable[[], dict[str, list[str]]]) -> tuple[list[str], bool]:
    """``(paths the query names, in its order; whether it holds nothing else)``; ``ids`` is read only
    when a word could be a name (:func:`memory_ids`, kept by the caller)."""
    names = query_names(text)
    if not names:
        return [], False
    table = ids()
    paths = list(dict.fromkeys(p for name in names for p in table.get(name, [])))
    words = [_bare(w).casefold() for w in _WORD.findall(text)]
    return paths, bool(paths) and all(w in table for w in words if w)
