"""A new note of a type: complete frontmatter from the type's schema, a body with the
type's sections, and its file name under the type's folder."""

from __future__ import annotations

import difflib
import re
import unicodedata
from typing import Any

from vaultsync.checks.schema import load_validator
from vaultsync.diagnostics import shown
from vaultsync.memory.errors import MemoryWriteError
from vaultsync.vault.config import Config, TypeSpec

# frontmatter key order of written notes: the common fields first, as in the schemas
FIELD_ORDER = ("memory_id", "type", "title", "status", "created", "last_validated", "expires", "confidence",
               "importance", "tags", "projects", "supersedes", "superseded_by", "related", "aliases",
               "source_session", "owner")
ALLOCATED = ("memory_id", "type", "title")  # the title also names the file and the H1: one source
MAX_TITLE_CHARS = 300
SECTIONS = {
    "adr": ("Context", "Decision", "Consequences"),
    "incident": ("Summary", "Timeline", "Root cause", "Action items"),
    "rule": ("Rule", "Why"),
}


def title_length(title: str) -> int:
    """A title's characters as a reader counts them: stripped (it is stored so), in Unicode NFC (``é`` is one
    character, written as one code point or as ``e`` and a combining accent)."""
    return len(unicodedata.normalize("NFC", title.strip()))


def type_spec(config: Config, type_name: str) -> TypeSpec:
    """The configured type ``type_name``.

    Raises:
        MemoryWriteError: no such type in ``.vaultsync.yaml`` (the message lists the known ones).
    """
    for spec in config.types:
        if spec.name == type_name:
            return spec
    names = [s.name for s in config.types]
    folded = {n.casefold(): n for n in names}
    close = [folded[c] for c in difflib.get_close_matches(str(type_name).casefold(), list(folded), n=1, cutoff=0.6)]
    known = ", ".join(names) or "none — add `types:` to .vaultsync.yaml"
    hint = f" — did you mean '{close[0]}'?" if close else ""
    raise MemoryWriteError(f"unknown memory type {shown(type_name)} (configured types: {known}){hint}")


def type_schema(config: Config, root: str, spec: TypeSpec) -> dict[str, Any]:
    """The type's schema with its base inlined (``properties``, ``required``)."""
    try:
        return dict(load_validator(spec.schema, root, config.schema_texts.get(spec.schema),
                                   on_disk=not config.from_snapshot).schema)
    except (FileNotFoundError, ValueError) as exc:
        raise MemoryWriteError(f"type {spec.name}: {exc}") from None


def default_status(schema: dict[str, Any]) -> str:
    """The first status the schema allows (``proposed``, ``draft``, ``open``): a person promotes it."""
    enum = (schema.get("properties", {}).get("status") or {}).get("enum")
    return str(enum[0]) if enum else "active"


def build_frontmatter(schema: dict[str, Any], type_name: str, memory_id: str, title: str, today: str,
                      fields: dict[str, Any], inherited: dict[str, Any] | None = None) -> dict[str, Any]:
    """Frontmatter for a new note: the given ``fields`` plus what vaultsync fills.

    Fills memory_id, type, title, status (the schema's first), created and last_validated
    (``today``, ``YYYY-MM-DD``). A required field with an ``enum`` (an incident's ``severity``) is a
    judgement vaultsync never makes: it comes from ``fields``, else from ``inherited`` (the
    frontmatter of the note this one supersedes, of the same type). Keys are ordered as in
    :data:`FIELD_ORDER`, then the type's own fields.

    Raises:
        MemoryWriteError: ``fields`` sets memory_id, type or title (the title is its own argument),
            the title is empty, invisible, longer than :data:`MAX_TITLE_CHARS` or not one line, or a required ``enum``
            field is given nowhere (the message names its values).
    """
    for key in ALLOCATED:
        if key in fields:
            raise MemoryWriteError("title is its own argument, not a field (it also names the file)" if key == "title"
                                   else f"{key} is set by vaultsync, not by the caller")
    if not title.strip():
        raise MemoryWriteError("title: must not be empty")
    if not any(unicodedata.category(ch)[0] in "LNSP" for ch in title):  # only U+200B, a joiner, a mark…
        raise MemoryWriteError(f"title: holds no visible character ({shown(title)}) — give a title a reader can see")
    if title_length(title) > MAX_TITLE_CHARS:  # it heads the note and every hit: a body passed as the title?
        raise MemoryWriteError(f"title: must be at most {MAX_TITLE_CHARS} characters, but it has "
                               f"{title_length(title):,} — put the detail in the body")
    odd = next(((i, ch) for i, ch in enumerate(title) if unicodedata.category(ch) in ("Cc", "Zl", "Zp")), None)
    if odd is not None:  # it heads the note (`# title`): a line break would write headings, fields, a `---`
        what = "a line break" if odd[1] in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029" else "a control character"
        raise MemoryWriteError(f"title: must be one line of text, but it holds {what} (U+{ord(odd[1]):04X}) "
                               f"at character {odd[0] + 1}")
    data: dict[str, Any] = {"memory_id": memory_id, "type": type_name, "title": title.strip(),
                            "status": default_status(schema), "created": today, "last_validated": today}
    data.update(fields)
    props = schema.get("properties", {})
    for key in schema.get("required", []):
        enum = (props.get(key) or {}).get("enum")
        if key in data or not enum:
            continue
        if inherited and inherited.get(key) in enum:
            data[key] = inherited[key]
        else:
            raise MemoryWriteError(f"{key}: the {type_name} schema requires it, one of {', '.join(map(str, enum))}; "
                                   f"vaultsync does not guess it — give it: --set {key}={enum[0]} (MCP: fields)")
    ordered = {k: data[k] for k in FIELD_ORDER if k in data}
    ordered.update({k: v for k, v in data.items() if k not in ordered})
    return ordered


def scaffold_body(type_name: str, title: str, body: str | None) -> str:
    """``body`` under an ``# title`` heading (unless it starts with one); the type's empty sections if None."""
    if body is None:
        sections = "".join(f"\n## {name}\n\n" for name in SECTIONS.get(type_name, ()))
        return f"# {title}\n{sections}"
    text = body.strip("\n")
    if not text.startswith("# "):
        text = f"# {title}\n\n{text}"
    return text + "\n"


NAME_BYTES = 255  # what a file name may hold on ext4, APFS, NTFS (in UTF-16 units there: fewer)


def slug(title: str, limit: int = 60, max_bytes: int = 200) -> str:
    """``title`` as a lower-case file-name part, at most ``limit`` characters and ``max_bytes`` UTF-8 bytes
    (a file name holds 255 bytes: 60 letters of 4 bytes, `𐌰` or CJK Extension B, are 240): Latin letters
    folded to ASCII (``é`` → ``e``, ``ß`` → ``ss``), letters and digits of other scripts kept
    (``データベース``), anything else a ``-`` (``""`` when nothing is left); a title cut short ends at a word's
    end where it has one."""
    out = []
    for ch in unicodedata.normalize("NFKC", title).casefold().lower():  # casefold makes Cherokee upper case
        base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        out.append(base if base.isascii() else ch if ch.isalnum() else "-")
    whole = re.sub(r"[\W_]+", "-", unicodedata.normalize("NFC", "".join(out))).strip("-")
    text = whole[:limit]
    while text and len(text.encode("utf-8")) > max_bytes:  # max_bytes may be 0 or less: a long memory_id
        text = text[:-1]
    if len(text) < len(whole) and whole[len(text)] != "-" and text.rfind("-") > len(text) // 2:
        text = text[:text.rindex("-")]  # cut at a word's end, not inside it, unless most of the slug would go
    return text.rstrip("-")


def note_path(spec: TypeSpec, memory_id: str, title: str) -> str:
    """``<type folder>/<memory_id>-<slug>.md`` (repo-relative)."""
    part = slug(title, max_bytes=NAME_BYTES - len(f"{memory_id}-.md".encode("utf-8")))
    name = f"{memory_id}-{part}" if part else memory_id
    return f"{name}.md" if spec.folder == "." else f"{spec.folder}/{name}.md"
