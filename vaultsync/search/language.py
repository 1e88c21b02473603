"""Which language a query is in, as far as the secondary dense leg (USE multilingual) cares.

USE multilingual was trained on 16 languages (Yang et al. 2020); outside them it embeds
a query as noise and must not vote. The question per query is therefore narrow: *is this
text in one of those languages?* (:func:`use_share`).

The script decides first, without a model: Hangul is Korean, kana is Japanese, Han is
Chinese, Thai is Thai (all USE languages); Greek, Hebrew, Devanagari, Khmer, Georgian and
every other script without a USE language are not. Latin, Cyrillic and Arabic letters are
shared by USE languages and others (Vietnamese, Czech, Ukrainian, Persian …), so there
py3langid (Lui & Baldwin 2012, a naive Bayes over byte n-grams, 97 languages, its model
inside the wheel) gives each language a probability. Short texts say little about their
language; below :data:`MIN_LETTERS` letters the answer is "cannot tell" (None) and the
caller keeps its old behaviour.

The model loads lazily on the first ambiguous query, from arrays prepared once in the model
cache (:mod:`vaultsync.models.language_id`: ~30 ms and ~9 MB, instead of 0.7 s and 75 MB for
py3langid's own loader), and stays for the life of the process; a query decided by its script
never loads it.
"""

from __future__ import annotations

import bisect
import threading
from typing import Any

# ISO 639-1 codes of USE multilingual's training languages (zh-CN and zh-TW are both "zh").
USE_LANGUAGES = frozenset({"ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh"})
MIN_LETTERS = 12  # fewer letters than this: language ID is a guess, answer None

# (first code point, last code point, script); scripts not named here count as "other"
_RANGES = sorted([
    (0x0041, 0x005A, "latin"), (0x0061, 0x007A, "latin"), (0x00C0, 0x024F, "latin"), (0x1E00, 0x1EFF, "latin"),
    (0x2C60, 0x2C7F, "latin"), (0xA720, 0xA7FF, "latin"),
    (0x0370, 0x03FF, "greek"), (0x1F00, 0x1FFF, "greek"),
    (0x0400, 0x052F, "cyrillic"), (0x1C80, 0x1C8F, "cyrillic"), (0xA640, 0xA69F, "cyrillic"),
    (0x0530, 0x058F, "armenian"), (0x0590, 0x05FF, "hebrew"), (0xFB1D, 0xFB4F, "hebrew"),
    (0x0600, 0x06FF, "arabic"), (0x0750, 0x077F, "arabic"), (0x08A0, 0x08FF, "arabic"),
    (0xFB50, 0xFDFF, "arabic"), (0xFE70, 0xFEFF, "arabic"),
    (0x0900, 0x0DFF, "indic"), (0x0E00, 0x0E7F, "thai"), (0x0E80, 0x0EFF, "lao"), (0x0F00, 0x0FFF, "tibetan"),
    (0x1000, 0x109F, "myanmar"), (0x10A0, 0x10FF, "georgian"), (0x1200, 0x139F, "ethiopic"),
    (0x1780, 0x17FF, "khmer"),
    (0x1100, 0x11FF, "hangul"), (0x3130, 0x318F, "hangul"), (0xAC00, 0xD7AF, "hangul"),
    (0x3040, 0x30FF, "kana"), (0x31F0, 0x31FF, "kana"), (0xFF66, 0xFF9F, "kana"),
    (0x3400, 0x4DBF, "han"), (0x4E00, 0x9FFF, "han"), (0xF900, 0xFAFF, "han"), (0x20000, 0x3FFFF, "han"),
])
_STARTS = [r[0] for r in _RANGES]
# scripts whose letters alone settle the question; the rest need the model
DECIDED = {"hangul": "ko", "kana": "ja", "han": "zh", "thai": "th"}
SHARED = frozenset({"latin", "cyrillic", "arabic"})

_lock = threading.Lock()
_identifier: Any = None


def script_of(ch: str) -> str:
    """The script of one character (``other`` for scripts not in the table)."""
    cp = ord(ch)
    i = bisect.bisect_right(_STARTS, cp) - 1
    if i >= 0 and cp <= _RANGES[i][1]:
        return _RANGES[i][2]
    return "other"


def scripts(text: str) -> dict[str, int]:
    """Letters of ``text`` per script."""
    counts: dict[str, int] = {}
    for ch in text:
        if ch.isalpha():
            s = script_of(ch)
            counts[s] = counts.get(s, 0) + 1
    return counts


def identifier() -> Any:
    """The py3langid identifier with normalised probabilities, loaded once (thread-safe)."""
    global _identifier
    if _identifier is None:
        with _lock:
            if _identifier is None:
                from vaultsync.models import language_id

                _identifier = language_id.load()
    return _identifier


def warm_up() -> None:
    """Load the identifier in a background thread (the daemon calls this at start)."""
    threading.Thread(target=identifier, name="language-id", daemon=True).start()


def ranked(text: str) -> list[tuple[str, float]]:
    """Every language of the model with its probability for ``text``, best first.

    A prepared model whose files were damaged after it was opened (a lookup out of range, a file cut
    short, any error) is given up for py3langid's own, loaded in memory, for the rest of the process."""
    global _identifier
    try:
        return [(lang, float(p)) for lang, p in identifier().rank(text)]
    except Exception:  # noqa: BLE001 - damaged under us: py3langid's own loader
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        with _lock:
            _identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        return [(lang, float(p)) for lang, p in _identifier.rank(text)]


def is_cjk(text: str) -> bool:
    """True when Han, kana or Hangul make up at least a fifth of the letters (CJK words are short)."""
    counts = scripts(text)
    letters = sum(counts.values())
    return bool(letters) and any(counts.get(s, 0) * 5 >= letters for s in ("kana", "hangul", "han"))


def use_share(text: str) -> float | None:
    """How likely ``text`` is in one of USE's training languages, in [0, 1]; None: cannot tell.

    Decided by the script where the script settles it (1.0 for Hangul, kana, Han and Thai,
    0.0 for a script no USE language is written in); for Latin, Cyrillic and Arabic text of at
    least :data:`MIN_LETTERS` letters, the model's probability mass on USE's languages. CJK
    wins over Latin letters mixed in ("Obsidian 同步" is Chinese).
    """
    counts = scripts(text)
    letters = sum(counts.values())
    if not letters:
        return None
    if is_cjk(text):  # CJK letters are whole words: a fifth of them decides
        return 1.0
    script = max(counts, key=lambda s: counts[s])
    if script in DECIDED:
        return 1.0
    if script not in SHARED:
        return 0.0
    if letters < MIN_LETTERS:
        return None
    share = sum(p for lang, p in ranked(text) if lang in USE_LANGUAGES)
    return min(1.0, max(0.0, share))


def language_of(text: str) -> str | None:
    """The most likely language of ``text`` (ISO 639-1), or None when it cannot tell (too short,
    no letters, or a script the model does not cover)."""
    counts = scripts(text)
    letters = sum(counts.values())
    if not letters:
        return None
    for script in ("kana", "hangul"):
        if counts.get(script, 0) * 5 >= letters:
            return DECIDED[script]
    script = max(counts, key=lambda s: counts[s])
    if script in DECIDED:
        return DECIDED[script]
    if letters < MIN_LETTERS and script in SHARED:
        return None
    best = ranked(text)[0][0]
    return None if best == "zxx" else best
