"""Render every notebook's stored outputs to reports/notebooks/<name>.html.

Run after re-executing a notebook:  .venv/bin/python scripts/render_reports.py
"""

from pathlib import Path

from thatchlab.report import render_all_notebooks

ROOT = Path(__file__).resolve().parents[1]

if __name__ == "__main__":
    for path in render_all_notebooks(ROOT / "notebooks", ROOT / "reports" / "notebooks"):
        print(path.relative_to(ROOT))
