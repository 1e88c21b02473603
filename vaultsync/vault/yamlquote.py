"""A text written back as YAML: quoted where, written bare, YAML would read something else."""

from __future__ import annotations

import re
from decimal import Decimal

PLAIN_FLOW_ITEM = re.compile(r"\w(?:[\w .\-/]*[\w.\-/])?")  # a flow item YAML reads as this same text


def quote(text: str) -> str:
    """``text`` as a YAML quoted scalar that reads back unchanged (double quotes unless it needs escapes)."""
    if '"' not in text and "\\" not in text:
        return f'"{text}"'
    return "'" + text.replace("'", "''") + "'"


def flow_item(text: str) -> str:
    """``text`` as an item of a flow list or mapping (``[a, "b, c"]``): bare when it reads back as itself."""
    return text if PLAIN_FLOW_ITEM.fullmatch(text) else quote(text)


def plain_number(value: float) -> str:
    """``value`` written out without an exponent (``0.00001``, not ``1e-05``; ``100000000000000000000``, not
    ``1e+20``), as a reader that knows no exponent keeps it and a flag's value is typed."""
    text = format(Decimal(repr(value)), "f")
    return (text.rstrip("0").rstrip(".") or "0") if "." in text else text
