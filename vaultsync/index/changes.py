"""Which notes a sync must (re)index and remove: HEAD's tree against the last indexed tree."""

from __future__ import annotations

import pygit2


def note_changes(repo: pygit2.Repository, base_tree_id: str | None, tree: pygit2.Tree | None,
                 head_notes: dict[str, str], indexed: dict[str, str], full: bool) -> tuple[set[str], set[str], int]:
    """(paths to (re)index, paths to remove, number of renames).

    ``head_notes`` and ``indexed`` map note paths to blob ids (at HEAD, in the index). ``full`` (the
    config changed) re-indexes every note: chunking, links and lifecycle may all read differently, and
    the index must equal a rebuild. Without a base tree, blob ids decide; with one, the tree diff (with
    rename detection, field case GH-04), and then belt and braces: the index must hold exactly HEAD's notes.
    Blob ids decide too when the diff cannot read a blob (a ``--filter=blob:none`` clone outside its
    sparse cone): renames then count as a removal and an addition.
    """
    if full:
        return set(head_notes), set(indexed) - set(head_notes), 0
    base = None
    if base_tree_id:
        try:
            base = repo[base_tree_id]
        except (KeyError, ValueError):
            base = None
    by_blob = {p for p, oid in head_notes.items() if indexed.get(p) != oid}, set(indexed) - set(head_notes), 0
    if base is None or tree is None:
        return by_blob
    try:
        diff = base.diff_to_tree(tree)
        diff.find_similar()  # reads both blobs of a candidate rename
    except (pygit2.GitError, KeyError):  # a blob a partial clone never fetched (libgit2 cannot fetch it)
        return by_blob
    changed: set[str] = set()
    removed: set[str] = set()
    renamed = 0
    for delta in diff.deltas:
        old, new = delta.old_file.path, delta.new_file.path
        if old in indexed and old not in head_notes:
            removed.add(old)
        if new in head_notes:
            changed.add(new)
            if delta.status == pygit2.enums.DeltaStatus.RENAMED and old in indexed:
                renamed += 1
    changed |= {p for p, oid in head_notes.items() if p not in indexed and p not in changed}
    removed |= set(indexed) - set(head_notes)
    return changed, removed, renamed
