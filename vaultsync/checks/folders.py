"""CF004: the folders named in ``.vaultsync.yaml`` against the notes the vault holds.

A ``vault:`` or type folder that is (or lies under) a symbolic link is an error: nothing is read through one.
A ``vault:`` folder with no files, a type folder outside the vault, and a ``vault:`` or type folder that
holds no note while a folder of a close spelling does (``docs/adr`` for ``docs/adrs``): in each case
no note is ever checked against that type's schema, and nothing else would say so. The close
spelling is an error (its fix is certain, and until it is made a commit of those notes passes
unchecked); the other two are warnings: a new vault may hold no note yet, and a type folder may be
left outside the vault on purpose.
"""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Iterable
from pathlib import Path

from vaultsync.diagnostics import ERROR, WARNING, Diagnostic
from vaultsync.vault.vault import Vault


def check_folders(vault: Vault) -> list[Diagnostic]:
    """CF004 at the config lines that name a folder no note is checked under (see the module doc)."""
    config = vault.config
    out: list[Diagnostic] = []

    def warn(key: tuple[str, ...], message: str, severity: str = WARNING) -> None:
        line, col = config.positions.get(key, (-1, -1))
        out.append(Diagnostic(".vaultsync.yaml", line + 1, col + 1, "CF004", message, severity=severity))

    listed = isinstance(config.raw.get("vault"), list)
    for i, folder in enumerate(config.vault):
        if (link := vault.linked_folders.get(folder)) is not None:
            warn(("vault", i) if listed else ("vault",), f"vault: '{folder}' {_is_link(folder, link)}", ERROR)
    linked_roots = [f for f in config.vault if f in vault.linked_folders]  # said once, at the vault folder
    for spec in config.types:
        link = vault.linked_folders.get(spec.folder)
        if link is not None and config.in_vault(spec.folder + "/x") \
                and not any(spec.folder == f or spec.folder.startswith(f + "/") for f in linked_roots):
            warn(("types", spec.name, "folder"), f"types.{spec.name}.folder: '{spec.folder}' "
                                                 f"{_is_link(spec.folder, link)}", ERROR)
    if not vault.files and config.vault != ["."] and not vault.linked_folders:
        meant = {f: m for f in config.vault if (m := _misspelt(f, _folders_beside(vault.root, f))) is not None
                 and next((vault.root / m).rglob("*.md"), None) is not None}  # only that one folder is walked
        if meant:  # `vault: doc` beside `docs/`: every commit would pass unchecked
            warn(("vault",), "; ".join(f"vault: '{f}' holds no files, but '{m}' holds notes (did you mean '{m}'?)"
                                       for f, m in meant.items()) + ": no note is checked", ERROR)
        else:
            warn(("vault",), f"vault folder(s) {', '.join(config.vault)} hold no files — check `vault:`")
    folders = _note_folders(vault.notes)
    typed = {spec.folder for spec in config.types}
    for spec in config.types:
        key = ("types", spec.name, "folder")
        if spec.folder != "." and not config.in_vault(spec.folder + "/x") \
                and not any(root.startswith(spec.folder + "/") for root in config.vault):
            warn(key, f"types.{spec.name}.folder: '{spec.folder}' is outside the vault "
                      f"({', '.join(config.vault)}): no note is checked as {spec.name}")
        elif spec.folder != "." and spec.folder not in folders:
            meant = _misspelt(spec.folder, folders - typed)
            if meant is not None:
                warn(key, f"types.{spec.name}.folder: '{spec.folder}' holds no note, but '{meant}' does "
                          f"(did you mean '{meant}'?): no note is checked as {spec.name}", ERROR)
    return out


def _is_link(folder: str, link: str) -> str:
    where = "is" if link == folder else f"lies under {link}, which is"
    return (f"{where} a symbolic link: vaultsync never reads through one (it may lead out of the repository) — "
            "name the folder it leads to, if that is in the repository")


def _misspelt(folder: str, folders: set[str]) -> str | None:
    """The folder beside ``folder`` (same parent, case aside) whose name is a close spelling of its name
    (difflib ratio ≥ 0.8), or None. Names that differ in their digits are other folders (``2024`` and
    ``2025``), and whole paths are not compared: a long shared parent would make ``adr`` and ``api`` close."""
    parent, name = posixpath.split(folder.casefold())
    siblings = {posixpath.basename(f).casefold(): f for f in sorted(folders)
                if posixpath.dirname(f).casefold() == parent}
    digits = [c for c in name if c.isdigit()]
    candidates = [s for s in siblings if [c for c in s if c.isdigit()] == digits]
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.8)
    return siblings[close[0]] if close else None


def _folders_beside(root: Path, folder: str) -> set[str]:
    """The folders on disk beside ``folder`` (the snapshot walks the vault folders only), dot-folders and
    symbolic links left out."""
    parent = posixpath.dirname(folder)
    try:
        return {posixpath.join(parent, d.name) for d in (root / parent).iterdir()
                if d.is_dir() and not d.is_symlink() and not d.name.startswith(".")}
    except OSError:
        return set()


def _note_folders(paths: Iterable[str]) -> set[str]:
    """Every folder that holds a note, at any depth (``a/b/c.md`` → ``a``, ``a/b``)."""
    out: set[str] = set()
    for path in paths:
        folder = posixpath.dirname(path)
        while folder and folder not in out:
            out.add(folder)
            folder = posixpath.dirname(folder)
    return out
