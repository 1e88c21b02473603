"""Usage errors name the nearest valid spelling: a new user's `vaultsync serach` or `--toppk 3` got only
argparse's "invalid choice" / "unrecognized arguments"."""

from __future__ import annotations

import io
import subprocess
import sys
from contextlib import redirect_stderr

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from vaultsync.cli.main import COMMANDS, build_parser, main


def usage_error(argv: list[str], capsys) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err  # one line: no usage block
    help_said = f" (see `{err.split(': error: ')[0]} --help`)"
    assert err.endswith(help_said), err
    return err.removesuffix(help_said)


@pytest.mark.parametrize("argv, said", [
    (["serach", "retries"], "invalid choice: 'serach' (choose from 'check', "),
    (["sarch"], "invalid choice: 'sarch'"),
    (["Search", "x"], "invalid choice: 'Search'"),
    (["SEARCH", "x"], "invalid choice: 'SEARCH'"),
    (["stauts"], "invalid choice: 'stauts'"),
])
def test_a_mistyped_command_gets_the_nearest_one(argv, said, capsys):
    err = usage_error(argv, capsys)
    near = {"serach": "search", "sarch": "search", "Search": "search", "SEARCH": "search", "stauts": "status"}[argv[0]]
    assert said in err and err.endswith(f"; did you mean '{near}'?"), err


@pytest.mark.parametrize("argv, near", [
    (["search", "x", "--toppk", "3"], "--top-k"),
    (["search", "x", "--formt=json"], "--format"),
    (["search", "x", "--include-expird"], "--include-expired"),
    (["check", "--stagde"], "--staged"),
    (["status", "--jsno"], "--json"),
    (["search", "x", "--TOP-K", "3"], "--top-k"),
    (["models", "build", "--forse"], "--force"),
    (["models", "list", "--jsn"], "--json"),
])
def test_a_mistyped_option_gets_the_nearest_option_of_its_command(argv, near, capsys):
    err = usage_error(argv, capsys)
    command = " ".join(argv[:2]) if argv[0] == "models" else argv[0]  # the innermost command's options
    assert err.startswith(f"vaultsync {command}: error: unrecognized arguments: ")
    assert err.endswith(f"; did you mean '{near}'?"), err


@pytest.mark.parametrize("value", ["jsn", "JSON", "Json"])
def test_a_mistyped_choice_gets_the_nearest_choice(capsys, value):
    err = usage_error(["search", "x", "--format", value], capsys)
    assert f"invalid choice: '{value}'" in err and err.endswith("; did you mean 'json'?"), err


@pytest.mark.parametrize("argv", [["--json", "check"], ["--fix", "check"], ["--staged", "check"], ["--json", "status"]])
def test_an_option_before_its_command_is_told_to_go_after_it(argv, capsys):
    """`vaultsync --json check` said "did you mean '--json'?", naming the very option it refused."""
    err = usage_error(argv, capsys)
    command = argv[1]
    assert f"an option of `vaultsync {command}` goes after it: vaultsync {command} {argv[0]}" in err, err
    assert "did you mean" not in err, err


@pytest.mark.parametrize("argv, before, command", [
    (["--top-k", "3", "search", "x"], "--top-k 3", "search"),
    (["--format", "json", "search", "x"], "--format json", "search"),
    (["--rev", "HEAD~1", "check"], "--rev HEAD~1", "check"),
    (["--json", "--top-k", "3", "search", "x"], "--json --top-k 3", "search"),
    (["models", "--force", "x", "build"], "--force x", "models build"),
])
def test_an_option_with_its_value_before_the_command_is_told_to_go_after_it(argv, before, command, capsys):
    """`vaultsync --top-k 3 search x` said "invalid choice: '3'": argparse took the value for the command."""
    err = usage_error(argv, capsys)
    prog = "vaultsync" + (" models" if argv[0] == "models" else "")
    assert err == f"{prog}: error: `{before}` stands before the command; an option goes after it: " \
                  f"vaultsync {command} {before} …", err


@pytest.mark.parametrize("argv, said", [
    (["search", "--format", "jsn", "json"], "did you mean 'json'?"),  # a query that is a choice: no command
    (["check", "--format", "jsn", "text"], "did you mean 'json'?"),
    (["--top-k", "3", "sync", "search"], "invalid choice: '3'"),  # sync has no --top-k
    (["--force", "x", "models", "build"], "invalid choice: 'x'"),  # --force is build's, not models'
    (["--", "search", "x"], "invalid choice: '--'"),
])
def test_an_option_before_a_command_that_lacks_it_gets_argparses_error(argv, said, capsys):
    """The hint named a command without the option (`vaultsync sync --top-k 3 …`), and fired inside a command
    whose query happened to be a valid value (`search --format jsn json`)."""
    err = usage_error(argv, capsys)
    assert said in err and "stands before the command" not in err, err


@pytest.mark.parametrize("argv", [["zzzz"], ["search", "x", "--zzzzzz"], ["search", "x", "--format", "zzzz"],
                                  ["check", "--xyz"], ["check", "--bogusopt"], ["search", "x", "--bogus"]])
def test_nothing_close_is_argparses_own_error(argv, capsys):
    assert "did you mean" not in usage_error(argv, capsys)


def test_the_installed_command_says_it_without_a_traceback():
    res = subprocess.run([sys.executable, "-m", "vaultsync", "serach", "x"], capture_output=True, text=True)
    assert res.returncode == 2 and res.stdout == "" and "Traceback" not in res.stderr
    assert res.stderr.rstrip().endswith("did you mean 'search'? (see `vaultsync --help`)"), res.stderr


PREFIX = {"search": ["search", "x"], "check": ["check"], "status": ["status"], "sync": ["sync"]}
OPTIONS = {name: sorted(s for s in build_parser(name)._subparsers._group_actions[0].choices[name]  # noqa: SLF001
                        ._option_string_actions if s.startswith("--")) for name in PREFIX}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(OPTIONS)), st.data())
def test_property_an_option_with_a_letter_dropped_gets_an_option_of_its_command(command, data):
    """Any option of 4+ letters with one letter dropped, and nothing else wrong: exit 2 and a did-you-mean
    that names an option of that command (argparse takes a unique prefix as the option itself)."""
    option = data.draw(st.sampled_from(OPTIONS[command]))
    i = data.draw(st.integers(3, len(option) - 1))
    typo = option[:i] + option[i + 1:]
    assume(not any(o.startswith(typo) for o in OPTIONS[command]))
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as exited:
        main([*PREFIX[command], typo])
    assert exited.value.code == 2
    said = err.getvalue().strip().rsplit(" (see `", 1)[0]
    assert said.startswith(f"vaultsync {command}: error: unrecognized arguments: {typo}; did you mean '"), said
    assert said.split("'")[-2] in OPTIONS[command]


def test_every_command_parser_is_the_suggesting_kind():
    parser = build_parser()
    assert set(parser._subparsers._group_actions[0].choices) == set(COMMANDS)  # noqa: SLF001
    assert all(type(p) is type(parser) for p in parser._subparsers._group_actions[0].choices.values())  # noqa: SLF001


@pytest.mark.parametrize("argv, word", [(["search", "-webhook"], "-webhook"), (["search", "--top-k", "3", "-x"], "-x"),
                                        (["search", "-тест"], "'-тест'")])
def test_a_query_that_starts_with_a_dash_is_told_to_follow_double_dash(argv, word, capsys):
    """`vaultsync search -webhook` said only "the following arguments are required: query"."""
    err = usage_error(argv, capsys)
    assert f"(a query that starts with '-' goes after `--`: vaultsync {argv[0]} -- {word})" in err, err


def test_a_missing_query_alone_gets_no_dash_hint(capsys):
    err = usage_error(["search"], capsys)
    assert "required: query" in err and "`--`" not in err, err


@pytest.mark.parametrize("given, read", [(["adr,incident"], ["adr", "incident"]), (["adr", "rule, incident"],
                                         ["adr", "rule", "incident"]), (["adr"], ["adr"]), ([","], [","])])
def test_type_and_tag_values_split_on_commas(given, read):
    from vaultsync.cli.search import _split

    assert _split(given) == read and _split(None) is None
