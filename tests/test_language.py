"""Language ID of queries and the secondary dense leg's gate (ADR-0061): USE multilingual votes only
on queries in the 16 languages it was trained on, whatever their script."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultsync.search.language import USE_LANGUAGES, language_of, scripts, use_share
from vaultsync.search.options import SearchOptions
from vaultsync.search.query import QueryError, parse_query
from vaultsync.search.weights import COVERED, secondary_weight

SENTENCES = {
    "en": "How many points did the defence of the Panthers give up during the season?",
    "de": "Wie viele Punkte hat die Verteidigung der Panthers in der Saison abgegeben?",
    "fr": "Combien de points la défense des Panthers a-t-elle concédés pendant la saison ?",
    "es": "¿Cuántos puntos concedió la defensa de los Panthers durante la temporada?",
    "ru": "Сколько очков пропустила защита команды за весь прошедший сезон?",
    "ar": "كم نقطة تخلى عنها دفاع الفريق خلال الموسم الماضي؟",
    "vi": "Hàng phòng thủ của đội đã để thủng lưới bao nhiêu điểm trong mùa giải?",
    "fi": "Kuinka monta pistettä joukkueen puolustus päästi koko kauden aikana?",
    "hu": "Hány pontot engedett ki a csapat védelme az egész szezon során?",
    "cs": "Kolik bodů obdržela obrana týmu během celé uplynulé sezóny?",
    "ro": "Câte puncte a cedat apărarea echipei în timpul întregului sezon?",
    "uk": "Скільки очок пропустив захист команди за весь минулий сезон?",
    "fa": "دفاع این تیم در طول فصل گذشته چند امتیاز از دست داد؟",
    "ja": "チームの守備は今シーズン何点を失いましたか？",
    "ko": "팀의 수비는 이번 시즌에 몇 점을 내주었습니까?",
    "zh": "球队的防守在本赛季丢了多少分？",
    "th": "แนวรับของทีมเสียไปกี่แต้มในฤดูกาลนี้",
    "el": "Πόσους πόντους δέχτηκε η άμυνα της ομάδας κατά τη διάρκεια της σεζόν;",
    "he": "כמה נקודות ספגה ההגנה של הקבוצה במהלך העונה?",
    "hi": "पूरे सीज़न में टीम की रक्षा ने कितने अंक गंवाए?",
}


@pytest.mark.parametrize("lang", sorted(SENTENCES))
def test_language_id_names_the_language_of_a_clear_sentence(lang: str) -> None:
    got = language_of(SENTENCES[lang])
    if lang in ("el", "he", "hi"):  # decided by the script alone: only "not a USE language" matters
        assert got not in USE_LANGUAGES
    else:
        assert got == lang


@pytest.mark.parametrize("lang", ["vi", "fi", "hu", "cs", "ro", "uk", "fa", "el", "he", "hi"])
def test_use_gets_no_vote_outside_its_training_languages(lang: str) -> None:
    assert secondary_weight(parse_query(SENTENCES[lang]), SearchOptions(secondary_weight=0.5)) == 0.0


@pytest.mark.parametrize("lang", ["en", "de", "fr", "es", "ru", "ar", "ja", "ko", "zh", "th"])
def test_use_keeps_its_weight_inside_its_training_languages(lang: str) -> None:
    assert secondary_weight(parse_query(SENTENCES[lang]), SearchOptions(secondary_weight=0.5)) == 0.5


def test_short_and_covered_queries_keep_todays_behaviour() -> None:
    opts = SearchOptions(secondary_weight=0.5)
    for short in ("sync", "Startseite", "Befehle"):  # too short to tell: USE votes
        assert use_share(short) is None and secondary_weight(parse_query(short), opts) == 0.5
    for title in ("Tastenkürzel", "Slash-Befehle", "Graph-Ansicht"):  # unsure is not "foreign": USE votes
        assert secondary_weight(parse_query(title), opts) == 0.5
    # the vault's own words (an English vault, an English query) need no language ID
    assert secondary_weight(parse_query(SENTENCES["vi"]), opts, coverage=COVERED) == 0.5
    assert secondary_weight(parse_query(SENTENCES["vi"]), opts, coverage=0.0) == 0.0


def test_cjk_decides_over_latin_letters_mixed_in() -> None:
    assert use_share("Obsidian 同步の設定") == 1.0 and language_of("Obsidian Sync の設定方法") == "ja"
    assert scripts("Obsidian 同步") == {"latin": 8, "han": 2}


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=80), st.floats(0.0, 10.0), st.one_of(st.none(), st.floats(0.0, 1.0)))
def test_weights_are_always_in_range(text: str, w: float, coverage: float | None) -> None:
    share = use_share(text)
    assert share is None or 0.0 <= share <= 1.0
    try:
        query = parse_query(text)
    except QueryError:
        return
    assert secondary_weight(query, SearchOptions(secondary_weight=w), coverage) in (0.0, w)
