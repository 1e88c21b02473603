"""The command line's argument parser: argparse, with a did-you-mean for a mistyped command, option
or choice (``vaultsync serach`` → ``did you mean 'search'?``), as git does."""

from __future__ import annotations

import argparse
import difflib
import re
from typing import Any, NoReturn

# argparse's own wording (Lib/argparse.py, unchanged since 3.2): the one place its values are named
_INVALID_CHOICE = re.compile(r"invalid choice: '((?:[^'\\]|\\.)*)' \(choose from (.*)\)$")


def closest(word: str, options: list[str]) -> str | None:
    """The option nearest ``word`` (:func:`difflib.get_close_matches`, cutoff 0.6), or None."""
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return close[0] if close else None


class Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose usage errors (exit 2) name the nearest valid spelling;
    its sub-command parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        """Print usage and ``message`` with a did-you-mean where one is close; exit 2."""
        if found := _INVALID_CHOICE.search(message):
            choices = re.findall(r"'((?:[^'\\]|\\.)*)'", found.group(2))
            if near := closest(found.group(1), choices):
                message += f"; did you mean '{near}'?"
        super().error(message)

    def unrecognized(self, extras: list[str]) -> NoReturn:
        """The usage error for arguments no option takes, with the nearest option of this parser for
        each mistyped one (``--toppk`` → ``--top-k``)."""
        options = [s for s in self._option_string_actions if s.startswith("--")]
        hints = [f"'{near}'" for arg in extras if arg.startswith("--")
                 if (near := closest(arg.split("=", 1)[0], options))]
        said = f"unrecognized arguments: {' '.join(extras)}"
        self.error(f"{said}; did you mean {' or '.join(dict.fromkeys(hints))}?" if hints else said)


def command_parser(parser: Parser, namespace: Any) -> Parser:
    """The sub-command parser that read ``namespace`` (the top-level parser without a command)."""
    for action in parser._subparsers._group_actions if parser._subparsers else ():  # noqa: SLF001 - argparse API
        chosen = action.choices.get(getattr(namespace, "command", None) or "")
        if chosen is not None:
            return chosen
    return parser
