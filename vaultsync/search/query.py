"""Query normalisation and term splitting, shared by every stage.

Queries are NFKC-normalised and case-folded like the indexed text. Terms are the
whitespace-separated tokens with surrounding punctuation that FTS5 would choke
on left as part of the literal (``C++``, ``title:``, ``"trigram``) — every term is
later sent to FTS5 as a quoted string, so nothing in a query is syntax (IX-02).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from vaultsync.index.format import fold

MAX_QUERY_CHARS = 4000
# A term is matched as an FTS5 trigram phrase, whose cost grows with its length times the positions of its
# trigrams: a 2,000-character run against a note of 300,000 such characters took 30 s. Its first 64
# characters (a hash, a URL) already name what it holds.
MAX_TERM_CHARS = 64


class QueryError(ValueError):
    """The query cannot be searched (empty after normalisation)."""


@dataclass(frozen=True)
class Query:
    """A normalised query.

    Attributes:
        text: NFKC-normalised text, trimmed to ``MAX_QUERY_CHARS``.
        norm: ``text`` case-folded (what BM25 and the short-term fallback match).
        terms: distinct case-folded whitespace tokens, in order.
    """

    text: str
    norm: str
    terms: tuple[str, ...]

    @property
    def long_terms(self) -> tuple[str, ...]:
        """Terms FTS5 trigram can match (3+ characters)."""
        return tuple(t for t in self.terms if len(t) >= 3)

    @property
    def short_terms(self) -> tuple[str, ...]:
        """Terms under 3 characters, matched as substrings by the fallback."""
        return tuple(t for t in self.terms if len(t) < 3)


def _searchable(ch: str) -> bool:
    """A letter, digit or emoji in any script, or a currency or math symbol beyond ASCII (``€``, ``∑``,
    ``≤``); ASCII's ``$ + < = > | ~`` stand in prose and code everywhere, so alone they find nothing."""
    category = unicodedata.category(ch)
    return category[0] in "LN" or category == "So" or (category in ("Sc", "Sm") and not ch.isascii())


def _marks(text: str) -> list[str]:
    """The combining marks of ``text`` (Unicode category M: U+0301 ◌́, a vowel sign), as ``U+XXXX``."""
    return sorted({f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch)[0] == "M"})


def _what(text: str) -> str:
    """What a query that holds no word is made of: punctuation and ASCII symbols, or combining marks with no
    letter to sit on (a lone U+0301 is an accent, not punctuation)."""
    marks = _marks(text)
    if not marks:
        return "punctuation and ASCII symbols alone ($ + = ...)"
    one = len(marks) == 1
    said = f"{'a ' if one else ''}combining mark{'' if one else 's'} ({', '.join(marks)}) with no letter to sit on"
    if any(not ch.isspace() and unicodedata.category(ch)[0] != "M" for ch in text):
        return f"punctuation, ASCII symbols and {said}"
    return said


def _shown(text: str) -> str:
    """``repr(text)`` with each combining mark written as an escape: alone, it would sit on the quote."""
    return "".join((f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
                   if unicodedata.category(ch)[0] == "M" else ch for ch in repr(text))


def parse_query(raw: str) -> Query:
    """Normalise ``raw``; raises :class:`QueryError` when nothing searchable is left: an empty query, or
    one of punctuation and ASCII symbols only (``:``, ``--``, ``()``, ``$ +``), which every note would match
    by chance."""
    text = unicodedata.normalize("NFKC", raw or "").strip()[:MAX_QUERY_CHARS]
    text = "".join(ch for ch in text if ch.isprintable() or ch.isspace())
    if not text.strip():
        raise QueryError("empty query")
    if not any(_searchable(ch) for ch in text):
        raise QueryError(f"query {_shown(text)} holds no word: {_what(text)} would match notes by chance — "
                         "add a word, a number, an emoji or another symbol (€, ±)")
    norm = fold(text)
    seen: dict[str, None] = {}
    for token in norm.split():
        token = token.strip(".,;:!?()[]{}<>\"'`“”‘’«»、。，．！？：；（）「」")
        token = (token.lstrip("#") or token)[:MAX_TERM_CHARS]  # #deploys: a tag as Obsidian writes it
        if token and token not in seen:
            seen[token] = None
    if not seen:
        seen[norm.strip()] = None
    return Query(text=text, norm=norm, terms=tuple(seen))
