"""Rebuild SentencePiece's ``nmt_nfkc`` normalisation table from a single-code-point map.

The ``E5S1`` file carries only the single-code-point rules of XLM-R's
``precompiled_charsmap`` (4,837 entries: NFKC plus the NMT rules that delete
control characters and map odd spaces to U+0020). The charsmap also holds
~220k multi-code-point rules: canonical *compositions* such as
``e + U+0301 → é`` or ``ㄱ ㅏ → 가``, each mapped to its NFKC form. Those are
regenerated here with SentencePiece's own builder algorithm
(``Builder::BuildNFKCMap`` + ``RemoveRedundantMap`` in
``sentencepiece/src/builder.cc``, Kudo & Richardson 2018):

1. ``norm2orig[c]`` = every code point whose NFKD is the single char ``c``;
2. for every code point whose NFKD has ≥ 2 chars and whose NFC differs from
   that decomposition, every sequence obtained by replacing each char of the
   decomposition with itself or one of its ``norm2orig`` originals maps to the
   NFC (= NFKC) form;
3. a rule of length n is kept only if the rules of length < n, applied
   longest-match-first, do not already produce the same output.

Unicode versions: the charsmap predates Python's ``unicodedata``. Code points
whose NFKC changes but that are absent from the single-code-point map are newer
and ignored; canonical composites are limited to those of Unicode 3.2
(``unicodedata.ucd_3_2_0``) plus an explicit list from the model manifest (the
23 later composites the charsmap knows). The result is verified against a
sha256 in the manifest, so a Python with different Unicode data fails loudly
instead of tokenising differently.
"""

from __future__ import annotations

import hashlib
import itertools
import struct
import sys
import unicodedata
from collections.abc import Iterable, Mapping

from vaultsync.models.convert import darts


def _is_unicode_char(cp: int) -> bool:
    """ICU's ``U_IS_UNICODE_CHAR``: not a surrogate and not a noncharacter."""
    return not (0xD800 <= cp <= 0xDFFF or 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE or cp > 0x10FFFF)


def build_table(single: Mapping[str, str], later_composites: Iterable[int] = ()) -> dict[str, str]:
    """Return the full rule table (single + multi code point keys → replacement).

    Args:
        single: the single-code-point rules (from the model file).
        later_composites: canonical composites newer than Unicode 3.2 to include.
    """
    later = set(later_composites)
    old = unicodedata.ucd_3_2_0
    norm2orig: dict[str, list[str]] = {}
    decomposed: set[str] = set()
    for cp in range(1, 0x110000):
        if not _is_unicode_char(cp):
            continue
        c = chr(cp)
        if unicodedata.normalize("NFKC", c) != c and c not in single:
            continue  # changes under today's NFKC but unknown to the table: newer character
        nfkd = unicodedata.normalize("NFKD", c)
        if len(nfkd) == 1:
            if nfkd != c:
                norm2orig.setdefault(nfkd, []).append(c)
        elif c in single or old.category(c) != "Cn" or cp in later:
            decomposed.add(nfkd)

    rules: dict[str, str] = dict(single)
    for nfkd in decomposed:
        nfc = unicodedata.normalize("NFC", nfkd)
        if nfc == nfkd:
            continue
        options = [[ch, *sorted(norm2orig.get(ch, ()))] for ch in nfkd]
        for combo in itertools.product(*options):
            key = "".join(combo)
            if key != nfc:
                rules[key] = nfc
    return _remove_redundant(rules)


def _apply(rules: Mapping[str, str], text: str, max_len: int) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        for n in range(min(max_len, len(text) - i), 0, -1):
            rep = rules.get(text[i : i + n])
            if rep is not None:
                out.append(rep)
                i += n
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _remove_redundant(rules: Mapping[str, str]) -> dict[str, str]:
    kept = {k: v for k, v in rules.items() if len(k) == 1}
    max_len = max(map(len, rules))
    for n in range(2, max_len + 1):
        for k, v in rules.items():
            if len(k) == n and v != _apply(kept, k, n - 1):
                kept[k] = v
    return kept


def table_sha256(table: Mapping[str, str]) -> str:
    """Order-independent fingerprint of a rule table (sorted ``key\\tvalue\\n`` lines, UTF-8)."""
    h = hashlib.sha256()
    for k in sorted(table):
        h.update(k.encode("utf-8") + b"\t" + table[k].encode("utf-8") + b"\n")
    return h.hexdigest()


def to_charsmap(table: Mapping[str, str]) -> bytes:
    """Serialise a rule table as a SentencePiece ``precompiled_charsmap``.

    Layout: u32 trie size in bytes, the darts-clone units, then the
    NUL-terminated replacement strings the values point into.
    """
    blob = bytearray()
    where: dict[str, int] = {}
    entries: list[tuple[bytes, int]] = []
    for k in sorted(table):
        v = table[k]
        if v not in where:
            where[v] = len(blob)
            blob += v.encode("utf-8") + b"\0"
        entries.append((k.encode("utf-8"), where[v]))
    units = darts.build(entries)
    if sys.byteorder != "little":
        units.byteswap()
    trie = units.tobytes()
    return struct.pack("<I", len(trie)) + trie + bytes(blob)


def from_charsmap(charsmap: bytes) -> dict[str, str]:
    """Decode a ``precompiled_charsmap`` back into its rule table (for verification)."""
    from array import array

    (size,) = struct.unpack_from("<I", charsmap, 0)
    units = array("I")
    units.frombytes(charsmap[4 : 4 + size])
    if sys.byteorder != "little":
        units.byteswap()
    blob = charsmap[4 + size :]
    out: dict[str, str] = {}
    for key, value in darts.items(units):
        end = blob.index(b"\0", value)
        out[key.decode("utf-8")] = blob[value:end].decode("utf-8")
    return out
