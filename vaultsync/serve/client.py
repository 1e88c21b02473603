"""Talk to a running ``vaultsync serve`` daemon with signed requests (ADR-0033).

Every request is signed with the repository's secret and every answer must prove the daemon
holds it; an answer without that proof comes from some other process on the port and is
refused (:class:`UntrustedDaemon`). No answer at all means "no daemon": the caller falls back
to the in-process pipeline.

Light on purpose (no pygit2, no YAML, no search pipeline): ``git memsearch`` through the daemon
is this module, reading the git dir (:func:`locate`, no git process); the daemon renders the output.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from vaultsync.serve.auth import AUTH_HEADER, PROOF_HEADER, proof_ok, read_token, sign_request
from vaultsync.serve.port_file import advertised_port

TYPE_CHECKING = False  # not typing's: importing typing costs ~2.5 ms of every `git memsearch`
if TYPE_CHECKING:
    from typing import Any

DEFAULT_PORT = 30001
FORMATS = ("text", "markdown", "json")  # what ``vaultsync search --format`` prints, and the daemon renders
MAX_ANSWER_BYTES = 64 << 20  # a search answer is a few KiB: more is not our daemon


class UntrustedDaemon(RuntimeError):
    """Something answered on the daemon's port without proving it holds the repository's secret."""


def daemon_port(config_port: Any = None) -> int | None:
    """The port to listen on or ask: ``$VAULTSYNC_PORT``, else ``search.port`` from the config, else 30001;
    None when not a valid port."""
    try:
        port = int(os.environ.get("VAULTSYNC_PORT") or config_port or DEFAULT_PORT)
    except (TypeError, ValueError):
        return None
    return port if 0 < port < 65536 else None


def port_env_problem() -> str | None:
    """What is wrong with ``$VAULTSYNC_PORT`` when it is set and no port (clients then find no daemon)."""
    value = os.environ.get("VAULTSYNC_PORT")
    if not value or daemon_port(None) is not None:
        return None
    return f"$VAULTSYNC_PORT={value[:40]!r} is not a port (1-65535)"


def request(port: int, index_dir: Path, method: str, path: str, body: dict[str, Any] | None,
            timeout: float) -> tuple[int, Any] | None:
    """A signed request to the daemon of the index in ``index_dir``: (status, JSON), or None when
    no daemon listens or the repository has no secret yet.

    Raises:
        UntrustedDaemon: the answer lacks a valid proof.
    """
    token = read_token(index_dir)
    if token is None:
        return None
    payload = json.dumps(body).encode("utf-8") if body is not None else b""
    auth, nonce = sign_request(token, method, path, payload)
    headers = {AUTH_HEADER: auth, "Content-Length": str(len(payload))}
    if body is not None:
        headers["Content-Type"] = "application/json"
    try:
        status, fields, data = _exchange(port, method, path, headers, payload, timeout)
    except (OSError, ValueError):
        return None
    if not proof_ok(token, nonce, status, data, fields.get(PROOF_HEADER.lower())):
        raise UntrustedDaemon(f"the process on 127.0.0.1:{port} is not this repository's daemon (another "
                              "repository's, or something else); its answer was ignored and the search ran "
                              "in-process (give each repository its own port: search.port)")
    try:
        return status, json.loads(data or b"null")
    except ValueError:
        return None


def _exchange(port: int, method: str, path: str, headers: dict[str, str], payload: bytes,
              timeout: float) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.0 exchange with the daemon on 127.0.0.1: (status, header fields by lower-case name,
    body). Reads until the answer is whole (its ``Content-Length``) or the connection closes, as the
    daemon's ``http.server`` does after each answer: at most :data:`MAX_ANSWER_BYTES`, within
    ``timeout`` seconds in all. A plain socket, not ``http.client``, which loads ``email`` and ``ssl``:
    a third of the imports of a ``git memsearch`` through the daemon (ADR-0078).

    Raises:
        OSError: no connection, or no whole answer within ``timeout`` seconds.
        ValueError: the answer is not an HTTP response, too large, or shorter than its ``Content-Length``.
    """
    import socket
    import time

    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    request = f"{method} {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n{head}\r\n".encode("latin-1")
    deadline = time.monotonic() + timeout
    raw = bytearray()
    length: int | None = None
    # the host as bytes: a str host is encoded with the idna codec, whose import costs ~1.4 ms
    with socket.create_connection((b"127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request + payload)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no whole answer within {timeout} s")
            sock.settimeout(left)
            part = sock.recv(1 << 16)
            if not part:
                break
            raw += part
            if len(raw) > MAX_ANSWER_BYTES:
                raise ValueError("answer too large")
            end = raw.find(b"\r\n\r\n")
            if end >= 0 and length is None:
                declared = _fields(bytes(raw[:end])).get("content-length", "")
                length = int(declared) if declared.isdigit() else -1  # -1: read until the close
            if end >= 0 and length is not None and length >= 0 and len(raw) - end - 4 >= length:
                break  # whole, even on a connection left open
    block, found, body = bytes(raw).partition(b"\r\n\r\n")
    status_line = block.split(b"\r\n", 1)[0].decode("latin-1")
    version, _, rest = status_line.partition(" ")
    if not found or not version.startswith("HTTP/") or not rest[:3].isdigit():
        raise ValueError("not an HTTP response")
    if length is not None and length >= 0:
        if len(body) < length:
            raise ValueError("answer shorter than its Content-Length")
        body = body[:length]
    return int(rest[:3]), _fields(block), body


def _fields(block: bytes) -> dict[str, str]:
    """The header fields of a header block (status line first), by lower-case name."""
    fields = {}
    for line in block.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return fields


def search_via_daemon(port: int, index_dir: Path, query: str, options: dict[str, Any],
                      rerank: str | None, fmt: str | None = None, explain: bool = False) -> dict[str, Any] | None:
    """The daemon's search result, or None when no daemon of this repository answers. With ``fmt``
    (``text``, ``markdown`` or ``json``) the result also holds ``rendered``: the CLI's output.

    Raises:
        ValueError: the daemon rejected the query (e.g. empty, an option out of range).
        UntrustedDaemon: something else answers on ``port``.
    """
    health = request(port, index_dir, "GET", "/health", None, timeout=0.3)
    if health is None or health[0] != 200:
        return None
    body = {"query": query, "options": options, "rerank": rerank}
    if fmt is not None:
        body |= {"format": fmt, "explain": explain}
    answer = request(port, index_dir, "POST", "/search", body, timeout=120)
    if answer is None:
        return None
    status, data = answer
    if status == 400 and isinstance(data, dict) and isinstance(data.get("error"), str):
        raise ValueError(data["error"])
    return data if status == 200 and isinstance(data, dict) and isinstance(data.get("hits"), list) else None


def own_daemon_answers(port: int | None, index_dir: Path) -> bool:
    """Whether this repository's daemon (the one holding the secret of ``index_dir``) answers a signed
    ``/health`` on ``port`` within 0.5 s."""
    try:
        answer = request(port, index_dir, "GET", "/health", None, timeout=0.5) if port else None
    except UntrustedDaemon:
        return False
    return answer is not None and answer[0] == 200


def client_port(index_dir: Path) -> int | None:
    """Where a client asks the daemon of the index in ``index_dir``: ``$VAULTSYNC_PORT`` when set, else the
    port its daemon recorded (:mod:`vaultsync.serve.port_file`); None: no daemon to ask."""
    if os.environ.get("VAULTSYNC_PORT"):
        return daemon_port(None)
    return advertised_port(index_dir)


def locate(cwd: str) -> tuple[Path, int] | None:
    """(index folder, daemon port) of the repository at ``cwd`` from its git dir (:func:`git_dir_of`) and the
    daemon's port record — no git process, no pygit2, no config parsing — or None when no daemon serves it."""
    git_dir = git_dir_of(cwd)
    if git_dir is None:
        return None
    index_dir = Path(git_dir) / "vaultsync"
    port = client_port(index_dir)
    return (index_dir, port) if port else None


def git_dir_of(cwd: str) -> str | None:
    """The git dir of the working tree holding ``cwd``, found as the full route finds it (from ``cwd``, not
    ``$GIT_DIR``, which a hook exports): the nearest ``.git`` folder (holding ``HEAD``) or ``.git`` file
    (``gitdir: …``: a worktree or submodule) at or above ``cwd``; None when there is none. Only where a
    client looks for the daemon: a wrong answer finds no daemon and no secret, and the search runs through
    the full route (pygit2's discovery), never on another repository's index."""
    here = os.path.abspath(cwd)
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isfile(os.path.join(dot, "HEAD")):
            return dot
        try:
            with open(dot, encoding="utf-8") as f:
                pointer = f.read(4096)
        except (OSError, UnicodeDecodeError):
            pointer = ""
        if pointer.startswith("gitdir: "):
            return os.path.normpath(os.path.join(here, pointer[8:].strip()))
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
