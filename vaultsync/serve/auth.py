"""The daemon's shared secret and the signatures that prove both ends know it (ADR-0033).

The secret is 32 random bytes, hex, in ``<git dir>/vaultsync/daemon.token`` (mode 0600): only the
user who owns the repository can read it. It never travels over the socket:

* a request carries ``X-Vaultsync-Auth: <unix seconds>.<nonce>.<HMAC-SHA256(secret, ts, nonce,
  method, path, body)>``; the daemon refuses a bad MAC, a timestamp more than
  :data:`MAX_SKEW_S` away, and a nonce it has already seen (replay);
* a response carries ``X-Vaultsync-Proof: HMAC-SHA256(secret, nonce, status, body)``, so the
  client knows it talks to this repository's daemon and not to a process squatting on its port.

HMAC: RFC 2104; comparisons in constant time (:func:`hmac.compare_digest`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import time
from collections import OrderedDict
from pathlib import Path

AUTH_HEADER = "X-Vaultsync-Auth"
PROOF_HEADER = "X-Vaultsync-Proof"
TOKEN_NAME = "daemon.token"
MAX_SKEW_S = 120


class AuthError(Exception):
    """A request's credentials are missing, malformed, stale, replayed or wrong."""


def token_path(index_dir: Path) -> Path:
    """Where the secret of the index in ``index_dir`` (``<git dir>/vaultsync``) lives."""
    return index_dir / TOKEN_NAME


def ensure_token(index_dir: Path) -> bytes:
    """The secret, created with mode 0600 on first use (atomically: two daemons agree on one)."""
    path = token_path(index_dir)
    index_dir.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        os.chmod(path, 0o600)  # a copied or hand-made secret: readable by its owner only
    else:
        with os.fdopen(fd, "w") as fh:
            fh.write(os.urandom(32).hex())
    token = read_token(index_dir)
    if token is None:
        raise AuthError(f"{path}: unreadable or malformed daemon secret; delete it to make a new one")
    return token


def read_token(index_dir: Path) -> bytes | None:
    """The secret, or None when absent or malformed (then no daemon can be trusted)."""
    try:
        text = token_path(index_dir).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text.encode() if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else None


def _mac(token: bytes, *parts: bytes) -> str:
    mac = hmac.new(token, digestmod=hashlib.sha256)
    for part in parts:
        mac.update(len(part).to_bytes(8, "big"))
        mac.update(part)
    return mac.hexdigest()


def sign_request(token: bytes, method: str, path: str, body: bytes, now: float | None = None) -> tuple[str, str]:
    """The ``X-Vaultsync-Auth`` value for a request, and its nonce (to check the proof with)."""
    ts = str(int(now if now is not None else time.time()))
    nonce = os.urandom(16).hex()
    return f"{ts}.{nonce}.{_mac(token, ts.encode(), nonce.encode(), method.encode(), path.encode(), body)}", nonce


def response_proof(token: bytes, nonce: str, status: int, body: bytes) -> str:
    """The ``X-Vaultsync-Proof`` value of a response to the request with ``nonce``."""
    return _mac(token, b"response", nonce.encode(), str(status).encode(), body)


def proof_ok(token: bytes, nonce: str, status: int, body: bytes, proof: str | None) -> bool:
    """True when ``proof`` shows the responder holds ``token``."""
    if not proof or not proof.isascii():  # compare_digest refuses non-ASCII text: no proof either way
        return False
    return hmac.compare_digest(response_proof(token, nonce, status, body), proof)


class Verifier:
    """Checks request signatures and remembers recent nonces (bounded) to refuse replays."""

    def __init__(self, token: bytes, max_nonces: int = 50_000) -> None:
        self._token = token
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._max = max_nonces
        import threading  # the daemon's side only: the CLI's light route signs, it does not verify

        self._lock = threading.Lock()

    def verify(self, header: str | None, method: str, path: str, body: bytes, now: float | None = None) -> str:
        """The request's nonce when ``header`` signs it. Raises :class:`AuthError` otherwise."""
        if not header:
            raise AuthError(f"missing {AUTH_HEADER} (the CLI and MCP server sign requests with the repository's secret)")
        parts = header.split(".")
        if len(parts) != 3 or not parts[0].isdigit() or len(parts[1]) != 32 or len(parts[2]) != 64:
            raise AuthError(f"malformed {AUTH_HEADER}")
        ts, nonce, mac = parts
        now = now if now is not None else time.time()
        if abs(now - int(ts)) > MAX_SKEW_S:
            raise AuthError("stale request signature (clock skew over 120 s)")
        want = _mac(self._token, ts.encode(), nonce.encode(), method.encode(), path.encode(), body)
        if not hmac.compare_digest(want, mac):
            raise AuthError("bad request signature")
        with self._lock:
            if nonce in self._seen:
                raise AuthError("replayed request")
            self._seen[nonce] = now
            while len(self._seen) > self._max or (self._seen and next(iter(self._seen.values())) < now - 2 * MAX_SKEW_S):
                self._seen.popitem(last=False)
        return nonce

    def proof(self, nonce: str, status: int, body: bytes) -> str:
        """The proof header for a response (see :func:`response_proof`)."""
        return response_proof(self._token, nonce, status, body)
