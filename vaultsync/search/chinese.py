"""Traditional Chinese queries are embedded as Simplified Chinese (ADR-0082).

The embedders saw far more Simplified than Traditional Chinese in training: over the English
Obsidian help vault, the zh-TW queries found their note in the top 5 for 0.91 of queries, the
same questions in Simplified characters for 0.95. So a query written in Traditional characters
is converted before the dense legs embed it, with OpenCC's ``tw2sp`` profile (Taiwan phrases and
characters to Simplified, e.g. 連結 → 链接; Apache-2.0, dictionaries inside the wheel).

Only the dense legs' text changes. BM25 keeps the query as typed, and a query the vault's own
words cover (a vault written in Traditional Chinese) is embedded as typed as well: the notes'
vectors are of Traditional text there. Text with kana is Japanese and never converted.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

from vaultsync.search.language import is_cjk, scripts
from vaultsync.search.query import Query
from vaultsync.search.weights import COVERED, query_coverage

_lock = threading.Lock()
_converters: dict[str, Any] = {}


def _converter(profile: str) -> Any:
    """OpenCC's converter for ``profile`` (``t2s``, ``tw2sp``), loaded once (~15 ms; thread-safe)."""
    conv = _converters.get(profile)
    if conv is None:
        with _lock:
            conv = _converters.get(profile)
            if conv is None:
                import opencc

                conv = _converters[profile] = opencc.OpenCC(profile)
    return conv


def is_traditional(text: str) -> bool:
    """True when ``text`` is CJK (:func:`~vaultsync.search.language.is_cjk`) without kana or Hangul
    (so Han is at least a fifth of its letters) and some character has a Simplified form other
    than itself (OpenCC ``t2s``)."""
    counts = scripts(text)
    if counts.get("kana") or counts.get("hangul") or not is_cjk(text):
        return False
    return bool(_converter("t2s").convert(text) != text)


def simplified(text: str) -> str:
    """``text`` in Simplified Chinese (Taiwan phrases included) when it is Traditional Chinese
    (:func:`is_traditional`), else ``text`` unchanged. ~10 µs a query once loaded."""
    return str(_converter("tw2sp").convert(text)) if is_traditional(text) else text


def embedding_text(db: sqlite3.Connection, query: Query) -> str:
    """The text the dense legs embed for ``query``: :func:`simplified` unless the vault's words
    cover the query as typed (``query_coverage`` ≥ ``COVERED``: the vault is in Traditional Chinese)."""
    if not is_traditional(query.text):
        return query.text
    coverage = query_coverage(db, query)
    return query.text if coverage is not None and coverage >= COVERED else simplified(query.text)
