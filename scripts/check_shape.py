"""The shape rules of the package: functions of at most 80 lines, imports at the top.

* No function or method in ``thatchlab/`` is longer than :data:`MAX_LINES` lines, counted from its
  first decorator to its last line (docstring included).
* No import inside a function, except of an optional or heavy dependency (:data:`DEFERRED`), and
  such an import carries a comment on its line saying why it waits.

    python scripts/check_shape.py                  # the whole package; exit 1 on any problem
    python scripts/check_shape.py thatchlab/logs   # one folder
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_LINES = 80
#: top-level modules that may be imported inside a function (optional extras or slow to import)
DEFERRED = {"torch", "sentence_transformers", "transformers", "dask", "distributed", "polars", "duckdb",
            "optuna", "matplotlib", "jinja2", "nbformat", "nbconvert", "nbclient", "lifelines",
            "statsmodels", "IPython", "ipywidgets", "huggingface_hub", "sklearn", "joblib", "pyarrow",
            "pandera", "scipy"}
ROOT = Path(__file__).resolve().parents[1]


def _length(node) -> int:
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    return node.end_lineno - first + 1


def _imported(node) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name.split(".")[0] for a in node.names]
    return [(node.module or "").split(".")[0]] if node.level == 0 else ["."]


def problems(folder: Path) -> list[str]:
    """One line per rule broken under ``folder``: ``path:line: what``."""
    out = []
    for path in sorted(folder.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines), filename=str(path))
        rel = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if _length(node) > MAX_LINES:
                out.append(f"{rel}:{node.lineno}: {node.name} is {_length(node)} lines (max {MAX_LINES})")
            for inner in ast.walk(node):
                if not isinstance(inner, (ast.Import, ast.ImportFrom)):
                    continue
                mods = _imported(inner)
                line = lines[inner.lineno - 1]
                if not all(m in DEFERRED for m in mods):
                    out.append(f"{rel}:{inner.lineno}: import inside {node.name} of {', '.join(mods)}")
                elif "#" not in line:
                    out.append(f"{rel}:{inner.lineno}: deferred import of {', '.join(mods)} in "
                               f"{node.name} without a comment saying why")
    return out


def main(argv: list[str]) -> int:
    folder = Path(argv[0]).resolve() if argv else ROOT / "thatchlab"
    found = problems(folder)
    print("\n".join(found))
    print(f"{len(found)} problems under {folder.relative_to(ROOT)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
