"""Read one Markdown note: bytes → text → frontmatter + body, every problem located.

The file's bytes are never modified. A UTF-8 BOM is skipped and CRLF is read
as LF (field case FM-07), so a Windows-authored note validates and indexes
exactly like its LF twin. Frontmatter is recognised only when line 1 is
``---`` (FM-09); YAML is read by :mod:`vaultsync.vault.yamlload`.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import yaml

from vaultsync.diagnostics import Diagnostic
from vaultsync.vault import markdown
from vaultsync.vault.fields import key_variants
from vaultsync.vault.headings import Heading, block_ids, find_headings
from vaultsync.vault.mdlinks import iter_markdown_links
from vaultsync.vault.scalars import Finding
from vaultsync.vault.unclosed import closed_in_body, invisible, never_closed, thematic_break, visible
from vaultsync.vault.wikilinks import WikiLink, frontmatter_links, iter_links
from vaultsync.vault.yamlload import YamlProblem, load_yaml, yaml_positions

MAX_NOTE_BYTES = 20 * 1024 * 1024
_BOM = "\ufeff"
_YAML_LINE_BREAKS = re.compile("[\u2028\u2029\x85]")  # line breaks to YAML, not to editors
_BLOCK_ITEM = re.compile(r"-[ \t]+(?:[!&]\S*[ \t]+)*[|>]")  # a list item's "- |", "- !!str >-"
_KINDS = {list: "a list", str: "a string", int: "a number", float: "a number", bool: "true or false"}  # FM011


@dataclass
class Note:
    """A parsed note.

    Attributes:
        path: repository-relative POSIX path.
        text: decoded text (BOM removed, CRLF → LF); ``""`` when undecodable.
        frontmatter: the YAML mapping, ``{}`` when absent or invalid.
        fm_state: ``"none"`` (no frontmatter), ``"misplaced"`` (a ``---`` block
            below line 1, reported as FM003), ``"mapping"``, ``"empty"``,
            ``"not-mapping"`` (valid YAML, not a mapping) or ``"invalid"``.
        fm_type: YAML type name when ``fm_state == "not-mapping"``.
        body: Markdown after the frontmatter.
        body_line: 1-based file line of the body's first line.
        diagnostics: problems found while reading (encoding, YAML).
    """

    path: str
    text: str = ""
    frontmatter: dict[str, Any] = field(default_factory=dict)
    fm_state: str = "none"
    fm_type: str = ""
    body: str = ""
    body_line: int = 1
    diagnostics: list[Diagnostic] = field(default_factory=list)
    readable: bool = True
    yaml_text: str = field(default="", repr=False)
    scalar_findings: list[Finding] = field(default_factory=list)  # see vaultsync.vault.scalars

    @cached_property
    def _position_maps(
        self,
    ) -> tuple[dict[tuple[Any, ...], tuple[int, int]], dict[tuple[Any, ...], tuple[int, int]], dict[tuple[Any, ...], str]]:
        if self.fm_state != "mapping":
            return {}, {}, {}
        values, keys, raw = yaml_positions(self.yaml_text)
        return ({p: (ln + 2, col + 1) for p, (ln, col) in values.items()},
                {p: (ln + 2, col + 1) for p, (ln, col) in keys.items()}, raw)

    def position(self, path: tuple[Any, ...], key: bool = False) -> tuple[int, int]:
        """1-based (line, col) in the file of a frontmatter value (or its key), best effort.

        Falls back to the nearest enclosing value, then to line 1. Computed on
        first use (a second YAML compose), since only notes with problems need it.
        """
        values, keys, _ = self._position_maps
        table = keys if key else values
        if path and self._written_keys:  # a lifecycle field written `Expires:`: its place is that key's
            path = (self._written_keys.get(path[0], path[0]),) + path[1:]
        while path:
            if path in table:
                return table[path]
            if key and path in values:
                return values[path]
            path = path[:-1]
        return (1, 1)

    @cached_property
    def _written_keys(self) -> dict[str, str]:
        """Lifecycle field → the key written for it in another spelling (ADR-0104)."""
        return {name: key for key, name in key_variants(self.frontmatter)} if self.frontmatter else {}

    @cached_property
    def _yaml_lines(self) -> list[str]:
        """``yaml_text`` split into lines, once (:meth:`locate` runs once per frontmatter link)."""
        return self.yaml_text.split("\n")

    def locate(self, path: tuple[Any, ...], needle: str, nth: int = 0) -> tuple[int, int] | None:
        """1-based (line, col) in the file of the ``nth`` occurrence of ``needle`` in the source of the
        value at ``path`` (which may span lines, or hold quotes and escapes before it), or None."""
        line, col = self.position(path)
        key_line, key_col = self.position(path, key=True)
        lines = self._yaml_lines
        start = line - 2
        if path and isinstance(path[-1], int) and 0 <= start < len(lines):  # "  - |": the item's dash sets its level
            dash = lines[start].rfind("-", 0, col - 1)
            if dash >= 0 and not lines[start][dash + 1:col - 1].strip():
                key_col = dash + 1
            elif not lines[start][:col - 1].strip():  # a block scalar's text: its "- |" stands on a line above
                head = next((i for i in range(start - 1, -1, -1) if lines[i].strip()), start)
                items = list(_BLOCK_ITEM.finditer(lines[head]))
                key_col = items[-1].start() + 1 if items else key_col
        for i in range(start, len(lines)):
            text = lines[i]
            if i > start and text.strip() and len(text) - len(text.lstrip(" ")) <= key_col - 1 \
                    and not text.lstrip(" ").startswith("- "):
                break  # the next key at the value's level: the value ended
            at = text.find(needle, col - 1 if i == start else 0)
            while at >= 0:
                if nth == 0:
                    return i + 2, at + 1
                nth -= 1
                at = text.find(needle, at + 1)
        return None

    def raw(self, path: tuple[Any, ...]) -> str | None:
        """The source text of the one-line scalar at ``path`` as written (quotes included), or None."""
        return self._position_maps[2].get(path)

    @cached_property
    def masked_body(self) -> str:
        """The body with code replaced by spaces (see :func:`markdown.mask_code`)."""
        return markdown.mask_code(self.body)

    @cached_property
    def links(self) -> list[WikiLink]:
        """Every link of the note: frontmatter WikiLinks first, then the body's WikiLinks and Markdown
        links (:mod:`vaultsync.vault.mdlinks`) in order."""
        text = self.yaml_text  # a value holds "[[" only where its text does, or an escape writes it
        found = sorted(frontmatter_links(self.frontmatter, self), key=lambda k: (k.line, k.col)) \
            if "[[" in text or "\\" in text or not text else []
        masked = self.masked_body
        body = list(iter_links(masked, self.body_line, original=self.body))
        if "](" in masked:  # Markdown links too, as Obsidian writes them with WikiLinks off
            body = sorted(body + list(iter_markdown_links(masked, self.body_line, self.body)), key=lambda k: (k.line, k.col))
        return found + body

    @cached_property
    def headings(self) -> list[Heading]:
        """ATX headings of the body (lines relative to the body)."""
        return find_headings(self.body, self.masked_body)

    @cached_property
    def block_ids(self) -> set[str]:
        """Block ids (``^id``) defined in the body."""
        return block_ids(self.masked_body) if "^" in self.body else set()


_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32LE"), (b"\x00\x00\xfe\xff", "UTF-32BE"),
              (b"\xff\xfe", "UTF-16LE"), (b"\xfe\xff", "UTF-16BE"))


def _wide_encoding(data: bytes) -> str | None:
    """``UTF-16LE`` … ``UTF-32BE`` when ``data`` is text in one of them (Windows PowerShell's ``Out-File``
    wrote UTF-16LE with a BOM), else None: by its BOM, or without one when its length fits the code
    unit, it decodes, holds no control character but tab and line breaks and no unassigned code
    point, and at least half of it is ASCII (a note's markup is; a NUL in a UTF-8 or Latin-1 file
    reads as rare CJK characters)."""
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            return name
    head = data[:8192]
    for name, unit in (("UTF-32LE", 4), ("UTF-32BE", 4), ("UTF-16LE", 2), ("UTF-16BE", 2)):
        if len(data) == len(head) and len(data) % unit:
            continue
        try:  # the first 8 KB, a character cut at its end left out
            text = codecs.getincrementaldecoder(name.lower())().decode(head, final=False)
        except UnicodeDecodeError:
            continue
        if text and all(c in "\t\r\n" or unicodedata.category(c) not in ("Cc", "Cn") for c in text) \
                and 2 * sum(c < "\x80" for c in text) >= len(text):
            return name
    return None


def decode(path: str, data: bytes) -> tuple[str | None, Diagnostic | None]:
    """Decode note bytes to text (BOM dropped, CRLF → LF), or explain why not.

    Returns:
        (text, None) on success; (None, diagnostic) for binary, non-UTF-8 or huge input.
    """
    if len(data) > MAX_NOTE_BYTES:
        return None, Diagnostic(path, 1, 1, "FM014", f"file too large to be a note ({len(data):,} bytes, over "
                                                     f"{MAX_NOTE_BYTES:,}: 20 MiB)")
    nul = b"\0" in data[:8192]
    wide = _wide_encoding(data) if nul or data.startswith((b"\xff\xfe", b"\xfe\xff")) else None
    if wide:
        return None, Diagnostic(path, 1, 1, "FM001", f"{wide} text, not UTF-8 — re-save as UTF-8")
    if nul:
        return None, Diagnostic(path, 0, 0, "FM002", "binary content in a .md file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # valid up to the error; lines and columns as the decoded text would count them (characters,
        # lone CRs as line breaks, no BOM)
        before = line_feeds(data[:exc.start].decode("utf-8").removeprefix(_BOM))
        line, col = before.count("\n") + 1, len(before) - before.rfind("\n")
        byte = data[exc.start]
        return None, Diagnostic(
            path, line, col, "FM001",
            f"not valid UTF-8 (byte 0x{byte:02X} at offset {exc.start}) — re-save as UTF-8",
        )
    if text.startswith(_BOM):
        text = text[1:]
    if "\r" in text:
        text = line_feeds(text)
    return text, None


def line_feeds(text: str) -> str:
    """``text`` with every line end a LF, as notes are read: CRLF, and a lone CR (old Mac) too."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def parse_note(path: str, data: bytes) -> Note:
    """Parse a note from its bytes; never raises on bad content.

    Args:
        path: repository-relative POSIX path (used in diagnostics).
        data: the file's bytes (working tree or git blob).
    Returns:
        A :class:`Note`; problems are in ``note.diagnostics``.
    """
    text, problem = decode(path, data)
    if text is None:
        return Note(path=path, readable=False, diagnostics=[problem] if problem else [])
    return parse_text(path, text)


def parse_text(path: str, text: str) -> Note:
    """Parse already-decoded note text (LF line endings)."""
    note = Note(path=path, text=text, body=text)
    if not text.startswith("---"):
        _misplaced_frontmatter(note)
        return note
    opened = text.find("\n")
    if (text if opened < 0 else text[:opened]).rstrip() != "---":
        _misplaced_frontmatter(note)  # "---" and an invisible character: reported; "----", "--- x": text
        return note
    close = _closing_line(text, opened)
    if close is None:
        if thematic_break(text):  # `---`, a blank line, the text: a rule above it, as Obsidian reads it
            return note
        note.fm_state = "invalid"
        note.diagnostics.append(never_closed(path, text))
        return note
    start, end = close
    note.body = text[end + 1:] if end < len(text) else ""
    note.body_line = text.count("\n", 0, start) + 2
    # up to and with the line break before the closing "---": a last "|" value keeps its own (clip chomping)
    yaml_text = text[opened + 1:start] if start - 1 > opened else ""
    note.yaml_text = yaml_text
    found = _YAML_LINE_BREAKS.search(yaml_text)
    if found is not None:
        odd = found.start()
        line = yaml_text.count("\n", 0, odd)
        col = odd - (yaml_text.rfind("\n", 0, odd) + 1)
        note.fm_state = "invalid"
        note.diagnostics.append(Diagnostic(
            path, line + 2, col + 1, "FM016",
            f"character U+{ord(yaml_text[odd]):04X} in frontmatter: YAML reads it as a line break — remove it"))
        return note
    try:
        doc = load_yaml(yaml_text, with_positions=False)
    except YamlProblem as exc:
        note.fm_state = "invalid"
        in_body = closed_in_body(path, yaml_text, note.body_line - 1, exc.line + 2)
        note.diagnostics += [in_body] if in_body else [
            Diagnostic(path, p.line + 2, p.col + 1, p.code, p.render(1)) for p in (exc, *exc.also)]
        return note
    except yaml.YAMLError as exc:  # safety net: any other YAML failure is reported, never a traceback
        offset = getattr(exc, "position", None) or 0
        line = yaml_text.count("\n", 0, offset)
        col = offset - (yaml_text.rfind("\n", 0, offset) + 1)
        note.fm_state = "invalid"
        note.diagnostics.append(closed_in_body(path, yaml_text, note.body_line - 1, line + 2)
                                or Diagnostic(path, line + 2, col + 1, "FM005", f"YAML error: {exc}".split("\n")[0]))
        return note
    except Exception as exc:  # noqa: BLE001 - a loader fault on one note must stay that note's problem
        note.fm_state = "invalid"
        note.diagnostics.append(Diagnostic(path, 2, 1, "FM005", f"YAML error: {type(exc).__name__}: {exc}"))
        return note
    if doc.data is None:
        note.fm_state = "empty"
    elif not isinstance(doc.data, dict):
        note.fm_state = "not-mapping"
        note.fm_type = _KINDS.get(type(doc.data), f"a {type(doc.data).__name__}")
    elif in_body := closed_in_body(path, yaml_text, note.body_line - 1):
        note.fm_state = "invalid"
        note.diagnostics.append(in_body)
    else:
        note.fm_state = "mapping"
        note.frontmatter = doc.data
    note.scalar_findings = doc.findings
    return note


def _closing_line(text: str, opened: int) -> tuple[int, int] | None:
    """(start, end) offsets of the first line after the one ending at ``opened`` that reads ``---``
    (trailing whitespace allowed), or None."""
    at = opened
    while at >= 0:
        at = text.find("\n---", at)
        if at < 0:
            return None
        end = text.find("\n", at + 1)
        end = len(text) if end < 0 else end
        if text[at + 1:end].rstrip() == "---":
            return at + 1, end
        at += 1
    return None


_FIELD_LINE = re.compile(r"^(memory_id|id|type|title|status|created|date|tags|aliases)\s*:", re.M)


def _frontmatter_below(lines: list[str]) -> bool:
    """Whether ``lines`` (after a ``---``) hold a frontmatter block: a closing ``---`` within 40 lines and
    two or more lines naming common frontmatter fields (``title:``, ``status:``…) before it — not prose
    under a thematic break."""
    close = next((j for j, line in enumerate(lines[:40]) if line.rstrip() == "---"), None)
    return close is not None and len(_FIELD_LINE.findall("\n".join(lines[:close]))) >= 2


def _misplaced_frontmatter(note: Note) -> None:
    """Report a frontmatter block that does not start at line 1, column 1 (FM-09): after blank lines, or
    after or before whitespace or an invisible character (a zero-width space, a second BOM), or below a
    line of text when what follows is plainly frontmatter (:func:`_frontmatter_below`)."""
    lines = note.text.split("\n", 48)[:48]  # the first 8 lines, and 40 below them for a closing "---"
    after_text = False
    for i, line in enumerate(lines[:8]):
        if visible(line) == "---" and after_text:
            if _frontmatter_below(lines[i + 1:]):
                note.fm_state = "misplaced"
                note.diagnostics.append(Diagnostic(
                    note.path, i + 1, line.index("-") + 1, "FM003",
                    f"frontmatter must start on line 1, column 1 (found '---' on line {i + 1}, below text: "
                    f"move the text under the closing '---')"))
            return
        if visible(line) == "---":
            note.fm_state = "misplaced"
            col = line.index("-") + 1
            hidden = sorted({f"U+{ord(ch):04X}" for ch in line if not ch.isspace() and invisible(ch)})
            seen = f" beside the invisible character{'s' if len(hidden) > 1 else ''} {', '.join(hidden)}" \
                if hidden else ""
            message = f"frontmatter must start on line 1, column 1 (found '---' on line {i + 1}{seen})"
            if i == 0 and col == 1:  # "---" then an invisible character
                message = f"the frontmatter's first line must read exactly '---' (line 1 has '---'{seen})"
            note.diagnostics.append(Diagnostic(note.path, i + 1, col, "FM003", message))
            return
        bare = visible(line)
        if bare and not (bare.startswith("<!--") and bare.endswith("-->")):
            after_text = True  # text before it: a thematic break, unless frontmatter plainly follows
