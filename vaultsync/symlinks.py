"""Symbolic links in a repository: vaultsync never reads or writes through one, as a committed link
may lead anywhere on the machine (field case GH-12). Which part of a path is one, and which links
lead to no file of the repository (a WikiLink naming one dangles)."""

from __future__ import annotations

import os
import re
from pathlib import Path


def symlinked_part(root: Path, rel: str) -> str | None:
    """The first prefix of ``rel`` (repo-relative, ``/``-separated) that is a symbolic link under
    ``root``, e.g. ``notes`` for ``notes/adrs`` when ``notes`` is one; None when no part is."""
    here, parts = root, [p for p in rel.split("/") if p not in ("", ".")]
    for i, part in enumerate(parts):
        here = here / part
        if os.path.islink(here):  # False where it cannot be read: the walk that follows skips it
            return "/".join(parts[: i + 1])
    return None


MAX_HOPS = 40  # as the kernel's ELOOP: a longer chain of links leads nowhere
_ABSOLUTE = re.compile(r"/|[A-Za-z]:[\\/]")  # a POSIX root, or a Windows drive


def dead_links(snapshot: object) -> dict[str, tuple[str, str]]:
    """``{symbolic link: (what it holds, why it leads nowhere)}`` for each link of ``snapshot`` that
    leads to no file of the snapshot: its target is a folder, empty, missing, outside the repository
    (absolute, ``..`` past the root, or in ``.git``), unreadable, or a loop. A target is resolved as the
    file system would, one part at a time, a link on the way replaced by what it holds (``sub/../b.md``
    with ``sub`` a link leaves from where ``sub`` leads; a part followed by more, a trailing ``/`` too,
    must be a folder); only the links' own text is read, never what they point to. A snapshot without ``link_target`` (a test double) has none; one
    with ``holds(path)`` (the working tree, walked in the vault folders only) is asked what a path it
    does not list is: ``"file"``, ``"folder"``, ``"link"`` or None. Why: ``"loop"`` (a chain of links
    that goes round, or longer than :data:`MAX_HOPS`), ``"outside"`` (out of the repository or into
    ``.git``), ``"folder"`` (a folder of the repository, which no WikiLink names), ``"missing"`` (anything
    else).
    """
    links, read = snapshot.symlinks(), getattr(snapshot, "link_target", None)  # type: ignore[attr-defined]
    if not links or read is None:
        return {}
    files, holds = set(snapshot.paths()), getattr(snapshot, "holds", None)  # type: ignore[attr-defined]
    folders = {p[:i] for p in [*files, *links] for i, ch in enumerate(p) if ch == "/"}
    held: dict[str, str | None] = {}

    def target_of(link: str) -> str | None:
        if link not in held:
            try:
                held[link] = read(link)
            except (OSError, KeyError, ValueError):
                held[link] = None
        return held[link]

    def is_link(path: str) -> bool:
        return path in held or path in link_set or (holds is not None and path not in files
                                                     and path not in folders and holds(path) == "link")

    def is_folder(path: str) -> bool:
        return not path or path in folders or (holds is not None and path not in files and holds(path) == "folder")

    def why_dead(link: str) -> str | None:
        parts, hops = link.split("/")[:-1], 0
        pending = (target_of(link) or "").split("/")
        if not any(pending):
            return "missing"
        if _ABSOLUTE.match(held[link] or ""):
            return "outside"
        while pending:
            part = pending.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if not parts:
                    return "outside"  # past the root
                parts.pop()
                continue
            here = "/".join([*parts, part])
            if here == ".git" or here.startswith(".git/"):
                return "outside"
            if is_link(here):
                hops += 1
                target = target_of(here)
                if hops > MAX_HOPS:
                    return "loop"
                if not target or _ABSOLUTE.match(target):
                    return "outside" if target else "missing"
                pending = target.split("/") + pending
                continue
            parts.append(part)
            if pending and not is_folder(here):  # "a.md/", "a.md/..", "missing/..": no folder to go on from
                return "missing"
        path = "/".join(parts)
        if is_folder(path):
            return "folder"  # a WikiLink names a note or an attachment, never a folder
        return None if path in files or (holds is not None and holds(path) == "file") else "missing"

    link_set = set(links)
    return {link: (held.get(link) or "", why) for link in links if (why := why_dead(link)) is not None}
