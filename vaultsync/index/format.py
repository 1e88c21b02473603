"""What shapes a stored index besides the notes: the SQLite schema, the text (folded, with the note's
tags) its FTS5 columns hold, and the default chunk size.

Kept apart, with no import but ``re`` and ``unicodedata``, so that the hook's "is the index
current?" test (:mod:`vaultsync.index.fastpath`) can compare them without loading the index code.
"""

from __future__ import annotations

import re
import unicodedata

DEFAULT_TARGET_TOKENS = 100  # chunk size in tokens, chosen on the evaluation sets (docs/eval.md, chunk-size rows)

# 19: token vectors for MaxSim (ADR-0117); 18: block vectors (ADR-0116); 17: a moment's expires dated where today is counted (ADR-0111); 16: chunks_words, the short-word index
# (ADR-0106); 15: confidence outside 0..1 (ADR-0103)
SCHEMA_VERSION = "19"
# how notes are read (YAML values, headings, link resolution, messages): a new one re-indexes every note
# (embeddings come from the cache), so an index never keeps what older code read
# 9: setext headings start sections, as ATX ones do; 8: a heading with nothing under it is indexed, aliases
# are searched with the title; 7: comments and math across blank lines one block (ADR-0116); 6: FM011
# unreadable, block ids at a block end
READER_VERSION = "9"

DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notes (
    path TEXT PRIMARY KEY,
    blob TEXT NOT NULL,
    title TEXT NOT NULL,
    memory_id TEXT,
    type TEXT,
    status TEXT,
    created TEXT,
    last_validated TEXT,
    expires TEXT,
    confidence REAL,
    importance INTEGER,
    superseded_by TEXT,
    aliases TEXT NOT NULL,
    frontmatter TEXT NOT NULL,
    warnings TEXT NOT NULL,
    unreadable TEXT
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL,
    n INTEGER NOT NULL,
    heading TEXT NOT NULL,
    text TEXT NOT NULL,
    norm TEXT NOT NULL,
    hash TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    tokens INTEGER NOT NULL,
    blocks TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    id TEXT NOT NULL,
    path TEXT NOT NULL,
    hash TEXT NOT NULL,
    kind TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, id)
);
CREATE TABLE IF NOT EXISTS blocks (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    hash TEXT NOT NULL,
    spans TEXT NOT NULL,
    vectors BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS blocks_path ON blocks(path);
CREATE TABLE IF NOT EXISTS tokens (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    hash TEXT NOT NULL,
    vectors BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS tokens_path ON tokens(path);
CREATE INDEX IF NOT EXISTS tokens_hash ON tokens(hash);
CREATE INDEX IF NOT EXISTS blocks_hash ON blocks(hash);
CREATE INDEX IF NOT EXISTS vectors_path ON vectors(path);
CREATE INDEX IF NOT EXISTS vectors_hash ON vectors(model, hash);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(title, heading, text, tokenize='trigram');
CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(path UNINDEXED, title, body, tokenize='trigram');
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_words USING fts5(words, tokenize="unicode61 tokenchars '_'");
CREATE TABLE IF NOT EXISTS links (
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    anchor TEXT,
    kind TEXT NOT NULL,
    resolved TEXT,
    line INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS links_source ON links(source);
CREATE INDEX IF NOT EXISTS links_resolved ON links(resolved);
CREATE TABLE IF NOT EXISTS refs (
    source TEXT NOT NULL,
    field TEXT NOT NULL,
    ref TEXT NOT NULL,
    wikilink INTEGER NOT NULL,
    resolved TEXT
);
CREATE INDEX IF NOT EXISTS refs_source ON refs(source);
"""


# sha256(SCHEMA_VERSION + DDL)[:16], written out so that the hook path need not import hashlib;
# tests/test_fastpath.py fails when the DDL changes and this does not
SCHEMA_FINGERPRINT = "1823ac8955fce2f8"


def fold(text: str) -> str:
    """The text the FTS5 columns hold and queries are matched as, so that a reader's same word matches:
    NFKC; full case folding (``Straße`` → ``strasse``); the dot that folding leaves on a Turkish ``İ``
    dropped (``İstanbul`` → ``istanbul``); and accents off Latin and Greek letters (``naïve`` → ``naive``,
    ``München`` → ``munchen``, ``Việt`` → ``viet``, ``ή`` → ``η``), with the few letters that carry their
    stroke in the letter itself (``ł ø đ ı æ œ``) read as the plain ones a keyboard without them types.

    Marks a reader may leave out go too: stress on Cyrillic (``моло́ко`` → ``молоко``), Arabic harakat
    and tatweel (``مَرْحَبًا`` → ``مرحبا``), Hebrew niqqud (``שָׁלוֹם`` → ``שלום``). Marks that make another
    letter stay: kana voicing (``が`` ≠ ``か``), Devanagari and Thai vowel signs, Cyrillic ``й`` (≠ ``и``)
    and ``ё``. Length may change; nothing maps positions back.
    """
    folded = unicodedata.normalize("NFKC", text).casefold().replace("i\u0307", "i")
    if folded.isascii():
        return folded
    plain = _ACCENTS.sub(r"\1", unicodedata.normalize("NFD", folded))
    plain = _OPTIONAL_MARKS.sub("", _STRESS.sub(r"\1", plain)).translate(_PLAIN_LETTERS)
    return unicodedata.normalize("NFC", plain)


SHORT_WORD = re.compile(r"(?<!\w)[0-9a-z_]{1,2}(?!\w)")  # in folded text: ASCII is lower case


def short_words(folded: str) -> str:
    """The words of at most 2 ASCII characters of ``folded`` text (:func:`fold`), whole words as
    ``(?<!\\w)…(?!\\w)`` reads them (``ci`` in ``ci/cd``, not in ``decision`` or ``ciß``), each
    occurrence kept, joined by spaces: what ``chunks_words`` indexes, since trigram FTS5 cannot match
    them (``CI``, ``DB``, ``v2``, ``9``)."""
    return " ".join(SHORT_WORD.findall(folded))


# a Latin or Greek letter and the combining diacritical marks (U+0300–U+036F) that follow it
_ACCENTS = re.compile("([a-z\u00df-\u02af\u1e00-\u1eff\u0370-\u03ff\u1f00-\u1fff])[\u0300-\u036f]+")
# a stress mark (grave, acute) on a Cyrillic letter: молоко́ is молоко; й (breve) and ё (diaeresis) stay
_STRESS = re.compile("([\u0400-\u04ff])[\u0300\u0301]+")
# vowel points and cantillation a reader may or may not write: Arabic harakat, tanween, shadda, sukun and the
# tatweel that stretches a word; Hebrew niqqud and cantillation marks
_OPTIONAL_MARKS = re.compile("[\u064b-\u065f\u0670\u0640\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]")
_PLAIN_LETTERS = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ı": "i", "æ": "ae", "œ": "oe"})


MAX_TAGS, MAX_TAG_CHARS = 64, 64  # the tags searched with a note's title, and each one's length


def searched_names(title: str, aliases: list[str], frontmatter: dict[str, object]) -> str:
    """What BM25 reads with every chunk of a note besides its heading and text: its title, its ``aliases``
    (the names its links resolve by) and its tags (:func:`tag_terms`), each list bounded like the tags."""
    return " ".join([title, *(a[:MAX_TAG_CHARS] for a in aliases[:MAX_TAGS]), *tag_terms(frontmatter)])


def tag_terms(frontmatter: dict[str, object]) -> list[str]:
    """A note's frontmatter ``tags``, searched with its title: a list of terms or one string of them
    (``"ops, deploys"``, ``#deploys``), ``#`` dropped; other values give none. A tag names what the
    note is about even where its text never says the word."""
    tags = frontmatter.get("tags")
    items = tags.replace(",", " ").split() if isinstance(tags, str) else tags if isinstance(tags, list) else []
    terms = [t.strip().lstrip("#")[:MAX_TAG_CHARS] for t in items if isinstance(t, str) and t.strip().lstrip("#")]
    return terms[:MAX_TAGS]  # each chunk's text repeats them: a note of 20,000 tags must not repeat them all
