"""WikiLink resolution with Obsidian semantics, and heading/block anchor matching.

Rules, in order (field cases WL-01, WL-06, WL-07):

1. An empty target (``[[#Heading]]``) is the linking note itself.
2. ``<target>`` and then ``<target>.md`` are tried for every target, as a
   vault-relative (then repository-relative) path, case-insensitively (exact
   case wins among variants).
3. A target with a ``/`` then matches by path suffix (``[[adrs/README]]``).
4. A bare name matches basenames; text after a dot is never stripped, and no
   substring or partial-suffix matching happens.
5. Several candidates: the one in the linking note's own folder wins (what
   Obsidian does); otherwise the link is *ambiguous* and every candidate is
   reported, sorted. Never a guess.
6. No file: a note whose frontmatter ``aliases`` holds the target.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_TRAILING_PUNCT = re.compile(r"[\s.?!:;,]+$")
_SPACES = re.compile(r"\s+")


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
            self._by_path[rel.lower()].append(path)
            if rel != path:  # a repository-relative path works too
                self._by_path[path.lower()].append(path)
            self._by_name[posixpath.basename(rel).lower()].append(path)
        self._aliases: dict[str, list[str]] = defaultdict(list)
        for alias, owners in (aliases or {}).items():
            self._aliases[alias.strip().lower()].extend(owners)

    def resolve(self, target: str, source: str) -> Resolution:
        """Resolve ``target`` as written in note ``source`` (see the module rules)."""
        target = target.strip().replace("\\", "/")
        if not target:
            return Resolution("ok", source)
        while target.startswith("./"):
            target = target[2:]
        target = target.lstrip("/")
        variants = [target] if target.lower().endswith(".md") else [target, target + ".md"]
        for variant in variants:
            key = variant.lower()
            hits = self._by_path.get(key)
            if hits:
                return self._pick(hits, variant, source)
        if "/" in target:
            hits = [
                p for variant in variants for p in self._suffix_matches(variant.lower())
            ]
            if hits:
                return self._pick(sorted(set(hits)), target, source)
        else:
            for variant in variants:
                hits = self._by_name.get(variant.lower())
                if hits:
                    return self._pick(hits, variant, source)
        owners = self._aliases.get(target.lower())
        if owners:
            return self._pick(sorted(set(owners)), target, source)
        return Resolution("missing")

    def _suffix_matches(self, key: str) -> list[str]:
        name = posixpath.basename(key)
        return [
            p for p in self._by_name.get(name, ())
            if p.lower().endswith("/" + key)
        ]

    def _pick(self, hits: list[str], written: str, source: str) -> Resolution:
        if len(hits) == 1:
            return Resolution("ok", hits[0])
        exact = [p for p in hits if p.endswith(written)]
        if len(exact) == 1 and len({p.lower() for p in hits}) == 1:
            return Resolution("ok", exact[0])  # case variants of one path: exact case wins
        folder = posixpath.dirname(source)
        local = [p for p in hits if posixpath.dirname(p) == folder]
        if len(local) == 1:
            return Resolution("ok", local[0])
        return Resolution("ambiguous", candidates=tuple(sorted(hits)))


def is_attachment(target: str) -> bool:
    """A target naming a non-Markdown file (``arch.png``), judged by its extension."""
    m = _EXTENSION.search(target.strip())
    return bool(m) and m.group(0).lower() != ".md"


def normalise_heading(text: str) -> str:
    """Heading comparison key: case-folded, whitespace collapsed, trailing ``?!.:;,`` dropped."""
    return _TRAILING_PUNCT.sub("", _SPACES.sub(" ", text.strip()).casefold())


def match_heading(wanted: str, headings: Iterable[str]) -> str | None:
    """Match a link's heading subpath against a note's headings.

    Nested subpaths (``H1#H2``) match on their last part. Returns ``"exact"``,
    ``"normalised"`` (matched after :func:`normalise_heading`) or None.
    """
    last = wanted.split("#")[-1].strip()
    texts = list(headings)
    if last in texts:
        return "exact"
    key = normalise_heading(last)
    if any(normalise_heading(h) == key for h in texts):
        return "normalised"
    return None
