"""A warm local search daemon: models and stores loaded once, a small JSON API on loopback.

Endpoints (HTTP/1.0, JSON):

* ``GET /health`` → ``{"ok": true, "version": ...}`` (the only unsigned endpoint)
* ``GET /status`` → what ``vaultsync status --format json`` prints
* ``POST /search`` with ``{"query": str, "options": {...}, "rerank": str|null}`` →
  the search result (see :class:`vaultsync.search.results.SearchResult`); with ``"format":
  "text"|"markdown"|"json"`` (and ``"explain": bool``) it also holds ``"rendered"``, the CLI's
  output in that format, so the client need not load the renderer (ADR-0079)

The daemon serves the repository it was started in. When a sync moves the
index to a new commit, the next request reopens the index (the embedder stays
loaded). It binds 127.0.0.1 unless told otherwise.

Hardening (ADR-0033): every request but ``/health`` is signed with the repository's secret and
every response proves the daemon holds it (:mod:`vaultsync.serve.auth`); ``Host`` must be a
loopback name with the daemon's port (DNS rebinding) and a request from a web page (``Origin``,
``Sec-Fetch-Site``) is refused; bodies need a ``Content-Length`` of at most :data:`MAX_BODY`;
rerank stages are names and every option is range-checked; at most :data:`MAX_ACTIVE` requests
run at once, the rest wait in a :data:`BACKLOG`-deep queue; a request must arrive whole within
:data:`REQUEST_DEADLINE_S` and an idle socket is closed after :data:`IDLE_TIMEOUT_S`.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pygit2

from vaultsync import __version__
from vaultsync.engine import WarmSearcher, check_rerank_spec, options_for, search_checked
from vaultsync.git import head_tree, workdir
from vaultsync.index.fastpath import config_at
from vaultsync.index.layout import layout_for
from vaultsync.search.language import warm_up
from vaultsync.search.query import QueryError, parse_query
from vaultsync.serve.auth import AUTH_HEADER, PROOF_HEADER, AuthError, Verifier, ensure_token
from vaultsync.serve.client import DEFAULT_PORT, FORMATS
from vaultsync.serve.port_file import advertise, withdraw

MAX_BODY = 1 << 20
MAX_ACTIVE = 32
BACKLOG = 512
IDLE_TIMEOUT_S = 10.0
REQUEST_DEADLINE_S = 5.0  # the whole request line, headers and body: a slow client cannot hold a slot
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


class SearchService:
    """The warm state behind the HTTP handler; thread-safe."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo = repo
        self.root = str(workdir(repo))
        self._lock = threading.Lock()
        self._warm = WarmSearcher()  # searches run one at a time, under the lock
        warm_up()  # language ID for the query's secondary-leg gate (ADR-0061), off the first request

    def search(self, query: str, options: dict[str, Any], rerank: str | None,
               fmt: str | None = None, explain: bool = False) -> dict[str, Any]:
        """The search result as JSON data, with ``rendered`` (the CLI's output in ``fmt``) when ``fmt``
        is given. Raises OptionsError for a bad option or stage."""
        parse_query(query)  # QueryError first, in the order the in-process CLI checks
        with self._lock:
            config = search_checked(config_at(self.repo, head_tree(self.repo))[0])
            try:
                check_rerank_spec(rerank)
                opts = options_for(config, **options)
            except ValueError as exc:
                raise OptionsError(str(exc)) from None
            searcher = self._warm.get(self.repo, config, rerank)
            from vaultsync.git import head_commit_id

            result = searcher.search(query, opts, head=head_commit_id(self.repo))
        data = result.to_dict()
        if fmt is not None:
            from vaultsync.search.render import render

            data["rendered"] = render(result, fmt, explain=explain)
        return data


class OptionsError(ValueError):
    """A search option or rerank stage the caller got wrong; the message is the CLI's own."""


def make_handler(service: SearchService, verifier: Verifier, port: int,
                 allow_remote: bool = False) -> type[BaseHTTPRequestHandler]:
    """The request handler class bound to ``service``; ``verifier`` checks request signatures."""
    own_hosts = {f"{h}:{port}" for h in LOOPBACK_HOSTS}
    own_origins = {f"http://{h}" for h in own_hosts}

    class Handler(BaseHTTPRequestHandler):
        server_version = f"vaultsync/{__version__}"
        timeout = IDLE_TIMEOUT_S  # socket timeout: a silent client cannot hold a thread
        _nonce: str | None = None

        def setup(self) -> None:
            super().setup()
            self._deadline = threading.Timer(REQUEST_DEADLINE_S, self._expire)
            self._deadline.daemon = True
            self._deadline.start()

        def _expire(self) -> None:
            """The request did not arrive in time (slowloris): close the connection."""
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

        def finish(self) -> None:
            self._deadline.cancel()
            super().finish()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet by default
            return

        def _send(self, code: int, payload: dict[str, Any]) -> None:
            body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            if self._nonce is not None:
                self.send_header(PROOF_HEADER, verifier.proof(self._nonce, code, body))
            self.end_headers()
            self.wfile.write(body)

        def _refusal(self) -> tuple[int, str] | None:
            """Why this request is refused before its body is read (DNS rebinding, CSRF), or None."""
            host = (self.headers.get("Host") or "").strip().lower()
            if not allow_remote and host not in own_hosts:
                return 421, f"Host {host[:80]!r} is not this daemon (expected 127.0.0.1:{port})"
            origin = self.headers.get("Origin")
            if origin is not None and origin.strip().lower() not in own_origins:
                return 403, "requests from web pages are refused"
            if (self.headers.get("Sec-Fetch-Site") or "same-origin").lower() not in ("same-origin", "none"):
                return 403, "requests from web pages are refused"
            return None

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding"):
                raise _HttpError(411, "send a Content-Length, not Transfer-Encoding")
            raw = self.headers.get("Content-Length")
            if self.command == "GET" and raw is None:
                return b""
            if raw is None:
                raise _HttpError(411, "Content-Length required")
            if not raw.strip().isdigit():
                raise _HttpError(400, "Content-Length must be a non-negative whole number")
            length = int(raw)
            if length > MAX_BODY:
                raise _HttpError(413, f"request too large (at most {MAX_BODY} bytes)")
            try:
                body = self.rfile.read(length)
            except TimeoutError:
                raise _HttpError(408, "request body not received in time") from None
            if len(body) != length:
                raise _HttpError(400, "request body shorter than its Content-Length")
            return body

        def _handle(self, method: str) -> None:
            refusal = self._refusal()
            if refusal is not None:
                self._send(refusal[0], {"error": refusal[1]})
                return
            try:
                body = self._body()
                self._deadline.cancel()  # the request is in: searching may take longer
                path = self.path
                if path == "/health" and not self.headers.get(AUTH_HEADER):
                    self._send(200, {"ok": True, "version": __version__})
                    return
                try:
                    self._nonce = verifier.verify(self.headers.get(AUTH_HEADER), method, path, body)
                except AuthError as exc:
                    raise _HttpError(401, str(exc)) from None
                if method == "GET" and path == "/health":
                    self._send(200, {"ok": True, "version": __version__, "repository": service.root})
                elif method == "GET" and path == "/status":
                    from vaultsync.index.status import collect

                    self._send(200, collect(service.repo))
                elif method == "POST" and path == "/search":
                    self._send(200, self._search(body))
                else:
                    raise _HttpError(404, "not found")
            except _HttpError as exc:
                self._send(exc.code, {"error": exc.message})
            except QueryError as exc:
                self._send(400, {"error": str(exc)})
            except (ValueError, TypeError, RecursionError) as exc:
                self._send(400, {"error": f"bad request: {str(exc)[:200]}"})
            except Exception as exc:  # noqa: BLE001 - the daemon must survive a bad request
                self._send(500, {"error": f"{type(exc).__name__}: {str(exc)[:200]}"})

        def _search(self, body: bytes) -> dict[str, Any]:
            request = json.loads(body or b"{}")
            if not isinstance(request, dict) or not isinstance(request.get("query"), str):
                raise _HttpError(400, 'body must be {"query": str, "options": {...}, "rerank": str|null}')
            options = request.get("options") or {}
            rerank = request.get("rerank")
            if not isinstance(options, dict):
                raise TypeError("options must be an object")
            if rerank is not None and not isinstance(rerank, str):
                raise TypeError("rerank must be a stage name or null")
            fmt, explain = request.get("format"), request.get("explain", False)
            if fmt is not None and fmt not in FORMATS:
                raise TypeError(f"format must be one of {', '.join(FORMATS)} or null")
            if not isinstance(explain, bool):
                raise TypeError("explain must be true or false")
            try:
                return service.search(request["query"], options, rerank, fmt, explain)
            except OptionsError as exc:  # the caller's mistake, said as the CLI says it (exit 2 there)
                raise _HttpError(400, str(exc)) from None

        def do_GET(self) -> None:  # noqa: N802
            self._handle("GET")

        def do_POST(self) -> None:  # noqa: N802
            self._handle("POST")

    return Handler


class _HttpError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _BoundedServer(ThreadingHTTPServer):
    """A threading server with a deep listen backlog and at most :data:`MAX_ACTIVE` handlers at once
    (the accept loop waits for a free slot; pending connections queue in the kernel's backlog)."""

    request_queue_size = BACKLOG
    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._slots = threading.BoundedSemaphore(MAX_ACTIVE)

    def process_request(self, request: Any, client_address: Any) -> None:
        self._slots.acquire()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    index_dir: Path | None = None  # whose port record this server wrote

    def server_close(self) -> None:
        super().server_close()
        if self.index_dir is not None:
            withdraw(self.index_dir)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up or stalls is routine, not an error worth a traceback."""
        import sys

        exc = sys.exc_info()[1]
        if not isinstance(exc, (BrokenPipeError, ConnectionResetError, TimeoutError)):
            super().handle_error(request, client_address)


def serve(repo: pygit2.Repository, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
          ready: threading.Event | None = None, allow_remote: bool = False) -> ThreadingHTTPServer:
    """Create the server (bound, not yet serving). Call ``serve_forever()`` on it.

    The repository's secret is created on first use (``<git dir>/vaultsync/daemon.token``, 0600).
    Raises ``OSError`` when the port cannot be bound.
    """
    index_dir = layout_for(repo).dir
    verifier = Verifier(ensure_token(index_dir))
    service = SearchService(repo)
    server = _BoundedServer((host, port), make_handler(service, verifier, port, allow_remote))
    if port == 0:  # an ephemeral port: the handler must know the real one for its Host check
        server.RequestHandlerClass = make_handler(service, verifier, server.server_address[1], allow_remote)
    with contextlib.suppress(OSError):  # unrecorded, the daemon still answers whoever names its port
        advertise(index_dir, server.server_address[1])  # clients ask this port (removed by server_close)
        server.index_dir = index_dir
    if ready is not None:
        ready.set()
    return server
