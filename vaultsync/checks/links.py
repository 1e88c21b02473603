"""WikiLink checks over the whole vault: dangling, ambiguous, missing anchors, empty links.

Every note is checked, staged or not, so deleting or renaming a note that
another note still links to fails the commit (field case WL-10): when a
``previous`` vault (HEAD) is given, a dangling link whose target existed there
says "target removed in this commit" — and, for a rename, names the new path and
the link to write. Other dangling links get a "did you mean" where one is likely
(:mod:`vaultsync.checks.suggest`), and a missing heading or block the target's closest one.
"""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, field

from vaultsync.checks.suggest import Suggester
from vaultsync.diagnostics import SHOWN_CHARS, WARNING, Diagnostic, cut, shown
from vaultsync.vault.note import Note
from vaultsync.vault.resolve import HeadingLookup, LinkIndex, file_suffix, is_attachment, link_form, name_key
from vaultsync.vault.vault import Vault, is_note_path
from vaultsync.vault.wikilinks import WikiLink


@dataclass(frozen=True)
class LinkOutcome:
    """How one link resolved: ``status`` is ok, heading_ok_normalised, dangling,
    ambiguous, heading_missing, block_missing, empty; ``path`` when a file was found."""

    source: str
    link: WikiLink
    status: str
    path: str | None = None
    candidates: tuple[str, ...] = ()


@dataclass
class Anchors:
    """The headings and block ids of the notes links point into, each indexed once per note, when a link
    first names one (a link to each of 20,000 headings must not walk them all again: WL-04)."""

    _headings: dict[str, HeadingLookup] = field(default_factory=dict)
    _blocks: dict[str, set[str]] = field(default_factory=dict)

    def headings(self, path: str, note: Note) -> HeadingLookup:
        if path not in self._headings:
            self._headings[path] = HeadingLookup([(h.level, h.text) for h in note.headings])
        return self._headings[path]

    def blocks(self, path: str, note: Note) -> set[str]:
        """The note's block ids, lower-cased."""
        if path not in self._blocks:
            self._blocks[path] = {b.lower() for b in note.block_ids}
        return self._blocks[path]


def resolve_links(vault: Vault) -> Iterator[LinkOutcome]:
    """Resolve every link of every readable note, in path order."""
    index, anchors = vault.link_index, Anchors()
    for source in sorted(vault.notes):
        note = vault.notes[source]
        if not note.readable:
            continue
        for link in note.links:
            yield resolve_one(vault, index, source, link, anchors)


def resolve_one(vault: Vault, index: LinkIndex, source: str, link: WikiLink,
                anchors: Anchors | None = None) -> LinkOutcome:
    """Resolve ``link`` written in ``source``, including its heading or block anchor (``anchors``: the
    targets' indexed headings and block ids, shared between calls)."""
    if link.is_empty:
        return LinkOutcome(source, link, "empty")
    res = index.resolve(link.target, source)
    if res.status == "ambiguous":
        return LinkOutcome(source, link, "ambiguous", candidates=res.candidates)
    if res.status != "ok" or res.path is None:
        return LinkOutcome(source, link, "dangling")
    target = vault.notes.get(res.path)
    if target is None or not is_note_path(res.path) or not target.readable:  # unread: its headings are unknown
        return LinkOutcome(source, link, "ok", res.path)  # attachment: `#page=3`, `|300` are display hints
    anchors = anchors or Anchors()
    if link.block is not None and link.block.strip():  # `[[note#^]]`: the note itself, as `[[note#]]`
        if link.block.lower() in anchors.blocks(res.path, target):
            return LinkOutcome(source, link, "ok", res.path)
        return LinkOutcome(source, link, "block_missing", res.path)
    if link.heading is not None and link.heading.strip():
        how = anchors.headings(res.path, target).match(link.heading)
        if how is None:
            return LinkOutcome(source, link, "heading_missing", res.path)
        return LinkOutcome(source, link, "ok" if how == "exact" else "heading_ok_normalised", res.path)
    return LinkOutcome(source, link, "ok", res.path)


def check_links(vault: Vault, previous: LinkIndex | None = None, empty_severity: str = WARNING,
                renamed: dict[str, str] | None = None) -> list[Diagnostic]:
    """Diagnostics for every link that does not resolve cleanly.

    Args:
        vault: the vault being checked (e.g. the staged index).
        previous: resolution tables of the vault at HEAD, to explain links broken by a delete/rename.
        empty_severity: ``warning`` (default), ``error`` or ``off`` for ``[[]]``.
        renamed: ``{path at HEAD: path now}`` for notes renamed in this commit
            (see :func:`vaultsync.checks.renames.find_renames`).
    """
    out: list[Diagnostic] = []
    suggester: Suggester | None = None
    anchor_hints = _AnchorHints(vault)
    for outcome in resolve_links(vault):
        if outcome.status in ("dangling", "ambiguous") and suggester is None:
            suggester = Suggester(vault)
        d = _diagnostic(vault, previous, outcome, empty_severity, renamed or {}, suggester, anchor_hints)
        if d is not None:
            out.append(d)
    return out


def renamed_link(vault: Vault, previous: LinkIndex, renamed: dict[str, str], suggester: Suggester | None,
                 o: LinkOutcome) -> tuple[str, str | None] | None:
    """For a dangling link whose target resolved at HEAD (``previous``) to a file gone now: ``(path at HEAD,
    the link to write)``, the link being the one that names the note ``renamed`` there, its heading, block
    and alias kept, or None (a deletion, or no link can name the new path); None for any other link."""
    before = previous.resolve(o.link.target, o.source)
    if before.status != "ok" or not before.path or before.path in vault.link_index.files:
        return None
    now = renamed.get(before.path)
    return before.path, suggester.link_to(now, o.source, o.link) if now and suggester is not None else None


_DEAD_BECAUSE = {"loop": "a chain of links that goes round in a loop", "outside": "which leads out of the repository",
                 "missing": "which is no file of the repository", "folder": "which is a folder, not a note"}


_NOT_IN_VAULT = {True: "is ephemeral (`ephemeral:` in .vaultsync.yaml): a link may not name it",
                 False: "is on disk but not in what is checked: `git add` it (or it is ignored by git)"}


def _where(link: WikiLink) -> str:
    return f" (frontmatter '{link.field}')" if link.field else ""


class _AnchorHints:
    """"did you mean" for a missing heading or block: the target's closest one (difflib), among its
    first :attr:`NAMES` headings or blocks, while a check has compared fewer than :attr:`COMPARISONS`
    names (difflib costs ~15 µs a name: 20,000 broken links into a note of 20,000 headings must stay
    well under a second, not cost their product). With nothing close, a target of at most :attr:`LISTED`
    names has them all listed, and one of none says so."""

    NAMES, COMPARISONS, LISTED = 2000, 20_000, 6

    def __init__(self, vault: Vault) -> None:
        self.vault, self.left = vault, self.COMPARISONS
        self._names: dict[tuple[str, bool], dict[str, str]] = {}  # (path, block) → casefolded name → name

    def hint(self, path: str | None, wanted: str, block: bool) -> str:
        note = self.vault.notes.get(path) if path else None
        if path is None or note is None or not wanted or self.left <= 0:
            return ""
        if (path, block) not in self._names:  # each target's names once, its first NAMES only
            first = sorted(note.block_ids)[:self.NAMES] if block else [link_form(h.text) for h in note.headings[:self.NAMES]]
            self._names[path, block] = {name.casefold(): name for name in first if name}
        by_key = self._names[path, block]
        self.left -= len(by_key)
        close = difflib.get_close_matches(wanted.casefold(), list(by_key), n=1, cutoff=0.6)
        mark = "^" if block else "#"
        if close and by_key[close[0]] != wanted:  # never the text that just failed
            return f" — did you mean '{mark}{by_key[close[0]]}'?"
        if not by_key:
            return f" — the note has no {'block ids' if block else 'headings'}"
        if len(by_key) <= self.LISTED:  # nothing close, few to choose from: name them all
            return f" — its {'block ids' if block else 'headings'}: " + ", ".join(
                f"'{mark}{n if len(n) <= 60 else n[:60] + '…'}'" for n in by_key.values())
        return ""


def _diagnostic(vault: Vault, previous: LinkIndex | None, o: LinkOutcome, empty_severity: str,
                renamed: dict[str, str], suggester: Suggester | None,
                anchor_hints: _AnchorHints | None = None) -> Diagnostic | None:
    original = o.link
    link = o.link
    if len(link.raw) > SHOWN_CHARS + 20:  # a pathological link is named, not repeated in full
        link = link._replace(raw=cut(link.raw))
    at = (o.source, link.line, link.col)
    if o.status in ("ok", "heading_ok_normalised"):
        return None
    if o.status == "empty":
        if empty_severity == "off":
            return None
        return Diagnostic(*at, "WL005", f"empty wikilink {link.raw}", severity=empty_severity)
    if o.status == "ambiguous":
        return Diagnostic(*at, "WL002", f"{link.raw} → ambiguous link; candidates: {', '.join(o.candidates)} "
                                        f"({_disambiguate(original, o, suggester)})")
    if o.status == "heading_missing":
        hint = anchor_hints.hint(o.path, (link.heading or "").split("#")[-1], False) if anchor_hints else ""
        return Diagnostic(*at, "WL003", f"{link.raw}{_where(link)} → heading not found in {o.path}: '{cut(link.heading or '')}'{hint}")
    if o.status == "block_missing":
        hint = anchor_hints.hint(o.path, link.block or "", True) if anchor_hints else ""
        return Diagnostic(*at, "WL004", f"{link.raw}{_where(link)} → block ^{cut(link.block or '')} not found in {o.path}{hint}")
    gone = renamed_link(vault, previous, renamed, suggester, o) if previous is not None else None
    if gone is not None:
        before, fix = gone
        if fix is not None:
            return Diagnostic(*at, "WL007", f"{link.raw} → target removed in this commit ({before}): renamed to "
                                            f"{renamed[before]} in this commit — update the link to {fix}, or run "
                                            "`vaultsync check --fix`")
        return Diagnostic(*at, "WL007", f"{link.raw} → target removed in this commit ({before})")
    hint = suggester.hint(o.source, original) if suggester is not None else ""
    if (dead := vault.dead_link_index.resolve(link.target, o.source)).status == "ok" and dead.path:
        held, why = vault.dead_links[dead.path]  # render() escapes what cannot be seen; shown() cuts a long one
        hint = f"; {dead.path} is a symbolic link to {shown(held)}, {_DEAD_BECAUSE[why]}"
    elif (kept := vault.outside_index.resolve(link.target, o.source)).status == "ok" and kept.path:
        hint = f"; {kept.path} {_NOT_IN_VAULT[bool(vault.config.is_ephemeral(kept.path))]}"
    if is_attachment(link.target):
        return Diagnostic(*at, "WL006", f"{link.raw}{_where(link)} → missing attachment '{cut(link.target)}'{hint}")
    what = "no such note or file" if file_suffix(link.target) else "no such note"
    return Diagnostic(*at, "WL001", f"{link.raw}{_where(link)} → {what}{hint}")


def _disambiguate(link: WikiLink, o: LinkOutcome, suggester: Suggester | None) -> str:
    """How to name one of the candidates: their folder when the link wrote their file name, else (an alias
    several notes share) the file of one, the alias kept as the text shown."""
    base = posixpath.basename(link.target.strip())
    name = name_key(base[:-3] if base.lower().endswith(".md") else base)
    if all(name_key(posixpath.splitext(posixpath.basename(c))[0]) == name for c in o.candidates):
        if link.raw.endswith("]]"):
            return "write the folder: [[folder/name]]"
        told = suggester.link_to(o.candidates[0], o.source, link) if suggester else None  # a path from here
        return "write its path" + (f", as {told}" if told else "")
    shown_as = link._replace(alias=link.alias if link.alias is not None else link.target)
    told = next((found for c in o.candidates if suggester and (found := suggester.link_to(c, o.source, shown_as))), None)
    return "an alias of more than one note: link the file" + (f", as {told}" if told else "")
