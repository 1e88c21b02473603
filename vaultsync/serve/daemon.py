"""A warm local search daemon: models and stores loaded once, a small JSON API on loopback.

Endpoints (HTTP/1.1, JSON):

* ``GET /health`` → ``{"ok": true, "repository": ..., "version": ...}``
* ``GET /status`` → what ``vaultsync status --format json`` prints
* ``POST /search`` with ``{"query": str, "options": {...}, "rerank": str|null}`` →
  the search result (see :class:`vaultsync.search.pipeline.SearchResult`)

The daemon serves the repository it was started in. When a sync moves the
index to a new commit, the next request reopens the index (the embedder stays
loaded). It binds 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pygit2

from vaultsync import __version__
from vaultsync.git import workdir
from vaultsync.index.fastpath import head_tree
from vaultsync.index.layout import layout_for
from vaultsync.index.sync import config_at
from vaultsync.search.engine import open_searcher, options_for
from vaultsync.search.pipeline import Searcher
from vaultsync.search.query import QueryError

DEFAULT_PORT = 30001
MAX_BODY = 1 << 20


class SearchService:
    """The warm state behind the HTTP handler; thread-safe."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo = repo
        self.root = str(workdir(repo))
        self._lock = threading.Lock()
        self._searchers: dict[str, Searcher] = {}
        self._stamp: tuple[str, ...] | None = None
        self._embedders: dict[str, Any] = {}

    def _index_stamp(self) -> tuple[str, ...]:
        config, _ = config_at(self.repo, head_tree(self.repo))
        layout = layout_for(self.repo, config)
        try:
            mtime = str(layout.sqlite.stat().st_mtime_ns)
            wal = layout.sqlite.with_name(layout.sqlite.name + "-wal")
            mtime += ":" + (str(wal.stat().st_mtime_ns) if wal.exists() else "")
        except OSError:
            mtime = ""
        return (mtime,)

    def search(self, query: str, options: dict[str, Any], rerank: str | None) -> dict[str, Any]:
        with self._lock:
            config, _ = config_at(self.repo, head_tree(self.repo))
            stamp = self._index_stamp()
            if stamp != self._stamp:
                for s in self._searchers.values():
                    s.close()
                self._searchers.clear()
                self._stamp = stamp
            key = rerank or "(config)"
            searcher = self._searchers.get(key)
            head = None
            if searcher is None:
                searcher, head = open_searcher(self.repo, config, rerank=rerank, loaded=self._embedders)
                self._embedders.update({leg.name: leg.embedder for leg in searcher.legs})
                self._searchers[key] = searcher
            from vaultsync.git import head_commit_id

            head = head or head_commit_id(self.repo)
            result = searcher.search(query, options_for(config, **options), head=head)
            return result.to_dict()


def make_handler(service: SearchService) -> type[BaseHTTPRequestHandler]:
    """The request handler class bound to ``service``."""

    class Handler(BaseHTTPRequestHandler):
        server_version = f"vaultsync/{__version__}"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet by default
            return

        def _send(self, code: int, payload: dict[str, Any]) -> None:
            body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/health":
                self._send(200, {"ok": True, "repository": service.root, "version": __version__})
            elif self.path == "/status":
                from vaultsync.cli.status import collect

                self._send(200, collect(service.repo))
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            if self.path != "/search":
                self._send(404, {"error": "not found"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    self._send(413, {"error": "request too large"})
                    return
                request = json.loads(self.rfile.read(length) or b"{}")
                if not isinstance(request, dict) or not isinstance(request.get("query"), str):
                    self._send(400, {"error": "body must be {\"query\": str, \"options\": {...}}"})
                    return
                options = request.get("options") or {}
                if not isinstance(options, dict):
                    raise TypeError("options must be an object")
                self._send(200, service.search(request["query"], options, request.get("rerank")))
            except QueryError as exc:
                self._send(400, {"error": str(exc)})
            except (ValueError, TypeError, RecursionError) as exc:
                self._send(400, {"error": f"bad request: {str(exc)[:200]}"})
            except Exception as exc:  # noqa: BLE001 - the daemon must survive a bad request
                self._send(500, {"error": f"{type(exc).__name__}: {exc}"})

    return Handler


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up mid-answer is routine, not an error worth a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        exc = sys.exc_info()[1]
        if not isinstance(exc, (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def serve(repo: pygit2.Repository, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
          ready: threading.Event | None = None) -> ThreadingHTTPServer:
    """Create the server (bound, not yet serving). Call ``serve_forever()`` on it."""
    server = _QuietServer((host, port), make_handler(SearchService(repo)))
    server.daemon_threads = True
    if ready is not None:
        ready.set()
    return server


def write_pidfile(path: Path, port: int) -> None:
    import os

    path.write_text(json.dumps({"pid": os.getpid(), "port": port}), encoding="utf-8")
