"""What the filters hid: the matching notes that lifecycle filters and ``--type/--tag/--scope`` removed.

A filtered search is run a second time without any filter, through the same stages but the rerank
and the supersession step (on the query vectors the first pass computed), for at least
:data:`HIDDEN_MIN_NOTES` hits; the notes of the hits it delivers (the relevance floor and the cut applied) that
the filters removed are reported with every reason and the flags that show them: "matching" means what the
search itself would answer with those flags. A superseded note names its successor, and a note a hit
replaces is always reported.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.lifecycle import Exclusions, plain
from vaultsync.search.rows import TAGGED, tags_wanted
from vaultsync.search.stages.chunks import chunks
from vaultsync.search.stages.finish import finish
from vaultsync.search.stages.fuse import fuse
from vaultsync.search.stages.graph_hop import graph_hop
from vaultsync.search.stages.relevance import relevance
from vaultsync.search.stages.retrieve import retrieve

UNFILTERED_STAGES = (retrieve, fuse, graph_hop, chunks, relevance, finish)
# hits of the unfiltered pass looked at, at least: with ``--top-k 1`` a superseded note took the one
# place and its successor, the best match, went unreported
HIDDEN_MIN_NOTES = 5
_FLAG = re.compile(r"without --\S+|--\S+(?: [0-9.]+)?")  # one flag of a reason's flags, with its value


def hidden_matches(ctx: Context, cands: Candidates, shown: set[str]) -> dict[str, Any]:
    """``{"count", "by_reason", "notes": [{"path", "memory_id", "reason", "show_with"}]}`` (empty dict when
    no filter is active); ``shown``: the paths already among the hits."""
    if ctx.allowed is None:
        return {}
    # the search with every filter lifted: what the flags, together, would show (at least HIDDEN_MIN_NOTES hits)
    top_k = max(ctx.opts.top_k, HIDDEN_MIN_NOTES)
    opts = replace(ctx.opts, types=(), tags=(), scope=None, top_k=top_k,
                   budget=max(ctx.opts.budget, 10 ** 6))  # the notes it would deliver, not the tokens
    free = replace(ctx, opts=opts, excluded=Exclusions({}, {}), allowed=None)
    pass2 = Candidates(query_vectors=dict(cands.query_vectors))
    for stage in UNFILTERED_STAGES:
        pass2 = stage(free, pass2)
    notes: list[dict[str, Any]] = []
    by_reason: dict[str, int] = {}
    rows = {r["path"]: r for r in pass2.rows.values()}
    for path in dict.fromkeys(h.path for h in pass2.hits):
        if path in shown or path in ctx.allowed and path not in ctx.excluded:
            continue
        notes.append(_report(ctx, rows[path], by_reason))
    # a hit that stands in for a superseded note says that note matched: it is among the hidden, however
    # deep the unfiltered pass ranked it
    reported = {n["path"] for n in notes}
    for old in dict.fromkeys(h.replaces for h in cands.hits if h.replaces and h.replaces not in reported):
        found = ctx.index.db.execute("SELECT path, memory_id, type, confidence FROM notes WHERE path = ?",
                                     (old,)).fetchone()
        if found is not None and old in ctx.excluded:
            notes.append(_report(ctx, dict(zip(("path", "memory_id", "type", "confidence"), found)), by_reason))
    return {"count": len(notes), "by_reason": by_reason, "notes": notes}


def _report(ctx: Context, row: dict[str, Any], by_reason: dict[str, int]) -> dict[str, Any]:
    """One hidden note's entry (its first reason counted in ``by_reason``)."""
    why = _why(ctx, row)
    by_reason[why[0][0]] = by_reason.get(why[0][0], 0) + 1
    return {"path": row["path"], "memory_id": row["memory_id"], "reason": "; ".join(r for _, r, _ in why),
            "show_with": _flags(why)}


def _why(ctx: Context, row: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Every ``(filter, reason, flag)`` that removed a note, the lifecycle ones first: the filter is
    ``superseded``, ``expired``, ``confidence``, ``scope``, ``type`` or ``tag``; all the flags together
    show the note. Lifecycle reasons are those of :func:`vaultsync.search.lifecycle.exclusions` (an
    unreadable field counts under its filter)."""
    path, opts = row["path"], ctx.opts
    first = ctx.excluded.reasons.get(path)
    out = [_lifecycle(ctx, row, r) for r in ([first, *ctx.excluded.also.get(path, [])] if first else [])]
    if opts.scope and not path.startswith(opts.scope):
        out.append(("scope", f"outside --scope {opts.scope}", "without --scope"))
    if opts.types and row["type"] not in opts.types:
        out.append(("type", f"type {row['type'] or 'unset'} (not --type {', '.join(opts.types)})", "without --type"))
    if not out or (opts.tags and not _tagged(ctx, path)):  # nothing else removed it: the tag filter did
        out.append(("tag", f"no tag of --tag {', '.join(opts.tags)}", "without --tag"))
    return out


def _flags(why: list[tuple[str, str, str]]) -> str:
    """The flags of every ``(filter, reason, flags)``, each once, in order: together they show the note."""
    return " ".join(dict.fromkeys(f for _, _, flags in why for f in _FLAG.findall(flags)))


def _lifecycle(ctx: Context, row: dict[str, Any], reason: str) -> tuple[str, str, str]:
    """``(filter, reason, flag)`` of one lifecycle reason of :func:`vaultsync.search.lifecycle.exclusions`."""
    if reason.startswith("unreadable"):  # a field the index could not read (ADR-0040)
        kind = "expired" if reason == "unreadable expires" else "confidence" if reason == "unreadable confidence" \
            else "superseded"
        return kind, f"{reason} (its value could not be read: `vaultsync check` says why)", \
            _unreadable_flags(ctx, row["path"])
    if reason.startswith("expired"):
        return "expired", reason, "--include-expired"
    if reason.startswith("confidence"):
        return "confidence", reason, f"--min-confidence {plain(row['confidence'] or 0)}"
    return "superseded", _superseded_reason(ctx, row["path"]), "--include-superseded"


def _tagged(ctx: Context, path: str) -> bool:
    """Whether the note holds one of the ``--tag`` values (as :func:`vaultsync.search.rows.allowed_paths` asks)."""
    return ctx.index.db.execute(f"SELECT 1 FROM notes WHERE path = ? AND {TAGGED}",
                                (path, tags_wanted(ctx.opts.tags))).fetchone() is not None


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
    """``superseded by X``; when X is hidden too, every reason and the flags that show it; ``superseded in a
    cycle with X`` when the chain goes round; plain ``superseded`` when no successor resolves."""
    successor = ctx.excluded.replacement.get(path)
    if successor:
        return f"superseded by {successor}"
    latest = ctx.excluded.latest.get(path)
    if latest is None:
        return "superseded"
    why = ctx.excluded.reasons.get(latest)
    if why is None or why == "superseded":
        return f"superseded in a cycle with {latest}"
    found = ctx.index.db.execute("SELECT confidence FROM notes WHERE path = ?", (latest,)).fetchone()
    row = {"path": latest, "confidence": found[0] if found else None}
    parts = [_lifecycle(ctx, row, r) for r in [why, *ctx.excluded.also.get(latest, [])]]  # every reason it is hidden
    return f"superseded by {latest}, itself hidden ({'; '.join(r for _, r, _ in parts)}; {_flags(parts)})"
