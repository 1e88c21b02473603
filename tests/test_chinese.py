"""A query in Traditional Chinese is embedded in Simplified characters (ADR-0082), unless the vault's own
words cover it; BM25 always matches the query as typed. Real git and SQLite; the hashing embedder
records what the dense leg embedded."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import HashEmbedder, hashed_index
from hypothesis import given
from hypothesis import strategies as st

from vaultsync.search.chinese import embedding_text, is_traditional, simplified
from vaultsync.search.query import parse_query

TRADITIONAL = ["如何設定同步？", "筆記中的連結怎麼顯示", "Obsidian 同步設定", "搜尋外掛程式的選項", "發佈網站的自訂網域",
               "點樣設定同步呀", "在 Obsidian 裡面，如何把筆記同步到其他裝置？ Sync 設定在哪裡"]
NOT_TRADITIONAL = {
    "simplified": "如何设置同步？",
    "simplified phrase": "笔记中的链接怎么显示",
    "japanese": "同期の設定方法",  # kana: Japanese, whatever its kanji
    "korean": "동기화 設定 방법",
    "english": "How do I configure sync?",
    "one han among many latin letters": "please configure the 圖 option for me",
    "digits only": "2024",
}


@pytest.mark.parametrize("text", TRADITIONAL)
def test_traditional_chinese_is_recognised_and_simplified(text: str) -> None:
    assert is_traditional(text)
    out = simplified(text)
    assert out != text and not is_traditional(out)


@pytest.mark.parametrize("kind", sorted(NOT_TRADITIONAL))
def test_other_text_is_left_as_typed(kind: str) -> None:
    text = NOT_TRADITIONAL[kind]
    assert not is_traditional(text)
    assert simplified(text) == text


def test_taiwan_phrases_become_their_mainland_words() -> None:
    assert simplified("連結") == "链接"
    assert simplified("筆記軟體") == "笔记软件"


_ALPHABET = "設定同步筆記連結圖片搜尋设置同步笔记链接图片的の設定かなabc 123？"


@given(st.text(alphabet=_ALPHABET, max_size=30))
def test_simplifying_is_idempotent_and_leaves_non_han_text_alone(text: str) -> None:
    once = simplified(text)
    assert simplified(once) == once
    if not any("\u4e00" <= ch <= "\u9fff" for ch in text):
        assert once == text


class RecordingEmbedder(HashEmbedder):
    def embed_queries(self, texts):  # type: ignore[no-untyped-def]
        return self.embed_passages(list(texts))  # which records them


def _index(tmp_path, notes: dict[str, str]) -> Path:  # type: ignore[no-untyped-def]
    """The index file of a committed, synced vault of ``notes``."""
    return hashed_index(tmp_path / "repo", notes, "vault: .\nindex:\n  embedders: [multilingual-e5-small]\n")


ENGLISH = {"sync.md": "# Sync settings\nHow to configure sync between devices.\n",
           "links.md": "# Internal links\nLinks between notes and how they are shown.\n"}
TAIWANESE = {"sync.md": "# 同步設定\n如何設定裝置之間的同步。\n", "links.md": "# 內部連結\n筆記之間的連結如何顯示。\n"}


def _search(db_path, text: str) -> list[str]:  # type: ignore[no-untyped-def]
    from vaultsync.search.options import SearchOptions
    from vaultsync.search.pipeline import Searcher

    record: list[str] = []
    searcher = Searcher(db_path, {"multilingual-e5-small": RecordingEmbedder("multilingual-e5-small", record)},
                        relevance_model=None)
    try:
        searcher.search(text, SearchOptions(min_relevance=0.0))
    finally:
        searcher.close()
    return record


def test_over_an_english_vault_the_dense_leg_embeds_the_simplified_query(tmp_path) -> None:  # type: ignore[no-untyped-def]
    db_path = _index(tmp_path, ENGLISH)
    assert _search(db_path, "同步設定") == ["同步设置"]  # tw2sp: the mainland word
    assert _search(db_path, "同步设置") == ["同步设置"]  # Simplified already: as typed
    with sqlite3.connect(db_path) as db:
        assert embedding_text(db, parse_query("Sync settings")) == "Sync settings"


def test_over_a_traditional_chinese_vault_the_query_is_embedded_as_typed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    db_path = _index(tmp_path, TAIWANESE)
    assert _search(db_path, "同步設定") == ["同步設定"]
    with sqlite3.connect(db_path) as db:
        assert embedding_text(db, parse_query("筆記之間的連結")) == "筆記之間的連結"
        assert embedding_text(db, parse_query("外掛程式選項")) == "插件程序选项"  # words the vault lacks
