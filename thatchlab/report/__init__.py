"""HTML reports: notebook renderings, and the report and notebook of ``thatchlab run``.

The main job's report is rendered from the Jinja2 template
``templates/run.html.j2`` (:func:`render_run_report`) over plain data, and its
``run.ipynb`` is written with nbformat (:func:`write_run_notebook`).

A notebook rendering carries a hash of the notebook it was made from
(its cells' sources and stored outputs), so a test can tell a stale
rendering from a current one without re-executing anything.
"""

from __future__ import annotations

import hashlib
import html
import json
from pathlib import Path

from thatchlab.report._notebook import RESULT_FILES, write_run_notebook
from thatchlab.report._run import GLOSSARY, render_run_report, table_html

__all__ = ["notebook_hash", "render_notebook", "render_all_notebooks", "rendering_hash", "HASH_META",
           "render_run_report", "table_html", "GLOSSARY", "write_run_notebook", "RESULT_FILES"]

HASH_META = "thatchlab-notebook-sha256"


def notebook_hash(path) -> str:
    """sha256 over the notebook's cell types, sources and stored outputs (not metadata).

    Parameters
    ----------
    path : str or path-like
        The ``.ipynb`` file.

    Returns
    -------
    str
        The hex digest; a re-execution that changes no output keeps it.

    See Also
    --------
    rendering_hash : the hash a rendering was stamped with.
    """
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    canon = []
    for cell in nb.get("cells", []):
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        outputs = []
        for out in cell.get("outputs", []) or []:
            o = {k: v for k, v in out.items() if k not in ("metadata", "execution_count")}
            outputs.append(o)
        canon.append({"type": cell.get("cell_type"), "source": src, "outputs": outputs})
    blob = json.dumps(canon, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def render_notebook(path, out_path) -> Path:
    """Render a notebook's stored outputs to HTML (no execution), stamped with its hash.

    Parameters
    ----------
    path : str or path-like
        The ``.ipynb`` file.
    out_path : str or path-like
        The HTML file to write (its folder is made when missing).

    Returns
    -------
    pathlib.Path
        ``out_path``.

    See Also
    --------
    render_all_notebooks : every notebook of a folder.
    notebook_hash : the hash stamped into the rendering.
    """
    import nbformat  # heavy: nbformat loads its JSON schemas; only rendering needs it
    from nbconvert import HTMLExporter  # optional: a dev extra, only to render notebooks

    path, out_path = Path(path), Path(out_path)
    nb = nbformat.read(path, as_version=4)
    body, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    stamp = f'<meta name="{HASH_META}" content="{notebook_hash(path)}">'
    body = body.replace("<head>", "<head>\n" + stamp, 1)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(body, encoding="utf-8")
    return out_path


def rendering_hash(html_path) -> str | None:
    """The notebook hash stamped into a rendering.

    Parameters
    ----------
    html_path : str or path-like
        A rendering written by :func:`render_notebook`.

    Returns
    -------
    str or None
        The stamped hash, None when the file carries none.

    See Also
    --------
    notebook_hash : the hash of the notebook now, to compare with.
    """
    text = Path(html_path).read_text(encoding="utf-8")
    marker = f'<meta name="{HASH_META}" content="'
    i = text.find(marker)
    if i < 0:
        return None
    j = text.index('"', i + len(marker))
    return html.unescape(text[i + len(marker):j])


def render_all_notebooks(notebooks_dir="notebooks", out_dir="reports/notebooks") -> list[Path]:
    """Render every notebook in ``notebooks_dir`` to ``out_dir/<name>.html``.

    Parameters
    ----------
    notebooks_dir : str or path-like, default="notebooks"
        The folder whose ``*.ipynb`` files are rendered, in name order.
    out_dir : str or path-like, default="reports/notebooks"
        The folder the renderings go to.

    Returns
    -------
    list of pathlib.Path
        The renderings written.

    See Also
    --------
    render_notebook : one notebook.
    """
    out = []
    for nb in sorted(Path(notebooks_dir).glob("*.ipynb")):
        out.append(render_notebook(nb, Path(out_dir) / (nb.stem + ".html")))
    return out
