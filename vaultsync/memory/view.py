"""The read view of one note: frontmatter, body, outgoing links, backlinks and its supersession chain."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from vaultsync.checks.lifecycle import in_force_edges, supersession_edges
from vaultsync.checks.links import resolve_links
from vaultsync.diagnostics import terminal_safe, visible
from vaultsync.index.records import jsonable
from vaultsync.memory.errors import MemoryWriteError
from vaultsync.memory.lookup import find_note
from vaultsync.search.lifecycle import LifecyclePolicy, hiding_reasons
from vaultsync.search.options import SearchOptions
from vaultsync.vault.clock import today_in, zone_or_local
from vaultsync.vault.lifecycle_fields import read_lifecycle
from vaultsync.vault.vault import Vault
from vaultsync.vault.yamlquote import flow_item


def summary(vault: Vault, path: str) -> dict[str, Any]:
    """``{memory_id, path, title, type, status}`` of a note (None for what it lacks; YAML's ``.nan`` and
    ``.inf`` as strings, so that the view is valid JSON)."""
    fm = vault.notes[path].frontmatter if path in vault.notes else {}
    return jsonable({"memory_id": fm.get("memory_id"), "path": path, "title": fm.get("title"),
                     "type": fm.get("type"), "status": fm.get("status")})


def backlinks(vault: Vault) -> dict[str, list[tuple[str, int, str | None]]]:
    """Target path → [(source path, line, frontmatter field or None)] over every resolved link."""
    found: dict[str, list[tuple[str, int, str | None]]] = defaultdict(list)
    for outcome in resolve_links(vault):
        if outcome.path and outcome.path != outcome.source:
            found[outcome.path].append((outcome.source, outcome.link.line, outcome.link.field))
    return found


def chain(vault: Vault, path: str) -> tuple[list[str], list[str]]:
    """(predecessors, successors) of ``path``: every note it transitively supersedes (nearest
    first), and the notes that supersede it in turn up to the current one (a successor not in force,
    a draft or a proposal, supersedes nothing yet: :func:`vaultsync.checks.lifecycle.in_force`)."""
    edges, _ = supersession_edges(vault)
    older: dict[str, list[str]] = defaultdict(list)
    newer: dict[str, str] = {}
    for e in edges:
        older[e.newer].append(e.older)
    for e in in_force_edges(vault, edges):
        newer.setdefault(e.older, e.newer)
    preds: list[str] = []
    queue = list(older.get(path, []))
    while queue:
        p = queue.pop(0)
        if p not in preds and p != path:
            preds.append(p)
            queue.extend(older.get(p, []))
    succs: list[str] = []
    cur = newer.get(path)
    while cur is not None and cur not in succs and cur != path:
        succs.append(cur)
        cur = newer.get(cur)
    return preds, succs


def search_hides(vault: Vault, path: str, superseded: bool) -> list[dict[str, str]]:
    """Why search hides the note by default: ``[{reason, show_with}]``, the search's own reasons
    (:func:`vaultsync.search.lifecycle.hiding_reasons`), each with the flag that shows it. Judged as
    search judges it: today in the checks' time zone, the config's ``search:`` lifecycle options (the
    defaults where a committed value is invalid: ``check`` reports it, CF002)."""
    tz = zone_or_local(vault.config)
    try:
        opts = SearchOptions.from_config({k: v for k, v in vault.config.search.items() if k in _LIFECYCLE_OPTIONS})
    except (ValueError, TypeError):
        opts = SearchOptions()
    policy = LifecyclePolicy(opts.include_expired, opts.include_superseded, opts.min_confidence, today_in(tz), tz)
    life = read_lifecycle(vault.notes[path].frontmatter or {}, tz)
    superseded = superseded or bool(life.superseded_by) or life.status == "superseded"
    reasons = hiding_reasons(policy, today_in(tz).isoformat(), superseded, {u.field for u in life.unreadable},
                             life.expires.isoformat() if life.expires else None, life.confidence)
    return [{"reason": r, "show_with": _show_with(r)} for r in reasons]


_LIFECYCLE_OPTIONS = ("include_expired", "include_superseded", "min_confidence")


def _show_with(reason: str) -> str:
    """The search flag that shows a note hidden for ``reason`` (one of :func:`hiding_reasons`)."""
    if reason.startswith(("expired", "unreadable expires")):
        return "--include-expired"
    if reason.startswith("confidence"):
        return f"--min-confidence {reason.split()[1]}"
    return "--min-confidence 0" if reason == "unreadable confidence" else "--include-superseded"


def note_view(vault: Vault, ref: str) -> dict[str, Any]:
    """Everything an agent needs about the note ``ref`` (memory_id, path or WikiLink).

    Returns:
        ``{memory_id, path, title, type, status, frontmatter, body, links: [{link, line, field,
        path, memory_id, status}], backlinks: [{path, memory_id, line, field}], supersedes:
        [summary...], superseded_by: [summary...], current: summary, search_hides: [{reason, show_with}]}``,
        valid JSON (:func:`vaultsync.index.records.jsonable`: ``.nan`` and ``.inf`` as strings)
        — ``supersedes`` nearest first, ``superseded_by`` up to ``current``, the note that holds
        today; ``search_hides``: why search leaves the note out by default (:func:`search_hides`).
    Raises:
        MemoryWriteError: no such note, an ambiguous reference, or a note whose content cannot be read
            here (FM015: Git LFS content not pulled, an object a partial clone did not fetch).
    """
    path = find_note(vault, ref)
    note = vault.notes[path]
    if (unread := next((d for d in note.diagnostics if d.code == "FM015"), None)) is not None:
        raise MemoryWriteError(f"{visible(path)}: {unread.message}")  # not an empty note: its text is elsewhere
    links, back = [], []
    for outcome in resolve_links(vault):  # one pass: this note's links and the links into it
        if outcome.source != path:
            if outcome.path == path:
                back.append({"path": outcome.source, "memory_id": summary(vault, outcome.source)["memory_id"],
                             "line": outcome.link.line, "field": outcome.link.field})
            continue
        target = outcome.path if outcome.path in vault.notes else None
        links.append({"link": outcome.link.raw, "line": outcome.link.line, "field": outcome.link.field,
                      "resolution": outcome.status, "path": outcome.path,
                      "memory_id": summary(vault, target)["memory_id"] if target else None,
                      "status": summary(vault, target)["status"] if target else None})
    preds, succs = chain(vault, path)
    return {**summary(vault, path), "frontmatter": jsonable(note.frontmatter), "body": note.body, "links": links,
            "backlinks": back, "supersedes": [summary(vault, p) for p in preds],
            "superseded_by": [summary(vault, p) for p in succs],
            "current": summary(vault, succs[-1] if succs else path),
            "search_hides": search_hides(vault, path, bool(succs))}


_SHOWN = frozenset({"memory_id", "title", "type", "status", "supersedes", "superseded_by"})  # said on their own lines


def _flow(value: Any, inner: bool = False) -> str:
    """A frontmatter value on one line: ``[a, b]`` for a list, ``{k: v}`` for a mapping; an item that would
    not read back as itself there is quoted (``["[[ADR-0002]]"]``, not ``[[[ADR-0002]]]``)."""
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v, True) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_flow(v, True)}" for k, v in value.items()) + "}"
    if isinstance(value, str) and inner:
        return flow_item(value)
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)



def _unset(value: Any) -> Any:
    """A field's value for the text view: ``(unset)`` where the note has none (not Python's ``None``)."""
    return "(unset)" if value is None else value


def render_view(view: dict[str, Any], fmt: str = "text") -> str:
    """``text`` / ``markdown`` for people, ``json``: the dict itself; none holds a control character a
    terminal acts on (:func:`vaultsync.diagnostics.terminal_safe`)."""
    import json

    if fmt == "json":  # json.dumps leaves DEL and C1 raw: terminal_safe writes them as JSON's own \u escapes
        return terminal_safe(json.dumps(view, ensure_ascii=False, indent=2, default=str))
    name = lambda s: f"{s['memory_id'] or s['path']} ({_unset(s['status'])})"  # noqa: E731
    lines = [f"{view['memory_id'] or view['path']}  {view['title'] or ''}",
             f"path: {view['path']}   type: {_unset(view['type'])}   status: {_unset(view['status'])}"]
    fields = [visible(f"{key}: {_flow(value)}") for key, value in (view["frontmatter"] or {}).items()
              if key not in _SHOWN]  # one line each, whatever a committed value holds (a line break, an escape)
    if fields:  # severity, created, expires, confidence, tags...: what a reader weighs the note by
        lines.append("   ".join(fields))
    if view["supersedes"]:
        lines.append("supersedes: " + " ← ".join(name(s) for s in view["supersedes"]))
    if view["superseded_by"]:
        lines.append("superseded by: " + " → ".join(name(s) for s in view["superseded_by"]))
    if view["search_hides"]:
        hides = view["search_hides"]
        lines.append("search hides it: " + "; ".join(h["reason"] for h in hides)
                     + " (shown with " + " ".join(dict.fromkeys(h["show_with"] for h in hides)) + ")")
    out = dict.fromkeys(str(link["memory_id"] or link["path"] or link["link"]) for link in view["links"])
    if out:
        lines.append("links: " + ", ".join(out))
    if view["backlinks"]:
        names = dict.fromkeys(b["memory_id"] or b["path"] for b in view["backlinks"])
        lines.append("backlinks: " + ", ".join(names))
    sep = "\n---\n" if fmt == "text" else "\n\n"
    return terminal_safe("\n".join(lines) + sep + view["body"].strip("\n"))
