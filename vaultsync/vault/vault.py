"""A vault loaded from one snapshot: every file listed, every note parsed once."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import posixpath
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Protocol

from vaultsync.diagnostics import WARNING, Diagnostic
from vaultsync.git import Snapshot, is_valid_utf8_path, partial_clone, read_blob
from vaultsync.lfs import LfsObjectMissing
from vaultsync.symlinks import dead_links
from vaultsync.vault.config import Config
from vaultsync.vault.fields import note_aliases
from vaultsync.vault.note import Note, parse_note
from vaultsync.vault.resolve import LinkIndex, Resolution
from vaultsync.vault.wikilinks import parse_inner


def is_note_path(path: str) -> bool:
    """Markdown files are notes."""
    return path.lower().endswith(".md")


@dataclass
class Vault:
    """The vault's files at one moment.

    Attributes:
        root: repository root on disk.
        config: the repository config.
        files: every regular file under the vault folders (notes and attachments),
            except ephemeral (scratch) files, which are never notes.
        all_files: every regular file of the snapshot (for the ephemeral-path check).
        symlinks: the symbolic links under the vault folders that lead to a file or folder of the
            repository: a link may name one, nothing reads one.
        dead_links: ``{symbolic link under the vault folders: (what it holds, why)}`` for those that
            lead nowhere in the repository (:func:`vaultsync.symlinks.dead_links`): a link naming one dangles.
        linked_folders: ``{folder of the config (vault or type folder): the symbolic link on its path}``:
            nothing under such a folder is read (CF004).
        notes: parsed notes by path.
        findings: per-note diagnostics of the ``analyse`` step of :func:`load_vault`.
    """

    root: Path
    config: Config
    files: list[str]
    all_files: list[str]
    notes: dict[str, Note] = field(default_factory=dict)
    symlinks: list[str] = field(default_factory=list)
    dead_links: dict[str, tuple[str, str]] = field(default_factory=dict)
    linked_folders: dict[str, str] = field(default_factory=dict)
    findings: dict[str, list[Diagnostic]] = field(default_factory=dict)

    @cached_property
    def aliases(self) -> dict[str, list[str]]:
        """``{alias: [note paths]}`` of the notes' frontmatter ``aliases``."""
        aliases: dict[str, list[str]] = defaultdict(list)
        for path, note in self.notes.items():
            for alias in note_aliases(note.frontmatter):
                aliases[alias].append(path)
        return dict(aliases)

    @cached_property
    def link_index(self) -> LinkIndex:
        """Resolution tables over ``files`` plus note ``aliases``."""
        return LinkIndex(self.files + self.symlinks, self.aliases, root=self.config.link_root)

    @cached_property
    def dead_link_index(self) -> LinkIndex:
        """Resolution tables over ``dead_links`` alone: why a link dangles when it names one."""
        return LinkIndex(list(self.dead_links), {}, root=self.config.link_root)

    @cached_property
    def outside_index(self) -> LinkIndex:
        """Resolution tables over the files a link may not name though they lie in the vault's folders: the
        snapshot's ephemeral ones, and those on disk that the snapshot lacks (not staged, ignored by git).
        Built on first use (a walk of the vault folders): only a dangling link asks why."""
        on_disk: list[str] = []
        root = os.path.realpath(self.root)
        for top in {self.root / folder for folder in self.config.vault if folder not in self.linked_folders}:
            if os.path.commonpath([root, os.path.realpath(top)]) != root:  # a committed symlink leads out: not walked
                continue
            for folder, dirs, names in os.walk(top):
                dirs[:] = [d for d in dirs if d != ".git"]
                on_disk += [Path(folder, n).relative_to(self.root).as_posix() for n in names]
        known = set(self.files) | set(self.symlinks)
        outside = [p for p in {*self.all_files, *on_disk} if self.config.in_vault(p) and p not in known]
        return LinkIndex(sorted(outside), {}, root=self.config.link_root)

    @cached_property
    def by_memory_id(self) -> dict[str, list[str]]:
        """``memory_id`` → note paths holding it (several means a duplicate)."""
        found: dict[str, list[str]] = defaultdict(list)
        for path, note in self.notes.items():
            mid = note.frontmatter.get("memory_id") if note.frontmatter else None
            if isinstance(mid, str):
                found[mid].append(path)
        return found

    def resolve_ref(self, ref: str, source: str) -> Resolution:
        """Resolve a note reference: a ``"[[WikiLink]]"`` or a ``memory_id``."""
        ref = ref.strip()
        if ref.startswith("!"):
            ref = ref[1:]
        if ref.startswith("[[") and ref.endswith("]]"):
            target, _, _, _ = parse_inner(ref[2:-2])
            return self.link_index.resolve(target, source)
        paths = self.by_memory_id.get(ref, [])
        if len(paths) == 1:
            return Resolution("ok", paths[0])
        if paths:
            return Resolution("ambiguous", candidates=tuple(sorted(paths)))
        return self.link_index.resolve(ref, source)

    def display_name(self, path: str) -> str:
        """A note's ``memory_id`` if it has one, else its file name without ``.md``."""
        note = self.notes.get(path)
        mid = note.frontmatter.get("memory_id") if note and note.frontmatter else None
        return mid if isinstance(mid, str) else posixpath.splitext(posixpath.basename(path))[0]


NoteAnalysis = Callable[[Note], list[Diagnostic]]
PARALLEL_MIN_NOTES = 2000


class NoteCache(Protocol):
    """Per-note results by (path, blob id) (implemented by :class:`vaultsync.checks.cache.CheckCache`)."""

    def lookup(self, path: str, oid: str) -> tuple[Note, list[Diagnostic]] | None: ...

    def store(self, path: str, oid: str, note: Note, findings: list[Diagnostic]) -> None: ...

    def add(self, path: str, oid: str | None, packed: bytes) -> tuple[Note, list[Diagnostic]]: ...

    @property
    def packer(self) -> Callable[[Note, list[Diagnostic]], bytes]: ...


def load_vault(
    snapshot: Snapshot, config: Config, root: Path, analyse: NoteAnalysis | None = None, jobs: int = 1,
    cache: NoteCache | None = None,
) -> Vault:
    """Parse every note of ``snapshot`` that lies in the configured vault folders.

    Args:
        snapshot: where the files come from (working tree, index or a tree).
        config: the repository config.
        root: repository root on disk.
        analyse: optional per-note check, run right after parsing; its findings
            are stored in ``vault.findings[path]``. Must be picklable when ``jobs > 1``.
        jobs: worker processes for parsing + analysis (used from
            ``PARALLEL_MIN_NOTES`` notes on; results are identical to ``jobs=1``).
        cache: results of ``analyse`` by path and blob id: a hit is neither read nor parsed, and every
            note parsed here is stored in it (the blob id is the snapshot's, else hashed from the bytes).
    """
    all_files = snapshot.paths()
    files = [p for p in all_files if config.in_vault(p) and not config.is_ephemeral(p)]
    every_link = set(snapshot.symlinks())
    links, dead = named_links(snapshot, config)
    folders = [*config.vault, *(spec.folder for spec in config.types)]
    linked = {f: link for f in folders if f != "." and (link := _link_on(f, every_link))}
    vault = Vault(root=root, config=config, files=files, all_files=all_files, symlinks=links,
                  dead_links=dead, linked_folders=linked)
    snapshot_oid = getattr(snapshot, "oid", None)
    misses: list[tuple[str, str | None, bytes | None]] = []  # (path, blob id when known, bytes when read)
    for path in files:
        if not (is_note_path(path) and is_valid_utf8_path(path)):
            continue
        oid, data = (snapshot_oid(path) if snapshot_oid is not None else None), None
        if cache is not None:
            if oid is None:  # the working tree: hash the bytes
                try:
                    data = snapshot.read(path)
                except (OSError, KeyError):  # KeyError: its Git LFS content is not here (read again, reported)
                    misses.append((path, None, None))
                    continue
                oid = _blob_id(data)
            hit = cache.lookup(path, oid)
            if hit is not None:
                vault.notes[path], vault.findings[path] = hit
                continue
        misses.append((path, oid, data))
    parallel = jobs > 1 and len(misses) >= PARALLEL_MIN_NOTES and "fork" in mp.get_all_start_methods()
    git_dir = getattr(snapshot, "git_dir", None) if parallel else None
    items = [_item(snapshot, path, oid, data, git_dir is not None) for path, oid, data in misses]
    # workers read blobs themselves, and send a cached note back packed: smaller than a pickled Note
    pack = cache.packer if cache is not None and parallel else None
    work = partial(_load_one, analyse, pack, git_dir)
    with contextlib.ExitStack() as stack:
        if parallel:  # results are taken in as they come, while the workers go on
            pool = stack.enter_context(mp.get_context("fork").Pool(jobs))
            results: Iterable[Any] = pool.imap(work, items, chunksize=max(16, len(items) // (jobs * 32)))
        else:
            results = map(work, items)
        for (path, oid, _), result in zip(misses, results):
            if pack is not None:
                note, found = cache.add(path, oid, result)  # type: ignore[union-attr]
            else:
                note, found = result
                if cache is not None and oid is not None:
                    cache.store(path, oid, note, found)
            vault.notes[path] = note
            vault.findings[path] = found
    _promised_not_fetched(vault)
    return vault


_MISSING_OBJECT = "its git object is missing from the repository (a partial or damaged clone?)"


def _promised_not_fetched(vault: Vault) -> None:
    """In a partial clone (``git clone --filter``, a sparse checkout's usual companion), a note whose blob is
    not fetched yet is named in a warning, not refused: git fetches it when it is read, nothing in it
    changed here, and an error would block every commit that touches only the cone."""
    unread = [f"cannot read file: {_MISSING_OBJECT}"]
    missing = [p for p, found in vault.findings.items() if [d.message for d in found] == unread]
    if not missing or not partial_clone(str(vault.root)):
        return
    more = f", nor {len(missing) - 1} more note{'s' if len(missing) > 2 else ''} like it" if len(missing) > 1 else ""
    for i, path in enumerate(sorted(missing)):  # one warning for all, at the first: a sparse clone may miss thousands
        said = [Diagnostic(path, 0, 0, "FM015", f"not checked{more}: its git object is not fetched into this partial "
                           "clone yet (git fetches a note when it is read)", severity=WARNING)] if i == 0 else []
        vault.notes[path].diagnostics[:] = said
        vault.findings[path] = said


_Item = tuple[str, bytes | None, str, str | None]  # (path, bytes, read error, blob id for the worker to read)


def named_links(snapshot: Snapshot, config: Config) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """The symbolic links under the vault folders (not ephemeral) that a WikiLink may name, sorted, and
    those that lead nowhere in the repository, ``{link: (what it holds, why)}`` (:func:`dead_links`)."""
    def named(p: str) -> bool:
        return config.in_vault(p) and not config.is_ephemeral(p)

    dead = {p: held for p, held in dead_links(snapshot).items() if named(p)}
    return sorted(p for p in snapshot.symlinks() if named(p) and p not in dead), dead


def link_names(snapshot: Snapshot, config: Config) -> list[str]:
    """What a WikiLink may name: the vault's files (not ephemeral) and the symlinks among them that lead
    into the repository (:func:`named_links`; never read)."""
    files = [p for p in snapshot.paths() if config.in_vault(p) and not config.is_ephemeral(p)]
    return files + named_links(snapshot, config)[0]


def _item(snapshot: Snapshot, path: str, oid: str | None, data: bytes | None, worker_reads: bool) -> _Item:
    if data is not None or (worker_reads and oid is not None):
        return (path, data, "", None if data is not None else oid)
    try:
        return (path, snapshot.read(path), "", None)
    except (OSError, KeyError) as exc:
        return (path, None, _read_error(exc), None)


def _read_error(exc: Exception) -> str:
    if isinstance(exc, LfsObjectMissing):
        return str(exc)
    if isinstance(exc, KeyError):  # pygit2: no such object
        return _MISSING_OBJECT
    return str(getattr(exc, "strerror", None) or exc)


_WORKER_REPOS: dict[str, object] = {}


def _read_blob(git_dir: str, oid: str) -> bytes:
    """A blob read by a worker process through its own repository handle (none is shared across fork)."""
    repo = _WORKER_REPOS.get(git_dir)
    if repo is None:
        import pygit2

        repo = _WORKER_REPOS[git_dir] = pygit2.Repository(git_dir)
    return read_blob(repo, oid)  # type: ignore[arg-type]


def _blob_id(data: bytes) -> str:
    """Git's blob id of ``data`` (what a snapshot's ``oid`` returns for the same bytes)."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _load_one(analyse: NoteAnalysis | None, pack: Callable[[Note, list[Diagnostic]], bytes] | None,
              git_dir: str | None, item: _Item) -> tuple[Note, list[Diagnostic]] | bytes:
    path, data, error, oid = item
    if data is None and oid is not None and git_dir is not None:
        try:
            data = _read_blob(git_dir, oid)
        except Exception as exc:  # noqa: BLE001 - a missing or unreadable object is this note's problem
            error = _read_error(exc)
    if data is None:
        note = Note(path=path, readable=False)
        note.diagnostics.append(Diagnostic(path, 0, 0, "FM015", f"cannot read file: {error}"))
        found: list[Diagnostic] = list(note.diagnostics)
    else:
        note = parse_note(path, data)
        found = analyse(note) if analyse else []
    return pack(note, found) if pack is not None else (note, found)


def _link_on(folder: str, links: set[str]) -> str | None:
    """The first prefix of ``folder`` (``a``, ``a/b``, …) that is one of ``links``, or None."""
    parts = folder.split("/")
    return next(("/".join(parts[:i]) for i in range(1, len(parts) + 1) if "/".join(parts[:i]) in links), None)
