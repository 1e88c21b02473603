"""Argument types shared by the commands: text from the command line that the vault can hold."""

from __future__ import annotations

import argparse


def utf8_text(text: str) -> str:
    """``text`` when it is valid UTF-8; else ``argparse.ArgumentTypeError`` naming the first byte that is
    not and where it stands (counted from 1). Bytes of argv that are not UTF-8 arrive as lone surrogates
    (PEP 383), which no note, file name or answer can be written with."""
    for i, ch in enumerate(text, 1):
        if "\udc80" <= ch <= "\udcff":
            raise argparse.ArgumentTypeError(f"not valid UTF-8: byte 0x{ord(ch) - 0xDC00:02X} at character {i} "
                                             "— pass text in UTF-8")
        if "\ud800" <= ch <= "\udfff":
            raise argparse.ArgumentTypeError(f"not valid UTF-8: a lone surrogate (U+{ord(ch):04X}) at character {i}")
    return text


def add_format(p: argparse.ArgumentParser, choices: tuple[str, ...]) -> None:
    """``--format`` (one of ``choices``, default text) and ``--json``, its short form for ``--format json``."""
    p.add_argument("--format", choices=choices, default="text", help="output format (default: text)")
    p.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")
