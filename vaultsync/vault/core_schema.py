"""The YAML 1.2 core schema: its tags, how a plain scalar resolves, and what each tag may hold.

https://yaml.org/spec/1.2.2/#1032-tag-resolution. An explicit tag reads only the spellings the schema
gives it: ``!!bool yes`` and ``!!null bob`` are errors (a :class:`ValueError` from :data:`SCALARS`),
never False or None.
"""

from __future__ import annotations

import re

STR = "tag:yaml.org,2002:str"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
BOOL = "tag:yaml.org,2002:bool"
NULL = "tag:yaml.org,2002:null"
SEQ = "tag:yaml.org,2002:seq"
MAP = "tag:yaml.org,2002:map"

CORE_BOOL = frozenset(("true", "True", "TRUE", "false", "False", "FALSE"))
CORE_NULL = frozenset(("", "~", "null", "Null", "NULL"))
CORE_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
CORE_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
NUMBER_START = frozenset("-+0123456789.")

MAX_NUMBER_CHARS = 1000  # a longer integer is no memory field's value (Python refuses past 4,300 digits)


def _int(text: str) -> int:
    """An integer of the core schema's forms only (an explicit ``!!int`` too: not ``1_000``, ``١٢`` or ``" 1"``)."""
    if not CORE_INT.fullmatch(text) or len(text) > MAX_NUMBER_CHARS:
        raise ValueError(text)
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def _float(text: str) -> float:
    if not (CORE_FLOAT.fullmatch(text) or CORE_INT.fullmatch(text)) or len(text) > MAX_NUMBER_CHARS:
        raise ValueError(text)
    low = text.lower()
    if low.endswith((".inf", ".nan")):
        return float(low.replace(".", ""))
    return float(_int(text)) if CORE_INT.fullmatch(text) else float(text)


def _bool(text: str) -> bool:
    """``true``/``false`` in the core schema's spellings: ``!!bool yes`` is an error, never False."""
    if text not in CORE_BOOL:
        raise ValueError(text)
    return text.lower() == "true"


def _null(text: str) -> None:
    """The core schema's null spellings: ``!!null bob`` is an error, not a value silently dropped."""
    if text not in CORE_NULL:
        raise ValueError(text)


SCALARS = {STR: str, INT: _int, FLOAT: _float, BOOL: _bool, NULL: _null}  # tag → constructor of its text


def core_tag(text: str) -> str:
    """The tag the YAML 1.2 core schema resolves the plain scalar ``text`` to."""
    if text in CORE_NULL:
        return NULL
    if text in CORE_BOOL:
        return BOOL
    if text[0] in NUMBER_START:
        return INT if CORE_INT.match(text) else FLOAT if CORE_FLOAT.match(text) else STR
    return STR
