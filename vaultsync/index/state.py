"""``state.json`` of an index: last sync, last error — what ``vaultsync status`` reports."""

from __future__ import annotations

import json
import os
import posixpath
import traceback

from vaultsync.index.layout import IndexLayout


def write_state(layout: IndexLayout, **values: object) -> None:
    """Merge ``values`` into ``state.json`` (last run, last error) atomically."""
    layout.dir.mkdir(parents=True, exist_ok=True)
    try:
        state = json.loads(layout.state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {}
    state.update(values)
    tmp = layout.state.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(state, indent=2, default=str), encoding="utf-8")
        os.replace(tmp, layout.state)
    except BaseException:  # a full disk: no half-written file is left behind
        tmp.unlink(missing_ok=True)
        raise


def read_state(layout: IndexLayout) -> dict[str, object]:
    """``state.json`` as a dict (empty when absent)."""
    try:
        return json.loads(layout.state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def format_exception(exc: BaseException) -> str:
    """One line for the log/status: type and message, plus the innermost frame."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({posixpath.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


