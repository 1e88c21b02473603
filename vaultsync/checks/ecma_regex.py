"""JSON Schema ``pattern`` values read as ECMA-262 reads them, with the ``u`` flag (JSON Schema 2020-12
§6.4 and §4.3). Compiled by Python's ``re``, or by the ``regex`` package when a pattern holds a Unicode
property escape ``\\p{…}``, which ``re`` lacks (imported only then: it costs ~20 ms).

What differs from Python, translated token by token outside and inside character classes:
- ``$`` (no ``m`` flag) matches only at the end of the input, never before a final newline: ``\\Z``. So
  ``^ADR-[0-9]{4}$`` rejects ``"ADR-0001\\n"`` (a block scalar ``|``).
- ``\\d``, ``\\w``, ``\\b`` are ASCII: ``ADR-٠٠٠١`` must not pass ``^ADR-\\d{4}$``; ``\\s`` is ECMA-262's set
  (U+FEFF in, U+001C out); ``\\cJ`` is a control character.
- ``.`` matches no line terminator (``\\n``, ``\\r``, U+2028, U+2029).
- ``[]`` matches nothing and ``[^]`` any character; a ``]`` right after ``[`` ends the class.
- ES2018 syntax: named groups ``(?<name>…)`` and ``\\k<name>``, Unicode property escapes ``\\p{Lu}``,
  ``\\p{Script=Greek}``, code point escapes ``\\u{1F600}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

_SPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"  # ECMA-262 §22.2.2.9
_OUTSIDE = {"d": "[0-9]", "w": "[A-Za-z0-9_]", "D": "[^0-9]", "W": "[^A-Za-z0-9_]", "b": r"(?a:\b)", "B": r"(?a:\B)",
            "s": f"[{_SPACE}]", "S": f"[^{_SPACE}]"}
_INSIDE = {"d": "0-9", "w": "A-Za-z0-9_", "s": _SPACE, "D": "\\x00-/:-\\U0010ffff",  # [\D]: all but the digits
           "W": "\\x00-/:-@\\[-\\^`{-\\U0010ffff"}
_DOT = r"[^\n\r\u2028\u2029]"
_BACKREF = re.compile(r"k<([A-Za-z_$][A-Za-z0-9_$]*)>")
_CODE_POINT = re.compile(r"u\{([0-9A-Fa-f]{1,6})\}")
_PROPERTY = re.compile(r"[pP]\{[A-Za-z0-9_=]+\}")
_GROUP_NAME = re.compile(r"\(\?<(?=[A-Za-z_$])")


def _escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    """(the translation of the escape at ``pattern[i]`` (a backslash), the index after it)."""
    rest = pattern[i + 1:]
    for rx, make in ((_BACKREF, lambda m: f"(?P={m.group(1)})"), (_CODE_POINT, lambda m: f"\\U{int(m.group(1), 16):08X}"),
                     (_PROPERTY, lambda m: "\\" + m.group(0))):
        m = rx.match(rest)
        if m is not None and not (in_class and rx is _BACKREF):
            return make(m), i + 1 + m.end()
    esc = pattern[i + 1:i + 2]
    if esc == "c" and pattern[i + 2:i + 3].isascii() and pattern[i + 2:i + 3].isalpha():  # \cJ: a control character
        return f"\\x{ord(pattern[i + 2]) % 32:02x}", i + 3
    if in_class:
        return ("\\x08" if esc == "b" else _INSIDE.get(esc, "\\" + esc)), i + 2  # [\b] is a backspace
    return _OUTSIDE.get(esc, "\\" + esc), i + 2


def translate(pattern: str) -> str:
    """``pattern`` (ECMA-262, ``u`` flag) rewritten for Python (see the module docstring)."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            piece, i = _escape(pattern, i, in_class)
            out.append(piece)
            continue
        if in_class:
            in_class = c != "]"
            out.append("\\[" if c == "[" else c)  # a "[" inside a class is a member (no nested sets)
        elif pattern.startswith("[]", i) or pattern.startswith("[^]", i):
            out.append("(?!)" if pattern[i + 1] == "]" else r"[\s\S]")
            i += 2 if pattern[i + 1] == "]" else 3
            continue
        elif c == "[":
            in_class = True
            out.append("[^" if pattern.startswith("[^", i) else "[")
            i += 2 if pattern.startswith("[^", i) else 1
            continue
        elif c == "$":
            out.append(r"\Z")
        elif c == ".":
            out.append(_DOT)
        elif _GROUP_NAME.match(pattern, i):
            out.append("(?P<")
            i += 3
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


@lru_cache(maxsize=512)
def ecma_pattern(pattern: str) -> Any:
    """``pattern`` compiled with ECMA-262's meaning (see the module docstring): a ``re.Pattern``, or a
    ``regex.Pattern`` for a pattern with ``\\p{…}``; both have ``search``.

    Raises:
        re.error, or regex.error: not a valid pattern (:func:`is_ecma_regex` tells without raising).
    """
    source = translate(pattern)
    if "\\p{" not in source and "\\P{" not in source:
        return re.compile(source)
    import regex

    return regex.compile(source, regex.VERSION0)


PATTERN_TIMEOUT_S = 1.0  # a custom schema's pattern on one value: far past any real one


@lru_cache(maxsize=512)
def _guarded(pattern: str) -> Any:
    import regex

    return regex.compile(translate(pattern), regex.VERSION0)


@lru_cache(maxsize=1)
def _builtin_patterns() -> frozenset[str]:
    """The ``pattern`` values of the schemas vaultsync ships: trusted, matched by ``re`` as compiled."""
    from vaultsync.resources import data_dir

    found: set[str] = set()
    stack: list[Any] = [json.loads(f.read_text(encoding="utf-8")) for f in data_dir("schemas").glob("*.schema.json")]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                found.add(node["pattern"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return frozenset(found)


def pattern_search(pattern: str) -> Callable[[str], bool]:
    """Whether ``pattern`` (ECMA-262) matches somewhere in a text. A pattern of a schema vaultsync ships
    runs on ``re``; any other (a committed schema is untrusted) on the ``regex`` package, which gives up
    after :data:`PATTERN_TIMEOUT_S`, so that a pattern that backtracks without end (``^(a+)+$``) cannot
    hang the hook. The returned function raises ``TimeoutError`` when it gives up; compiling raises as
    :func:`ecma_pattern` does."""
    if pattern in _builtin_patterns():
        compiled = ecma_pattern(pattern)
        return lambda text: compiled.search(text) is not None
    guarded = _guarded(pattern)
    return lambda text: guarded.search(text, timeout=PATTERN_TIMEOUT_S) is not None


def is_ecma_regex(value: object) -> bool:
    """The JSON Schema ``regex`` format: whether a string compiles as an ECMA-262 pattern (non-strings pass)."""
    if not isinstance(value, str):
        return True
    try:
        ecma_pattern(value)
    except Exception:  # noqa: BLE001 - re.error, regex.error, OverflowError: not a pattern
        return False
    return True
