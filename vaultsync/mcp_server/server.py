"""The MCP server over stdio, built on the MCP Python SDK's ``MCPServer``.

Tools: ``search``, ``get``, ``write``, ``supersede``, ``promote``, ``review``. Resources:
``vault://notes`` (every note's memory_id, title, type, status) and ``vault://note/{memory_id}``
(a note's Markdown). Writes go through :mod:`vaultsync.memory` — checked with the hook's
checks before anything lands, inside the vault only, committed only when asked.
Refusals and bad input come back as tool errors with ``path:line:col: CODE message`` lines.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceError,
    ResourceNotFoundError,
    ToolError,
    UnexpectedResourceError,
    UnexpectedToolError,
)
from mcp.server.stdio import stdio_server
from pydantic import Field, ValidationError

from vaultsync import __version__
from vaultsync.diagnostics import SHOWN_CHARS, cut, shown
from vaultsync.mcp_server.transport import AnswerBeforeEnd, MarkedStdin, escaped, lone_surrogate
from vaultsync.memory import review as review_queue
from vaultsync.memory.commit import NOT_COMMITTED, commit_paths
from vaultsync.memory.create import Written, create
from vaultsync.memory.errors import MemoryWriteError
from vaultsync.memory.lookup import find_note
from vaultsync.memory.promote import promote as promote_note
from vaultsync.memory.promote import promoted_message
from vaultsync.memory.supersede import commit_message, supersede_with_new
from vaultsync.memory.supersede import supersede as supersede_notes
from vaultsync.memory.view import note_view
from vaultsync.memory.workspace import Workspace
from vaultsync.vault.fields import parse_vault_date

T = TypeVar("T")

INSTRUCTIONS = """\
This server is the team's memory: ADRs, incident post-mortems and rules kept as Markdown notes in git.
Before deciding something, `search` for what the team already decided; `get` a hit's note to read it
whole, with what links to it and whether it was superseded. To record a new decision, incident or rule,
`write` it (it is checked like a commit and refused with the problems if invalid); when it replaces an
older note, use `supersede`. Pass commit=true only when the user asked for the change to be committed."""

Commit = Annotated[bool, Field(strict=True, description="git commit just the written files (hooks run, the index "
                                                        "catches up); only when the user asked for it")]
Fields = Annotated[dict[str, Any] | None, Field(
    description="further frontmatter: status, tags, projects, confidence (0-1), importance (1-10), expires "
                "(YYYY-MM-DD), related ([\"[[NOTE]]\"]), and the type's own fields (incident: severity SEV1-4)")]


class _Server(MCPServer):
    """Refuses, before any tool runs, arguments holding a lone surrogate (:mod:`.transport`): no UTF-8
    can carry it, so neither the note nor the answer that names it could be written."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        _refuse_lone_surrogates(arguments, "")
        if found := lone_surrogate(name):
            raise ToolError(f"the tool name is not valid Unicode: a lone surrogate (U+{found[0]:04X}) at character "
                            f"{found[1] + 1}; send text as UTF-8")
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            raise ToolError(f"unknown tool {shown(escaped(name))} (tools: "
                            f"{', '.join(t.name for t in self._tool_manager.list_tools())})")
        known = list(tool.parameters.get("properties") or {})
        unknown = [key for key in arguments or {} if key not in known]
        if unknown:  # a misspelt option (`topk`, `include_expire`) would silently do nothing
            raise ToolError(f"unknown argument(s) for {name}: {', '.join(shown(escaped(k)) for k in unknown)} "
                            f"(known: {', '.join(known)})")
        _refuse_mistyped(name, tool, arguments or {})
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise  # a crash: the SDK's generic text, the traceback in the server's log
        except ToolError as exc:  # a refusal: its own words, as the argument checks above give theirs
            raise ToolError(str(exc.__cause__) if isinstance(exc.__cause__, ToolError) else str(exc)) from None

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        _refuse_lone_surrogates(str(uri), "uri")
        try:
            return await super().read_resource(uri, context)
        except UnexpectedResourceError as exc:  # our own refusal (a broken config): its words, no traceback
            if isinstance(exc.__cause__, ToolError):
                raise ResourceError(str(exc.__cause__)) from None
            raise

    async def run_stdio_async(self) -> None:
        stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")  # marked: refused
        marked = MarkedStdin(stdin)
        async with stdio_server(stdin=anyio.wrap_file(marked)) as (read, write):  # type: ignore[arg-type]
            link = AnswerBeforeEnd(read, write, marked)
            await self._lowlevel_server.run(link.reader(), link.writer(),
                                            self._lowlevel_server.create_initialization_options())


def _refuse_mistyped(name: str, tool: Any, arguments: dict[str, Any]) -> None:
    """ToolError with one clause per argument of the wrong type or range (``top_k: must be an integer,
    got True``; a list item as ``types[0]``) instead of the validator's multi-line report with its type
    codes and web links."""
    try:
        tool.fn_metadata.validate_arguments(arguments)
    except ValidationError as exc:
        problems = [f"{_where(e['loc'])}: {e['msg'][:1].lower()}{e['msg'][1:]}"
                    + ("" if e["type"] == "missing" else f", got {_got(e['input'])}") for e in exc.errors()]
        raise ToolError(f"invalid argument(s) for {name}: {'; '.join(problems)}") from None


def _where(loc: tuple[Any, ...]) -> str:
    """An argument's place as :func:`_refuse_lone_surrogates` writes it: ``fields.tags[0]``."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".") or "arguments"


def _got(value: Any) -> str:
    """``value`` as JSON, cut after :data:`SHOWN_CHARS` characters with its length, as :func:`shown` cuts: a
    string by its own characters (never inside an escape), other values by their JSON text."""
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        return f"{json.dumps(value[:SHOWN_CHARS], ensure_ascii=False)[:-1]}… ({len(value):,} characters)"
    text = json.dumps(value, ensure_ascii=False, default=str)
    return cut(text)


def _refuse_lone_surrogates(value: Any, at: str) -> None:
    """ToolError naming the argument (``fields.tags[0]``), the code point and its index when a string
    or key in ``value`` holds a lone surrogate marked by :mod:`.transport`."""
    if isinstance(value, str):
        found = lone_surrogate(value)
        if found:
            byte = f"a byte that is not UTF-8 (0x{found[0] - 0xDC00:02X}) or " if 0xDC80 <= found[0] <= 0xDCFF else ""
            raise ToolError(f"argument {at or 'name'} is not valid Unicode: {byte}a lone surrogate "
                            f"(U+{found[0]:04X}) at character {found[1] + 1}; send text as UTF-8")
        return
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        name = escaped(key) if isinstance(key, str) else key
        path = f"{at}[{name}]" if isinstance(key, int) else f"{at}.{name}" if at else str(name)
        if isinstance(key, str) and lone_surrogate(key):
            raise ToolError(f"argument name {path} is not valid Unicode (a lone surrogate); send text as UTF-8")
        _refuse_lone_surrogates(item, path)


def _call(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except MemoryWriteError as exc:
        raise ToolError(str(exc)) from None
    except OSError as exc:
        raise ToolError(f"file system error: {exc}") from None


def _agent_view(view: dict[str, Any]) -> dict[str, Any]:
    """A note's view with the search tool's arguments where the CLI's flags stand (``search_hides``)."""
    from vaultsync.mcp_server.warm_search import tool_arguments  # only here: it loads the search engine

    hides = [{"reason": h["reason"], "show_with": tool_arguments(h["show_with"])} for h in view["search_hides"]]
    return {**view, "search_hides": hides}


def _committed(ws: Workspace, written: Written, commit: bool, message: str) -> dict[str, Any]:
    if commit:
        written.commit = commit_paths(ws, written.changed, message)
    out = written.to_dict()
    if not commit:  # an agent that writes, then searches, must not expect to find it yet
        out["note"] = NOT_COMMITTED.format(how="call with commit: true")
    return out


def build_server(root: Path) -> MCPServer:
    """The server for the repository at ``root`` (its tools hold a warm searcher once used)."""
    from vaultsync.mcp_server.warm_search import WarmSearch

    server = _Server("vaultsync", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    warm = WarmSearch(root)

    def workspace(committing: bool = False) -> Workspace:
        return _call(lambda: Workspace.open(root, committing))  # committed: checked over HEAD's files

    @server.tool(description="Search the team's memory (ADRs, incidents, rules) in any language; hybrid keyword + "
                             "vector search. Returns the chunks that answer the query, each with its calibrated "
                             "relevance (0-1), memory_id, type, status, confidence, dates, the chunk text and the "
                             "notes it links to; none when nothing is relevant (then best_rejected shows the best "
                             "candidate), and `weak` true when even the best may not answer. Expired, superseded and low-confidence notes are hidden unless asked for "
                             "(`hidden` lists the matching ones and the arguments that show them); a superseded note is "
                             "replaced by its successor, whose hit then names it in `replaces`.")
    def search(
        query: Annotated[str, Field(description="what to look for, in any language")],
        top_k: Annotated[int | None, Field(strict=True, ge=1, le=50, description="at most this many chunks (default 5)")]
        = None,
        budget: Annotated[int | None, Field(strict=True, ge=1, description="token budget of all returned text "
                                                                           "(default 1200)")] = None,
        types: Annotated[list[str] | None, Field(description="only these memory types, e.g. [\"adr\"]")] = None,
        tags: Annotated[list[str] | None, Field(description="only notes with one of these tags")] = None,
        scope: Annotated[str | None, Field(description="only notes under this folder")] = None,
        include_expired: Annotated[bool, Field(strict=True, description="also notes past their expires date")]
        = False,
        include_superseded: Annotated[bool, Field(strict=True, description="also superseded notes")] = False,
        min_confidence: Annotated[float | None, Field(strict=True, ge=0, le=1, allow_inf_nan=False,
                                                      description="hide notes below (default 0.5)")] = None,
        min_relevance: Annotated[float | None, Field(strict=True, ge=0, le=1, allow_inf_nan=False,
                                                     description="answer only when the best hit reaches this "
                                                                 "calibrated relevance (default 0.006); an empty list "
                                                                 "means nothing relevant")] = None,
        rerank: Annotated[str | None, Field(description="none, maxsim or cross-encoder (default from config)")]
        = None,
        whole_chunks: Annotated[bool, Field(strict=True, description="each hit's whole chunk, not only its best "
                                                                     "blocks (left_out counts those left out)")]
        = False,
    ) -> dict[str, Any]:
        from vaultsync.engine import NoIndexError
        from vaultsync.search.query import QueryError
        from vaultsync.vault.config import ConfigError

        options = {"top_k": top_k, "budget": budget, "types": types, "tags": tags, "scope": scope,
                   "include_expired": include_expired or None, "include_superseded": include_superseded or None,
                   "min_confidence": min_confidence, "min_relevance": min_relevance,
                   "blocks": False if whole_chunks else None}
        try:
            return warm.search(query, {k: v for k, v in options.items() if v is not None}, rerank)
        except ConfigError as exc:
            raise ToolError(str(exc)) from None
        except (QueryError, ValueError, NoIndexError) as exc:
            raise ToolError(str(exc)) from None

    @server.tool(description="Read one note by memory_id (ADR-0007), path or [[WikiLink]]: frontmatter, Markdown "
                             "body, outgoing links, backlinks, and its supersession chain (the notes it replaces, "
                             "the notes that replace it, and the current one), and search_hides: why search leaves "
                             "it out by default (superseded, expired, low confidence), each with the search "
                             "arguments that show it (show_with).")
    def get(note: Annotated[str, Field(description="memory_id, repo-relative path or [[WikiLink]]")]) -> dict[str, Any]:
        return _call(lambda: _agent_view(note_view(workspace().vault(), note)))

    @server.tool(description="Record a new memory: vaultsync allocates its memory_id, fills created/last_validated "
                             "and status, writes it in the type's folder, and checks it with the whole vault like a "
                             "commit. An invalid note (bad field, unknown tag, dangling [[link]]) is refused with "
                             "path:line:col: CODE diagnostics and no file is left behind.")
    def write(
        type: Annotated[str, Field(description="memory type: adr, incident or rule (as configured)")],  # noqa: A002
        title: Annotated[str, Field(description="one-line title")],
        body: Annotated[str, Field(description="Markdown body; link other notes as [[NAME]]")],
        fields: Fields = None,
        commit: Commit = False,
    ) -> dict[str, Any]:
        ws = workspace(commit)
        written = _call(lambda: create(ws, type, title, fields, body))
        return _call(lambda: _committed(ws, written, commit, f"{written.memory_id}: {title}"))

    @server.tool(description="Replace an old note with a newer one in one checked change: the new note gets "
                             "supersedes, the old one superseded_by and status: superseded. Give `new` to use an "
                             "existing note, or title and body (and optionally type, fields) to write the new note. "
                             "A new note not in force (status draft/proposed/rejected, the type's default unless "
                             "fields set status) only proposes it: the old note stays until it is accepted (SS007).")
    def supersede(
        old: Annotated[str, Field(description="the note being replaced: memory_id, path or [[WikiLink]]")],
        new: Annotated[str | None, Field(description="an existing note that replaces it")] = None,
        title: Annotated[str | None, Field(description="title of a new replacing note")] = None,
        body: Annotated[str | None, Field(description="Markdown body of a new replacing note")] = None,
        type: Annotated[str | None, Field(description="its type (default: the old note's)")] = None,  # noqa: A002
        fields: Fields = None,
        commit: Commit = False,
    ) -> dict[str, Any]:
        # a new note needs its body too: one of empty sections would hide the old note's content behind nothing
        if (new is not None, title is not None, body is not None) not in ((True, False, False), (False, True, True)):
            raise ToolError("give either `new` (an existing note) or `title` and `body` (a new note)")
        if body is not None and not body.strip():
            raise ToolError(f"`body` is empty: a new note replacing {shown(old)} needs its text, or search would hide "
                            "the old note behind nothing")
        ws = workspace(commit)
        if new is not None:
            written = _call(lambda: supersede_notes(ws, old, new))
        else:
            written = _call(lambda: supersede_with_new(ws, old, type, title or "", fields, body))
        return _call(lambda: _committed(ws, written, commit, commit_message(written, old)))

    @server.tool(description="Turn a scratch note (a file matching the vault's ephemeral globs) into a permanent "
                             "note of a type: complete frontmatter, moved to the type's folder, scratch file removed.")
    def promote(
        path: Annotated[str, Field(description="the scratch note's repo-relative path")],
        type: Annotated[str, Field(description="the memory type it becomes")],  # noqa: A002
        title: Annotated[str | None, Field(description="title (default: its title, first heading or name)")] = None,
        commit: Commit = False,
    ) -> dict[str, Any]:
        ws = workspace(commit)
        written = _call(lambda: promote_note(ws, path, type, title))
        return _call(lambda: _committed(ws, written, commit, promoted_message(written)))

    @server.tool(description="The revalidation queue, most important first: notes expiring soon, not validated "
                             "for longer than their type allows, below the search confidence threshold, or "
                             "superseded but still linked from active notes. With `confirm`, record that a note "
                             "still holds (last_validated: today; with `expires`, renew it too) and return the diff, "
                             "why search still hides it when superseded, and what stays queued (`still_queued`: "
                             "low confidence, which search also hides; an expiry still near).")
    def review(
        days: Annotated[int, Field(strict=True, ge=0, description="queue notes expiring within this many days")] = 14,
        confirm: Annotated[str | None, Field(description="memory_id of a note a person confirmed")] = None,
        expires: Annotated[str | None, Field(description="with confirm: the note's new expires (YYYY-MM-DD), the "
                                                         "last day it holds; needed for a note past it")] = None,
    ) -> dict[str, Any]:
        ws = workspace()
        if expires is not None and confirm is None:
            raise ToolError("`expires` goes with `confirm` (the note to renew)")
        day = parse_vault_date(expires) if expires is not None and len(expires) == 10 else None
        if expires is not None and day is None:
            raise ToolError(f"expires: expected a date as YYYY-MM-DD, got {shown(expires)}")
        if confirm is not None:  # `""` names no note: refused, not read as "list the queue"
            path, diff, caveat = _call(lambda: review_queue.confirm(ws, confirm, day))
            left = review_queue.still_queued(ws.vault(), path, days)
            return {"confirmed": path, "diff": diff, "still_hidden": caveat or None,
                    "still_queued": [{"kind": item.kind, "reason": item.reason} for item in left]}
        return json.loads(review_queue.render(_call(lambda: review_queue.queue(ws.vault(), days)), "json"))

    @server.resource("vault://notes", name="notes", mime_type="application/json",
                     description="Every note of the vault: memory_id, path, title, type, status")
    def notes() -> str:
        vault = workspace().vault()
        from vaultsync.memory.view import summary

        return json.dumps([summary(vault, p) for p in sorted(vault.notes)], ensure_ascii=False)

    @server.resource("vault://note/{memory_id}", name="note", mime_type="text/markdown",
                     description="One note's Markdown file by memory_id")
    def note(memory_id: str) -> str:
        ws = workspace()
        try:
            path = _call(lambda: find_note(ws.vault(), memory_id))
        except ToolError as exc:  # a resource reports "not found", not a tool failure with a traceback
            raise ResourceNotFoundError(str(exc)) from None
        return (ws.root / path).read_bytes().decode("utf-8", errors="replace")

    return server


def run_stdio(root: Path) -> None:
    """Serve the repository at ``root`` over stdin/stdout until the client hangs up."""
    build_server(root).run("stdio")
