"""The command line's argument parser: argparse, with a did-you-mean for a mistyped command, option
or choice (``vaultsync serach`` → ``did you mean 'search'?``), as git does, and every usage error on one
line."""

from __future__ import annotations

import argparse
import re
import shlex
import sys

TYPE_CHECKING = False  # as in vaultsync.cli.main: importing typing costs the daemon's light route
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

# argparse's own wording (Lib/argparse.py, unchanged since 3.2): the one place its values are named
_INVALID_CHOICE = re.compile(r"invalid choice: '((?:[^'\\]|\\.)*)' \(choose from (.*)\)$")


def closest(word: str, options: list[str]) -> str | None:
    """The option nearest ``word`` (:func:`difflib.get_close_matches`, cutoff 0.6), compared without case
    and without the leading ``-`` (``--xyz`` is no closer to ``--fix`` for the dashes both have), or None."""
    import difflib  # only a usage error needs it

    bare = {o.lstrip("-").casefold(): o for o in reversed(options)}
    close = difflib.get_close_matches(word.lstrip("-").casefold(), list(bare), n=1, cutoff=0.6)
    return bare[close[0]] if close else None


class Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose usage errors (exit 2) name the nearest valid spelling;
    its sub-command parsers are of this class too. ``load_command(name)``, where set, gives a sub-command's
    whole parser when this one holds only its name (the CLI loads one command's module)."""

    load_command: Callable[[str], Parser] | None = None

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """argparse's, keeping the arguments read for :meth:`error`."""
        self._read = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        """``message`` on one line of stderr, with a did-you-mean where one is close and where to read the
        options (not argparse's usage block: an agent pays for every line); exit 2. An option with its value
        written before the command (``vaultsync --top-k 3 search x``: argparse takes ``3`` for the command)
        is told to go after it."""
        if found := _INVALID_CHOICE.search(message):
            choices = re.findall(r"'((?:[^'\\]|\\.)*)'", found.group(2))
            if before := self._options_before(found.group(1), choices):
                command, options = before
                message = f"`{options}` stands before the command; an option goes after it: {self.prog} {command} {options} …"
            elif near := closest(found.group(1), choices):
                message += f"; did you mean '{near}'?"
        elif "arguments are required:" in message and (dashed := self._dashed_positional()):
            message += f" (a {dashed[0]} that starts with '-' goes after `--`: {self.prog} -- {dashed[1]})"
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def _dashed_positional(self) -> tuple[str, str] | None:
        """``(positional's name, the word)`` when a required positional went missing and an argument read looks
        like an option this parser does not have (``vaultsync search -webhook``: argparse took the query for
        one); else None."""
        missing = [a for a in self._actions if not a.option_strings and a.required and a.dest != "run"]
        word = next((a for a in getattr(self, "_read", []) if a.startswith("-") and len(a) > 1
                     and a.split("=", 1)[0] not in self._option_string_actions), None)
        return (missing[0].dest, shlex.quote(word)) if missing and word else None

    def _options_before(self, refused: str, choices: list[str]) -> tuple[str, str] | None:
        """``(command, the options written before it)`` when this parser's sub-command slot took ``refused``, an
        option's value (``vaultsync --top-k 3 search x``), and a later argument is a command that has every one
        of those options; else None."""
        commands = next((a.choices for a in (self._subparsers._group_actions if self._subparsers else [])  # noqa: SLF001
                         if isinstance(a, argparse._SubParsersAction)), None)  # noqa: SLF001
        read = getattr(self, "_read", [])
        if not commands or set(choices) != set(commands) or refused not in read or not read[0].startswith("-"):
            return None
        command = next((a for a in read[read.index(refused) + 1:] if a in commands), None)
        if command is None:
            return None
        before = read[:read.index(command)]
        try:
            full = self.load_command(command) if self.load_command is not None else commands[command]
        except ImportError:  # the command's optional extra is missing: no hint, argparse's own error
            return None
        has = full._option_string_actions  # noqa: SLF001
        if not all(a.split("=", 1)[0] in has for a in before if a.startswith("-")):
            return None
        return command, " ".join(before)

    def unrecognized(self, extras: list[str]) -> NoReturn:
        """The usage error for arguments no option takes, with the nearest option of this parser for each
        mistyped one (``--toppk`` → ``--top-k``); an option of this command written before it
        (``vaultsync --json check``) is told to go after it."""
        options = [s for s in self._option_string_actions if s.startswith("-")]
        misplaced = [a for a in extras if a.split("=", 1)[0] in options]
        said = f"unrecognized arguments: {' '.join(extras)}"
        if misplaced:
            self.error(f"{said}; an option of `{self.prog}` goes after it: {self.prog} {' '.join(misplaced)} …")
        hints = [f"'{near}'" for arg in extras if arg.startswith("--")
                 if (near := closest(arg.split("=", 1)[0], [o for o in options if o.startswith("--")]))]
        self.error(f"{said}; did you mean {' or '.join(dict.fromkeys(hints))}?" if hints else said)


def command_parser(parser: Parser, namespace: Any) -> Parser:
    """The innermost sub-command parser that read ``namespace`` (``vaultsync models build``: that of
    ``build``); the top-level parser without a command."""
    while parser._subparsers is not None:  # noqa: SLF001 - argparse keeps its sub-commands here
        action = next((a for a in parser._subparsers._group_actions  # noqa: SLF001
                       if isinstance(a, argparse._SubParsersAction)), None)  # noqa: SLF001
        chosen = action.choices.get(getattr(namespace, action.dest, None) or "") if action is not None else None
        if chosen is None:
            break
        parser = chosen
    return parser
