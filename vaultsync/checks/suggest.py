"""What a broken link probably meant, and the link text to write instead.

:class:`Suggester` answers, for a link that resolves to nothing, in this order:

1. a ``memory_id`` or a ``title`` written as a link (``[[ADR-0004]]`` or ``[[ClickHouse for analytics]]``
   for ``ADR-0004-clickhouse-analytics.md``: Obsidian resolves file names and ``aliases``, never ids or
   titles);
2. a URL-encoded name (``[[My%20Note]]``: WikiLinks are not URL-encoded);
3. for an id-like target (``ADR-0004``, ``INC-12``), the one file whose name starts
   with it and a separator (``ADR-0004-clickhouse-analytics.md``; other names get no
   prefix guess, field case WL-06);
4. for a name that starts with an id and a separator (``ADR-0004-sessions-in-redix``), the one
   note that id names, whatever the rest (a misspelt or renamed slug);
5. a name that differs only by full case folding (``STRASSE`` for ``Straße``), which
   Obsidian does not treat as equal;
6. a close spelling (:func:`difflib.get_close_matches`) of a name without digits
   (``ADR-0009`` is not a typo of ``ADR-0002``), never the linking note itself, for
   the first ``MAX_FUZZY`` broken links of a run only, so a vault full of broken
   links stays fast.
"""

from __future__ import annotations

import bisect
import difflib
import posixpath
import re
from collections import defaultdict
from urllib.parse import quote, unquote

from vaultsync.diagnostics import shown
from vaultsync.vault.resolve import name_key, nfc
from vaultsync.vault.vault import Vault, is_note_path
from vaultsync.vault.wikilinks import WikiLink

MAX_FUZZY = 20
_URL_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_ID_LIKE = re.compile(r"^[A-Za-z]{2,}-?[0-9]+$")
_ID_HEAD = re.compile(r"^([A-Za-z]{2,}-?[0-9]+)[-_ .]")  # an id-like start, then more of the name


_MD_TEXT = re.compile(r"([][|\\])")  # escaped in a Markdown link's text
_NOT_IN_WIKILINKS = "#|[]"  # a WikiLink naming a file whose name holds one reads a heading, an alias or no link


def rebuild(link: WikiLink, target: str) -> str:
    """``link`` written with another target, its heading/block and alias kept: ``[[new#H|alias]]`` (``\\|``
    where the link wrote its bar so, as in a table row), or
    ``[text](new.md#H)`` for a Markdown link and for a target a WikiLink cannot name (``RULE #1``,
    :data:`_NOT_IN_WIKILINKS`)."""
    sub = f"#^{link.block}" if link.block is not None else (f"#{link.heading}" if link.heading is not None else "")
    wikilink = link.raw.endswith("]]")
    if wikilink and not any(c in target for c in _NOT_IN_WIKILINKS):
        bar = link.raw.find("|")  # `[[X\|alias]]` in a table row: the escape keeps the row's cells
        escaped = bar > 0 and link.raw[bar - 1] == "\\"
        alias = ("\\|" if escaped else "|") + link.alias if link.alias is not None else ""
        return f"{'!' if link.embed else ''}[[{target}{sub}{alias}]]"
    if wikilink:  # `RULE #1.md`: a WikiLink would read a heading, a Markdown link can name it
        # `\|`: a bare bar ends a table cell (GFM splits a row before reading links); `\[`, `\]` end the text
        shown_text = _MD_TEXT.sub(r"\\\1", link.alias if link.alias is not None else posixpath.basename(target))
        text = f"{'!' if link.embed else ''}[{shown_text}]"
        sub = _past_the_name(link, target) if link.heading is not None else sub
    else:  # a Markdown link: its text kept
        text = link.raw[:link.raw.find("](") + 1]
    named = target if "." in posixpath.basename(target) else target + ".md"  # percent-encoded, ".md" named
    return f"{text}({quote(named)}{quote(sub, safe='#^')})"


def _past_the_name(link: WikiLink, target: str) -> str:
    """The heading of ``[[RULE #1#Scope]]`` past the parts that complete the name ``RULE #1`` (``#Scope``).
    The link's parts are trimmed where the name keeps its spaces, so they compare without whitespace."""
    def key(text: str) -> str:
        return "".join(nfc(text).casefold().split())

    parts, name = (link.heading or "").split("#"), key(posixpath.basename(target))
    used = max((i for i in range(len(parts) + 1) if name.endswith(key("#".join([link.target, *parts[:i]])))),
               default=0)
    return "#" + "#".join(parts[used:]) if used < len(parts) else ""


def _stem(path: str) -> str:
    name = posixpath.basename(path)
    return name[:-3] if is_note_path(name) else name



class _NoLink(Exception):
    """No link text resolves to the note a suggestion would name."""

class Suggester:
    """Suggestions over one vault's files (built once per check run)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self._fuzzy_left = MAX_FUZZY
        self._by_stem: dict[str, list[str]] = defaultdict(list)
        self._by_fold: dict[str, list[str]] = defaultdict(list)
        for path in vault.files:
            stem = _stem(path)
            self._by_stem[name_key(stem)].append(path)
            self._by_fold[nfc(stem).casefold()].append(path)
        self._stems = sorted(self._by_stem)
        self._ids = {name_key(mid): paths for mid, paths in vault.by_memory_id.items()}
        self._titles: dict[str, list[str]] = defaultdict(list)
        for path, note in vault.notes.items():
            title = note.frontmatter.get("title") if isinstance(note.frontmatter, dict) else None
            if isinstance(title, str) and title.strip():
                self._titles[name_key(title.strip())].append(path)

    def link_to(self, path: str, source: str, link: WikiLink) -> str | None:
        """The shortest link from ``source`` that resolves to ``path``, keeping ``link``'s subpath and alias
        (a Markdown link gets the path relative to ``source``'s folder where it wrote one, or where its name
        alone is not enough); None where no link names it (`` lead.md``: link text is trimmed)."""
        index = self.vault.link_index
        markdown = not link.raw.endswith("]]")
        here = posixpath.relpath(path, posixpath.dirname(source) or ".")  # as CommonMark renderers read a path
        if markdown and link.target.startswith(".") and index.resolve(here, source).path == path:
            return rebuild(link, here)  # `[c](../adr/x.md)` keeps its form
        stem = _stem(path)
        if index.resolve(stem, source).path == path:
            return rebuild(link, stem)
        if markdown and index.resolve(here, source).path == path:
            return rebuild(link, here)
        rel = path[len(index.root):] if index.root and path.startswith(index.root) else path
        name = rel[:-3] if is_note_path(rel) else rel
        return rebuild(link, name) if index.resolve(name, source).path == path else None

    def _link(self, path: str, source: str, link: WikiLink) -> str:
        found = self.link_to(path, source, link)
        if found is None:
            raise _NoLink
        return found

    def hint(self, source: str, link: WikiLink) -> str:
        """`` — did you mean …?`` (with why) for a link that resolves to nothing, or ``""`` (also where no
        link could name the note meant: a suggestion is always a link that resolves)."""
        try:
            return self._hint(source, link)
        except _NoLink:
            return ""

    def _hint(self, source: str, link: WikiLink) -> str:
        target = link.target.strip()
        key = name_key(target)
        ids = self._ids.get(key)
        if ids and len(ids) == 1:
            return (f" — did you mean {self._link(ids[0], source, link)}? ({shown(target)} is the memory_id of "
                    f"{ids[0]}; links name the file)")
        titled = self._titles.get(key)
        if titled and len(titled) == 1 and titled[0] != source:
            return (f" — did you mean {self._link(titled[0], source, link)}? ({shown(target)} is the title of "
                    f"{titled[0]}; links name the file, or an alias: add it to its aliases)")
        if _URL_ESCAPE.search(target) and link.raw.endswith("]]"):  # (a Markdown link's target is decoded already)
            decoded = unquote(target)
            if decoded != target and decoded.isprintable():  # `%0A` decodes to no name one could write
                found = self.vault.link_index.resolve(decoded, source).status == "ok"
                either = "" if found else f" (though no note is named '{decoded}' either)"
                return f" — WikiLinks are not URL-encoded: write {rebuild(link, decoded)}{either}"
        base = posixpath.basename(key).removesuffix(".md")  # `[x](Note.md)`: names compare without it
        prefixed = self._prefixed(base) if _ID_LIKE.match(target) else []
        if len(prefixed) == 1:
            return f" — did you mean {self._link(prefixed[0], source, link)}?"
        head = _ID_HEAD.match(base)
        if head:  # `[[ADR-0004-sessions-in-redix]]`: the id names one note, the rest is misspelt or renamed
            same = self._prefixed(head.group(1)) or self._ids.get(head.group(1), [])
            if len(set(same)) == 1 and same[0] != source:
                stem = posixpath.splitext(posixpath.basename(same[0]))[0]
                why = "the name matches, the folder does not" if name_key(stem) == base else \
                    f"the id {posixpath.basename(target)[:len(head.group(1))]} matches, the rest of the name does not"
                return f" — did you mean {self._link(same[0], source, link)}? ({why})"
        folded = self._by_fold.get(nfc(posixpath.basename(target)).casefold(), [])
        if len(folded) == 1:
            stem = posixpath.splitext(posixpath.basename(folded[0]))[0]
            why = "the name matches, the folder does not" if name_key(stem) == name_key(posixpath.basename(target)) \
                else "the names differ only where full case folding merges letters ('ß' and 'ss', 'ﬁ' and 'fi'), " \
                "which Obsidian tells apart"
            return f" — did you mean {self._link(folded[0], source, link)}? ({why})"
        if self._fuzzy_left > 0 and base and not any(c.isdigit() for c in base):
            self._fuzzy_left -= 1
            close = difflib.get_close_matches(base, self._stems, n=1, cutoff=0.8)
            if close and len(self._by_stem[close[0]]) == 1 and self._by_stem[close[0]][0] != source:
                return f" — did you mean {self._link(self._by_stem[close[0]][0], source, link)}?"
        return ""

    def _prefixed(self, base: str) -> list[str]:
        """Files whose name is ``base`` followed by a separator and more (``ADR-0004-…``, ``ADR-0004 …``)."""
        if len(base) < 3:
            return []
        out: list[str] = []
        i = bisect.bisect_left(self._stems, base)
        while i < len(self._stems) and self._stems[i].startswith(base):
            stem = self._stems[i]
            if len(stem) > len(base) and stem[len(base)] in "-_ .":
                out.extend(self._by_stem[stem])
            i += 1
        return out
