"""Which part of a repository path is a symbolic link: vaultsync never reads or writes through one,
as a committed link may lead anywhere on the machine (field case GH-12)."""

from __future__ import annotations

import os
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
