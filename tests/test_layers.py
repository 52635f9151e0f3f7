"""The package's shape: layers and private names stay where they belong."""

from __future__ import annotations

import ast
import functools
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "thatchlab"
SCORING = PKG / "scoring"


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per test run (every check walks the same files)."""
    return ast.parse(path.read_text(), filename=str(path))


@functools.cache
def _private_names(package: Path) -> frozenset[str]:
    """Every ``_name`` a package defines on its classes or instances."""
    names = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        names.add(item.name)
                    elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                        targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                        names.update(t.id for t in targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    names.add(node.attr)
    return frozenset(n for n in names if n.startswith("_") and not n.startswith("__"))


def _private_touches(path: Path, private: set[str]) -> list[str]:
    hits = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Attribute) and node.attr in private:
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue  # the module's own objects
            if isinstance(owner, ast.Call) and getattr(owner.func, "id", None) == "super":
                continue
            hits.append(f"{path.relative_to(PKG.parent)}:{node.lineno}: .{node.attr}")
    return hits


PACKAGES = sorted(p for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists())


def test_private_names_are_found():
    # the checks below are only as good as these sets
    assert {"_embed", "_apply_signal", "_count_loaded_ids", "_scan_cache"} <= _private_names(SCORING)
    assert "_rows" in _private_names(PKG / "belief")


def test_no_module_outside_scoring_touches_engine_privates():
    private = _private_names(SCORING)
    hits = []
    for path in sorted(PKG.rglob("*.py")):
        if SCORING in path.parents:
            continue
        own = _private_names(path.parent) if path.parent != PKG else set()
        hits += _private_touches(path, private - own)
    assert hits == [], "modules reach into the scoring engine's private state:\n" + "\n".join(hits)


@pytest.mark.parametrize("package", PACKAGES, ids=[p.name for p in PACKAGES])
def test_no_package_reads_another_packages_private_attributes(package):
    """``obj._x`` where ``_x`` is private to another package and not defined in this one."""
    own = _private_names(package)
    others = set().union(*(_private_names(p) for p in PACKAGES if p != package)) - own
    hits = []
    for path in sorted(package.rglob("*.py")):
        hits += _private_touches(path, others)
    assert hits == [], f"{package.name} reads other packages' private attributes:\n" + "\n".join(hits)


@pytest.mark.skipif(shutil.which("lint-imports", path=str(Path(sys.executable).parent)) is None,
                    reason="import-linter is installed with the dev extra")
def test_import_linter_contracts_are_kept():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    proc = subprocess.run([exe, "--no-cache"], cwd=PKG.parent, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 kept, 0 broken" in proc.stdout


def _module_imports() -> dict:
    """Module name → the thatchlab modules it imports (at any level, function-local included)."""
    mods = {}
    for path in PKG.rglob("*.py"):
        name = ".".join(path.relative_to(PKG.parent).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = path
    graph = {}
    for name, path in mods.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("thatchlab"):
                deps.add(node.module)
                deps.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[name] = {d for d in deps if d in mods and d != name}
    return graph, {n for n, p in mods.items() if p.name == "__init__.py"}


def test_no_two_modules_import_each_other():
    """A package's ``__init__`` re-exports its modules; apart from that, imports run one way."""
    graph, packages = _module_imports()
    mutual = sorted((a, b) for a in graph for b in graph[a]
                    if a < b and a in graph[b] and not {a, b} & packages)
    assert mutual == []


def _reaches(path: Path) -> list[str]:
    """``obj._name`` where ``_name`` is not defined in the module itself (nor namedtuple API)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Assign):
            own.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
              and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            own.add(node.attr)
    hits = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
            continue
        if node.attr in own or node.attr in ("_asdict", "_fields", "_replace", "_make"):
            continue
        base = node.value
        if isinstance(base, ast.Name) and base.id in ("self", "cls"):
            continue
        if isinstance(base, ast.Call) and getattr(base.func, "id", None) == "super":
            continue
        hits.append(f"{path.relative_to(PKG.parent)}:{node.lineno}: {ast.unparse(node)}")
    return hits


def test_no_module_reaches_into_another_modules_private_names():
    """Across module boundaries (ours, pandas', torch's...) only public names are used."""
    hits = [h for path in sorted(PKG.rglob("*.py")) for h in _reaches(path)]
    assert hits == [], "private reach:\n" + "\n".join(hits)
