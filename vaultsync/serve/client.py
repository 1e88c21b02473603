"""Talk to a running ``vaultsync serve`` daemon; every failure means "not available" (fall back)."""

from __future__ import annotations

import http.client
import json
import os
from typing import Any

from vaultsync.serve.daemon import DEFAULT_PORT


def daemon_port(config_port: Any = None) -> int | None:
    """``$VAULTSYNC_PORT``, else ``search.port`` from the config, else 30001; None when not a valid port."""
    try:
        port = int(os.environ.get("VAULTSYNC_PORT") or config_port or DEFAULT_PORT)
    except (TypeError, ValueError):
        return None
    return port if 0 < port < 65536 else None


def _request(port: int, method: str, path: str, body: dict[str, Any] | None, timeout: float) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        payload = json.dumps(body).encode("utf-8") if body is not None else None
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        conn.request(method, path, body=payload, headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"null")
    finally:
        conn.close()


def search_via_daemon(port: int, repository: str, query: str, options: dict[str, Any],
                      rerank: str | None) -> dict[str, Any] | None:
    """The daemon's answer, or None when no daemon for ``repository`` listens on ``port``.

    Raises:
        ValueError: the daemon rejected the query (e.g. empty).
    """
    try:
        status, health = _request(port, "GET", "/health", None, timeout=0.3)
        if status != 200 or not isinstance(health, dict) or health.get("repository") != repository:
            return None
        status, data = _request(port, "POST", "/search",
                                {"query": query, "options": options, "rerank": rerank}, timeout=120)
    except (OSError, http.client.HTTPException, ValueError, RecursionError):
        return None
    if status == 400 and isinstance(data, dict) and isinstance(data.get("error"), str):
        raise ValueError(data["error"])
    return data if status == 200 and isinstance(data, dict) and isinstance(data.get("hits"), list) else None
