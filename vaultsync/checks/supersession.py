"""Supersession across the vault: targets exist (SS001), both notes name each other (SS002), no cycle
(SS003), a superseded note says so in ``status`` (SS004) and has one successor (SS005); each with the
advice ``check --fix`` can follow (:mod:`vaultsync.checks.fix`)."""

from __future__ import annotations

from vaultsync.checks.fix import back_reference_advice, status_advice
from vaultsync.checks.frontmatter import schema_allows_status
from vaultsync.checks.lifecycle import (
    Supersession,
    cycle_edges,
    extra_successors,
    in_force,
    in_force_edges,
    refs_of,
    status_superseded,
    supersession_edges,
    unreadable_field,
    unresolved_fields,
)
from vaultsync.diagnostics import Diagnostic
from vaultsync.vault.fields import key_variants, normalised_frontmatter, with_lifecycle_keys
from vaultsync.vault.note import Note
from vaultsync.vault.vault import Vault


def _named_by(edge: Supersession | None) -> str:
    """Which field names a successor: the old note's ``superseded_by``, the successor's ``supersedes``, or both."""
    if edge is None or (edge.declared_by_older and edge.declared_by_newer):
        return ""
    return ", named by this note's superseded_by" if edge.declared_by_older else ", whose supersedes names this note"


def check_supersession(vault: Vault) -> list[Diagnostic]:
    """Targets exist, both directions agree, no cycles, superseded notes say so in ``status``."""
    edges, out = supersession_edges(vault)
    extra = extra_successors(vault, edges)
    broken = unresolved_fields(out)
    in_cycle = cycle_edges(edges)
    for old, successors in sorted(extra.items()):
        line, col = vault.notes[old].position(("superseded_by",), key=True)
        how = {e.newer: e for e in edges if e.older == old}
        names = ", ".join(f"{vault.display_name(p)} ({p}{_named_by(how.get(p))})" for p in successors)
        out.append(Diagnostic(old, line, col, "SS005", f"superseded_by: {len(successors)} notes supersede this "
                              f"note: {names} — a note has one successor: let one of them supersede the other"))
    for edge in edges:
        newer, older = vault.notes[edge.newer], vault.notes[edge.older]
        if edge.older in extra:
            continue
        # a field holding a reference that resolves nowhere (SS001: often a rename) is fixed by hand first
        if edge.declared_by_newer and not edge.declared_by_older and not unreadable_field(older, "superseded_by") \
                and (edge.older, "superseded_by") not in broken and in_force(newer):
            line, col = older.position(("superseded_by",), key=True)
            out.append(Diagnostic(
                edge.older, line, col, "SS002",
                f"superseded_by: missing back-reference to {vault.display_name(edge.newer)} "
                f"({edge.newer} supersedes this note) — "
                f"{back_reference_advice(vault, edge.newer, edge.older, 'superseded_by', edge in in_cycle)}",
            ))
        if edge.declared_by_older and not edge.declared_by_newer and not unreadable_field(newer, "supersedes") \
                and (edge.newer, "supersedes") not in broken:
            line, col = newer.position(("supersedes",), key=True)
            out.append(Diagnostic(
                edge.newer, line, col, "SS002",
                f"supersedes: missing back-reference to {vault.display_name(edge.older)} "
                f"({edge.older} says it is superseded by this note) — "
                f"{back_reference_advice(vault, edge.older, edge.newer, 'supersedes', edge in in_cycle)}",
            ))
    superseded = {e.older for e in in_force_edges(vault, edges)}
    advice = status_advice(vault)
    for path in sorted(superseded):
        note = vault.notes[path]
        status = normalised_frontmatter(note.frontmatter).get("status")
        if note.fm_state == "mapping" and not status_superseded(note.frontmatter) \
                and schema_allows_status(vault.config, vault.root, path, "superseded"):
            line, col = note.position(("status",))
            said = "missing" if status is None else f"'{status}'" if isinstance(status, str) else f"{status!r}"
            written = next((k for k, name in key_variants(note.frontmatter) if name == "status"), None)
            instead = f" (in place of {written}:, a key in another case)" if written else ""
            out.append(Diagnostic(path, line, col, "SS004", f"status: is {said} but the note is superseded — set "
                                  f"status: superseded{instead}{advice(path)}"))
    for path, note in vault.notes.items():
        if note.fm_state == "mapping" and path not in superseded:
            status = normalised_frontmatter(note.frontmatter).get("status")
            if isinstance(status, str) and status.strip().casefold() == "superseded" \
                    and "superseded_by" not in with_lifecycle_keys(note.frontmatter) and not _is_madr_status(note):
                line, col = note.position(("status",))
                out.append(Diagnostic(path, line, col, "SS004",
                                      "status: superseded, but no note supersedes it — add superseded_by"))
    out.extend(_status_disagreements(vault))
    out.extend(_cycles(vault, edges))
    return out


def _status_disagreements(vault: Vault) -> list[Diagnostic]:
    """SS004 where ``status: superseded by [[X]]`` names another note than ``superseded_by`` (the field
    wins when both are read, so the status line's note was silently dropped)."""
    out: list[Diagnostic] = []
    for path, note in vault.notes.items():
        fm = with_lifecycle_keys(note.frontmatter)
        if note.fm_state != "mapping" or "superseded_by" not in fm or not _is_madr_status(note):
            continue
        named = normalised_frontmatter({"status": fm["status"]})["superseded_by"]
        said = vault.resolve_ref(named, path)
        fields = {vault.resolve_ref(ref, path).path for ref in refs_of(fm["superseded_by"])}
        if said.status == "ok" and said.path not in fields:
            line, col = note.position(("status",))
            listed = ", ".join(refs_of(fm["superseded_by"]))
            out.append(Diagnostic(path, line, col, "SS004", f"status: says superseded by {named}, but "
                                  f"superseded_by names {listed} — make them agree (or drop the note from status)"))
    return out


def _is_madr_status(note: Note) -> bool:
    status = with_lifecycle_keys(note.frontmatter).get("status")
    return isinstance(status, str) and status.strip().lower().startswith("superseded by")


def _cycles(vault: Vault, edges: list[Supersession]) -> list[Diagnostic]:
    graph: dict[str, list[str]] = {}
    for e in edges:
        graph.setdefault(e.newer, []).append(e.older)
    out: list[Diagnostic] = []
    reported: set[frozenset[str]] = set()
    state: dict[str, int] = {}  # 1 = on stack, 2 = done
    for start in sorted(graph):
        if state.get(start):
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        trail: list[str] = []
        while stack:
            node, i = stack.pop()
            if i == 0:
                state[node] = 1
                trail.append(node)
            children = graph.get(node, [])
            if i < len(children):
                stack.append((node, i + 1))
                child = children[i]
                if state.get(child) == 1:
                    cycle = trail[trail.index(child):]
                    key = frozenset(cycle)
                    if key not in reported:
                        reported.add(key)
                        chain = " → ".join(vault.display_name(p) for p in cycle + [child])
                        first = min(cycle)
                        line, col = vault.notes[first].position(("supersedes",), key=True)
                        out.append(Diagnostic(first, line, col, "SS003", f"supersession cycle: {chain}"))
                elif not state.get(child):
                    stack.append((child, 0))
            else:
                state[node] = 2
                trail.pop()
    return out
