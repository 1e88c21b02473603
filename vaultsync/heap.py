"""Hand freed heap memory back to the operating system, for long-lived processes that load models.

Loading the models and the index builds large transient objects (decoded tokenizer tables, parsed
JSON, decompressed weights). Once they are freed, glibc keeps their pages in the process heap, so
they still count in its resident size. ``malloc_trim(0)`` (glibc) gives those pages back: measured
with every rerank stage loaded at 10,000 notes, 481 → 444 MiB. Elsewhere (macOS, musl) it is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util


def trim() -> None:
    """Release the free pages of the C heap (glibc's ``malloc_trim(0)``, a few ms); never raises."""
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
