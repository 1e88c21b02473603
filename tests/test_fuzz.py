"""A small run of the check fuzzer (bench/fuzz_check.py runs 10,000 notes): no traceback, no silent value change."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from fuzz_check import faithful, generate, run  # noqa: E402


@pytest.mark.parametrize("seed", [1, 2])
def test_generated_notes_never_crash_nor_change_values_silently(seed):
    stats = run(notes=300, batch=150, seed=seed)
    assert stats.notes == 300
    assert stats.tracebacks == []
    assert stats.silent == []


def test_the_oracle_itself_tells_changes_apart():
    assert faithful("1.5", 1.5) and not faithful("1.50", 1.5)
    assert faithful("x # note", "x") and not faithful("x #42", "x")
    assert faithful("~", None) and not faithful("#tag", None)
    import random
    name, data, intended = generate(random.Random(3))
    assert name.endswith(".md") and isinstance(data, bytes) and all(line > 1 for line in intended)
