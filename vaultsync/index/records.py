"""Turn a parsed note into what the index stores: lifecycle columns, chunks, graph edges, supersession refs."""

from __future__ import annotations

import json
import math
import posixpath
from typing import Any

from vaultsync.diagnostics import Diagnostic
from vaultsync.index.chunking import chunk_note, title_chunks
from vaultsync.index.sqlite_store import LinkRow, NoteRecord, RefRow
from vaultsync.vault.fields import normalised_frontmatter, note_aliases, parse_vault_date, parse_vault_instant
from vaultsync.vault.lifecycle_fields import keys_in_unloadable, read_lifecycle
from vaultsync.vault.note import Note
from vaultsync.vault.resolve import LinkIndex
from vaultsync.vault.wikilinks import parse_inner

_GENERIC_STEMS = {"readme", "index", "_index", "home"}


def note_title(note: Note) -> str:
    """Frontmatter ``title``, else the file name without ``.md`` (Obsidian's title), else — for
    generic names such as ``README`` — the first H1 outside code."""
    title = note.frontmatter.get("title") if note.frontmatter else None
    if isinstance(title, str) and title.strip():
        return title.strip()
    stem = posixpath.splitext(posixpath.basename(note.path))[0]
    if stem.lower() in _GENERIC_STEMS:
        h1 = next((h.text for h in note.headings if h.level == 1 and h.text), None)
        if h1:
            return h1
    return stem


_SQLITE_INT = 2**63 - 1


def _number(value: Any, kind: type) -> Any:
    """A finite number that fits a SQLite column, else None (the checker reports the bad value)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    if abs(value) > _SQLITE_INT:
        return None
    return kind(value)


def jsonable(value: Any) -> Any:
    """``value`` with non-finite floats turned into strings, so it is valid JSON (RFC 8259)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _SQLITE_INT:
        return str(value)
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    return value


def _date(value: Any) -> str | None:
    parsed = parse_vault_date(value)
    return parsed.isoformat() if parsed else None


def lifecycle(note: Note, index: LinkIndex) -> dict[str, Any]:
    """The lifecycle columns of ``notes``; ``expires``: a date as ``YYYY-MM-DD``, a moment (a date-time
    with an offset) as written, which search dates where its today is counted (ADR-0111).

    ``unreadable`` is JSON ``{field: value as JSON}`` for every lifecycle field
    that is present but cannot be read (search hides the note, failing closed),
    plus ``frontmatter`` (the parse error) when the YAML did not load; else None.
    """
    fm = note.frontmatter if note.fm_state == "mapping" else {}
    read = read_lifecycle(fm)
    moment = normalised_frontmatter(fm).get("expires") if read.expires else None
    unreadable = {u.field: json.dumps(jsonable(u.value), ensure_ascii=False) for u in read.unreadable}
    if note.fm_state in ("invalid", "not-mapping"):  # `---\n- a\n---`: a list, not fields (FM011)
        problem = next((d.render() for d in note.diagnostics), None) if note.fm_state == "invalid" else \
            Diagnostic(note.path, 1, 1, "FM011", f"frontmatter must be a mapping, got {note.fm_type}").render()
        unreadable["frontmatter"] = problem or "frontmatter did not load"
        unreadable.update({key: "(frontmatter not loaded)" for key in keys_in_unloadable(note.yaml_text)})
    superseded_by = None
    if read.superseded_by:
        target, _ = _ref_target(read.superseded_by[0])
        superseded_by = index.resolve(target, note.path).path or target
    text = lambda key: fm.get(key) if isinstance(fm.get(key), str) else None  # noqa: E731
    return {
        "memory_id": text("memory_id"), "type": text("type"), "status": read.status,
        "created": _date(fm.get("created")), "last_validated": _date(fm.get("last_validated")),
        "expires": moment if parse_vault_instant(moment) else read.expires.isoformat() if read.expires else None,
        "confidence": read.confidence,  # a finite float: any fits a REAL column
        "importance": _number(fm.get("importance"), int), "superseded_by": superseded_by,
        "unreadable": json.dumps(unreadable, ensure_ascii=False, sort_keys=True) if unreadable else None,
    }


def _ref_target(ref: str) -> tuple[str, bool]:
    """(link target, written as a WikiLink?) of a supersession reference."""
    ref = ref.strip().lstrip("!")
    if ref.startswith("[[") and ref.endswith("]]"):
        return parse_inner(ref[2:-2])[0], True
    return ref, False


def ref_rows(note: Note, index: LinkIndex) -> list[RefRow]:
    """Supersession references of ``note`` (``supersedes`` and ``superseded_by``), resolved by name."""
    if note.fm_state != "mapping":
        return []
    read = read_lifecycle(note.frontmatter)
    rows: list[RefRow] = []
    for field_name, refs in (("supersedes", read.supersedes), ("superseded_by", read.superseded_by)):
        for ref in refs:
            target, wikilink = _ref_target(ref)
            res = index.resolve(target, note.path)
            rows.append(RefRow(note.path, field_name, target, wikilink, res.path if res.status == "ok" else None))
    return rows


def link_rows(note: Note, index: LinkIndex) -> list[LinkRow]:
    """Graph edges of ``note``: body links, embeds, and frontmatter links (kind ``frontmatter``)."""
    rows: list[LinkRow] = []
    for link in note.links:
        if link.is_empty:
            continue
        kind = "frontmatter" if link.field else ("embed" if link.embed else "link")
        res = index.resolve(link.target, note.path)
        rows.append(LinkRow(note.path, link.target or "", link.subpath, kind,
                            res.path if res.status == "ok" else None, link.line))
    return rows


def note_record(note: Note, blob: str, index: LinkIndex, warnings: list[str], target_tokens: int) -> NoteRecord:
    """Everything the SQLite store keeps about ``note`` (chunks included)."""
    title = note_title(note)
    aliases = note_aliases(note.frontmatter)
    return NoteRecord(
        path=note.path, blob=blob, title=title, frontmatter=jsonable(note.frontmatter or {}),
        lifecycle=lifecycle(note, index), aliases=aliases, name_chunks=title_chunks(note.path, title, aliases),
        warnings=warnings, chunks=chunk_note(note.path, title, note.body, note.body_line, target_tokens),
        body=note.body,
        links=link_rows(note, index), refs=ref_rows(note, index),
    )
