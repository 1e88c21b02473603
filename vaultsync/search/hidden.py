"""What the filters hid: the matching notes that lifecycle filters and ``--type/--tag/--scope`` removed.

A filtered search is run a second time without any filter, through the same stages but the rerank
and the supersession step (on the query vectors the first pass computed), for at least
:data:`HIDDEN_MIN_NOTES` hits; the notes of the hits it delivers (the relevance floor and the cut applied) that
the filters removed, and whose best relevance reaches the floor on its own (a note under it answers nothing,
so it matched nothing), are the candidates, each with every reason and the flags that show it. A superseded note
names its successor, and a note a hit replaces is a candidate too (unless that pass ranked it under the floor).
What is reported is what the search itself answers when every flag of the report is followed at once
(:func:`followed`): lifting every filter together ranks notes among others that the flags do not bring back,
so a candidate that search does not show is left out, until the flags of what is left show all of it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from vaultsync.search.candidates import Candidates, Context
from vaultsync.search.lifecycle import Exclusions
from vaultsync.search.options import SearchOptions
from vaultsync.search.rows import TAGGED, tags_wanted
from vaultsync.search.stages.chunks import chunks
from vaultsync.search.stages.finish import finish
from vaultsync.search.stages.fuse import fuse
from vaultsync.search.stages.graph_hop import graph_hop
from vaultsync.search.stages.relevance import relevance
from vaultsync.search.stages.retrieve import retrieve
from vaultsync.vault.yamlquote import plain_number

UNFILTERED_STAGES = (retrieve, fuse, graph_hop, chunks, relevance, finish)
# hits of the unfiltered pass looked at, at least: with ``--top-k 1`` a superseded note took the one
# place and its successor, the best match, went unreported
HIDDEN_MIN_NOTES = 5
_FLAG = re.compile(r"without (?:--|search\.)\S+|--\S+(?: [0-9.]+)?")  # one flag of a reason's flags, with its value


def hidden_matches(ctx: Context, cands: Candidates, shown: set[str],
                   shown_with: Callable[[SearchOptions], set[str]]) -> dict[str, Any]:
    """``{"count", "by_reason", "notes": [{"path", "memory_id", "reason", "show_with", "relevance"}], "show_all"}``
    (empty dict when no filter is active; ``show_all``: the flags that show every listed note at once;
    ``relevance``: the note's best in the search with every filter lifted, None without a relevance model or
    for a superseded note its successor stands in for).

    ``shown``: the paths already among the hits; ``shown_with(opts)``: the paths the search delivers under
    other options (the query's own pipeline)."""
    if ctx.allowed is None:
        return {}
    # the search with every filter lifted: the candidates (at least HIDDEN_MIN_NOTES hits)
    top_k = max(ctx.opts.top_k, HIDDEN_MIN_NOTES)
    opts = replace(ctx.opts, types=(), tags=(), scope=None, top_k=top_k,
                   budget=max(ctx.opts.budget, 10 ** 6))  # the notes it would deliver, not the tokens
    free = replace(ctx, opts=opts, excluded=Exclusions({}, {}), allowed=None)
    pass2 = Candidates(query_vectors=dict(cands.query_vectors))
    for stage in UNFILTERED_STAGES:
        pass2 = stage(free, pass2)
    rows = {r["path"]: r for r in pass2.rows.values()}
    best: dict[str, float | None] = {}  # each note's best relevance (None: no relevance model)
    for h in pass2.hits:
        if h.path not in best or (h.relevance is not None and h.relevance > (best[h.path] or 0.0)):
            best[h.path] = h.relevance
    found = {path: rows[path] for path, r in best.items()  # a note under the floor answers nothing: no match
             if path not in shown and (path not in ctx.allowed or path in ctx.excluded)
             and (r is None or r >= ctx.opts.min_relevance)}
    # a hit that stands in for a superseded note says that note matched, however deep the pass ranked it
    for old in dict.fromkeys(h.replaces for h in cands.hits if h.replaces and h.replaces not in found):
        if (r := best.get(old)) is not None and r < ctx.opts.min_relevance:  # ranked, and under the floor
            continue
        row = ctx.index.db.execute("SELECT path, memory_id, type, confidence FROM notes WHERE path = ?",
                                   (old,)).fetchone()
        if row is not None and old in ctx.excluded:
            found[old] = dict(zip(("path", "memory_id", "type", "confidence"), row))
    why = {path: _why(ctx, row) for path, row in found.items()}
    while why:  # keep what following every flag at once shows, until the flags of what is kept show all of it
        seen = shown_with(followed(ctx.opts, (flag for reasons in why.values() for _, _, flag in reasons)))
        kept = {path: reasons for path, reasons in why.items() if path in seen}
        if len(kept) == len(why):
            break
        why = kept
    by_reason: dict[str, int] = {}
    for reasons in why.values():  # a note counts under each of its reasons: what each filter hid
        for reason in dict.fromkeys(r[0] for r in reasons):
            by_reason[reason] = by_reason.get(reason, 0) + 1
    notes = [{"path": path, "memory_id": found[path]["memory_id"], "reason": "; ".join(r for _, r, _ in reasons),
              "show_with": _flags(reasons), "relevance": best.get(path)} for path, reasons in why.items()]
    return {"count": len(notes), "by_reason": by_reason, "notes": notes,
            "show_all": _flags([r for reasons in why.values() for r in reasons], lowest=True)}


def followed(opts: SearchOptions, flags: Iterable[str]) -> SearchOptions:
    """The options of a search that follows every one of ``flags`` (``--include-superseded``,
    ``--include-expired``, ``--min-confidence X``, ``without --type/--tag/--scope`` or ``without search.types``
    and the like for a filter the config set; one string may hold several) at once, for at least
    :data:`HIDDEN_MIN_NOTES` hits."""
    found = set(_FLAG.findall(" ".join(flags)))
    floors = [float(flag.split()[1]) for flag in found if flag.startswith("--min-confidence ")]
    return replace(opts, include_superseded=opts.include_superseded or "--include-superseded" in found,
                   include_expired=opts.include_expired or "--include-expired" in found,
                   min_confidence=min([opts.min_confidence, *floors]),
                   types=() if found & {"without --type", "without search.types"} else opts.types,
                   tags=() if found & {"without --tag", "without search.tags"} else opts.tags,
                   scope=None if found & {"without --scope", "without search.scope"} else opts.scope,
                   top_k=max(opts.top_k, HIDDEN_MIN_NOTES))


def _why(ctx: Context, row: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Every ``(filter, reason, flag)`` that removed a note, the lifecycle ones first: the filter is
    ``superseded``, ``expired``, ``confidence``, ``scope``, ``type`` or ``tag``; all the flags together
    show the note. Lifecycle reasons are those of :func:`vaultsync.search.lifecycle.exclusions` (an
    unreadable field counts under its filter)."""
    path, opts = row["path"], ctx.opts
    first = ctx.excluded.reasons.get(path)
    out = [_lifecycle(ctx, row, r) for r in ([first, *ctx.excluded.also.get(path, [])] if first else [])]
    if opts.scope and not path.startswith(opts.scope):
        out.append(("scope", f"outside {_filter(opts, 'scope')} {opts.scope}", f"without {_filter(opts, 'scope')}"))
    if opts.types and row["type"] not in opts.types:
        out.append(("type", f"type {row['type'] or 'unset'} (not {_filter(opts, 'types')} {', '.join(opts.types)})",
                    f"without {_filter(opts, 'types')}"))
    if not out or (opts.tags and not _tagged(ctx, path)):  # nothing else removed it: the tag filter did
        out.append(("tag", f"no tag of {_filter(opts, 'tags')} {', '.join(opts.tags)}", f"without {_filter(opts, 'tags')}"))
    return out


def _filter(opts: SearchOptions, key: str) -> str:
    """How a filter was set: ``--type`` (a flag lifts it) or ``search.types`` (the committed config's
    ``search:`` section, which no flag lifts: over MCP, ``types: []`` does)."""
    return f"search.{key}" if key in opts.config_filters else {"types": "--type", "tags": "--tag"}.get(key, "--scope")


def _flags(why: list[tuple[str, str, str]], lowest: bool = False) -> str:
    """The flags of every ``(filter, reason, flags)``, each once, in order, those to drop last: together
    they show the note;
    ``lowest``: one ``--min-confidence``, the lowest (a flag given twice counts once, the last)."""
    flags = list(dict.fromkeys(f for _, _, flags in why for f in _FLAG.findall(flags)))
    floors = [f for f in flags if f.startswith("--min-confidence ")]
    if lowest and len(floors) > 1:
        keep = min(floors, key=lambda f: float(f.split()[1]))
        flags = [f for f in flags if f == keep or f not in floors]
    return " ".join(sorted(flags, key=lambda f: f.startswith("without ")))  # what to add, then what to drop


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
        return "confidence", reason, f"--min-confidence {plain_number(row['confidence'] or 0)}"
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
