"""Symbolic links in a repository: vaultsync never reads or writes through one, as a committed link
may lead anywhere on the machine (field case GH-12). Which part of a path is one, and which links
lead to no file of the repository (a WikiLink naming one dangles)."""

from __future__ import annotations

import os
import posixpath
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


def dead_links(snapshot: object) -> dict[str, str]:
    """``{symbolic link: what it holds}`` for each link of ``snapshot`` that leads to no file or folder
    of the snapshot: its target is missing, outside the repository (absolute, or ``..`` past the
    root), unreadable, or a loop. Only the links' own text is read, never what they point to. A
    snapshot without ``link_target`` (a test double) has none; one with ``holds(path)`` (the working
    tree, walked in the vault folders only) is asked about the paths it does not list.
    """
    links, read = snapshot.symlinks(), getattr(snapshot, "link_target", None)  # type: ignore[attr-defined]
    if not links or read is None:
        return {}
    files, holds = set(snapshot.paths()), getattr(snapshot, "holds", None)  # type: ignore[attr-defined]
    folders = {p[:i] for p in files for i, ch in enumerate(p) if ch == "/"}
    held: dict[str, str | None] = {}
    for link in links:
        try:
            held[link] = read(link)
        except (OSError, KeyError, ValueError):
            held[link] = None

    def leads_in(link: str) -> bool:
        for _ in range(MAX_HOPS):
            target = held[link]
            if target is None or target.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", target):
                return False
            here = posixpath.normpath(posixpath.join(posixpath.dirname(link), target.replace("\\", "/")))
            if here == ".." or here.startswith("../"):
                return False
            if here in files or here in folders or here == ".":
                return True
            if here not in held:
                return holds is not None and bool(holds(here))
            link = here
        return False

    return {link: held[link] or "" for link in links if not leads_in(link)}
