"""A content-addressed cache of per-note check results: a commit re-reads only the notes it changed.

A note's parse (frontmatter, WikiLinks, headings, block ids, YAML fidelity
findings) and its per-note diagnostics (:func:`vaultsync.checks.runner.analyse_note`)
depend only on its path, its bytes and a few inputs that hold for the whole
vault. So they are stored under ``(path, blob id)`` in
``<common git dir>/vaultsync/check-cache.sqlite``, and the whole cache is tied to a
**fingerprint** of those other inputs: vaultsync's own code and schemas, the
config, each type's schema text, and the Python, PyYAML and jsonschema versions.
A different fingerprint empties it. Checks across notes (links, supersession,
duplicate ids) and date checks (they depend on today) always run afresh.

Entries are written with :mod:`marshal`, which stores plain data only and never
runs code when read. The cache is best effort: a file that cannot be opened, read
or written leaves the check uncached, never changes its result.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import sqlite3
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from vaultsync.checks.schema import builtin_schema_names
from vaultsync.diagnostics import Diagnostic
from vaultsync.resources import data_dir
from vaultsync.vault.config import Config
from vaultsync.vault.headings import Heading
from vaultsync.vault.note import Note
from vaultsync.vault.scalars import Finding
from vaultsync.vault.wikilinks import WikiLink

FILE_NAME = "check-cache.sqlite"
_FORMAT = 1  # bump when the entry layout changes
_PACKAGE = Path(__file__).resolve().parent.parent


def fingerprint(config: Config, root: Path) -> str:
    """A hex digest of everything besides a note's path and bytes that per-note checks read.

    Args:
        config: the config the check runs with (its ``raw`` mapping and ``schema_texts``).
        root: repository root, where a type's schema file is read from when the snapshot gave no text.
    """
    digest = hashlib.sha256(f"{_FORMAT}|{_code_version()}\n".encode())
    digest.update(json.dumps(config.raw, sort_keys=True, default=str).encode())
    for spec in config.types:
        text = config.schema_texts.get(spec.schema)
        if text is None and spec.schema in builtin_schema_names():
            text = ""
        elif text is None and config.from_snapshot:
            text = "\0not committed"  # judged otherwise than a file missing from the disk
        elif text is None:
            try:
                text = (root / spec.schema).read_text(encoding="utf-8", errors="replace")
            except (OSError, ValueError):
                text = ""
        digest.update(f"\n{spec.name}:{spec.folder}:{spec.schema}:{len(text)}\n{text}".encode())
    return digest.hexdigest()


@lru_cache(maxsize=1)
def _code_version() -> str:
    """vaultsync's files and built-in schemas (name, size, mtime: an upgrade or a local edit changes
    it) and the versions of Python, PyYAML and jsonschema."""
    import importlib.metadata

    import yaml

    digest = hashlib.sha256()
    try:
        schemas = data_dir("schemas")  # outside the package in a source checkout or an editable install
    except FileNotFoundError:  # pragma: no cover - a broken install: the check reports it
        schemas = _PACKAGE
    for folder in dict.fromkeys((_PACKAGE, schemas)):
        for path in sorted(folder.rglob("*")):
            if path.suffix in (".py", ".json", ".yaml") and "__pycache__" not in path.parts:
                info = path.stat()
                digest.update(f"{path}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    try:
        jsonschema_version = importlib.metadata.version("jsonschema")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a dependency
        jsonschema_version = "?"
    digest.update(f"{sys.version}|{yaml.__version__}|{jsonschema_version}".encode())
    return digest.hexdigest()


class CheckCache:
    """Per-note results by ``(path, blob id)``; see the module docstring.

    Args:
        path: the SQLite file (created with its folder when missing).
        fingerprint: from :func:`fingerprint`; entries made under another one are dropped.
    """

    def __init__(self, path: Path, fingerprint: str) -> None:
        self._path = path
        self._fingerprint = fingerprint
        self._db: sqlite3.Connection | None = None
        self._entries: dict[str, bytes] = {}
        self._new: dict[str, bytes] = {}
        self._used: set[str] = set()
        try:
            self._open()
        except (sqlite3.Error, OSError, ValueError):
            self._close()

    def _open(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self._path, timeout=1.0, isolation_level=None)
        self._db = db
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        db.execute("CREATE TABLE IF NOT EXISTS notes (key TEXT PRIMARY KEY, value BLOB)")
        row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        if row is None or row[0] != self._fingerprint:
            with db:
                db.execute("BEGIN IMMEDIATE")
                db.execute("DELETE FROM notes")
                db.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (self._fingerprint,))
            return
        self._entries = dict(db.execute("SELECT key, value FROM notes"))

    def _close(self) -> None:
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:  # pragma: no cover - closing a broken handle
                pass
        self._db = None
        self._entries = {}

    def lookup(self, path: str, oid: str) -> tuple[Note, list[Diagnostic]] | None:
        """The cached (note, per-note diagnostics) of ``path`` at blob ``oid``, or None."""
        key = f"{path}\0{oid}"
        blob = self._entries.get(key)
        if blob is None:
            return None
        try:
            found = _decode(path, marshal.loads(blob))
        except Exception:  # noqa: BLE001 - a damaged entry is a miss, whatever is wrong with it
            return None
        self._used.add(key)
        return found

    def store(self, path: str, oid: str, note: Note, findings: list[Diagnostic]) -> None:
        """Remember a freshly checked note (written by :meth:`save`); one whose bytes could not be
        read (FM015) is not kept: the next run tries again."""
        if self._db is not None and not _read_failed(note):
            self._remember(path, oid, pack(note, findings))

    def add(self, path: str, oid: str | None, packed: bytes) -> tuple[Note, list[Diagnostic]]:
        """Remember a note checked and :func:`pack`-ed by a worker process (``oid`` None: only
        unpack it); returns it unpacked."""
        note, findings = _decode(path, marshal.loads(packed), trusted=True)
        if self._db is not None and oid is not None and not _read_failed(note):
            self._remember(path, oid, packed)
        return note, findings

    def _remember(self, path: str, oid: str, packed: bytes) -> None:
        key = f"{path}\0{oid}"
        self._new[key] = packed
        self._used.add(key)

    @property
    def packer(self) -> Callable[[Note, list[Diagnostic]], bytes]:
        """:func:`pack`: a module-level function, so worker processes can be sent it."""
        return pack

    def save(self) -> None:
        """Write the new entries in one transaction and drop those this vault no longer uses,
        once they outnumber the used ones."""
        if self._db is None:
            return
        stale = len(self._entries) + len(self._new) - len(self._used)
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                if self._new:
                    self._db.executemany("INSERT OR REPLACE INTO notes VALUES (?, ?)", self._new.items())
                if stale > max(len(self._used), 1000):
                    self._db.execute("CREATE TEMP TABLE keep (key TEXT PRIMARY KEY)")
                    self._db.executemany("INSERT INTO keep VALUES (?)", ((k,) for k in self._used))
                    self._db.execute("DELETE FROM notes WHERE key NOT IN (SELECT key FROM keep)")
                    self._db.execute("DROP TABLE keep")
        except sqlite3.Error:
            pass
        finally:
            self._new = {}
            self._close()


def open_cache(git_common_dir: Path, config: Config, root: Path) -> CheckCache:
    """The check cache of the repository whose common git dir is ``git_common_dir``."""
    return CheckCache(git_common_dir / "vaultsync" / FILE_NAME, fingerprint(config, root))


def _read_failed(note: Note) -> bool:
    return any(d.code == "FM015" for d in note.diagnostics)


def pack(note: Note, findings: list[Diagnostic]) -> bytes:
    """A checked note and its per-note diagnostics as cache bytes (what :meth:`CheckCache.add` reads)."""
    return marshal.dumps(_encode(note, findings))


def _diagnostic_tuple(d: Diagnostic) -> tuple[str, int, int, str, str, str]:
    return (d.path, d.line, d.col, d.code, d.message, d.severity)


def _encode(note: Note, findings: list[Diagnostic]) -> tuple[Any, ...]:
    return (
        note.readable, note.fm_state, note.fm_type, note.body_line, note.yaml_text, note.frontmatter,
        [_diagnostic_tuple(d) for d in note.diagnostics],
        [tuple(f) for f in note.scalar_findings],
        [tuple(link) for link in note.links],
        [(h.level, h.text, h.line) for h in note.headings],
        sorted(note.block_ids),
        [_diagnostic_tuple(d) for d in findings],
    )


def _plain(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is data YAML can give: str, int, float, bool, None, lists and string-keyed maps."""
    if value is None or isinstance(value, (str, int, float)):
        return True
    if depth > 100:
        return False
    if isinstance(value, list):
        return all(_plain(v, depth + 1) for v in value)
    return isinstance(value, dict) and all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())


def _decode(path: str, entry: tuple[Any, ...], trusted: bool = False) -> tuple[Note, list[Diagnostic]]:
    """The note of a cache entry; ValueError when the entry does not have the shape :func:`_encode` writes.

    ``trusted``: the entry was just packed by this run's own worker, so its shape is not checked again.
    """
    readable, fm_state, fm_type, body_line, yaml_text, frontmatter, diagnostics, scalars, links, headings, blocks, \
        findings = entry
    if not trusted and not (isinstance(readable, bool) and isinstance(fm_state, str) and isinstance(fm_type, str)
            and isinstance(body_line, int) and isinstance(yaml_text, str) and isinstance(frontmatter, dict)
            and all(isinstance(k, str) for k in frontmatter)
            and all(isinstance(x, list) for x in (diagnostics, scalars, links, headings, blocks, findings))
            and all(isinstance(d, tuple) and len(d) == 6 and all(isinstance(v, str) for v in d[3:])
                    and isinstance(d[1], int) and isinstance(d[2], int) for d in diagnostics + findings)
            and all(isinstance(link, tuple) and len(link) == len(WikiLink._fields) for link in links)
            and all(isinstance(h, tuple) and len(h) == 3 and isinstance(h[1], str) for h in headings)
            and all(isinstance(b, str) for b in blocks)
            and all(isinstance(f, tuple) and len(f) == len(Finding._fields) and isinstance(f[2], int)
                    and isinstance(f[3], int) for f in scalars)
            and _plain(frontmatter)):
        raise ValueError("not a cache entry of this version")
    note = Note(path=path, readable=readable, frontmatter=frontmatter, fm_state=fm_state, fm_type=fm_type, body_line=body_line,
                diagnostics=[Diagnostic(*d) for d in diagnostics], yaml_text=yaml_text,
                scalar_findings=[Finding(*f) for f in scalars])
    # the parse products the cross-note checks read, set where their cached properties keep them
    note.__dict__["links"] = [WikiLink(*link) for link in links]
    note.__dict__["headings"] = [Heading(*h) for h in headings]
    note.__dict__["block_ids"] = set(blocks)
    return note, [Diagnostic(*d) for d in findings]
