"""JSON Schema ``pattern`` values read as ECMA-262 reads them (JSON Schema 2020-12 §6.4 and §4.3).

Two differences from Python's ``re`` let bad values through a schema:
- Python lets ``$`` match before a final newline. ECMA-262 (without the ``m`` flag) matches it only at
  the end of the input. So ``^ADR-[0-9]{4}$`` accepted ``"ADR-0001\\n"`` (a block scalar ``|``), and a
  duplicate memory_id, a malformed date or a link with a trailing newline passed the schema.
- Python's ``\\d`` and ``\\w`` match any script's digits and letters. ECMA-262's match ASCII only, so
  ``ADR-٠٠٠١`` must not pass ``^ADR-\\d{4}$``.

Here every unescaped ``$`` outside a character class becomes ``\\Z``, and ``\\d``, ``\\w``, ``\\D`` and
``\\W`` become their ASCII classes.
"""

from __future__ import annotations

import re
from functools import lru_cache

_OUTSIDE = {"d": "[0-9]", "w": "[A-Za-z0-9_]", "D": "[^0-9]", "W": "[^A-Za-z0-9_]"}
_INSIDE = {"d": "0-9", "w": "A-Za-z0-9_"}


@lru_cache(maxsize=512)
def ecma_pattern(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled with ECMA-262's end anchor and ASCII ``\\d``/``\\w``.
    Raises ``re.error`` on a bad pattern."""
    out: list[str] = []
    i, in_class, first = 0, False, False  # first: the next character is the first of a class
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            esc = pattern[i + 1:i + 2]
            out.append((_INSIDE if in_class else _OUTSIDE).get(esc, "\\" + esc))
            i, first = i + 2, False
            continue
        if in_class:
            in_class = c != "]" or first  # "[]...]", "[^]...]": a leading "]" is a member
            first = False
        elif c == "[":
            in_class = first = True
            if pattern[i + 1:i + 2] == "^":
                c, i = "[^", i + 1
        elif c == "$":
            c = r"\Z"
        out.append(c)
        i += 1
    return re.compile("".join(out))
