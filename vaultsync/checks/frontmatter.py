"""Per-note frontmatter checks: presence, shape, JSON Schema, controlled vocabulary."""

from __future__ import annotations

import difflib
import math
import unicodedata
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vaultsync.checks.fidelity import check_fidelity
from vaultsync.checks.schema import field_name, load_validator, validate_frontmatter
from vaultsync.diagnostics import Diagnostic, closest, shown
from vaultsync.vault.config import Config, TypeSpec
from vaultsync.vault.fields import normalised_frontmatter
from vaultsync.vault.note import Note

if TYPE_CHECKING:
    from vaultsync.vault.vault import Vault


def check_frontmatter(config: Config, root: Path, note: Note) -> list[Diagnostic]:
    """Shape, schema and vocabulary of one note's frontmatter.

    Notes outside any type folder only need well-formed YAML that is a mapping (a list or a
    string is FM011 there too, as Obsidian shows it as invalid properties); notes in a type folder must match the type's schema. A note whose
    ``type:`` names another configured type is judged by whichever of the two schemas it
    fits better, and SC004 names both ways out: move it, or change ``type:``.
    """
    spec = config.type_for(note.path)
    if note.fm_state == "not-mapping" and note.readable:
        return [_not_mapping(note)]
    if spec is None or not note.readable or note.fm_state in ("invalid", "misplaced"):
        return check_fidelity(note, None) if note.fm_state == "mapping" else []
    try:
        validator = _validator(config, root, spec)
    except (FileNotFoundError, ValueError) as exc:
        return [_schema_problem(config, spec, exc)]
    required = list(validator.schema.get("required", [])) or ["memory_id", "type", "title", "status", "created"]
    if note.fm_state == "none":
        if config.checks.get("require_frontmatter", True) is False:
            return []
        return [Diagnostic(note.path, 1, 1, "FM012",
                           f"missing frontmatter: {_article(spec.name)} {spec.name} note needs '---' on line 1 with {', '.join(required)}")]
    if note.fm_state == "empty":
        return [Diagnostic(note.path, 1, 1, "FM010", f"frontmatter is empty (required: {', '.join(_all_required(validator))})")]
    data = normalised_frontmatter(note.frontmatter, keys=False)  # the schema judges the keys as written
    found = _schema_findings(note, data, validator)
    if "type" not in data:  # the folder says which: name it
        found = [replace(d, message=f"{d.message}: {spec.folder}/ holds {spec.name} notes — add type: {spec.name}")
                 if d.code == "SC002" and d.message == "missing required field 'type'" else d for d in found]
    declared = data.get("type")
    other = next((t for t in config.types if t.name == declared and t is not spec), None)
    if other is not None:  # a rule saved among the ADRs, or an ADR whose type: was mistyped
        found = [d for d in found if not d.message.startswith("type:")]
        try:
            theirs = [d for d in _schema_findings(note, data, _validator(config, root, other))
                      if not d.message.startswith("type:")]
        except (FileNotFoundError, ValueError):
            theirs = None
        moved = theirs is not None and len(theirs) < len(found)
        # the way that fits the note as it is comes first; the other asks for that type's fields too
        move, retype = f"move it to {other.folder}/", f"set type: {spec.name}"
        ways = (f"{move}, or {retype} and give it the {spec.name} schema's fields" if moved
                else f"{retype}, or {move} and give it the {other.name} schema's fields")
        line, col = note.position(("type",))
        found = [*(theirs if moved else found), Diagnostic(
            note.path, line, col, "SC004", f"type: '{other.name}' notes live in {other.folder}/, this one is in "
                                           f"{spec.folder}/ (type '{spec.name}'): {ways}")]
    elif isinstance(declared, str) and declared != spec.name and not any(d.message.startswith("type:") for d in found):
        line, col = note.position(("type",))
        found.append(Diagnostic(note.path, line, col, "SC004",
                                f"type: '{declared}' does not match the folder's type '{spec.name}' ({spec.folder}/)"))
    rejected = {(d.line, d.col) for d in found if d.code == "SC001"}
    found += [d for d in check_vocabulary(config, note) if (d.line, d.col) not in rejected]  # the schema's said it
    return sorted(found, key=lambda d: (d.line, d.col))


def declared_keys(config: Config, root: Path, note: Note) -> frozenset[str]:
    """The top-level keys the schema of ``note``'s type folder names in ``properties``; empty outside a
    type folder or where the schema cannot load (its SC error says so)."""
    spec = config.type_for(note.path)
    try:
        properties = _validator(config, root, spec).schema.get("properties") if spec is not None else None
    except (FileNotFoundError, ValueError):
        return frozenset()
    return frozenset(properties) if isinstance(properties, dict) else frozenset()


def schema_allows_status(config: Config, root: Path, path: str, value: str) -> bool:
    """Whether the schema of the note at ``path`` lets ``status`` be ``value`` (a type whose statuses are
    ``open``/``closed`` has no ``superseded``: SS004 and ``--fix`` do not ask for it). True where the
    schema names no status values or cannot load (its own error says so)."""
    spec = config.type_for(path)
    try:
        properties = _validator(config, root, spec).schema.get("properties") if spec is not None else None
    except (FileNotFoundError, ValueError):
        return True
    status = properties.get("status") if isinstance(properties, dict) else None
    enum = status.get("enum") if isinstance(status, dict) else None
    return not isinstance(enum, list) or value in enum


def _validator(config: Config, root: Path, spec: TypeSpec) -> Any:
    """The JSON Schema validator of a type. Raises FileNotFoundError / ValueError: its schema cannot load."""
    if spec.schema in config.schema_problems:
        raise FileNotFoundError(f"schema {spec.schema!r} is {config.schema_problems[spec.schema]}")
    return load_validator(spec.schema, str(root), config.schema_texts.get(spec.schema), on_disk=not config.from_snapshot)


def _schema_problem(config: Config, spec: TypeSpec, exc: Exception) -> Diagnostic:
    line, col = config.positions.get(("types", spec.name, "schema"), config.positions.get(("types", spec.name), (-1, -1)))
    return Diagnostic(".vaultsync.yaml", line + 1, col + 1, "CF003", f"type '{spec.name}': {exc}")


def _schema_findings(note: Note, data: dict[str, Any], validator: Any) -> list[Diagnostic]:
    """The schema's findings, non-finite numbers and where YAML misread the text, one message per value."""
    found = validate_frontmatter(note, data, validator)
    rejected = {(d.line, d.col) for d in found if d.code == "SC001"}  # ".inf" in a string field: said once
    found += [d for d in _non_finite(note, data) if (d.line, d.col) not in rejected]
    return _merge_fidelity(note, found, check_fidelity(note, validator.schema))


def _merge_fidelity(note: Note, schema_found: list[Diagnostic], fidelity: list[Diagnostic]) -> list[Diagnostic]:
    """One message per value: where YAML misread the text (a cut comment, an empty block, an anchor...),
    that explanation replaces the schema's complaint about what is left of the value; an unquoted
    WikiLink keeps the schema's own message (field case FM-13)."""
    if not fidelity:
        return schema_found
    by_position = {(d.line, d.col): d for d in fidelity}
    drop: set[tuple[int, int]] = set()
    merged: set[tuple[int, int]] = set()  # a `<<` key: "merge keys are YAML 1.1" says more than "not allowed"
    for f in note.scalar_findings:
        at = note.position(f.path)
        if f.kind not in ("wikilink", "number", "portable") and (f.line + 2, f.col + 1) in by_position:
            drop.add(at)
        if f.kind == "merge":
            merged.add((f.line + 2, f.col + 1))
    kept = [d for d in schema_found if not (d.code == "SC001" and (d.line, d.col) in drop)
            and not (d.code == "SC003" and (d.line, d.col) in merged and d.message.startswith(("<<:", "\"<<\":")))]
    located = {(d.line, d.col) for d in kept}
    return kept + [d for d in fidelity if (d.line, d.col) not in located]


def _non_finite(note: Note, data: dict[str, Any]) -> list[Diagnostic]:
    """``.nan`` / ``.inf`` pass JSON Schema's number checks (every comparison with NaN is false)."""
    out: list[Diagnostic] = []
    stack: list[tuple[tuple[Any, ...], Any]] = [((k,), v) for k, v in data.items()]
    while stack:
        path, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            line, col = note.position(path)
            out.append(Diagnostic(note.path, line, col, "SC001", f"{field_name(path)}: must be a finite number, "
                                                                  f"got {value}"))
        elif isinstance(value, dict):
            stack.extend((path + (k,), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((path + (i,), v) for i, v in enumerate(value))
    return out


def _all_required(validator: Any) -> list[str]:
    required = list(validator.schema.get("required", []))
    ref = validator.schema.get("$ref")
    if ref:
        try:
            base = validator.registry.resolver(base_uri=validator.schema.get("$id", "")).lookup(ref).contents
            required = list(base.get("required", [])) + [r for r in required if r not in base.get("required", [])]
        except Exception:  # noqa: BLE001 - the list is a hint only
            pass
    return required


def _not_mapping(note: Note) -> Diagnostic:
    """FM011 for frontmatter that is a list, a string or a number, with the colon hint for ``key:value``."""
    first = note.yaml_text.strip().split("\n")[0]
    key, colon, rest = first.partition(":")
    hint = f" — put a space after the colon: {key}: {rest}" if colon and rest[:1] not in ("", " ", "\t") else ""
    return Diagnostic(note.path, 1, 1, "FM011", f"frontmatter must be a mapping, got {note.fm_type}{hint}")


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _listed(terms: list[object], most: int = 10) -> str:
    """The first ``most`` terms of a vocabulary, and how many more: an agent retries with one of them."""
    shown_terms = ", ".join(shown(str(t), 40)[1:-1] for t in terms[:most]) or "none"
    return shown_terms + (f" and {len(terms) - most} more" if len(terms) > most else "")


def canonical_term(term: object) -> str:
    """A vocabulary term as compared: canonically equivalent Unicode (NFC) is one term."""
    return unicodedata.normalize("NFC", str(term))


def check_vocabulary(config: Config, note: Note) -> list[Diagnostic]:
    """Every term of a vocabulary-controlled field (``tags``, ``projects``, a single-valued ``owner``...) must
    be known, compared as canonically equivalent Unicode (NFC)."""
    out: list[Diagnostic] = []
    for key, allowed in config.vocabulary.items():
        values = note.frontmatter.get(key)
        if isinstance(values, str):  # one term written bare (``owner: bob``) is checked as well
            items: list[tuple[tuple[str, int] | tuple[str], str, object]] = [((key,), key, values)]
        elif isinstance(values, list):
            items = [((key, i), f"{key}[{i}]", term) for i, term in enumerate(values)]
        else:
            continue
        allowed_set = {canonical_term(a) for a in allowed}  # é written as e + U+0301 is é
        seen: dict[str, tuple[str, str]] = {}  # NFC term → (where first, as written there)
        for where, name, term in items:
            if isinstance(term, str):
                canonical = canonical_term(term)
                before = seen.setdefault(canonical, (name, term))
                if before[1] != term:  # the same term as written twice is the schema's uniqueItems
                    line, col = note.position(where)
                    out.append(Diagnostic(note.path, line, col, "VC002", f"{name}: {shown(term)} repeats {before[0]} "
                                                                         "in another Unicode spelling — remove one"))
            if isinstance(term, str) and canonical_term(term) not in allowed_set:
                close = closest(term, map(str, allowed))
                known = f"did you mean '{close}'? " if close else f"known: {_listed(allowed)}; "
                elsewhere = [k for k, terms in config.vocabulary.items()  # `design-system` under tags, not projects
                             if k != key and canonical_term(term) in {canonical_term(t) for t in terms}]
                move = f"{shown(term)} is a term of {' and '.join(elsewhere)}: move it there; " if elsewhere else ""
                hint = f" ({move}{known}or add it to vocabulary.{key} in .vaultsync.yaml)"
                line, col = note.position(where)
                out.append(Diagnostic(note.path, line, col, "VC001", f"{name}: unknown term {shown(term)}{hint}"))
    return out


def check_vocabulary_fields(vault: Vault) -> list[Diagnostic]:
    """CF002 at each ``vocabulary:`` field that no note sets while notes set a field of a close spelling
    (``tag`` for ``tags``, difflib ratio ≥ 0.8): that field's terms go unchecked, and nothing else says so."""
    unused = set(vault.config.vocabulary)
    for note in vault.notes.values():  # most vaults set every vocabulary field in their first notes: done
        unused -= note.frontmatter.keys() if note.fm_state == "mapping" else set()
        if not unused:
            return []
    used = Counter(key for note in vault.notes.values() if note.fm_state == "mapping" for key in note.frontmatter)
    out = []
    for key in sorted(unused, key=list(vault.config.vocabulary).index):
        others = {k.casefold(): k for k in used if isinstance(k, str) and k not in vault.config.vocabulary}
        if close := [others[c] for c in difflib.get_close_matches(str(key).casefold(), list(others), 1, 0.8)]:
            line, col = vault.config.positions.get(("vocabulary", key), (0, 0))
            out.append(Diagnostic(".vaultsync.yaml", line + 1, col + 1, "CF002",
                                  f"vocabulary.{key}: no note has a '{key}' field, but {used[close[0]]} note(s) have "
                                  f"'{close[0]}' (did you mean '{close[0]}'?): its terms are not checked"))
    return out
