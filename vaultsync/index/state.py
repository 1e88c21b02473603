"""``state.json`` of an index: last sync, last error — what ``vaultsync status`` reports."""

from __future__ import annotations

import json
import os
import posixpath
import traceback

from vaultsync.index.layout import IndexLayout

# each key the status reads, with the JSON types its value may have (another value is dropped as unreadable)
_KINDS: dict[str, tuple[type, ...]] = {"last_run": (int, float), "last_error_at": (int, float),
                                       "last_seconds": (int, float), "last_status": (str,), "last_commit": (str,),
                                       "last_error": (str,), "warnings": (list,)}


def write_state(layout: IndexLayout, **values: object) -> None:
    """Merge ``values`` into ``state.json`` (last run, last error) atomically; a damaged file is replaced."""
    layout.dir.mkdir(parents=True, exist_ok=True)
    state = read_state(layout)
    state.update(values)
    tmp = layout.state.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps(state, indent=2, default=str), encoding="utf-8")
        os.replace(tmp, layout.state)
    except BaseException:  # a full disk: no half-written file is left behind
        tmp.unlink(missing_ok=True)
        raise


def read_state(layout: IndexLayout) -> dict[str, object]:
    """``state.json`` as a dict: empty when absent or not a JSON object, without a known key whose value
    has another type (a file some other program wrote: ``[1, 2]``, ``{"warnings": 5}``)."""
    try:
        state = json.loads(layout.state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(state, dict):
        return {}
    for key, kinds in _KINDS.items():
        value = state.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)
                                  or (key == "warnings" and not all(isinstance(w, str) for w in value))):
            del state[key]
    return state


def format_exception(exc: BaseException) -> str:
    """One line for the log/status: type and message, plus the innermost frame."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" ({posixpath.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


