"""Notes a query names: by ``memory_id`` (``ADR-0034``, ``why did adr-0034 pick 0.35?``), by WikiLink
(``[[INC-0007-replica-lag]]``) or by file name.

An identifier is no meaning an embedding holds nor a phrase BM25 ranks first (the notes that cite
``ADR-0034`` hold it too; the note itself holds it only in its frontmatter), so a query that names a
note's ``memory_id`` is a known-item lookup: that note goes first, as relevant as an answer can be
(:data:`NAMED_RELEVANCE`), and a query of nothing but names gets each note from its start.

A name is a query word (split at spaces, brackets, ``|``, ``#``, ``,``, ``/`` and quotes; the
punctuation, symbols and emphasis marks around it and a file name's ``.md`` left off:
``«ADR-0034»,``, ``_ADR-0034_``, ``docs/adr/ADR-0034.md``), or a run of ASCII letters, digits,
``-``, ``_`` and ``.`` in a word with other letters (a script written without spaces:
``ADR-0034について``), equal to a ``memory_id`` as :func:`id_key` compares them (NFKC, case-blind,
any dash a ``-``), among the words that could be one: with a digit, ``-`` or ``_`` in it
(``ADR-0034``, ``inc_7``). A note's file name (without ``.md``) and its path are names as well, as a
WikiLink writes them (``ADR-0034-own-reranker``, ``docs/adr/ADR-0034-own-reranker.md``), and a
``[[target]]`` in the query names its note whatever the target holds (``[[On call]]``,
``[[Deploy#Rollback|how]]``). A query without a link or such a word reads no table.
"""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
from collections.abc import Callable

from vaultsync.vault.resolve import id_key
from vaultsync.vault.wikilinks import WIKILINK, parse_inner

NAMED_RELEVANCE = 0.95  # an exact identifier: the note is what was asked for (a prior, not fitted)
_WORD = re.compile(r"[^\s\[\]|#\"'`<>(){}]+")
_PARTS = re.compile(r"[,;:/\\]")  # a word may also be several names, a path or `id:ADR-1`: each part is tried too
_ASCII_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_COULD_BE_ID = re.compile(r"[\d_-]")
_RELATIVE = re.compile(r"^(?:\.\.?/)+")  # `[[../adr/x]]` is relative to a note; a query has none: its tail names
def note_names(db: sqlite3.Connection) -> dict[str, list[str]]:
    """``{id_key(name): note paths}`` of the index (one pass over ``notes``): each note's ``memory_id``, its
    ``aliases`` (a link resolves by them too), its path without ``.md`` and its file name without it. A tail
    of the path between the two (``adr/x`` of ``docs/adr/x``) is found through the file name
    (:func:`_paths`)."""
    out: dict[str, list[str]] = {}
    for path, memory_id, aliases in db.execute("SELECT path, memory_id, aliases FROM notes ORDER BY path"):
        stem = path.removesuffix(".md")
        names = [stem, stem.rpartition("/")[2], *([str(memory_id)] if memory_id is not None else [])]
        if aliases and aliases != "[]":
            names += [a for a in json.loads(aliases) if isinstance(a, str) and a.strip()]
        for key in dict.fromkeys(map(id_key, names)):
            out.setdefault(key, []).append(path)
    return out


def _paths(table: dict[str, list[str]], name: str) -> list[str]:
    """The notes ``name`` names in ``table`` (:func:`note_names`): as a key, or as the tail of a path after a
    ``/`` (``adr/x`` names ``docs/adr/x.md``, looked up by its file name ``x``)."""
    if (found := table.get(name)) is not None or "/" not in name:
        return found or []
    return [p for p in table.get(name.rpartition("/")[2], []) if id_key(p.removesuffix(".md")).endswith("/" + name)]


def _links(text: str) -> list[tuple[str, str | None]]:
    """``(target, heading)`` of each ``[[target#heading|alias]]`` of ``text`` (:func:`parse_inner`, as a note's
    links are read; ``![[…]]`` too), the target a :func:`id_key` without ``.md`` or a leading ``../`` (a
    query has no folder), the heading the innermost of ``#A#B``; links to no note (``[[#H]]``) left out."""
    out = []
    for m in WIKILINK.finditer(text):
        target, heading, _, _ = parse_inner(m.group(1))
        if key := _RELATIVE.sub("", id_key(target).removesuffix(".md")):
            out.append((key, heading.split("#")[-1].strip() if heading else None))
    return out


def link_headings(text: str, names_of: Callable[[], dict[str, list[str]]]) -> dict[str, str]:
    """``{note path: heading}`` of each ``[[target#heading]]`` in ``text`` that names a note (the first
    link to a note wins; a ``#^block`` is no heading), the heading case-folded: where that note starts."""
    out: dict[str, str] = {}
    for key, heading in _links(text):
        for path in _paths(names_of(), key) if heading else ():
            out.setdefault(path, id_key(heading))
    return out


def _words(text: str) -> list[list[str]]:
    """Each query word (:data:`_WORD`, bare: :func:`_bare`) with its parts at ``,`` ``;`` ``:`` ``/`` ``\\``, a file
    name's ``.md`` left off: ``docs/adr-1.md`` → ``["docs/adr-1", "docs", "adr-1"]``."""
    out = []
    for word in filter(None, map(_bare, _WORD.findall(text))):
        parts = [_bare(p) for p in _PARTS.split(word)] if _PARTS.search(word) else []
        out.append([w.removesuffix(".md") if w.endswith(".md") and len(w) > 3 else w for w in [word, *parts] if w])
    return out


def query_names(text: str) -> list[str]:
    """The query's words that could be a ``memory_id`` (:func:`id_key`), in order, each once: the
    words, and the runs of ASCII inside a word that has other letters too (``ADR-0034について``); a word
    written as a file (``Identifiers.md``) whatever letters it holds."""
    key = id_key(text)
    words = [w for forms in _words(key) for w in forms]
    runs = [_bare(r) for w in words if not w.isascii() for r in _ASCII_RUN.findall(w)]
    files = {w[:-3] for word in map(_bare, _WORD.findall(key)) if word.endswith(".md") and len(word) > 3
             for w in (word, _PARTS.split(word)[-1]) if len(w) > 3}  # `Identifiers.md`: a file, whatever it holds
    return list(dict.fromkeys(w for w in words + runs if w and (_COULD_BE_ID.search(w) or w in files)))


def _bare(word: str) -> str:
    """``word`` without the punctuation and symbols around it, emphasis marks too (``«ADR-0034»,``,
    ``_ADR-0034_`` → ``ADR-0034``); a ``-`` at either end stays."""
    edge = [ch == "_" or (ch != "-" and unicodedata.category(ch)[0] in "PS") for ch in word]
    start = next((i for i, e in enumerate(edge) if not e), len(word))
    end = len(word) - next((i for i, e in enumerate(reversed(edge)) if not e), len(word))
    return word[start:end]


def named_notes(text: str, names_of: Callable[[], dict[str, list[str]]]) -> tuple[list[str], bool]:
    """``(paths the query names, in its order; whether it holds nothing else)``; ``names_of`` is read only
    when the query holds a link or a word that could be a name (:func:`note_names`, kept by the caller)."""
    targets = [key for key, _ in _links(text)]
    rest = WIKILINK.sub(" ", text) if "[[" in text else text
    names = [*targets, *query_names(rest)]
    if not names:
        return [], False
    table = names_of()
    paths = list(dict.fromkeys(p for name in names for p in _paths(table, name)))
    names_only = all(_paths(table, t) for t in targets) and all(
        _paths(table, forms[0]) or (len(forms) > 1 and all(_paths(table, p) for p in forms[1:]))
        for forms in _words(id_key(rest)))
    return paths, bool(paths) and names_only
