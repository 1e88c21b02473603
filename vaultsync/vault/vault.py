"""A vault loaded from one snapshot: every file listed, every note parsed once."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from vaultsync.diagnostics import Diagnostic
from vaultsync.git import Snapshot, is_valid_utf8_path
from vaultsync.vault.config import Config
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
        notes: parsed notes by path.
    """

    root: Path
    config: Config
    files: list[str]
    all_files: list[str]
    notes: dict[str, Note] = field(default_factory=dict)

    @cached_property
    def link_index(self) -> LinkIndex:
        """Resolution tables over ``files`` plus note ``aliases``."""
        aliases: dict[str, list[str]] = defaultdict(list)
        for path, note in self.notes.items():
            values = note.frontmatter.get("aliases") if note.frontmatter else None
            if isinstance(values, list):
                for alias in values:
                    if isinstance(alias, str) and alias.strip():
                        aliases[alias].append(path)
        root = self.config.vault[0] if len(self.config.vault) == 1 else "."
        return LinkIndex(self.files, aliases, root=root)

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


def load_vault(snapshot: Snapshot, config: Config, root: Path) -> Vault:
    """Parse every note of ``snapshot`` that lies in the configured vault folders."""
    all_files = snapshot.paths()
    files = [p for p in all_files if config.in_vault(p) and not config.is_ephemeral(p)]
    vault = Vault(root=root, config=config, files=files, all_files=all_files)
    for path in files:
        if is_note_path(path) and is_valid_utf8_path(path):
            try:
                data = snapshot.read(path)
            except OSError as exc:
                note = Note(path=path, readable=False)
                note.diagnostics.append(Diagnostic(path, 0, 0, "FM015", f"cannot read file: {exc.strerror or exc}"))
                vault.notes[path] = note
                continue
            vault.notes[path] = parse_note(path, data)
    return vault
