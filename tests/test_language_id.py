"""py3langid's model prepared into the model cache (vaultsync.models.language_id): the answers are
py3langid's own, the model is decoded once, and a damaged or unwritable cache costs only speed."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from py3langid.langid import MODEL_FILE, LanguageIdentifier

from vaultsync.models import language_id
from vaultsync.models.file_array import FileArray
from vaultsync.search import language

TEXTS = [
    "How do we rotate the database credentials every quarter?",
    "Wie rotieren wir die Zugangsdaten der Datenbank jedes Quartal?",
    "Comment faisons-nous la rotation des identifiants de la base ?",
    "Как мы меняем пароли базы данных каждый квартал?",
    "كيف نغير كلمات مرور قاعدة البيانات كل ربع سنة؟",
    "Hàng phòng thủ của đội đã để thủng lưới bao nhiêu điểm?",
    "データベースの認証情報を四半期ごとに更新する方法",
    "Jak często zmieniamy hasła do bazy danych?",
    "", "1234 5678", "ÀÉÎÕÜ ÆØÅ ß", "a" * 5000,
]


@pytest.fixture(scope="module")
def stock() -> LanguageIdentifier:
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, os.PathLike[str]]:
    cache = tmp_path_factory.mktemp("lid-cache")
    return language_id.load(cache), cache


def folder_of(cache: os.PathLike[str]) -> Path:
    (folder,) = (p for p in (Path(cache) / "models").iterdir() if p.name.startswith("py3langid-"))
    return folder


def test_prepared_identifier_ranks_exactly_as_py3langid(stock, prepared) -> None:
    ident, _ = prepared
    for text in TEXTS:
        assert ident.rank(text) == stock.rank(text), text
        assert ident.classify(text) == stock.classify(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=0, max_size=300) | st.binary(max_size=200))
def test_prepared_identifier_agrees_on_any_text_or_bytes(stock, prepared, text) -> None:
    ident, _ = prepared
    assert ident.rank(text) == stock.rank(text)


def test_model_is_decoded_once_then_read_from_the_cache(prepared, monkeypatch) -> None:
    _, cache = prepared
    import py3langid.modelio

    def refuse(path):
        raise AssertionError("decoded again")

    monkeypatch.setattr(py3langid.modelio, "load_model", refuse)
    again = language_id.load(cache)
    assert isinstance(again.tk_nextmove, FileArray)
    assert again.rank(TEXTS[1])[0][0] == "de"


@pytest.mark.parametrize("damage", ["truncate", "classes", "header", "dtype"])
def test_damaged_prepared_files_are_written_again(tmp_path, stock, damage) -> None:
    language_id.load(tmp_path)
    folder = folder_of(tmp_path)
    if damage == "truncate":
        path = folder / "nextmove.npy"
        os.truncate(path, os.path.getsize(path) // 2)
    elif damage == "classes":
        (folder / "classes.json").write_text('{"format": 1, "classes": ["en"]}')
    elif damage == "header":
        (folder / "ptc.npy").write_bytes(b"not an array")
    else:
        np.save(folder / "row.npy", np.zeros(3, np.uint16))
    ident = language_id.load(tmp_path)
    assert ident.rank(TEXTS[3]) == stock.rank(TEXTS[3])
    assert language_id.load(tmp_path).rank(TEXTS[0]) == stock.rank(TEXTS[0])  # and the rewrite holds


def test_unwritable_cache_still_identifies(tmp_path, stock) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    ident = language_id.load(blocker)
    assert ident.rank(TEXTS[2]) == stock.rank(TEXTS[2])


def test_values_damaged_after_opening_fall_back_to_py3langid(tmp_path, stock, monkeypatch) -> None:
    monkeypatch.setattr(language, "_identifier", language_id.load(tmp_path))
    path = folder_of(tmp_path) / "nextmove.npy"
    bad = np.load(path)
    bad[:] = np.iinfo(bad.dtype).max  # every transition leaves the table: same size, cannot be walked
    with open(path, "r+b") as f:  # in place: the open identifier reads the new bytes
        f.seek(os.path.getsize(path) - bad.nbytes)
        f.write(bad.tobytes())
    assert language.ranked(TEXTS[1]) == [(lang, float(p)) for lang, p in stock.rank(TEXTS[1])]
    assert isinstance(language._identifier, LanguageIdentifier)
    assert not isinstance(language._identifier.tk_nextmove, FileArray)


def test_file_array_reads_rows_and_items(tmp_path) -> None:
    table = np.arange(24, dtype=np.float16).reshape(6, 4)
    np.save(tmp_path / "t.npy", table)
    rows = FileArray(tmp_path / "t.npy")
    assert rows.shape == (6, 4) and len(rows) == 6
    assert np.array_equal(rows[np.array([5, 0, 5])], table[[5, 0, 5]])
    np.save(tmp_path / "v.npy", np.array([7, 2**31 + 5], np.uint32))
    items = FileArray(tmp_path / "v.npy")
    assert (items[0], items[1]) == (7, 2**31 + 5)
    with pytest.raises(IndexError):
        items[2]
    with pytest.raises(IndexError):
        rows[np.array([6])]
    np.save(tmp_path / "o.npy", np.array(["x"], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        FileArray(tmp_path / "o.npy")


@pytest.mark.parametrize("damage", ["classes list", "classes number", "empty pc", "npz row", "huge shape",
                                    "uint64 nextmove", "complex nextmove", "uint8 nextmove", "nan pc",
                                    "zero ptc", "fifo", "folder is a file"])
def test_any_damage_to_the_prepared_files_is_caught_and_written_again(tmp_path, stock, damage) -> None:
    """Damage of every kind (torn, zeroed, retyped, reshaped, not a file) is found at open, through the
    CRC-32 written with the files or the layout checks, and the folder is prepared again."""
    language_id.load(tmp_path)
    folder = folder_of(tmp_path)
    nextmove = np.load(folder / "nextmove.npy")
    if damage == "classes list":
        (folder / "classes.json").write_text("[]")
    elif damage == "classes number":
        (folder / "classes.json").write_text('{"format": 1, "classes": 5, "crc32": {}}')
    elif damage == "empty pc":
        (folder / "pc.npy").write_bytes(b"")
    elif damage == "npz row":
        np.savez(folder / "row.npy", a=np.zeros(3))
    elif damage == "huge shape":
        (folder / "ptc.npy").write_bytes(b"\x93NUMPY\x01\x00v\x00{'descr': '<f2', 'fortran_order': False, "
                                         b"'shape': (2, 1000000000000000000000000000000), }".ljust(118) + b"\n")
    elif damage == "uint64 nextmove":
        np.save(folder / "nextmove.npy", nextmove.astype(np.uint64))
    elif damage == "complex nextmove":
        np.save(folder / "nextmove.npy", nextmove.astype(np.complex64))
    elif damage == "uint8 nextmove":
        np.save(folder / "nextmove.npy", (nextmove % 256).astype(np.uint32))
    elif damage == "nan pc":
        np.save(folder / "pc.npy", np.full(len(np.load(folder / "pc.npy")), np.nan, np.float32))
    elif damage == "zero ptc":
        path = folder / "ptc.npy"
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            f.seek(200)
            f.write(b"\0" * (size - 200))
    elif damage == "fifo":
        (folder / "nextmove.npy").unlink()
        os.mkfifo(folder / "nextmove.npy")
    else:
        import shutil

        shutil.rmtree(folder)
        folder.write_text("a file where the folder was")
    ident = language_id.load(tmp_path)
    assert ident.rank(TEXTS[1]) == stock.rank(TEXTS[1])
    assert isinstance(ident.tk_nextmove, FileArray)  # prepared again, not left in memory
    assert not [p for p in folder.parent.iterdir() if ".old-" in p.name or ".tmp-" in p.name]


def test_a_file_cut_short_under_a_running_identifier_falls_back(tmp_path, stock, monkeypatch) -> None:
    monkeypatch.setattr(language, "_identifier", language_id.load(tmp_path))
    assert language.ranked(TEXTS[0])[0][0] == "en"
    os.truncate(folder_of(tmp_path) / "nextmove.npy", 128)
    assert language.ranked(TEXTS[1]) == [(lang, float(p)) for lang, p in stock.rank(TEXTS[1])]
