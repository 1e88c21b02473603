"""stdin for the MCP server: JSON text the MCP SDK would drop without an answer, and an end of input that
waits for the answers still owed (:class:`AnswerBeforeEnd`). A line the SDK cannot read at all gets the
JSON-RPC error it would not send (:func:`unreadable_reply`).

JSON may escape a lone UTF-16 surrogate (``"\\ud800"``); Python's ``json`` reads it, but pydantic's
parser, which the SDK uses, refuses the whole line as invalid JSON, so the request gets no reply and
the client waits until its own timeout. Each such escape is rewritten here as a mark: the noncharacter
U+FDD0 (Unicode's "internal use"), this process's random nonce, and the code point's hex digits, so
the request parses, and the server refuses it with a tool error that names the argument
(:func:`lone_surrogate`). A byte that is not UTF-8 arrives as one (the stream decodes with
``surrogateescape``) and is marked the same way: never read as U+FFFD and written into a note. A client cannot send a mark by chance (a U+FDD0 followed by hex digits is
text), and nothing else on the line is touched.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
from collections import Counter
from typing import IO, Any

import anyio

# one JSON escape: \\uXXXX (group 1: its hex digits) or a backslash and the character it escapes
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)")
MARK = "\ufdd0" + secrets.token_hex(6).upper()  # this process's: unknown to the client
_MARKED = re.compile(re.escape(MARK) + "([0-9A-F]{4})")
# a byte that is no UTF-8, as the stream's `surrogateescape` decoding hands it on (U+DC80–U+DCFF): marked
# as a lone surrogate, so the request is refused naming the argument instead of read with U+FFFD in it
_RAW_BYTE = re.compile("[\udc80-\udcff]")


def mark_lone_surrogates(line: str) -> str:
    """``line`` with each lone surrogate escape replaced by :data:`MARK` and its 4 hex digits. Escapes
    are read left to right as JSON reads them, so ``\\\\ud800`` (an escaped backslash, then text) is no
    escape, and a high surrogate escape followed at once by a low one is a pair, kept."""
    if "\\u" not in line:
        return line
    out: list[str] = []
    last = 0

    def mark(m: re.Match[str]) -> None:
        nonlocal last
        out.extend([line[last:m.start()], f"\\ufdd0{MARK[1:]}{m.group(1).upper()}"])
        last = m.end()

    pending: re.Match[str] | None = None  # a high surrogate escape, waiting for its low half
    for m in _ESCAPE.finditer(line):
        code = int(m.group(1), 16) if m.group(1) else -1
        if pending is not None:
            if 0xDC00 <= code <= 0xDFFF and m.start() == pending.end():
                pending = None  # a pair, kept as written
                continue
            mark(pending)
            pending = None
        if 0xD800 <= code <= 0xDBFF:
            pending = m
        elif 0xDC00 <= code <= 0xDFFF:
            mark(m)
    if pending is not None:
        mark(pending)
    return "".join(out) + line[last:]


def lone_surrogate(text: str) -> tuple[int, int] | None:
    """(code point, character index) of the first marked lone surrogate in ``text``, or None."""
    found = _MARKED.search(text)
    return None if found is None else (int(found.group(1), 16), found.start())


def escaped(text: str) -> str:
    """``text`` with each mark written back as the JSON escape it stood for (``\\uDBFF``)."""
    return _MARKED.sub(lambda m: "\\u" + m.group(1), text)


class MarkedStdin:
    """A text stream whose lines come from ``stream`` through :func:`mark_lone_surrogates`
    (what ``anyio.wrap_file`` needs of it: ``readline`` and ``close``)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.last = ""  # the line read last, as sent: the SDK reads a line and hands it on before the next
        self.marked = False  # whether a line held a mark: only then can an answer echo one

    def readline(self, *args: Any) -> str:
        self.last = self._stream.readline(*args)
        line = mark_lone_surrogates(_RAW_BYTE.sub(lambda m: f"{MARK}{ord(m.group()):04X}", self.last))
        self.marked = self.marked or line != self.last
        return line

    def close(self) -> None:
        self._stream.close()


def unmarked(item: Any) -> Any:
    """``item`` (an outgoing message) with each mark written back as the escape it stood for (``\\uD800``):
    the SDK echoes a request's id, method and names, and a mark's nonce must not leave the process."""
    message = getattr(item, "message", None)
    if message is None:
        return item
    text = message.model_dump_json(by_alias=True, exclude_none=True)
    if MARK not in text:
        return item
    from mcp.types import jsonrpc_message_adapter

    return dataclasses.replace(item, message=jsonrpc_message_adapter.validate_python(_escape_all(json.loads(text))))


def _escape_all(value: Any) -> Any:
    if isinstance(value, str):
        return escaped(value)
    if isinstance(value, list):
        return [_escape_all(v) for v in value]
    if isinstance(value, dict):
        return {_escape_all(k): _escape_all(v) for k, v in value.items()}
    return value


def unreadable_reply(line: str) -> Any:
    """The JSON-RPC 2.0 error (§5.1) for a line the SDK's parser refused, which it drops without an answer
    (the client then waits until its own timeout): -32700 when the line is no JSON, else -32600 with the
    request's id where Python's reader finds one (a 5,000-digit number or lists nested 300 deep are JSON
    that the SDK's parser refuses). None for a blank line: no message, no answer."""
    from mcp.shared.message import SessionMessage
    from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError

    if not line.strip():
        return None
    try:
        data = json.loads(line, parse_int=_small_int)
        code, what, reason = INVALID_REQUEST, "the server cannot read this request", _not_a_request(data)
    except RecursionError:
        data, code, what, reason = None, PARSE_ERROR, "the line is not JSON the server can read", "nested too deep"
    except ValueError as exc:  # the JSON reader's own words ("Expecting value: line 1 column 1 (char 0)")
        data, code, what, reason = None, PARSE_ERROR, "the line is not JSON the server can read", str(exc)[:200]
    request_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
        request_id = None
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id,
                                       error=ErrorData(code=code, message=f"{what}: {reason}")))


_JSON_KINDS = {str: "a string", int: "a number", float: "a number", bool: "true or false", list: "an array"}


def _not_a_request(data: Any) -> str:
    """What makes JSON ``data`` no JSON-RPC 2.0 message, in the protocol's words, never the SDK validator's
    (``1 validation error for union[JSONRPCRequest, …]``, or the URL of pydantic's help)."""
    if not isinstance(data, dict):
        return f"a JSON-RPC message is an object, got {_JSON_KINDS.get(type(data), 'null')}"
    if data.get("jsonrpc") != "2.0":
        return 'a JSON-RPC message holds "jsonrpc": "2.0"'
    if not {"method", "result", "error"} & set(data):
        return 'a request names its "method"'
    if "method" in data and not isinstance(data["method"], str):
        return f'"method" must be a string, got {_JSON_KINDS.get(type(data["method"]), "null")}'
    if "params" in data and not isinstance(data["params"], (dict, type(None))):
        return f'"params" must be an object, got {_JSON_KINDS.get(type(data["params"]), "another value")}'
    if "result" in data and "error" in data:
        return 'a response holds "result" or "error", not both'
    if "error" in data and not isinstance(data["error"], dict):
        return f'"error" must be an object with "code" and "message", got {_JSON_KINDS.get(type(data["error"]), "null")}'
    return "it is no JSON-RPC 2.0 request, notification or response"


def misread_reply(line: str, item: Any) -> Any:
    """The JSON-RPC 2.0 error for a request the SDK reads as something it is not, or None: a request whose
    ``id`` is no string or integer (``null``, ``1.5``, ``{}``) is read as a notification and dropped without
    an answer, and a ``tools/call`` whose ``arguments`` is no object gets "Invalid request parameters" with
    nothing said. ``line`` is the text the SDK read ``item`` from (read again only for a notification: both
    must name one method)."""
    from mcp.shared.message import SessionMessage
    from mcp.types import INVALID_PARAMS, INVALID_REQUEST, ErrorData, JSONRPCError

    message = getattr(item, "message", None)
    method = getattr(message, "method", None)
    if method is None:
        return None
    if getattr(message, "id", None) is None:  # a notification, or a request whose id the SDK did not take
        try:  # only this line is read again, to tell one from the other
            data = json.loads(line, parse_int=_small_int) if '"id"' in line else None
        except (ValueError, RecursionError):
            return None
        if not isinstance(data, dict) or data.get("method") != method or "id" not in data:
            return None
        code, request_id = INVALID_REQUEST, None
        said = f"a request's id must be a string or an integer, got {json.dumps(data['id'])[:40]}"
    elif method == "tools/call" and not isinstance(
            arguments := (getattr(message, "params", None) or {}).get("arguments"), (dict, type(None))):
        code, request_id = INVALID_PARAMS, message.id
        said = ("tools/call: `arguments` must be an object of the tool's parameters ({\"query\": \"...\"}), got "
                + _JSON_KINDS.get(type(arguments), "another value"))
    else:
        return None
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=said)))


def _small_int(text: str) -> int | str:
    """A JSON integer as Python reads it, or its text past Python's 4,300-digit limit."""
    try:
        return int(text)
    except ValueError:
        return text


ANSWER_WAIT_S = 600  # the longest the end of input waits for the answers still owed (s)


class AnswerBeforeEnd:
    """The server's read and write streams, joined so that the end of stdin waits for the answers.

    A client may write its requests and close stdin at once (``printf … | vaultsync mcp``); the SDK's
    loop then ended at end of input and cancelled the requests still running, so their replies were
    lost. :meth:`reader` holds the end of input back until every request read so far has had its
    response or error sent through :meth:`writer`.
    """

    def __init__(self, read: Any, write: Any, stdin: MarkedStdin | None = None) -> None:
        self._read, self._write = read, write
        self._stdin = stdin  # what the SDK reads: its last line, and whether any held a mark
        self._open: Counter[str] = Counter()  # requests read and not yet answered, by id as text
        self._answered = anyio.Event()
        self._answered.set()

    def _owe(self, request_id: Any) -> None:
        """One more answer owed to ``request_id`` (two requests may share an id)."""
        self._open[str(request_id)] += 1
        if self._answered.is_set():
            self._answered = anyio.Event()

    def _settle(self, request_id: Any) -> None:
        """One answer to ``request_id`` needs no more waiting for (sent, or the request cancelled). Ids
        compare as text, as the SDK matches a cancel's ``"2"`` with request 2."""
        key = str(request_id)
        if self._open[key] > 0:
            self._open[key] -= 1
            if self._open[key] == 0:
                del self._open[key]
            if not self._open:
                self._answered.set()

    def reader(self) -> Any:
        return _Reader(self)

    def writer(self) -> Any:
        return _Writer(self)


class _Reader:
    def __init__(self, link: AnswerBeforeEnd) -> None:
        self._link = link

    def __getattr__(self, name: str) -> Any:  # aclose, last_context, …: the stream's own
        return getattr(self._link._read, name)

    async def receive(self) -> Any:
        link = self._link
        while True:
            try:
                item = await link._read.receive()
            except anyio.EndOfStream:
                with anyio.move_on_after(ANSWER_WAIT_S):  # a request the SDK drops must not hold the process
                    await link._answered.wait()
                raise
            line = link._stdin.last if link._stdin else ""
            if not isinstance(item, Exception):  # an exception: a line the SDK could not read
                if (reply := misread_reply(line, item)) is None:
                    break
            else:
                reply = unreadable_reply(line)
            if reply is not None:
                await link._write.send(reply)
        message = getattr(item, "message", None)
        method = getattr(message, "method", None)
        if method is not None and getattr(message, "id", None) is not None:
            link._owe(message.id)
        elif method == "notifications/cancelled":  # a cancelled request gets no answer (MCP spec)
            link._settle((getattr(message, "params", None) or {}).get("requestId"))
        return item

    def __aiter__(self) -> _Reader:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _Reader:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._link._read.aclose()


class _Writer:
    def __init__(self, link: AnswerBeforeEnd) -> None:
        self._link = link

    def __getattr__(self, name: str) -> Any:
        return getattr(self._link._write, name)

    async def send(self, item: Any) -> None:
        link = self._link
        await link._write.send(unmarked(item) if link._stdin is not None and link._stdin.marked else item)
        message = getattr(item, "message", None)
        if getattr(message, "method", None) is None:
            link._settle(getattr(message, "id", None))

    async def __aenter__(self) -> _Writer:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._link._write.aclose()
