"""The index's chunk and note rows as the stages read them (SQLite, read-only)."""

from __future__ import annotations

import dataclasses
import difflib
import json
import sqlite3
import unicodedata
from collections.abc import Sequence
from typing import Any

from vaultsync.diagnostics import closest, shown
from vaultsync.index.chunking import embed_text_of
from vaultsync.search.lifecycle import Exclusions
from vaultsync.search.options import SearchOptions

# a note holds one of the ``--tag`` values (the parameter: :func:`tags_wanted`); needs :func:`add_functions`
TAGGED = ("EXISTS (SELECT 1 FROM json_each(notes.frontmatter, '$.tags') t "
          "WHERE tag_key(t.value) IN (SELECT value FROM json_each(?)))")


def tag_key(value: object) -> str | None:
    """A tag as ``--tag`` compares it: NFC (``é`` typed, or stored as ``e`` + U+0301 as macOS writes it, are
    one tag, as the vocabulary check reads them) and without a leading ``#`` (as the index reads tags);
    None for a value that is no text."""
    return unicodedata.normalize("NFC", value.strip().lstrip("#")) if isinstance(value, str) else None


def tags_wanted(tags: Sequence[str]) -> str:
    """The ``--tag`` values as the JSON list :data:`TAGGED` takes."""
    return json.dumps([tag_key(t) for t in tags], ensure_ascii=False)


def add_functions(db: sqlite3.Connection) -> None:
    """Register what the queries of this module call (``tag_key``) on ``db``."""
    db.create_function("tag_key", 1, tag_key, deterministic=True)


def allowed_paths(db: sqlite3.Connection, opts: SearchOptions, excluded: Exclusions) -> set[str] | None:
    """Paths that may be returned (None = all), from type/tag/scope filters and exclusions."""
    clauses, params = [], []
    if opts.types:
        clauses.append(f"type IN ({','.join('?' * len(opts.types))})")
        params.extend(opts.types)
    if opts.tags:
        clauses.append(TAGGED)
        params.append(tags_wanted(opts.tags))
    if opts.scope:
        clauses.append("substr(path, 1, ?) = ?")
        params.extend([len(opts.scope), opts.scope])
    if not clauses and not excluded.reasons:
        return None
    sql = "SELECT path FROM notes" + (" WHERE " + " AND ".join(clauses) if clauses else "")
    passing = {p for (p,) in db.execute(sql, params)}
    # Superseded notes with a successor stay in the legs: they are swapped for it after fusion. So does one
    # the filters leave out whose successor they keep (a rule superseded by an ADR, under --type adr).
    return {p for p in passing if p not in excluded or p in excluded.replacement} | \
        {p for p, successor in excluded.replacement.items() if successor in passing}


def stored_scope(db: sqlite3.Connection, opts: SearchOptions) -> SearchOptions:
    """``opts`` with its ``--scope`` spelled as the index stores that folder. Paths keep the bytes git
    holds, so a folder committed decomposed (NFD, as macOS writes names) matches a scope typed composed
    (NFC), and back. Costs one lookup when the scope matches as typed, else one pass over the paths."""
    scope = opts.scope
    if not scope or db.execute("SELECT 1 FROM notes WHERE substr(path, 1, ?) = ? LIMIT 1",
                               (len(scope), scope)).fetchone() is not None:
        return opts
    wanted, depth = unicodedata.normalize("NFC", scope), scope.count("/")
    for (path,) in db.execute("SELECT path FROM notes"):
        parts = path.split("/")
        prefix = "/".join(parts[:depth]) + "/"
        if len(parts) > depth and unicodedata.normalize("NFC", prefix) == wanted:
            return dataclasses.replace(opts, scope=prefix)
    return opts


def unknown_filter_values(db: sqlite3.Connection, opts: SearchOptions) -> list[str]:
    """A warning for each ``--type``/``--tag`` value no note has, naming the known values, and for a
    ``--scope`` folder that holds no note."""
    out: list[str] = []
    known_sql = {"type": "SELECT DISTINCT type FROM notes WHERE type IS NOT NULL ORDER BY type",
                 "tag": "SELECT DISTINCT t.value FROM notes, json_each(notes.frontmatter, '$.tags') t "
                        "WHERE t.type = 'text' ORDER BY t.value"}
    for flag, values in (("type", opts.types), ("tag", opts.tags)):
        if not values:
            continue  # no filter of this kind: nothing to read (this runs on every search)
        same = (lambda v: v) if flag == "type" else tag_key
        spellings: dict[str, str] = {}  # a tag once, in its first spelling (`café` composed and decomposed)
        for (v,) in db.execute(known_sql[flag]):
            spellings.setdefault(same(v), v)
        known = list(spellings.values())
        for value in values:
            if same(value) not in spellings:
                listed = ", ".join(known[:20]) + (" …" if len(known) > 20 else "")
                close = closest(value, known)
                hint = f"; did you mean {close!r}?" if close else ""
                out.append(f"no note has {flag} {shown(value)} (known: {listed or 'none'}){hint}")
    if opts.scope and db.execute("SELECT 1 FROM notes WHERE substr(path, 1, ?) = ? LIMIT 1",
                                 (len(opts.scope), opts.scope)).fetchone() is None:
        out.append(_unknown_scope(db, opts.scope))
    return out


def _unknown_scope(db: sqlite3.Connection, scope: str) -> str:
    """The warning for a ``--scope`` folder that holds no note: the folders of notes as deep as it (the
    deepest level above it when none is), and the one it may misspell."""
    paths = [p for (p,) in db.execute("SELECT path FROM notes")]
    folders: list[str] = []
    for level in range(max(scope.count("/"), 1), 0, -1):
        folders = sorted({"/".join(p.split("/")[:level]) + "/" for p in paths if p.count("/") >= level})
        if folders:
            break
    listed = ", ".join(folders[:20]) + (" …" if len(folders) > 20 else "")
    key = lambda text: unicodedata.normalize("NFC", text).casefold()  # noqa: E731 - typed NFC, committed NFD
    keys = [key(f) for f in folders[:_SUGGEST_AMONG]]  # difflib over 100,000 folders took 10 s
    close = difflib.get_close_matches(key(scope), keys, n=1, cutoff=0.6)
    hint = f"; did you mean {folders[keys.index(close[0])]!r}?" if close else ""
    return f"no note is under --scope {shown(scope)} (folders: {listed or 'none'}){hint}"


_SUGGEST_AMONG = 5_000  # folders a misspelt --scope is compared with, at most


def chunk_paths(db: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, str]:
    """Chunk rowid → its note's path."""
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    return dict(db.execute(f"SELECT rowid, path FROM chunks WHERE rowid IN ({marks})", list(rowids)))


def note_chunk_rowids(db: sqlite3.Connection, path: str) -> list[int]:
    """The rowids of the chunks of the note at ``path``, in document order."""
    return [r for (r,) in db.execute("SELECT rowid FROM chunks WHERE path = ? ORDER BY n", (path,))]


def chunk_rows(db: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Chunk rowid → what a hit shows and the blend weighs: the chunk's text, lines, blocks, tokens and
    ``norm`` (normalised title, heading and text), its note's identity (memory_id, title, type, status,
    confidence, importance, dates), and ``rerank_text`` (title › heading, then the text) and
    ``embed_text`` (what the embedder read, :func:`~vaultsync.index.chunking.embed_text_of`), and ``hash``
    (the chunk's content hash)."""
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    out: dict[int, dict[str, Any]] = {}
    for (rowid, cid, path, heading, text, start, end, blocks, title, importance, created, validated,
         tokens, norm, memory_id, kind, status, confidence, expires, digest) in db.execute(
        "SELECT c.rowid, c.id, c.path, c.heading, c.text, c.start_line, c.end_line, c.blocks, n.title, "
        "n.importance, n.created, n.last_validated, c.tokens, c.norm, n.memory_id, n.type, n.status, "
        f"n.confidence, n.expires, c.hash FROM chunks c JOIN notes n ON n.path = c.path WHERE c.rowid IN ({marks})",
        list(rowids),
    ):
        context = " > ".join(p for p in (title, heading) if p)  # as the cross-encoder was trained
        out[rowid] = {"id": cid, "path": path, "heading": heading, "text": text, "start": start, "end": end,
                      "blocks": json.loads(blocks), "title": title, "importance": importance,
                      "created": created, "last_validated": validated, "rerank_text": f"{context}\n{text}",
                      "embed_text": embed_text_of(title, heading, text), "tokens": tokens, "norm": norm,
                      "memory_id": memory_id, "type": kind, "status": status, "confidence": confidence,
                      "expires": expires, "hash": digest}
    return out


def note_links(db: sqlite3.Connection, path: str, excluded: Exclusions) -> list[str]:
    """The notes ``path`` links to, sorted, without itself and without hidden notes: a link to a superseded
    note stands for its successor (:attr:`Exclusions.replacement`), as a hit on it does."""
    targets = {excluded.replacement.get(t, t) for (t,) in db.execute(
        "SELECT DISTINCT resolved FROM links WHERE source = ? AND resolved IS NOT NULL AND resolved != source",
        (path,))}
    return sorted(t for t in targets if t not in excluded and t != path)
