"""``vaultsync check``: validate the vault (the pre-commit hook and the PR-time job)."""

from __future__ import annotations

import argparse
import gc
import os
import shlex
import sys
from pathlib import Path

import pygit2

from vaultsync.checks.cache import open_cache
from vaultsync.checks.renames import find_renames, head_link_index
from vaultsync.checks.report import FORMATS, report
from vaultsync.checks.runner import load_checked_vault, run_checks
from vaultsync.cli.argtypes import add_format
from vaultsync.diagnostics import ERROR, WARNING, Diagnostic, visible
from vaultsync.git import (
    IndexSnapshot,
    TreeSnapshot,
    WorktreeSnapshot,
    head_tree,
    index_entries,
    open_repo,
    unreadable_repository,
    workdir,
)
from vaultsync.index.layout import common_git_dir
from vaultsync.vault.clock import local_today, local_zone_problem
from vaultsync.vault.config import (
    CONFIG_NAME,
    ConfigError,
    config_is_a_folder,
    load_config,
    misnamed_config,
    read_committed_schemas,
)
from vaultsync.vault.resolve import LinkIndex
from vaultsync.vault.vault import Vault


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    source = p.add_mutually_exclusive_group()
    source.add_argument("--staged", action="store_true",
                        help="validate what is staged (the git index; GIT_INDEX_FILE honoured) — the pre-commit mode")
    source.add_argument("--rev", metavar="REV", help="validate a commit's tree (e.g. HEAD in CI)")
    add_format(p, FORMATS)
    p.add_argument("--fix", action="store_true",
                   help="complete supersessions in the working tree: missing back-references and the older "
                        "note's status: superseded (nothing else)")
    p.add_argument("--no-cache", action="store_true",
                   help="parse every note again instead of reusing the results kept for unchanged notes")
    p.add_argument("--root", type=Path, default=None, help="repository or vault folder (default: current directory)")
    p.add_argument("paths", nargs="*", help="only report problems in these files (the whole vault is still read; "
                                            "an error in the config is always reported)")
    p.set_defaults(run=run)


def _load(root: Path, args: argparse.Namespace) -> tuple[Vault, LinkIndex | None, dict[str, str]]:
    """The vault to check, HEAD's link tables (``--staged``) and the renames this commit makes."""
    repo = open_repo(root)
    if repo is not None and args.root is not None and workdir(repo) != root:
        repo = None  # --root names a vault folder inside a bigger repository: check it as a folder
    if repo is None:
        if args.staged or args.rev is not None:
            reason = unreadable_repository(root)
            if reason:
                raise ValueError(f"{reason} (needed for --staged/--rev)")
            raise ValueError(f"{root} is not a repository's top folder (needed for --staged/--rev)")
        if args.root is None:  # said, so a check run in the wrong folder (a home folder) is noticed
            print(f"vaultsync check: {root} is not inside a git working tree: checking the notes under it as a "
                  "folder", file=sys.stderr)
        config = load_config(root)
        return load_checked_vault(WorktreeSnapshot(root, config.vault), config, root), None, {}
    if repo.is_bare and args.rev is None:
        raise ValueError("a bare repository has no working tree or index to check: use --rev HEAD")
    top = workdir(repo)
    if args.rev is not None:
        try:
            commit = repo.revparse_single(args.rev).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            raise ValueError(f"unknown revision {args.rev!r}{_shallow_hint(repo)}") from None
        snapshot = TreeSnapshot(repo, commit.tree)
    elif args.staged:
        snapshot = IndexSnapshot(repo)
    else:
        snapshot = None
    config_text = None
    if snapshot is not None and any(p.startswith(CONFIG_NAME + "/") for p in snapshot.paths()):
        raise config_is_a_folder()
    if snapshot is not None and CONFIG_NAME in snapshot.symlinks():
        raise config_is_a_folder("a symbolic link")
    if snapshot is not None and CONFIG_NAME in snapshot.paths():
        config_text = snapshot.read(CONFIG_NAME).decode("utf-8-sig", errors="replace").replace("\r\n", "\n")
        config = load_config(top, config_text)
    elif snapshot is not None:
        if (misnamed := misnamed_config(p for p in snapshot.paths() if "/" not in p)) is not None:
            raise misnamed
        config = load_config(top, "")
    else:
        config = load_config(top)
    if snapshot is None:
        snapshot = WorktreeSnapshot(top, config.vault, repo)
    else:  # repo schema files come from the same snapshot as the notes, never from the disk
        present, links = set(snapshot.paths()), set(snapshot.symlinks())

        def kind(path: str) -> str | None:
            if path in present or path in links:
                return "file" if path in present else "link"
            return "folder" if any(p.startswith(path + "/") for p in present) else None

        read_committed_schemas(config, kind, snapshot.read)
        unmerged = [p for p in snapshot.unmerged if config.in_vault(p)] if isinstance(snapshot, IndexSnapshot) else []
        if unmerged:  # the index holds the merge's sides, not a note: nothing to check yet
            raise ValueError(f"{', '.join(map(visible, unmerged[:5]))}{' …' if len(unmerged) > 5 else ''}: unmerged (a merge "
                             "conflict git left unresolved) — resolve it, `git add` it, then check again")
    cache = None if args.fix or args.no_cache else open_cache(common_git_dir(repo), config, top)
    vault = load_checked_vault(snapshot, config, top, cache=cache)
    if cache is not None:
        cache.save()
    previous = None
    renamed: dict[str, str] = {}
    if args.staged or args.fix:  # what the commit (the working tree, for --fix) renamed since HEAD
        tree = head_tree(repo)
        if tree is not None:
            head = TreeSnapshot(repo, tree)
            previous = head_link_index(head, vault)
            read = snapshot.read
            renamed = find_renames(head, vault, snapshot.oid if isinstance(snapshot, IndexSnapshot)
                                   else lambda path: str(pygit2.hash(read(path))))
    return vault, previous, renamed


def _shallow_hint(repo: pygit2.Repository) -> str:
    """Why a revision may be missing from a CI checkout, and how to fetch it."""
    if not repo.is_shallow:
        return ""
    return (" — this clone is shallow (CI checkouts fetch one commit by default), so other branches and "
            "older commits are not here: fetch them with `git fetch --deepen=50 origin` (or `git fetch origin "
            "main`), or check out with full history (actions/checkout: `fetch-depth: 0`)")


def run(args: argparse.Namespace) -> int:
    # A check keeps every note it parses until it ends, so the cyclic garbage collector would only walk
    # a growing heap again and again (~10 % of a 10,000-note check); reference counting frees the rest.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        if enabled:
            gc.enable()


def _run(args: argparse.Namespace) -> int:
    root = (args.root or Path.cwd()).resolve()
    if not root.is_dir():
        print(f"vaultsync check: {root} is not a folder", file=sys.stderr)
        return 2
    try:
        vault, previous, renamed = _load(root, args)
    except ConfigError as exc:
        return _config_error(exc.diagnostics, args.format)
    except (ValueError, KeyError, OSError, pygit2.GitError) as exc:
        print(f"vaultsync check: {exc}", file=sys.stderr)
        return 2
    from vaultsync.search.options import config_problems

    problems = config_problems(vault.config)
    if (said := local_zone_problem()) is not None and not vault.config.checks.get("timezone"):
        print(f"vaultsync check: warning: {said}", file=sys.stderr)
    try:
        today = local_today(vault.config)
    except ValueError as exc:
        line, col = vault.config.positions.get(("checks", "timezone"), (-1, -1))
        problems.append(Diagnostic(CONFIG_NAME, line + 1, col + 1, "CF002", str(exc)))
    if problems:  # every one at once, in file order
        return _config_error(sorted(problems, key=lambda d: (d.line, d.col)), args.format)
    if args.fix:
        if args.staged or args.rev is not None:
            print("vaultsync check: --fix edits the working tree; drop --staged/--rev", file=sys.stderr)
            return 2
        from vaultsync.checks.fix import apply_fixes, plan_fixes
        from vaultsync.checks.fix_text import Fix, by_hand

        only = {_relative(vault.root, p) for p in args.paths} if args.paths else None
        edited = _fix_renamed_links(vault, previous, renamed, only)
        if edited:  # first: a fixed link may declare a supersession
            vault, previous, renamed = _load(root, args)
        by_note: dict[str, list[Fix]] = {}
        for fix in plan_fixes(vault, only):
            by_note.setdefault(fix.path, []).append(fix)
        for path, fixes in by_note.items():  # a note is edited whole or not at all
            done = apply_fixes(vault.root, vault, fixes)
            edited |= {path} if done else set()
            for fix in fixes:
                print(f"fixed: {path}: {'set' if fix.field == 'status' else 'added'} {fix.field}: {fix.ref}" if done
                      else f"not fixed: {path}: its frontmatter's layout is not one --fix edits; write by hand "
                      f"{by_hand(fix)}", file=sys.stderr)
        vault, previous, renamed = _load(root, args)
        if edited:  # the hook checks what is staged: the fixes land once added
            here = "" if Path.cwd().resolve() == vault.root.resolve() else f" -C {shlex.quote(str(vault.root))}"
            print(f"stage the fixed notes before committing: git{here} add -- {shlex.join(sorted(edited))}",
                  file=sys.stderr)
    diagnostics = run_checks(vault, previous, today=today, renamed=renamed)
    if not args.staged and args.rev is None:
        diagnostics = _untracked_scratch_is_fine(root, diagnostics)
    checked = len(vault.notes)
    if args.paths:
        wanted = _wanted(vault, args.paths, follow=not args.staged and args.rev is None)
        # an error in the config concerns every note (CF004: a folder left unchecked): it is never filtered out
        diagnostics = [d for d in diagnostics if d.path in wanted or d.path == CONFIG_NAME and d.severity == ERROR] \
            + _missing_paths(vault, wanted)
        checked = len(wanted & set(vault.notes))
    report(diagnostics, args.format, sys.stdout, checked=checked)
    return 1 if any(d.severity == ERROR for d in diagnostics) else 0


def _fix_renamed_links(vault: Vault, previous: LinkIndex | None, renamed: dict[str, str],
                       only: set[str] | None) -> set[str]:
    """``--fix`` for WL007: rewrite each link a rename broke, one atomic write per note; the notes edited."""
    from vaultsync.checks.fix_links import LinkFix, apply_link_fixes, plan_link_fixes

    by_note: dict[str, list[LinkFix]] = {}
    for fix in plan_link_fixes(vault, previous, renamed, only):
        by_note.setdefault(fix.path, []).append(fix)
    edited: set[str] = set()
    for path, fixes in by_note.items():  # one write per note
        for fix, why in apply_link_fixes(vault.root, fixes).items():
            edited |= {path} if why is None else set()
            print(f"fixed: {path}:{fix.line}:{fix.col}: {fix.old} → {fix.new}" if why is None
                  else f"not fixed: {path}:{fix.line}:{fix.col}: {fix.old} → {fix.new}: {why}; write it by hand",
                  file=sys.stderr)
    return edited


def _config_error(diagnostics: list[Diagnostic], fmt: str) -> int:
    """Config errors that stop the check (exit 1): on stderr as text, or as the report ``--format`` asks for
    (JSON, GitHub annotations) on stdout, where a CI job reads the rest."""
    if fmt == "text":
        print("\n".join(d.render() for d in diagnostics), file=sys.stderr)
    else:
        report(diagnostics, fmt, sys.stdout, checked=0)
    return 1


def _untracked_scratch_is_fine(root: Path, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """In the working tree, a scratch note git does not track is where it belongs: PA001 is only for
    scratch files that are tracked (or staged), which a commit would carry."""
    repo = open_repo(root)
    if repo is None or repo.is_bare:
        return diagnostics
    tracked = {entry.path for entry in index_entries(repo)}
    return [d for d in diagnostics if d.code != "PA001" or d.path in tracked]


def _wanted(vault: Vault, paths: list[str], follow: bool = True) -> set[str]:
    """The repository paths asked for; a folder stands for every file of the snapshot under it. ``follow``:
    a symbolic link on the way is followed, as the working tree is read; else (``--staged``, ``--rev``)
    each path is the snapshot's own."""
    wanted: set[str] = set()
    for arg in paths:
        rel = _relative(vault.root, arg, follow)
        if rel == "." or (not Path(rel).is_absolute() and not rel.startswith("../") and (vault.root / rel).is_dir()):
            prefix = "" if rel == "." else rel.rstrip("/") + "/"
            inside = {p for p in vault.all_files if p.startswith(prefix)}
            wanted |= inside or {rel}
        else:
            wanted.add(rel)
    return wanted


def _missing_paths(vault: Vault, wanted: set[str]) -> list[Diagnostic]:
    """PA003 for each path asked for that is neither in the checked snapshot nor on disk (a typo), lies
    outside the repository, or is a folder holding no file of the snapshot.

    A path outside the vault folders (pre-commit passes every staged ``.md``) is no error.
    """
    present = set(vault.all_files)
    out = []
    for path in sorted(wanted - present):
        if path == ".git" or path.startswith(".git/"):
            out.append(Diagnostic(path, 0, 0, "PA003", f"{path} lies in .git, which holds no notes"))
        elif path in vault.symlinks or path in vault.dead_links:
            out.append(Diagnostic(path, 0, 0, "PA003", f"{path} is a symbolic link in the checked snapshot, not a "
                                                       "note — check the file it leads to"))
        elif Path(path).is_absolute() or path.startswith("../"):
            out.append(Diagnostic(path, 0, 0, "PA003", f"{path} is outside this repository ({vault.root}) — check "
                                                       "it from its own repository"))
        elif (vault.root / path).is_dir() and not vault.config.in_vault(path.rstrip("/") + "/x.md") \
                and next((vault.root / path).rglob("*.md"), None) is not None:
            out.append(Diagnostic(path, 0, 0, "PA003", f"{path} lies outside the vault ({', '.join(vault.config.vault)}): "
                                                       "none of its notes is checked — check `vault:`", severity=WARNING))
        elif (vault.root / path).is_dir():
            out.append(Diagnostic(path, 0, 0, "PA003", f"{path} is a folder with no file to check"))
        elif not (vault.root / path).exists():
            out.append(Diagnostic(path, 0, 0, "PA003", f"no such file: {path} — check the path (relative to the "
                                                       "current folder)"))
    return out


def _relative(root: Path, path: str, follow: bool = True) -> str:
    """``path`` (absolute or relative to the current directory) relative to ``root`` when it leads inside
    it; with ``follow``, where a symbolic link on the way leads out of ``root``, the absolute path it leads
    to (PA003); without, the path as written, its ``..`` read without following links."""
    p = Path(path)
    written = p if p.is_absolute() else Path.cwd() / p
    lexical = Path(os.path.normpath(written))
    full = written.resolve() if follow else lexical
    if full.is_relative_to(root):
        return full.relative_to(root).as_posix()
    return full.as_posix() if lexical.is_relative_to(root) else p.as_posix()
