"""The layout shows the architecture: data flows one way, no module imports a higher layer, no
import cycles, no module over 400 lines, every package says its job, and the wheel ships no
training code."""

from __future__ import annotations

import ast
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "vaultsync"

# Lowest first. A module may import its own layer and the layers below it, never one above.
LAYERS: list[tuple[str, ...]] = [
    ("vaultsync", "vaultsync.diagnostics", "vaultsync.heap", "vaultsync.resources", "vaultsync.settings", "vaultsync.git", "vaultsync.gitcmd", "vaultsync.gitignore", "vaultsync.gitopen", "vaultsync.lfs",
     "vaultsync.logs", "vaultsync.sqlite_uri", "vaultsync.symlinks"),
    ("vaultsync.vault",),
    ("vaultsync.models",),
    ("vaultsync.models.convert",),
    ("vaultsync.checks",),
    ("vaultsync.index",),
    ("vaultsync.search",),
    ("vaultsync.engine", "vaultsync.memory"),
    ("vaultsync.eval", "vaultsync.serve", "vaultsync.mcp_server"),
    ("vaultsync.cli", "vaultsync.__main__"),
]
MAX_LINES = 400


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path, name: str) -> set[str]:
    """Every vaultsync module ``path`` imports, at module level or inside functions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    mods = _modules()
    return {m for m in found if m in mods and m != name}


def _layer(module: str) -> int:
    best, depth = -1, -1
    for i, members in enumerate(LAYERS):
        for m in members:
            if (module == m or module.startswith(m + ".")) and len(m) > depth and (m != "vaultsync" or module == m):
                best, depth = i, len(m)
    return best


GRAPH = {name: _imports(path, name) for name, path in _modules().items()}


def test_every_module_has_a_layer() -> None:
    assert [m for m in GRAPH if _layer(m) < 0] == []


def test_no_module_imports_a_higher_layer() -> None:
    upward = sorted(f"{m} -> {t}" for m, targets in GRAPH.items() for t in targets if _layer(t) > _layer(m))
    assert upward == []


def test_no_import_cycles_between_modules() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                cycles.append(sorted(scc))

    for v in GRAPH:
        if v not in index:
            visit(v)
    assert cycles == []


def test_no_import_cycles_between_packages() -> None:
    def package(m: str) -> str:
        return m if (ROOT / Path(*m.split(".")) / "__init__.py").exists() else m.rpartition(".")[0]

    edges = {(package(m), package(t)) for m, ts in GRAPH.items() for t in ts if package(m) != package(t)}
    both_ways = sorted(f"{a} <-> {b}" for a, b in edges if (b, a) in edges and a < b
                       and not (b.startswith(a + ".") or a.startswith(b + ".")))
    assert both_ways == []


def test_no_module_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_every_package_states_its_job() -> None:
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc, f"{init.relative_to(ROOT)} has no docstring"


def test_the_runtime_never_imports_training_code() -> None:
    for name, path in _modules().items():
        text = path.read_text(encoding="utf-8")
        assert "import training" not in text and "from training" not in text, name


@pytest.mark.slow
def test_the_wheel_ships_no_training_code(tmp_path: Path) -> None:
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    (wheel,) = tmp_path.glob("vaultsync-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("training/") or "/training/" in n or "recipe" in n
                or "train_torch" in n]
    assert any(n.endswith("vaultsync-reranker-ml4/model.onnx") for n in names)
    assert any(n.endswith("_data/models/kernels/int8-dot.onnx") for n in names)
