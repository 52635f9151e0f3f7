"""Sphinx configuration of the thatchlab documentation.

Build with ``python -m sphinx -W --keep-going -b html docs docs/_build/html``.
Notebooks are rendered from their stored outputs (never re-executed).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# Importing the package for autodoc must never touch the network or a GPU.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

import thatchlab  # noqa: E402

project = "thatchlab"
author = "thatchlab contributors"
copyright = "thatchlab contributors"
version = release = thatchlab.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_nb",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# Notebooks are shown with the outputs stored in them: the test suite runs
# them under nbval, the docs never re-execute them.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"
autodoc_mock_imports: list[str] = []
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# numpydoc validates every documented object: a docstring, every parameter documented and no
# unknown one, a Returns section when something is returned (scripts/check_docstrings.py: the same set)
numpydoc_validation_checks = {"GL08", "PR01", "PR02", "RT01"}

html_theme = "pydata_sphinx_theme"
html_title = f"thatchlab {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # the parameter and glossary tables take the right-hand column's width
    "secondary_sidebar_items": {"**": ["page-toc"], "parameters": [], "glossary": []},
}
# Every section page has its children in the left navigation; the one page
# with no section around it shows the page's own contents instead of an
# empty left column.
html_sidebars = {"getting_started": []}
html_static_path = ["_static"]
html_css_files = ["thatchlab.css"]
html_show_sourcelink = False
