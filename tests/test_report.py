"""Notebook renderings in reports/ are made from the current notebooks (checked without re-running)."""

import json
from pathlib import Path

import pytest

from thatchlab.report import notebook_hash, render_notebook, rendering_hash

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_rendering_matches_current_notebook(nb):
    html = ROOT / "reports" / "notebooks" / (nb.stem + ".html")
    assert html.exists(), f"{html} missing: run scripts/render_reports.py"
    assert rendering_hash(html) == notebook_hash(nb), \
        f"{html.name} was rendered from an older {nb.name}: run scripts/render_reports.py"


def _tiny(path, source, output):
    nb = {"cells": [{"cell_type": "code", "id": "c1", "execution_count": 1, "metadata": {}, "source": source,
                     "outputs": [{"output_type": "stream", "name": "stdout", "text": output}]}],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))


def test_hash_changes_with_source_or_outputs_not_metadata(tmp_path):
    a = tmp_path / "a.ipynb"
    _tiny(a, "print(1)", "1\n")
    h = notebook_hash(a)
    out = render_notebook(a, tmp_path / "a.html")
    assert rendering_hash(out) == h and "print" in out.read_text()
    _tiny(a, "print(2)", "1\n")
    assert notebook_hash(a) != h
    _tiny(a, "print(1)", "2\n")
    assert notebook_hash(a) != h
    _tiny(a, "print(1)", "1\n")
    nb = json.loads(a.read_text())
    nb["metadata"]["widgets"] = {"x": 1}
    a.write_text(json.dumps(nb))
    assert notebook_hash(a) == h
