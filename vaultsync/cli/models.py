"""``vaultsync models``: build the local ONNX models and list what is installed.

* ``vaultsync models build [--model NAME] [--force] [--cache-dir DIR]`` — build
  into the user cache (progress on stderr); exit 1 with a one-line reason when
  the source is missing or corrupted or the golden probe fails.
* ``vaultsync models list [--json]`` — every model with a manifest: status,
  folder, file sizes and checksums (a table on a terminal, tab-separated
  lines otherwise).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from typing import Any

from vaultsync.models import cache
from vaultsync.models import manifest as manifests
from vaultsync.settings import cache_root


def add_parser(subparsers: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    """Register ``models`` and its ``build`` / ``list`` actions."""
    parser: argparse.ArgumentParser = subparsers.add_parser(name, help=help_text, description=help_text)
    actions = parser.add_subparsers(dest="models_action", metavar="ACTION")
    b = actions.add_parser("build", help="build a model into the user cache")
    b.add_argument("--model", default="multilingual-e5-small", help="manifest name (default: %(default)s)")
    b.add_argument("--force", action="store_true", help="rebuild even if a build exists")
    b.add_argument(
        "--cache-dir",
        default=None,
        help="cache root (default: $VAULTSYNC_CACHE_DIR, $XDG_CACHE_HOME/vaultsync, ~/.cache/vaultsync)",
    )
    b.add_argument("--threads", type=int, default=2, help="onnxruntime threads for the probe check")
    ls = actions.add_parser("list", help="show the models, where they are, sizes and checksums")
    ls.add_argument("--cache-dir", default=None, help="cache root")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run, models_action=None, cache_dir=None, json=False)
    return parser


def run(args: argparse.Namespace) -> int:
    """Dispatch ``build`` / ``list`` (``list`` when no action is given)."""
    if args.models_action == "build":
        return _build(args)
    return _list(args)


def _build(args: argparse.Namespace) -> int:
    from vaultsync.models.convert.build import BuildError, build_model, stderr_progress

    try:
        result = build_model(
            args.model, cache_dir=args.cache_dir, force=args.force, progress=stderr_progress, threads=args.threads
        )
    except BuildError as exc:
        print(f"vaultsync models build: error: {exc}", file=sys.stderr)
        return 1
    if not result.built:
        print(f"{args.model} is already built in {result.folder} (use --force to rebuild)")
    else:  # the build said "built … in N s" on stderr: stdout names where it is, for scripts
        size = sum(f["bytes"] for f in result.info["files"].values()) / 1e6
        print(f"{result.folder} ({size:.0f} MB)")
    return 0


def _rows(cache_dir: str | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in manifests.available():
        m = manifests.load(name)
        row: dict[str, Any] = {"name": name, "version": m.version, "dims": m.dims, "files": {}}
        if m.kind == "e5-onnx":
            folder = cache.model_dir(m.name, m.version, cache_dir)
            info = cache.read_build_info(folder)
            row["folder"] = str(folder)
            if info is None:
                row["status"] = "not built (vaultsync models build)"
            else:
                row["status"] = "built"
                row["files"] = info["files"]
                from vaultsync.models.embedder import model_id

                row["model_id"] = model_id(m.name, m.version, info)
                row["build_seconds"] = info.get("build_seconds")
        else:
            spec = importlib.util.find_spec(next(iter(m.sources.values())).package)
            if spec is None or not spec.submodule_search_locations:
                from vaultsync.resources import install_hint

                row["status"] = f"not installed ({install_hint('search')})"
            else:
                from pathlib import Path

                site = Path(next(iter(spec.submodule_search_locations))).parent
                row["status"] = "installed (runs from its package)"
                row["folder"] = str(site / next(iter(m.sources.values())).package)
                for src in m.sources.values():
                    p = site / src.path
                    if p.is_file():
                        row["files"][Path(src.path).name] = {"bytes": p.stat().st_size, "sha256": src.sha256}
                row["model_id"] = f"{m.name}@v{m.version}+{m.sources['weights'].sha256[:12]}"
        rows.append(row)
    return rows


def _list(args: argparse.Namespace) -> int:
    rows = _rows(args.cache_dir)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"vaultsync models (cache: {cache_root(args.cache_dir)})")
        for col in ("model", "status", "folder", "file", "size", "sha256"):
            table.add_column(col)
        for r in rows:
            files = list(r["files"].items()) or [("", None)]
            for k, (fname, f) in enumerate(files):
                table.add_row(
                    r["name"] if k == 0 else "",
                    r["status"] if k == 0 else "",
                    r.get("folder", "") if k == 0 else "",
                    fname,
                    f"{f['bytes'] / 1e6:.1f} MB" if f else "",
                    f["sha256"][:16] if f else "",
                )
        Console().print(table)
        return 0
    for r in rows:
        print(f"{r['name']}\t{r['status']}\t{r.get('folder', '')}")
        for fname, f in r["files"].items():
            print(f"  {fname}\t{f['bytes']}\t{f['sha256']}")
    return 0
