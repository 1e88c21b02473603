"""Locate the data files that ship with vaultsync (schemas, model manifests, git hook shims).

In a wheel they live under ``vaultsync/_data/``; in a source checkout or an
editable install they are the top-level ``schemas/``, ``models/`` and
``githooks/`` folders of the repository.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the directory of shipped data ``name`` (``schemas``, ``models`` or ``githooks``).

    Raises:
        FileNotFoundError: when neither the installed nor the source location exists.
    """
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"vaultsync data folder {name!r} not found (broken install?)")


def model_names() -> list[str]:
    """Names of every model with a shipped manifest (``models/<name>.json``), sorted."""
    return sorted(p.stem for p in data_dir("models").glob("*.json"))


def install_hint(extras: str) -> str:
    """The pip command that adds ``extras`` (``"search"``, ``"search,mcp"``) to this vaultsync, which is not on
    PyPI: from the folder or URL pip installed it from (its ``direct_url.json``, PEP 610), else from a clone."""
    import importlib.metadata
    import json
    import shlex
    from urllib.parse import unquote, urlparse

    url = ""
    try:
        url = json.loads(importlib.metadata.distribution("vaultsync").read_text("direct_url.json") or "{}").get("url", "")
    except (importlib.metadata.PackageNotFoundError, ValueError, AttributeError):
        pass
    if url.startswith("file://"):  # quoted for a shell: a folder's name may hold a quote or a space
        return f"pip install {shlex.quote(f'{unquote(urlparse(url).path)}[{extras}]')}"
    if url:
        return f"pip install {shlex.quote(f'vaultsync[{extras}] @ {url}')}"
    return f"pip install '.[{extras}]' in a clone of vaultsync"
