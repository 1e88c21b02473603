"""The one train / held-out split of ``../shared/train/qa``, by article ``title`` across every file.

XQuAD, SQuAD-it and the SQuAD 2.0 dev sets share Wikipedia articles, so a split by row
would leak a paragraph from training into validation; a split by title does not. Held-out
titles serve validation (calibration error) and the cross-lingual benchmark
(``bench/bench_xquad.py``); nothing trains on them.
"""

from __future__ import annotations

import hashlib


def held_out(title: str) -> bool:
    """True for the half of titles (by the first byte of their SHA-256) no training run may use."""
    return hashlib.sha256(title.encode("utf-8")).digest()[0] % 2 == 0
