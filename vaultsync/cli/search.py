"""``vaultsync search "query"`` (also ``git memsearch``): the memories that matter, within a token budget.

Uses a running ``vaultsync serve`` daemon for this repository when there is one,
and runs the pipeline in-process otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys

from vaultsync.cli.argtypes import add_format, utf8_text
from vaultsync.serve.client import FORMATS


def add_parser(sub: argparse._SubParsersAction, name: str, help_text: str) -> None:
    p = sub.add_parser(name, help=help_text, description=__doc__)
    p.add_argument("query", nargs="+", type=utf8_text, help="what to look for, in any language")
    p.add_argument("--top-k", type=_positive, help="at most this many chunks (default 5)")
    p.add_argument("--budget", type=_positive, help="token budget for all returned text (default 1200)")
    p.add_argument("--type", action="append", dest="types", type=utf8_text, help="only notes of this type (repeatable, or comma-separated)")
    p.add_argument("--tag", action="append", dest="tags", type=utf8_text, help="only notes with this tag (repeatable, or comma-separated)")
    p.add_argument("--scope", type=utf8_text, help="only notes under this folder (from the repository's top, or the current folder)")
    p.add_argument("--include-expired", action="store_true", help="also return notes past their `expires` date")
    p.add_argument("--include-superseded", action="store_true", help="also return superseded notes")
    p.add_argument("--min-confidence", type=_fraction, help="hide notes below this confidence (default 0.5)")
    p.add_argument("--min-relevance", type=_fraction,
                   help="answer only when the best hit reaches this calibrated relevance (default 0.006; 0 always answers)")
    blocks = p.add_mutually_exclusive_group()
    blocks.add_argument("--whole-chunks", action="store_true",
                        help="deliver each hit's whole chunk, not only its best blocks (paragraphs, lists, turns)")
    blocks.add_argument("--blocks", action="store_true", help="deliver the best blocks even where the config's "
                                                              "`search.blocks: false` says whole chunks")
    p.add_argument("--no-rerank", action="store_true", help="skip the rerank stage")
    p.add_argument("--rerank", help="rerank stage: none, maxsim, cross-encoder (default from config)")
    p.add_argument("--explain", action="store_true", help="show every stage's rank and score for each hit")
    add_format(p, FORMATS)
    p.add_argument("--no-daemon", action="store_true", help="always search in-process")
    p.set_defaults(run=run)


def _repo_scope(scope: str) -> str:
    """``--scope`` from the repository's top folder: an absolute path, or a folder relative to the
    current one that exists there (as git reads paths), is made repository-relative; anything else
    is taken as written (the search judges it)."""
    from vaultsync.gitcmd import run_git

    done = run_git(["rev-parse", "--show-toplevel"], os.getcwd())
    top = done.stdout.strip() if done.returncode == 0 else ""
    here = os.path.realpath(os.path.join(os.getcwd(), scope))
    if top and (os.path.isabs(scope) or os.path.isdir(here)):
        rel = os.path.relpath(here, os.path.realpath(top))
        return rel.replace(os.sep, "/") if rel != ".." and not rel.startswith(".." + os.sep) else scope
    return scope


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 <= value <= 1.0:  # also rejects nan
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {text}")
    return value


def run(args: argparse.Namespace) -> int:
    raw = " ".join(args.query)
    if args.scope:
        args.scope = _repo_scope(args.scope)
    options = {
        "top_k": args.top_k, "budget": args.budget, "types": _split(args.types), "tags": _split(args.tags), "scope": args.scope,
        "include_expired": args.include_expired or None, "include_superseded": args.include_superseded or None,
        "min_confidence": args.min_confidence, "min_relevance": args.min_relevance, "rerank": False if args.no_rerank else None,
        "blocks": False if args.whole_chunks else True if args.blocks else None,
    }
    options = {k: v for k, v in options.items() if v is not None}
    try:
        out, asked = _through_daemon(args, raw, options) if not args.no_daemon else (None, None)
        light = out is not None  # answered by the light route: nothing else ran in this process
        if out is None:
            out = _full_route(args, raw, options, asked)
    except _Refused as exc:
        print(f"vaultsync search: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # the light route imports no sqlite3: it is looked at only here
        import sqlite3

        from vaultsync.index.damage import is_damage

        if not (isinstance(exc, sqlite3.DatabaseError) and is_damage(exc)):
            raise
        print(f"vaultsync search: the index is damaged ({exc}): run `vaultsync sync`, which rebuilds it from "
              "the commit (it is a cache; no note is lost)", file=sys.stderr)
        return 1
    if isinstance(out, int):
        return out
    print(_output(out, args))
    if light and getattr(args, "process_entry", False):
        _exit_now()
    return 0


def _exit_now() -> None:
    """End the process once the daemon's answer is printed, without the interpreter's teardown (~7 ms
    of a ~100 ms ``git memsearch``): the light route holds no thread, no open file and no atexit work."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass
    os._exit(0)


def _output(out, args: argparse.Namespace) -> str:  # type: ignore[no-untyped-def]
    """What the command prints: the daemon's own rendering (its JSON data holds ``rendered``), else the
    result (in-process, or the data of a daemon that did not render) rendered here."""
    if isinstance(out, dict) and isinstance(out.get("rendered"), str):
        return out["rendered"]  # the light route loads no renderer and no result classes
    from vaultsync.search.render import render
    from vaultsync.search.results import SearchResult

    result = SearchResult.from_dict(out) if isinstance(out, dict) else out
    return render(result, args.format, explain=args.explain)


class _Refused(Exception):
    """The query or an option was refused (exit 2)."""


def _through_daemon(args: argparse.Namespace, raw: str, options: dict):  # type: ignore[no-untyped-def,type-arg]
    """(the daemon's result as JSON data, with ``rendered``, or None; the port asked or None) by the light
    route (:func:`vaultsync.serve.client.locate`: the git dir read, no git process, no config parsing)."""
    from vaultsync.serve.client import UntrustedDaemon, locate, search_via_daemon

    found = locate(os.getcwd())
    if found is None:
        return None, None
    try:
        return search_via_daemon(found[1], found[0], raw, options, args.rerank, args.format, args.explain), found[1]
    except UntrustedDaemon:
        return None, None  # the full route asks again, says so and searches in-process
    except ValueError as exc:
        raise _Refused(str(exc)) from None


def _full_route(args: argparse.Namespace, raw: str, options: dict, asked: int | None):  # type: ignore[no-untyped-def,type-arg]
    """Query and option checks, repository, committed config, then the daemon on the config's port (unless
    the light route asked that port already), else the in-process pipeline. (Through the daemon, the daemon
    checks the query and the options and answers a refusal in the same words.)"""
    from vaultsync.search.query import QueryError, parse_query

    try:
        parse_query(raw)
    except QueryError as exc:
        raise _Refused(str(exc)) from None
    from vaultsync.cli.common import committed_config, repository

    repo = repository("search")
    if repo is None:
        return 2
    from vaultsync.engine import check_rerank_spec, options_for, search_checked

    config = search_checked(committed_config(repo))

    try:
        options_for(config, **options)
        check_rerank_spec(args.rerank)
    except ValueError as exc:
        from vaultsync.search.options import config_problem

        problem = config_problem(config)  # the committed config's value, not an option given here
        raise _Refused(problem.render() if problem else str(exc)) from None
    if repo.head_is_unborn:
        branch = str(repo.lookup_reference("HEAD").target).removeprefix("refs/heads/")
        where = (f"the branch '{branch}' has no commits yet (other branches have)"  # an orphan branch
                 if any(True for _ in repo.references.iterator()) else "the repository has no commits")
        print(f"vaultsync search: nothing to search yet: {where}, and vaultsync indexes committed notes — "
              "commit them first", file=sys.stderr)
        return 1
    result = None
    from vaultsync.index.layout import layout_for
    from vaultsync.serve.client import UntrustedDaemon, client_port, search_via_daemon

    index_dir = layout_for(repo).dir
    port = client_port(index_dir)
    if not args.no_daemon and port and port != asked:
        try:
            result = search_via_daemon(port, index_dir, raw, options, args.rerank, args.format, args.explain)
        except UntrustedDaemon as exc:
            print(f"vaultsync search: warning: {exc}", file=sys.stderr)
        except ValueError as exc:
            raise _Refused(str(exc)) from None
    return result if result is not None else _in_process(repo, config, raw, options, args.rerank)


def _in_process(repo, config, raw: str, options: dict, rerank: str | None):  # type: ignore[no-untyped-def]
    from vaultsync.engine import NoIndexError, open_searcher, options_for

    try:
        searcher, head = open_searcher(repo, config, rerank=rerank)
    except NoIndexError:
        from vaultsync.index.layout import layout_for
        from vaultsync.index.lock import running_sync
        from vaultsync.index.sync import sync
        from vaultsync.vault.config import ConfigError

        owner = running_sync(layout_for(repo).lock)
        print(f"vaultsync: the vault's first index is being built (sync pid {owner.pid}): waiting for it…" if owner
              else "vaultsync: indexing this vault for the first time…", file=sys.stderr)
        try:
            sync(repo, progress=sys.stderr.isatty(), wait=60.0)
        except ConfigError as exc:  # the index is built with the committed config: it must be valid
            print(exc, file=sys.stderr)
            return 1
        except OSError as exc:  # a read-only or full index folder
            print(f"vaultsync search: cannot build the index: {exc}", file=sys.stderr)
            return 1
        searcher, head = open_searcher(repo, config, rerank=rerank)
    try:
        return searcher.search(raw, options_for(config, **options), head=head)
    finally:
        searcher.close()


def _split(values: list[str] | None) -> list[str] | None:
    """``--type adr,incident`` as ``--type adr --type incident`` (no type or tag name holds a comma)."""
    return None if values is None else [v.strip() for value in values for v in value.split(",") if v.strip()] or values
