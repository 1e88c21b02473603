"""Recompute the golden probe of a model manifest from the float32 reference graph.

Command (from the repository root)::

    python training/make_probe.py [multilingual-e5-small|use-multilingual]

For ``multilingual-e5-small`` it builds the unquantised reference model into a
temporary folder (the INT8 build must land within the manifest's tolerance of
these values); for ``use-multilingual`` it runs the package's float32 numpy
model. It rewrites ``first_dims``, ``cosines`` and (e5) ``token_ids`` in
``models/<name>.json``.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from vaultsync.models import manifest as manifests
from vaultsync.models import probe
from vaultsync.models.convert.build import build_reference
from vaultsync.resources import data_dir


def main(name: str) -> None:
    m = manifests.load(name)
    if m.kind == "e5-onnx":
        from vaultsync.models.embedder import Embedder

        with tempfile.TemporaryDirectory() as tmp:
            info = build_reference(Path(tmp), name)
            got = probe.measure(Embedder(Path(tmp), m, info), m.probe["items"])
    else:
        from vaultsync.models.use_embedder import UseEmbedder

        got = probe.measure(UseEmbedder.load(m), m.probe["items"])
    path = data_dir("models") / f"{name}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["probe"].update(got)
    path.write_text(_dump(raw), encoding="utf-8")
    print(f"updated {path}")


def _dump(raw: dict) -> str:
    """JSON with one probe row per line (readable diffs)."""
    text = json.dumps(raw, indent=2, ensure_ascii=False)
    for key in ("first_dims", "cosines", "token_ids"):
        rows = raw["probe"].get(key)
        if rows:
            compact = "[\n" + ",\n".join("      " + json.dumps(r) for r in rows) + "\n    ]"
            pretty = json.dumps(rows, indent=2).replace("\n", "\n    ")
            text = text.replace(pretty, compact)
    return text + "\n"


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "multilingual-e5-small")
