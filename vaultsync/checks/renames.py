"""Which notes a commit renamed: the new path of every vault file that left HEAD; and how links
resolved at HEAD (:func:`head_link_index`), to name a link that a deletion or rename broke.

A file that is gone from the staged vault was renamed to a file that is new
there when, in this order, exactly one new file

1. holds the same blob (``git mv`` without edits),
2. has the same file name in another folder (a move, perhaps edited), or
3. declares the same ``memory_id`` (a rename that changed the name).

Anything else is a deletion. Only exact, unique matches count: a guess would
send the user to the wrong note.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Callable

from vaultsync.git import TreeSnapshot
from vaultsync.vault.fields import note_aliases
from vaultsync.vault.note import parse_note
from vaultsync.vault.resolve import LinkIndex, name_key
from vaultsync.vault.vault import Vault, is_note_path


def find_renames(head: TreeSnapshot, vault: Vault, oid_now: Callable[[str], str] | None) -> dict[str, str]:
    """``{path at HEAD: path in vault}`` for the files of ``head`` (in the vault) renamed in ``vault``.

    Args:
        head: HEAD's tree.
        vault: the staged vault.
        oid_now: blob id of a path in the staged vault (None when unknown: no blob matching).
    """
    now = set(vault.files)
    before = [p for p in head.paths() if vault.config.in_vault(p)]
    gone = [p for p in before if p not in now]
    if not gone:
        return {}
    old = set(before)
    added = [p for p in vault.files if p not in old]
    by_blob: dict[str, list[str]] = defaultdict(list)
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in added:
        if oid_now is not None:
            by_blob[oid_now(path)].append(path)
        by_name[name_key(posixpath.basename(path))].append(path)
    out: dict[str, str] = {}
    for path in gone:
        for hits in (by_blob.get(head.oid(path), []), by_name.get(name_key(posixpath.basename(path)), [])):
            if len(hits) == 1:
                out[path] = hits[0]
                break
        else:
            new = _same_memory_id(head, path, vault, set(added))
            if new:
                out[path] = new
    return out


def head_link_index(head: TreeSnapshot, vault: Vault) -> LinkIndex | None:
    """Resolution tables of the vault at HEAD, names and ``aliases`` both: the aliases of the notes still
    here as ``vault`` reads them, and those of the notes gone from it as HEAD held them (parsed once
    each), so ``[[Zed]]``, an alias of a deleted note, is named as broken by this commit. None when no
    file left the vault (no link can point at a removed file)."""
    before = [p for p in head.paths() if vault.config.in_vault(p)]
    now = set(vault.files)
    gone = [p for p in before if p not in now]
    if not gone:
        return None
    aliases = defaultdict(list, {alias: list(paths) for alias, paths in vault.aliases.items()})
    for path in gone:
        if is_note_path(path):
            for alias in note_aliases(_head_frontmatter(head, path)):
                aliases[alias].append(path)
    return LinkIndex(before, aliases, root=vault.config.link_root)


def _head_frontmatter(head: TreeSnapshot, path: str) -> dict[str, object]:
    """The frontmatter ``path`` had at HEAD; empty when its content cannot be read (a missing blob, Git LFS
    content not fetched): a commit is never blocked by what only HEAD held."""
    try:
        return parse_note(path, head.read(path)).frontmatter
    except KeyError:
        return {}


def _same_memory_id(head: TreeSnapshot, path: str, vault: Vault, added: set[str]) -> str | None:
    if not is_note_path(path):
        return None
    mid = _head_frontmatter(head, path).get("memory_id")
    if not isinstance(mid, str):
        return None
    hits = [p for p in vault.by_memory_id.get(mid, []) if p in added]
    return hits[0] if len(hits) == 1 else None
