"""The user's own settings: where models are loaded from, and thread counts. Never from a commit.

A repository's ``.vaultsync.yaml`` is input from whoever can commit, so it may not
choose a folder that code or weights are loaded from (ADR-0032). Those keys live here.
Sources, each overriding the one before:

1. ``$XDG_CONFIG_HOME/vaultsync/config.yaml`` (else ``~/.config/vaultsync/config.yaml``)::

       models:
         cache_dir: ~/models/vaultsync   # built models (default: the XDG cache)
         reranker_dir: ~/models/my-ce    # a cross-encoder folder for ``--rerank cross-encoder``
         threads: 4

2. the environment: ``VAULTSYNC_CACHE_DIR``, ``VAULTSYNC_RERANKER_DIR``, ``VAULTSYNC_THREADS``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

_KEYS = {"cache_dir": str, "reranker_dir": str, "threads": int}


@dataclass(frozen=True)
class UserSettings:
    """Settings of the user running vaultsync. ``None`` means the built-in default."""

    cache_dir: str | None = None
    reranker_dir: str | None = None
    threads: int | None = None


def settings_path() -> Path:
    """Where the user's settings file is looked for (it need not exist)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base).expanduser() / "vaultsync" / "config.yaml"


def user_settings() -> UserSettings:
    """The user's settings (file, then environment). A bad file is named on stderr and ignored."""
    values: dict[str, object] = {}
    path = settings_path()
    if path.is_file():
        values.update(_read(path))
    for key, env in (("cache_dir", "VAULTSYNC_CACHE_DIR"), ("reranker_dir", "VAULTSYNC_RERANKER_DIR"),
                     ("threads", "VAULTSYNC_THREADS")):
        raw = os.environ.get(env)
        if raw:
            try:
                values[key] = _KEYS[key](raw)
            except ValueError:
                print(f"vaultsync: warning: ${env}={raw!r} is not a {_KEYS[key].__name__}; ignored", file=sys.stderr)
    return UserSettings(**values)  # type: ignore[arg-type]


def cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The user cache of built models and the like (the folder is not created): ``cache_dir``, else
    the user's setting, else ``$XDG_CACHE_HOME/vaultsync``, else ``~/.cache/vaultsync``."""
    cache_dir = cache_dir or user_settings().cache_dir
    if cache_dir:
        return Path(cache_dir).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg).expanduser() / "vaultsync"
    return Path.home() / ".cache" / "vaultsync"


def cache_problem(exc: OSError) -> str | None:
    """One line for ``exc`` when it is about a path in the user cache (:func:`cache_root`: a file where the
    folder belongs, an unwritable or full folder), naming the setting that chose the folder; None for any
    other path."""
    if not isinstance(exc.filename, (str, bytes, os.PathLike)):
        return None
    root = cache_root()
    if not Path(os.path.abspath(os.fsdecode(exc.filename))).is_relative_to(os.path.abspath(root)):
        return None
    why = "not a folder (a file is in its place)" if root.exists() and not root.is_dir() else exc.strerror or str(exc)
    if os.environ.get("VAULTSYNC_CACHE_DIR"):
        return f"VAULTSYNC_CACHE_DIR={root}: {why}"
    if user_settings().cache_dir:
        return f"models.cache_dir={root} (in {settings_path()}): {why}"
    return f"the model cache {root}: {why} (VAULTSYNC_CACHE_DIR chooses another folder)"


def _read(path: Path) -> dict[str, object]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        print(f"vaultsync: warning: {path}: cannot read ({exc}); ignored", file=sys.stderr)
        return {}
    models = data.get("models") if isinstance(data, dict) else None
    out: dict[str, object] = {}
    for key, value in (models or {}).items() if isinstance(models, dict) else ():
        if key in _KEYS and isinstance(value, _KEYS[key]) and not isinstance(value, bool):
            out[key] = value
        else:
            print(f"vaultsync: warning: {path}: models.{key} = {value!r} is not a known setting; ignored",
                  file=sys.stderr)
    return out
