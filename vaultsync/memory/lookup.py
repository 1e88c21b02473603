"""Find one note by memory_id, path or WikiLink."""

from __future__ import annotations

import difflib

from vaultsync.diagnostics import shown
from vaultsync.memory.errors import MemoryWriteError
from vaultsync.vault.resolve import id_key
from vaultsync.vault.vault import Vault


def find_note(vault: Vault, ref: str) -> str:
    """The path of the note ``ref`` names: a memory_id (``ADR-0007``), a repo-relative path,
    a WikiLink (``[[ADR-0007-durable-webhook-queue]]``) or a bare link target.

    Raises:
        MemoryWriteError: no note, or several (the candidates are listed).
    """
    ref = ref.strip()
    if not ref:
        raise MemoryWriteError("empty note reference")
    if ref in vault.notes:
        return ref
    res = vault.resolve_ref(ref, "")
    if res.status == "ok" and res.path in vault.notes:
        return res.path
    if res.status == "ambiguous":
        raise MemoryWriteError(f"{shown(ref)} is ambiguous: {', '.join(res.candidates)}")
    folded = [mid for mid in vault.by_memory_id if id_key(mid) == id_key(ref)]  # as search compares ids
    if len(folded) == 1 and len(vault.by_memory_id[folded[0]]) == 1:  # `adr-0002`, `ＡＤＲ‐0002`
        return vault.by_memory_id[folded[0]][0]
    ids = {mid.casefold(): mid for mid in vault.by_memory_id}
    close = [ids[m] for m in difflib.get_close_matches(ref.casefold(), list(ids), n=3, cutoff=0.75)]
    hint = f" — did you mean {', '.join(close)}?" if close else _titled(vault, ref)
    raise MemoryWriteError(f"no note {shown(ref)} in the vault (give a memory_id, a path or a [[WikiLink]]){hint}")


def _titled(vault: Vault, ref: str, most: int = 3) -> str:
    """`` — did you mean …?`` naming the notes (at most ``most``) whose title holds ``ref`` (3+ characters,
    case-blind), by memory_id where they have one, with the title; else ``""``. A title is no reference: two
    notes may share one, and a write must never pick one of them."""
    words = ref.casefold()
    if len(words) < 3:
        return ""
    found = [(path, title) for path, note in sorted(vault.notes.items())
             if isinstance(title := (note.frontmatter or {}).get("title"), str) and words in title.casefold()]
    named = [f"{vault.display_name(path)} ({shown(title)})" for path, title in found[:most]]
    more = f" (and {len(found) - most} more)" if len(found) > most else ""
    return f" — did you mean {', '.join(named)}{more}? ({shown(ref)} is in their title)" if named else ""


def ref_to(vault: Vault, path: str) -> str:
    """How a note refers to ``path`` in supersession fields: ``"[[MEMORY_ID]]"`` when that resolves, else the file link."""
    name = vault.display_name(path)
    link = f"[[{name}]]"
    if vault.resolve_ref(link, "").path == path:
        return link
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    return f"[[{stem}]]"
