"""WikiLink resolution with Obsidian semantics, and heading/block anchor matching.

Rules, in order (field cases WL-01, WL-06, WL-07):

1. An empty target (``[[#Heading]]``) is the linking note itself.
2. ``<target>`` and then ``<target>.md`` are tried for every target, as a
   vault-relative (then repository-relative) path, case-insensitively (exact
   case wins among variants).
3. A target with a ``/`` then matches by path suffix (``[[adrs/README]]``).
   Names compare as Obsidian compares them: canonically equivalent Unicode
   (NFC = NFD, so a name stored decomposed by macOS still matches) and
   case-insensitive by :func:`name_key` (``Ä``/``ä``, ``Σ``/``σ``, ``Д``/``д``;
   ``ß`` stays ``ß``, as in JavaScript's ``toLowerCase``, which Obsidian uses).
4. A bare name matches basenames; text after a dot is never stripped, and no
   substring or partial-suffix matching happens.
5. Several candidates: the one in the linking note's own folder wins (what
   Obsidian does); otherwise the link is *ambiguous* and every candidate is
   reported, sorted. Never a guess.
6. No file: a note whose frontmatter ``aliases`` holds the target.
7. A target starting with ``../`` is relative to the linking note's folder (Obsidian's
   "relative path" link format); one that leaves the repository finds nothing.
"""

from __future__ import annotations

import html
import posixpath
import re
import unicodedata
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from vaultsync.vault.inline_spans import code_spans

# ".png", ".mp3", ".7z", ".docx"; not ".2" of "v1.2", nor ".final" of "Release v1.final" (Obsidian makes that a
# note): a longer suffix names a file only when it is a known one
_EXTENSION = re.compile(r"\.((?=[0-9]*[A-Za-z])[A-Za-z0-9]{1,4}|[A-Za-z]{5,10})$")
_LONG_EXTENSIONS = frozenset({"canvas", "drawio", "excalidraw", "ipynb", "markdown", "mermaid", "sketch", "graffle"})
# Obsidian's accepted file formats (help: "Accepted file formats"), the long ones above, office documents
# and archives: what a link to a file that is not a note names
_ATTACHMENT_FORMATS = _LONG_EXTENSIONS - {"markdown"} | frozenset(
    "avif bmp gif jpeg jpg png svg webp heic tif tiff ico flac m4a mp3 ogg wav 3gp aac mkv mov mp4 ogv webm avi "
    "pdf base doc docx xls xlsx ppt pptx odt ods odp rtf key pages numbers epub zip 7z tar gz tgz rar".split())
_TRAILING_PUNCT = frozenset(".?!:;,")
_SPACES = re.compile(r"\s+")


_DASHES = str.maketrans(dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2212\ufe63\uff0d", "-"))


def id_key(text: str) -> str:
    """How a ``memory_id`` is compared, with another (ID001) and with a query's words (search's named
    notes): NFKC, case-folded, every dash a ``-``, no space around it."""
    if text.isascii():  # the same key, without the Unicode passes (a table of 100,000 notes reads them all)
        return text.strip().lower()
    return unicodedata.normalize("NFKC", text).translate(_DASHES).strip().casefold()


def name_key(text: str) -> str:
    """Comparison key of a file or link name: NFC, lower-cased (Unicode default case mapping).

    ``name_key("Cafe\u0301") == name_key("CAFÉ")``, ``name_key("κοσμος") == name_key("ΚΟΣΜΟΣ")``;
    ``name_key("Straße") != name_key("STRASSE")``
    (full case folding would equate them; Obsidian does not).
    """
    if text.isascii():
        return text.lower()
    # final sigma: "ΚΟΣΜΟΣ.md" lowers to "κοσμοσ.md" (the extension follows), a link writes "κοσμος"
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).lower()).replace("ς", "σ")


def nfc(text: str) -> str:
    """``text`` in Unicode normalisation form C (composed)."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


@dataclass(frozen=True)
class Resolution:
    """Outcome of resolving a link target.

    ``status`` is ``"ok"`` (``path`` set), ``"missing"`` or ``"ambiguous"``
    (``candidates`` sorted).
    """

    status: str
    path: str | None = None
    candidates: tuple[str, ...] = ()


class LinkIndex:
    """Lookup tables over the vault's files for fast, repeatable link resolution.

    Args:
        paths: every file of the vault (notes and attachments), repo-relative.
        aliases: ``{alias: [note paths]}`` from frontmatter ``aliases``.
        root: the vault folder the links are relative to (``"."`` = repository).
    """

    def __init__(self, paths: Iterable[str], aliases: dict[str, list[str]] | None = None, root: str = ".") -> None:
        self.root = "" if root in ("", ".") else root.rstrip("/") + "/"
        self._by_path: dict[str, list[str]] = defaultdict(list)
        self._by_name: dict[str, list[str]] = defaultdict(list)
        self.files: set[str] = set()
        for path in paths:
            self.files.add(path)
            rel = path[len(self.root):] if self.root and path.startswith(self.root) else path
            self._by_path[name_key(rel)].append(path)
            if rel != path:  # a repository-relative path works too
                self._by_path[name_key(path)].append(path)
            self._by_name[name_key(posixpath.basename(rel))].append(path)
        self._aliases: dict[str, list[str]] = defaultdict(list)
        for alias, owners in (aliases or {}).items():
            self._aliases[name_key(alias.strip())].extend(owners)
        self._resolved: dict[tuple[str, str], Resolution] = {}  # (target, source folder): notes share targets

    def resolve(self, target: str, source: str) -> Resolution:
        """Resolve ``target`` as written in note ``source`` (see the module rules)."""
        if not target.strip():
            return Resolution("ok", source)
        key = (target, source.rpartition("/")[0])  # the source's folder
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = self._resolve(target, source)
        return found

    def _resolve(self, target: str, source: str) -> Resolution:
        target = target.strip().replace("\\", "/")
        if target.startswith(("../", "./")):  # relative to the linking note (Obsidian's "relative path" links)
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
            variants = [joined, joined + ".md"]  # `[[../foo.md]]`: foo.md, then foo.md.md (WL-07)
            for variant in variants if not joined.startswith("../") else ():
                hits = [p for p in self._by_path.get(name_key(variant), ()) if name_key(p) == name_key(variant)]
                if hits:
                    return self._pick(hits, variant, source)
            return Resolution("missing")  # that very path, or nothing: no name or suffix matching
        target = target.lstrip("/")
        variants = [target, target + ".md"]  # `[[foo.md]]`: foo.md, then foo.md.md (WL-07)
        for variant in variants:
            key = name_key(variant)
            hits = self._by_path.get(key)
            if hits:
                return self._pick(hits, variant, source)
        if "/" in target:
            hits = [
                p for variant in variants for p in self._suffix_matches(name_key(variant))
            ]
            if hits:
                return self._pick(sorted(set(hits)), target, source)
        else:
            for variant in variants:
                hits = self._by_name.get(name_key(variant))
                if hits:
                    return self._pick(hits, variant, source)
        owners = self._aliases.get(name_key(target))
        if owners:
            return self._pick(sorted(set(owners)), target, source)
        return Resolution("missing")

    def _suffix_matches(self, key: str) -> list[str]:
        name = posixpath.basename(key)
        return [
            p for p in self._by_name.get(name, ())
            if name_key(p).endswith("/" + key)
        ]

    def _pick(self, hits: list[str], written: str, source: str) -> Resolution:
        if len(hits) == 1:
            return Resolution("ok", hits[0])
        exact = [p for p in hits if p.endswith(written)] or [p for p in hits if nfc(p).endswith(nfc(written))]
        if len(exact) == 1 and len({name_key(p) for p in hits}) == 1:
            return Resolution("ok", exact[0])  # case variants of one path: exact case wins
        folder = posixpath.dirname(source)
        local = [p for p in hits if posixpath.dirname(p) == folder]
        if len(local) == 1:
            return Resolution("ok", local[0])
        return Resolution("ambiguous", candidates=tuple(sorted(hits)))


def file_suffix(target: str) -> str:
    """The extension a link target ends with, lower case (``png`` of ``arch.png``, ``js`` of ``node.js``;
    ``""`` for ``v1.2`` or ``Release v1.final``, which can only be note names)."""
    m = _EXTENSION.search(target.strip())
    suffix = m.group(1).lower() if m else ""
    return suffix if suffix != "md" and (len(suffix) <= 4 or suffix in _LONG_EXTENSIONS) else ""


def is_attachment(target: str) -> bool:
    """A target naming a file one attaches (``arch.png``, ``deck.pptx``): a format Obsidian opens, an
    office document or an archive. ``[[node.js]]`` or ``[[config.yaml]]`` may as well name a note
    (Obsidian creates ``node.js.md`` on a click), so a missing one is no note *or* file."""
    return file_suffix(target) in _ATTACHMENT_FORMATS


def normalise_heading(text: str) -> str:
    """Heading comparison key: :func:`name_key` (NFC, lower case), whitespace collapsed, trailing ``?!.:;,`` dropped.
    Linear in the text: the trailing run is cut by a scan, not by a ``[...]+$`` search (quadratic on a long run)."""
    key = _SPACES.sub(" ", name_key(text.strip()))
    end = len(key)
    while end and (key[end - 1] in _TRAILING_PUNCT or key[end - 1].isspace()):
        end -= 1
    return key[:end]


# Inline markup of a heading as Obsidian displays it (https://help.obsidian.md/syntax)
_WIKILINK = re.compile(r"!?\[\[([^\[\]|]*)(?:\|([^\[\]]*))?\]\]")
_MD_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^()]*\)")
_EMPHASIS = re.compile(r"\*\*|__|==|~~|\*|(?<!\w)_(?=\S)|(?<=\S)_(?!\w)|<[^<>\n]+>")
_LITERAL = re.compile(r"\\([!-/:-@\[-`{-~])|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
# Characters a link subpath cannot hold: Obsidian writes a space for them when it links a heading
_LINK_BREAKING = re.compile(r"\[\[|\]\]|[|#^\[\]]")
# ASCII punctuation Obsidian's link matching reads as a space (its stripHeading), on both sides: a link
# written [[n#Q A draft]] or [[n#Q&A: draft]] names "## Q&A (draft)". Letters, digits, "_", "-", "'" count.
_STRIP_HEADING = re.compile(r"[!\"#$%&()*+,.:;<=>?@^`{|}~/\[\]\\]")


def heading_display(text: str) -> str:
    """The heading as read: ``Uses [[Foo|the foo]] and **bold**`` → ``Uses the foo and bold``; backslash
    escapes (``1\\. Intro`` → ``1. Intro``, CommonMark §2.4) and entities (``&amp;`` → ``&``, §2.5) outside
    code as the characters they stand for."""
    if not any(c in text for c in "[`*_=~<\\&"):
        return text
    text = _WIKILINK.sub(lambda m: m.group(2) if m.group(2) is not None else m.group(1), text)
    text = _MD_LINK.sub(r"\1", text)
    spans: list[str] = []  # code is shown as written: `__init__` keeps its underscores
    parts, pos = [], 0
    for start, end, run in code_spans(text):
        spans.append(text[start + run:end - run].strip())
        parts += [text[pos:start], f"\0{len(spans) - 1}\0"]
        pos = end

    def literal(m: re.Match[str]) -> str:  # an escaped or encoded character is text, never emphasis
        spans.append(m.group(1) if m.group(1) is not None else html.unescape(m.group(0)))
        return f"\0{len(spans) - 1}\0"

    text = _EMPHASIS.sub("", _LITERAL.sub(literal, "".join(parts) + text[pos:]))
    return re.sub("\0([0-9]+)\0", lambda m: spans[int(m.group(1))], text)


@lru_cache(maxsize=65536)
def heading_keys(text: str) -> frozenset[str]:
    """Every normalised form a link may use for heading ``text``: as written, as displayed, and either
    with the characters a link cannot hold (``[[ ]] | # ^``) written as spaces, or as Obsidian's link
    matching reads it (:func:`strip_heading`)."""
    display = heading_display(text)
    forms = {text, display, _LINK_BREAKING.sub(" ", text), _LINK_BREAKING.sub(" ", display), strip_heading(text)}
    return frozenset(normalise_heading(f) for f in forms)


def link_form(heading: str) -> str:
    """A heading as a link can name it, as Obsidian writes it: displayed, the characters a link subpath
    cannot hold (``[[ ]] | # ^``) and ``:`` as spaces, runs of spaces as one (``C# tips`` → ``C tips``,
    ``Minecraft: The Video Game`` → ``Minecraft The Video Game``)."""
    return " ".join(_LINK_BREAKING.sub(" ", heading_display(heading)).replace(":", " ").split())


def strip_heading(text: str) -> str:
    """``text`` as Obsidian's link matching reads it: ASCII punctuation but ``_``, ``-`` and ``'`` as spaces,
    runs of spaces as one (``Q&A (draft)`` → ``Q A draft``; ``v1.2`` → ``v1 2``). Code spans are kept as
    written, without their backticks: ``hasTag()`` in code is not ``hasTag``."""
    parts, pos = [], 0
    for start, end, run in code_spans(text) if "`" in text else ():
        parts += [_STRIP_HEADING.sub(" ", text[pos:start]), text[start + run:end - run]]
        pos = end
    parts.append(_STRIP_HEADING.sub(" ", text[pos:]))
    return _SPACES.sub(" ", "".join(parts)).strip()


def match_heading_path(wanted: str, headings: Sequence[tuple[int, str]]) -> str | None:
    """Match a link's heading subpath against a note's ``(level, text)`` headings, in order.

    A nested subpath (``H1#H2#H3``) names a heading inside the section of the one before it: later in
    the note, deeper, before that section ends (a heading at its level or above); levels between may
    be skipped. Each part matches as :func:`match_heading`; the result is ``"exact"`` when every part
    matched exactly, ``"normalised"`` when one needed normalising, else None. To match many links
    into one note, build its :class:`HeadingLookup` once.
    """
    return HeadingLookup(headings).match(wanted)


class HeadingLookup:
    """A note's headings indexed for :func:`match_heading_path`: each link costs the headings its parts
    name, not a walk over every heading (a 20,000-heading note with a link to each took minutes: WL-04).

    Args:
        headings: ``(level, text)`` in document order.
    """

    def __init__(self, headings: Sequence[tuple[int, str]]) -> None:
        self._exact: dict[str, list[int]] = defaultdict(list)
        self._normalised: dict[str, list[int]] = defaultdict(list)
        for i, (_, text) in enumerate(headings):
            self._exact[text].append(i)
            for key in heading_keys(text):
                self._normalised[key].append(i)
        # where each heading's section ends: the next heading at its level or above
        self._end = [len(headings)] * len(headings)
        open_: list[int] = []
        for i, (level, _) in enumerate(headings):
            while open_ and headings[open_[-1]][0] >= level:
                self._end[open_.pop()] = i
            open_.append(i)
        self._matched: dict[str, str | None] = {}  # a link's subpath → its match: links repeat (WL-04)

    def _positions(self, part: str) -> dict[int, str]:
        """Heading index → ``"exact"`` or ``"normalised"`` for one subpath part."""
        found = {i: "normalised" for key in _subpath_keys(part.strip()) for i in self._normalised.get(key, ())}
        found.update((i, "exact") for i in self._exact.get(part.strip(), ()))
        return found

    def match(self, wanted: str) -> str | None:
        """``"exact"``, ``"normalised"`` or None for a link's heading subpath (see :func:`match_heading_path`)."""
        if wanted not in self._matched:
            self._matched[wanted] = self._match(wanted)
        return self._matched[wanted]

    def _match(self, wanted: str) -> str | None:
        parts = [p for p in wanted.split("#") if p.strip()]  # empty parts ("H#", "#H", "H##") name nothing
        if not parts:
            return None
        if len(parts) == 1:  # any heading of that name will do: no walk over the many that share it
            part = parts[0].strip()
            return "exact" if part in self._exact else \
                "normalised" if any(key in self._normalised for key in _subpath_keys(part)) else None
        # from the last part back: the headings where the subpath's rest completes, each with the match
        # of the first completion in document order (the one a reader following the path finds)
        done: list[tuple[int, str]] = sorted(self._positions(parts[-1]).items())
        for part in reversed(parts[:-1]):
            after = [k for k, _ in done]
            now = []
            for j, how in sorted(self._positions(part).items()):
                x = bisect_right(after, j)  # the first completion after heading j, inside its section
                if x < len(after) and after[x] < self._end[j]:
                    now.append((j, "exact" if how == done[x][1] == "exact" else "normalised"))
            done = now
        return done[0][1] if done else None


def match_heading(wanted: str, headings: Iterable[str]) -> str | None:
    """Match one heading name against a note's headings.

    A nested subpath (``H1#H2``) matches on its last part (:func:`match_heading_path` checks the
    path). Returns ``"exact"``,
    ``"normalised"`` (matched after :func:`normalise_heading`, the heading taken as
    written, as displayed, or in the form Obsidian writes into links; see
    :func:`heading_keys`; the link's heading also as :func:`strip_heading` reads it) or None.
    """
    parts = [p for p in wanted.split("#") if p.strip()]  # empty parts ("H#", "#H", "H##") name nothing
    return HeadingLookup([(1, text) for text in headings]).match(parts[-1]) if parts else None


@lru_cache(maxsize=4096)
def _subpath_keys(part: str) -> frozenset[str]:
    """The normalised forms of one part of a link's heading subpath: once per part, not once per heading a
    nested subpath (``H1#H2``) is held against (WL-04)."""
    return frozenset({normalise_heading(part), normalise_heading(strip_heading(part))} - {""})
