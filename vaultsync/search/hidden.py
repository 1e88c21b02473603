"""What the filters hid: the matching notes that lifecycle filters and ``--type/--tag/--scope`` removed.

A filtered search is run a second time without any filter and shallower (retrieve, fuse,
chunks and relevance only, ``2 × top_k`` candidates per leg but at least :data:`HIDDEN_MIN_CANDIDATES`,
on the query vectors the first pass computed); the notes of its top ``top_k`` chunks (at least
:data:`HIDDEN_MIN_NOTES`) that pass the relevance floor and that the filters removed are reported
with every reason and the flags that show them. A superseded note names its successor.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from typing import Any

from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.lifecycle import Exclusions
from vaultsync.search.stages.chunks import chunks
from vaultsync.search.stages.fuse import fuse
from vaultsync.search.stages.relevance import relevance
from vaultsync.search.stages.retrieve import retrieve

UNFILTERED_STAGES = (retrieve, fuse, chunks, relevance)
# candidates per leg of the unfiltered pass at least: with 2 (``--top-k 1``) fusion ranked another note
# first than the search itself does
HIDDEN_MIN_CANDIDATES = 20
# notes of the unfiltered ranking looked at, at least: with ``--top-k 1`` a superseded note took the one
# place and its successor, the best match, went unreported
HIDDEN_MIN_NOTES = 5


def hidden_matches(ctx: Context, cands: Candidates, shown: set[str]) -> dict[str, Any]:
    """``{"count", "by_reason", "notes": [{"path", "memory_id", "reason", "show_with"}]}`` (empty dict when
    no filter is active); ``shown``: the paths already among the hits."""
    if ctx.allowed is None:
        return {}
    # shallower than the search, never so shallow that its order differs from the search's own top notes
    depth = min(ctx.opts.candidates, max(2 * ctx.opts.top_k, HIDDEN_MIN_CANDIDATES))
    opts = replace(ctx.opts, types=(), tags=(), scope=None, candidates=depth)
    free = replace(ctx, opts=opts, excluded=Exclusions({}, {}), allowed=None)
    pass2 = Candidates(query_vectors=dict(cands.query_vectors))
    for stage in UNFILTERED_STAGES:
        pass2 = stage(free, pass2)
    notes: list[dict[str, Any]] = []
    by_reason: dict[str, int] = {}
    seen: set[str] = set()
    for rowid, _ in pass2.ranked:
        row = pass2.rows[rowid]
        path, p = row["path"], pass2.relevance.get(rowid)
        if len(seen) >= max(ctx.opts.top_k, HIDDEN_MIN_NOTES):
            break
        if path in seen or (p is not None and p < ctx.opts.min_relevance):
            continue
        seen.add(path)
        if path in shown or path in ctx.allowed and path not in ctx.excluded:
            continue
        why = _why(ctx, row)
        by_reason[why[0][0]] = by_reason.get(why[0][0], 0) + 1
        notes.append({"path": path, "memory_id": row["memory_id"], "reason": "; ".join(r for _, r, _ in why),
                      "show_with": " ".join(dict.fromkeys(f for _, _, f in why))})
    return {"count": len(notes), "by_reason": by_reason, "notes": notes}


def _why(ctx: Context, row: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Every ``(filter, reason, flag)`` that removed a note, the lifecycle one first: the filter is
    ``superseded``, ``expired``, ``confidence``, ``scope``, ``type`` or ``tag``; all the flags together
    show the note. Lifecycle reasons are those of :func:`vaultsync.search.lifecycle.exclusions` (an
    unreadable field counts under its filter), plus the others the same note fails."""
    path, opts = row["path"], ctx.opts
    out: list[tuple[str, str, str]] = []
    reason = ctx.excluded.reasons.get(path)
    if reason is not None and reason.startswith("unreadable"):  # a field the index could not read (ADR-0040)
        kind = "expired" if reason == "unreadable expires" else "confidence" if reason == "unreadable confidence" \
            else "superseded"
        out.append((kind, f"{reason} (its value could not be read: `vaultsync check` says why)",
                    _unreadable_flags(ctx, path)))
    elif reason is not None:
        if reason == "superseded":
            out.append(("superseded", _superseded_reason(ctx, path), "--include-superseded"))
        today = (opts.today or dt.datetime.now(dt.timezone.utc).date()).isoformat()
        if not opts.include_expired and row["expires"] and row["expires"] < today:
            out.append(("expired", f"expired {row['expires']}", "--include-expired"))
        if row["confidence"] is not None and row["confidence"] < opts.min_confidence:
            out.append(("confidence", f"confidence {row['confidence']:g} < {opts.min_confidence:g}",
                        f"--min-confidence {row['confidence']:g}"))
        if not out:  # the filter's own words, should the stored fields read otherwise
            kind = reason.split()[0]
            out.append((kind, reason, "--include-expired" if kind == "expired" else "--min-confidence 0"))
    if opts.scope and not path.startswith(opts.scope):
        out.append(("scope", f"outside --scope {opts.scope}", "without --scope"))
    if opts.types and row["type"] not in opts.types:
        out.append(("type", f"type {row['type'] or 'unset'} (not --type {', '.join(opts.types)})", "without --type"))
    if opts.tags and not _tagged(ctx, path):
        out.append(("tag", f"no tag of --tag {', '.join(opts.tags)}", "without --tag"))
    return out or [("tag", f"no tag of --tag {', '.join(opts.tags)}", "without --tag")]


def _tagged(ctx: Context, path: str) -> bool:
    """Whether the note holds one of the ``--tag`` values (as :func:`vaultsync.search.rows.allowed_paths` asks)."""
    tags = ctx.opts.tags
    return ctx.index.db.execute(
        "SELECT 1 FROM notes WHERE path = ? AND EXISTS (SELECT 1 FROM json_each(notes.frontmatter, '$.tags') t "
        f"WHERE t.value IN ({','.join('?' * len(tags))}))", (path, *tags)).fetchone() is not None


def _unreadable_flags(ctx: Context, path: str) -> str:
    """Every flag the note needs: each unreadable lifecycle field hides it under its own filter, so
    ``--include-superseded`` alone shows no note whose ``expires`` is unreadable too."""
    from vaultsync.vault.lifecycle_fields import FILTER_OF

    found = ctx.index.db.execute("SELECT unreadable FROM notes WHERE path = ?", (path,)).fetchone()
    fields = json.loads(found[0]) if found and found[0] else {}
    filters = {FILTER_OF.get(f) for f in fields} | ({"superseded", "expired", "confidence"} if "frontmatter" in fields
                                                       else set())
    flags = {"superseded": "--include-superseded", "expired": "--include-expired", "confidence": "--min-confidence 0"}
    return " ".join(flag for kind, flag in flags.items() if kind in filters) or "--include-superseded"


def _superseded_reason(ctx: Context, path: str) -> str:
    """``superseded by X``; when X is hidden too, why and the flag that shows it; ``superseded in a cycle
    with X`` when the chain goes round; plain ``superseded`` when no successor resolves."""
    successor = ctx.excluded.replacement.get(path)
    if successor:
        return f"superseded by {successor}"
    latest = ctx.excluded.latest.get(path)
    if latest is None:
        return "superseded"
    why = ctx.excluded.reasons.get(latest)
    if why is None or why == "superseded":
        return f"superseded in a cycle with {latest}"
    flag = "--include-expired" if "expire" in why else "--min-confidence 0" if "confidence" in why else \
        "--include-superseded"
    return f"superseded by {latest}, itself hidden ({why}; {flag})"
