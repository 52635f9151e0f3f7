"""The house rules of issue 35, checked on the whole package: short functions, imports at the top,
every public callable documented with numpydoc's sections (the docs build enforces the same set)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


shape = _script("check_shape")
docstrings = _script("check_docstrings")


def test_no_function_over_80_lines_and_no_import_inside_a_function():
    assert shape.problems(ROOT / "thatchlab") == []


def test_the_shape_check_sees_what_it_must(tmp_path):
    pkg = tmp_path / "thatchlab"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(80))
    (pkg / "m.py").write_text(
        "def long():\n" + body + "\n"
        "def lazy():\n    import json\n    import matplotlib  # heavy: figures only\n"
        "def quiet():\n    import polars\n")
    shape_root = shape.ROOT
    shape.ROOT = tmp_path
    try:
        found = shape.problems(pkg)
    finally:
        shape.ROOT = shape_root
    assert found == ["thatchlab/m.py:1: long is 81 lines (max 80)",
                     "thatchlab/m.py:83: import inside lazy of json",
                     "thatchlab/m.py:86: deferred import of polars in quiet without a comment saying why"]


def test_every_public_callable_has_its_numpydoc_sections():
    found = docstrings.problems("thatchlab")
    assert found == [], "\n".join(f"{q}: {c} {m}" for q, c, m in found[:40])


def test_the_docs_build_validates_the_same_sections():
    conf = ast.parse((ROOT / "docs" / "conf.py").read_text())
    checks = next(node.value for node in conf.body if isinstance(node, ast.Assign)
                  and getattr(node.targets[0], "id", None) == "numpydoc_validation_checks")
    assert ast.literal_eval(checks) == docstrings.CHECKS == {"GL08", "PR01", "PR02", "RT01"}


@pytest.mark.parametrize("module", ["thatchlab.fit", "thatchlab.sweep", "thatchlab.decide"])
def test_the_new_rooms_say_what_they_hold_and_may_import(module):
    doc = importlib.import_module(module).__doc__
    assert doc and "may import" in doc
