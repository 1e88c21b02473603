"""Bring the derived index up to HEAD, re-indexing only what changed.

The base of every sync is the **indexed tree** stored in the index itself, never ``HEAD~1``:
whatever happened in between (first commit, merges, rebases, amend, checkout, reset, a shallow
clone, a killed sync), diffing the indexed tree against HEAD's tree converges to the same state
as a full rebuild. The diff is pygit2's tree diff with rename detection; a missing base (first
run, gc'd object, config change, model change) falls back to comparing HEAD with the paths the
index holds.

Order of writes, for crash safety: the embedding cache, batch by batch while embedding (each
batch one LanceDB version: ADR-0070) → SQLite (one transaction holding text, vectors, graph and the
indexed tree: the commit point) → the LanceDB vector table (``meta.lance_tree`` says which tree it
reflects). A sync killed before the SQLite commit leaves the previous state readable, and the next
sync redoes the same work, less every embedding that already reached the cache.
"""

from __future__ import annotations

import datetime as dt
import gc
import hashlib
import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pygit2

from vaultsync import __version__
from vaultsync.checks.runner import analyse_note
from vaultsync.git import (
    TreeSnapshot,
    head_commit_id,
    head_tree,
    is_valid_utf8_path,
    printable_path,
    workdir,
)
from vaultsync.index.aside import put_back, recover, set_aside
from vaultsync.index.changes import note_changes
from vaultsync.index.damage import drop, repairing
from vaultsync.index.embedding import (
    EmbedderFactory,
    configured_models,
    default_embedder,
    manifest_dim,
    primary_extras,
    update_lance,
    vectors_for,
)
from vaultsync.index.fastpath import (
    config_at,
    config_blob_id,
    config_hash,
    config_key,
    config_warnings,
    lance_tables_present,
)
from vaultsync.index.format import DEFAULT_TARGET_TOKENS
from vaultsync.index.layout import IndexLayout, layout_for
from vaultsync.index.lock import SyncLock
from vaultsync.index.progress import SyncProgress
from vaultsync.index.read_through import TeamCache
from vaultsync.index.records import note_record
from vaultsync.index.sqlite_store import SqliteStore
from vaultsync.vault.config import Config
from vaultsync.vault.fields import note_aliases
from vaultsync.vault.lifecycle_fields import FILTER_OF
from vaultsync.vault.note import parse_note
from vaultsync.vault.resolve import LinkIndex
from vaultsync.vault.vault import is_note_path, link_names


@dataclass
class SyncReport:
    """What one sync did."""

    status: str  # "updated", "up-to-date", "busy", "deferred"
    commit: str | None = None
    added: int = 0
    modified: int = 0
    removed: int = 0
    renamed: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    chunks_remote: int = 0  # of the reused, vectors read through from the team index (ADR-0075)
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.status != "updated":
            return f"index {self.status}" + (f" at {self.commit[:10]}" if self.commit else "")
        return (f"indexed {self.commit[:10] if self.commit else '(empty)'}: +{self.added} ~{self.modified} "
                f"-{self.removed} renamed {self.renamed}; {self.chunks_embedded} texts embedded, "
                f"{self.chunks_reused} reused (chunks and note names)" + (f" ({self.chunks_remote} from the team index)"
                                                  if self.chunks_remote else "") + f"; {self.seconds:.2f} s")


def replay_in_progress(repo: pygit2.Repository, hook: str = "post-commit") -> bool:
    """True while git replays commits and a later hook will sync (field case GH-02): for post-commit
    and post-checkout, a rebase (post-rewrite follows; ``--abort`` returns to the indexed commit); for
    post-commit, a cherry-pick/revert sequence with picks left after the current one (the last pick's
    post-commit syncs; a sequence has no post-rewrite); for post-applypatch, a ``git am`` with patches
    left. The shim in ``githooks/`` applies the same rule without starting Python."""
    gitdir = Path(repo.path)
    if hook == "post-applypatch":
        try:
            return int((gitdir / "rebase-apply" / "next").read_text()) < int((gitdir / "rebase-apply" / "last").read_text())
        except (OSError, ValueError):
            return False
    if hook not in ("post-commit", "post-checkout"):
        return False
    if (gitdir / "rebase-merge").exists() or (gitdir / "rebase-apply").exists():
        return True
    try:
        todo = (gitdir / "sequencer" / "todo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    steps = [line for line in todo.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    # the first line is the pick being committed now; a todo left by a sequence given up with
    # `git reset` is no replay: a cherry-pick's picks run with CHERRY_PICK_HEAD present
    return hook == "post-commit" and len(steps) > 1 and (
        (gitdir / "CHERRY_PICK_HEAD").exists() or (gitdir / "REVERT_HEAD").exists() or steps[0].split(" ", 1)[0] == "revert")


def replay_active(repo: pygit2.Repository) -> bool:
    """Whether git is in the middle of a replay, at any step: a rebase or ``git am`` (their state
    folders), or a cherry-pick or revert, running or stopped (``CHERRY_PICK_HEAD``, ``REVERT_HEAD``)."""
    gitdir = Path(repo.path)
    return any((gitdir / name).exists() for name in ("rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD", "REVERT_HEAD"))


def vault_notes(snapshot: TreeSnapshot, config: Config) -> tuple[dict[str, str], list[str]]:
    """Indexable note path → blob oid, and warnings for paths that cannot be indexed."""
    notes: dict[str, str] = {}
    warnings: list[str] = []
    for path in snapshot.paths():
        if not (is_note_path(path) and config.in_vault(path)) or config.is_ephemeral(path):
            continue
        if not is_valid_utf8_path(path):
            warnings.append(f"skipping path with invalid UTF-8: {printable_path(path)}")
            continue
        notes[path] = snapshot.oid(path)
    return notes, warnings


def sync(repo: pygit2.Repository, *, rebuild: bool = False, embedder_factory: EmbedderFactory = default_embedder,
         progress: bool = False, wait: float = 0.0, hook: str | None = None) -> SyncReport:
    """Bring ``repo``'s index up to HEAD (see the module docstring).

    Args:
        repo: the repository (any worktree).
        rebuild: drop the index first and index everything.
        embedder_factory: builds the embedder (only called when chunks must be embedded).
        progress: show a progress bar while embedding (a long embedding run also records its
            progress in ``progress.json`` for ``vaultsync status``, with or without the bar).
        wait: seconds to wait for a running sync's lock (after marking the index dirty, so
            that sync runs again for us); negative: wait as long as it takes, then sync.
        hook: the git hook that asked, recorded in the lock's owner record.
    Returns:
        A :class:`SyncReport`; ``status == "busy"`` when another sync held the lock
        (it will run again for us).
    Raises:
        ConfigError, pygit2.GitError, OSError, and whatever the embedder raises.
    """
    layout = layout_for(repo, config_at(repo, head_tree(repo))[0])
    lock = SyncLock(layout.lock, layout.dirty, wait=wait, hook=hook)
    with lock as held:
        if not held:
            return SyncReport("busy", head_commit_id(repo))
        recover(layout)  # a rebuild killed before it finished: its old index comes back first
        moved = set_aside(layout) if rebuild else []
        report = SyncReport("up-to-date")
        tracker = SyncProgress(layout.progress, bar=progress)
        try:
            while True:
                lock.take_dirty()
                again = repairing(layout, lambda before=report: _sync_once(repo, layout, embedder_factory, tracker,
                                                                           before))
                # a pass that read nothing (a waiting sync marked the tree just indexed dirty) keeps the report
                report = again if again.status != "up-to-date" or report.status == "up-to-date" \
                    else replace(report, commit=again.commit, seconds=report.seconds + again.seconds)
                put_back(moved, failed=False)
                moved = []
                if lock.take_dirty():
                    continue  # someone committed meanwhile: go again
                tracker.close()
                lock.release()
                if not lock.reacquire_if_dirty():  # a mark that came between the check and the release
                    return report
        finally:
            put_back(moved, failed=True)  # the rebuild did not finish: the old index stays
            tracker.close()


def _sync_once(repo: pygit2.Repository, layout: IndexLayout, embedder_factory: EmbedderFactory,
               progress: SyncProgress, previous: SyncReport) -> SyncReport:
    started = time.perf_counter()
    tree = head_tree(repo)
    commit = head_commit_id(repo) if tree is not None else None
    config, config_text = config_at(repo, tree)
    target = int(config.index.get("chunk_tokens") or DEFAULT_TARGET_TOKENS)
    chash = config_hash(config_text)
    store = SqliteStore(layout.sqlite)
    try:
        meta = store.meta()
        tree_id = str(tree.id) if tree is not None else ""
        lance_behind = (meta.get("lance_tree") != meta.get("indexed_tree")
                        or not lance_tables_present(layout.lance, meta.get("embed_models", "")))
        retry = set(json.loads(meta.get("retry_paths") or "[]"))  # notes whose blob could not be read last time
        if meta.get("indexed_tree") == tree_id and meta.get("config_hash") == chash and "indexed_tree" in meta \
                and not lance_behind and not retry:
            current = {"indexed_commit": commit or "", "config_key": config_key(config_blob_id(tree))}
            if any(meta.get(k) != v for k, v in current.items()):
                store.set_meta(current)
            return SyncReport("up-to-date", commit, seconds=time.perf_counter() - started)
        report = SyncReport("updated", commit)
        snapshot = TreeSnapshot(repo, tree)
        head_notes, report.warnings = vault_notes(snapshot, config)
        report.warnings[:0] = config_warnings(config)
        indexed = store.paths()
        full = meta.get("config_hash") != chash
        changed, removed, renamed = note_changes(repo, meta.get("indexed_tree"), tree, head_notes, indexed, full)
        changed |= retry & head_notes.keys()
        unread: set[str] = set()  # read again by the next sync, which a missing blob never lets be "up to date"
        report.renamed, report.removed = renamed, len(removed) - renamed
        report.added = sum(1 for p in changed if p not in indexed) - renamed
        report.modified = sum(1 for p in changed if p in indexed)

        notes = {}
        for path in sorted(changed):
            try:
                note = parse_note(path, snapshot.read(path))
                warnings = [d.render() for d in analyse_note(config, workdir(repo), note)]
            except (KeyError, pygit2.GitError) as exc:  # a blob a partial clone has not fetched (yet)
                report.warnings.append(f"skipping {path} until its content is here: {type(exc).__name__}: {exc}")
                unread.add(path)
                continue
            except Exception as exc:  # noqa: BLE001 - one odd note must never stop the index
                report.warnings.append(f"skipping {path}: {type(exc).__name__}: {exc}")
                continue
            if note.readable:
                notes[path] = (note, warnings)
            else:
                report.warnings.append(f"skipping unreadable note: {'; '.join(warnings)}")
        dropped = {p for p in changed if p in indexed and p not in notes}  # a rebuild would have no rows for them
        report.added = max(0, report.added - sum(p not in indexed and p not in notes for p in changed))  # skipped
        before = store.aliases()
        after = {p: a for p, a in before.items() if p not in changed and p not in removed}
        after.update({p: note_aliases(n.frontmatter) for p, (n, _) in notes.items()})
        files = link_names(snapshot, config)
        index = LinkIndex(files, _alias_index(after), config.link_root)
        files_key = hashlib.sha256("\0".join(sorted(files)).encode("utf-8", "surrogateescape")).hexdigest()[:16]
        records = []
        for path in list(notes):
            note, warnings = notes.pop(path)  # a parsed note is dropped once its record holds what it needs
            try:
                records.append(note_record(note, head_notes[path], index, warnings, target))
            except Exception as exc:  # noqa: BLE001 - one odd note must never stop the index
                report.warnings.append(f"skipping {path}: {type(exc).__name__}: {exc}")
                dropped |= {path} & indexed.keys()
        # a note or an attachment (`![[arch.png]]`) came or went: links resolve differently
        paths_changed = bool(removed) or any(p not in indexed for p in changed) or meta.get("vault_files") != files_key
        aliases_changed = any(before.get(p, []) != after.get(p, []) for p in changed | removed)
        relinks = _relinks(store, index, changed | removed) if paths_changed or aliases_changed else []
        rerefs = _rerefs(store, index, changed | removed) if paths_changed or aliases_changed else []

        items = [c for r in records for c in r.chunks] + [c for r in records for c in r.name_chunks]
        models = configured_models(config, meta)
        known = json.loads(meta.get("embed_models") or "{}")
        if known and any(known.get(name, {}).get("id") not in (None, mid) for name, mid in models.items() if mid):
            store.close()
            drop(layout)  # a model changed: every vector of the index must be recomputed
            return _sync_once(repo, layout, embedder_factory, progress, SyncReport("updated"))
        team = TeamCache.configured(repo, config, config_text, layout, embedder_factory) if items else None
        vectors: dict[str, dict[str, np.ndarray]] = {}
        unsaved: dict[str, list[str]] = {}  # model id -> hashes embedded but not yet in the cache
        available: dict[str, dict[str, object]] = {}  # name -> {id, dim}, primary first
        counted, fresh, blocks, made, tokens = False, {}, {}, {}, {}  # token counts, block, token rows: the primary's
        for i, name in enumerate(models):
            try:
                found, embedder, embedded, reused, new = vectors_for(
                    items, store, layout, config, name, embedder_factory, models[name] or "", progress,
                    (i + 1, len(models)), team=team, blocks=fresh if i == 0 else None)
            except ImportError as exc:  # an optional embedder that is not installed: its leg stays empty
                report.warnings.append(f"embedder {name} unavailable: {exc}")
                continue
            if embedder is not None:
                models[name] = embedder.model_id
            dim = embedder.dim if embedder is not None else known.get(name, {}).get("dim") or manifest_dim(name)
            available[name] = {"id": models[name], "dim": dim}
            vectors[str(models[name])], unsaved[str(models[name])] = found, new
            if i == 0:
                report.chunks_embedded, report.chunks_reused = embedded, reused
                if records and embedder is None:
                    embedder = embedder_factory(config, name)  # token counts must not depend on cache hits
                counted, blocks, made, tokens = primary_extras(records, store, embedder, fresh, config, layout)
            del found, embedder  # the vectors live on in ``vectors``; the weights go before the next embedder loads
            gc.collect()  # a caught exception's traceback can hold this leg's frames, and so its model, in a cycle
        known = available
        if team is not None:
            report.chunks_remote = team.served
            report.warnings.extend(team.warnings)
        primary = next(iter(models))
        store.apply(removed | dropped, records, {
            "indexed_commit": commit or "", "indexed_tree": tree_id, "config_hash": chash,
            "retry_paths": json.dumps(sorted(unread)),
            "config_key": config_key(config_blob_id(tree)), "vault_files": files_key,
            "embed_models": json.dumps(known), "embed_model": known.get(primary, {}).get("id", ""),
            "embed_dim": str(known.get(primary, {}).get("dim", 384)), "chunk_tokens": str(target),
            "vaultsync_version": __version__,
            "token_counter": f"{known[primary]['id']} tokenizer" if counted
            else meta.get("token_counter", "estimate") if head_notes else "estimate",  # no notes: as a rebuild
            "synced_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        }, relinks, vectors, rerefs, blocks, tokens)
        report.warnings.extend(unreadable_warnings(store))
        # The change is searchable now. LanceDB (embedding cache + vector tables) follows.
        lance_full = full or meta.get("lance_tree") != meta.get("indexed_tree")
        if lance_full:  # the tables are refilled from SQLite's rows: the parsed chunks can go first
            records, items = [], []
        report.warnings += update_lance(store, layout, config, known, sorted(set(changed) | set(removed)), records,
                                        vectors, full=lance_full, unsaved=unsaved, block_rows=made)
        report.seconds = time.perf_counter() - started
        return report
    finally:
        store.close()


def _alias_index(by_path: dict[str, list[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path, aliases in sorted(by_path.items()):
        for alias in aliases:
            out.setdefault(alias, []).append(path)
    return out


def _resolve(index: LinkIndex, target: str, source: str) -> str | None:
    res = index.resolve(target, source)
    return res.path if res.status == "ok" else None


def _relinks(store: SqliteStore, index: LinkIndex, skip: set[str]) -> list[tuple[str | None, int]]:
    """Re-resolve stored links of unchanged notes whose target may now resolve differently."""
    updates: list[tuple[str | None, int]] = []
    for rowid, source, target, resolved in store.link_rows():
        if source not in skip:
            now = _resolve(index, target, source)
            if now != resolved:
                updates.append((now, rowid))
    return updates


def _rerefs(store: SqliteStore, index: LinkIndex, skip: set[str]) -> list[tuple[str | None, int]]:
    """Re-resolve stored supersession references of unchanged notes, as :func:`_relinks` does for links."""
    return [(now, rowid) for rowid, source, ref, resolved in store.ref_rows()
            if source not in skip and (now := _resolve(index, ref, source)) != resolved]


def unreadable_warnings(store: SqliteStore) -> list[str]:
    """One warning per indexed note whose frontmatter or a lifecycle field could not be read.

    Read from the index, so every sync that updates it reports them again, not only
    the sync that met the note.
    """
    out = []
    for path, fields in store.unreadable().items():
        problem = fields.pop("frontmatter", None)
        lifecycle = [f for f in fields if FILTER_OF.get(f)]
        if problem:
            out.append(f"{problem} — indexed without its frontmatter" + ("; hidden from search" if lifecycle else ""))
        elif fields:
            values = ", ".join(f"{f}: {v}" for f, v in fields.items())
            out.append(f"{path}: unreadable lifecycle field ({values})" + ("; hidden from search" if lifecycle else ""))
    return out

