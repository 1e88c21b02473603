"""Run ``git`` as a child process with a clean environment (see :mod:`vaultsync.git`).

Apart from :mod:`vaultsync.git`, and importing only ``os`` and ``subprocess``, so that the hook's
no-change answer (:mod:`vaultsync.index.fastpath`) can call git without loading pathlib or pygit2.
"""

from __future__ import annotations

import os
import subprocess

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs milliseconds on the hook path
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

# GIT_* variables a child git may inherit: transport, credentials and ``-c`` settings, never
# repository selection (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, ...).
GIT_ENV_KEPT = frozenset({
    "GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSL_CAINFO", "GIT_SSL_NO_VERIFY",
    "GIT_CONFIG_COUNT", "GIT_HTTP_PROXY_AUTHMETHOD", "GIT_ALLOW_PROTOCOL", "GIT_ASKPASS",
    # who commits (a CI bot's identity often comes only from these); they never select a repository
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
})
_GIT_ENV_KEPT_PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")


def no_git_env(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """``base`` (default ``os.environ``) without the GIT_* variables a git hook exports, plus ``extra``.

    Kept: :data:`GIT_ENV_KEPT` and ``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>``.
    ``extra`` (e.g. ``GIT_AUTHOR_NAME``) is added after filtering.
    """
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if not k.startswith("GIT_") or k in GIT_ENV_KEPT or k.startswith(_GIT_ENV_KEPT_PREFIXES)}
    env.update(extra)
    return env


def run_git(args: Sequence[str], cwd: Path | str, *, env: Mapping[str, str] | None = None, check: bool = False,
            text: bool = True, timeout: float | None = None) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    """Run ``git ARGS`` in ``cwd`` with :func:`no_git_env` plus ``env``; output captured, stdin empty.

    Returns:
        The completed process (``stdout``/``stderr`` as str, or bytes when ``text`` is False).
    Raises:
        subprocess.CalledProcessError when ``check`` and git exits non-zero; subprocess.TimeoutExpired
        past ``timeout`` seconds; OSError when git is missing.
    """
    return subprocess.run(["git", *args], cwd=cwd, env=no_git_env(**(env or {})),  # noqa: S603,S607
                          capture_output=True, stdin=subprocess.DEVNULL, text=text, check=check, timeout=timeout)
