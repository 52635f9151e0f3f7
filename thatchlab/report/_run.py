"""The HTML report of ``thatchlab run``, rendered from the Jinja2 template ``templates/run.html.j2``.

The caller passes plain data (strings, DataFrames, figure file names);
every piece of HTML is made here: the template autoescapes text, and the
tables this module builds with :meth:`DataFrame.to_html` enter it as
:class:`markupsafe.Markup`.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np
import pandas as pd
from markupsafe import Markup

from thatchlab.report._glossary import GLOSSARY_FILE, entry_for, write_glossary

__all__ = ["GLOSSARY", "table_html", "empty_note", "render_run_report"]

#: Where the report links metric names: the glossary page written beside ``index.html``
#: (anchors ``#term-<metric>``), from the glossary the package carries (never a docs build).
GLOSSARY = GLOSSARY_FILE
_METRIC_COLUMNS = ("metric",)  # columns whose cells are metric names
#: What an empty table says in its place when its frame names no reason (``attrs["empty_reason"]``).
_NO_ROWS = "no rows: the data gave nothing to show here"


def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined  # heavy: only to render

    return Environment(loader=PackageLoader("thatchlab.report", "templates"), autoescape=True,
                       undefined=StrictUndefined, keep_trailing_newline=True)


def _glossary_link(name: str) -> str:
    """``name`` linked to its entry of the glossary page beside the report, its first sentence as a
    tooltip; plain text when the glossary has no entry for it."""
    e = entry_for(name)
    if e is None:
        return html.escape(name)
    return (f'<a href="{GLOSSARY_FILE}#{e.anchor}" title="{html.escape(e.tip)}">'
            f"{html.escape(name)}</a>")


def _word(v) -> str:
    """A cell as text: booleans as yes/no, missing values as "–", the rest escaped."""
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if _missing(v):  # None, NaN, pd.NA, NaT: whatever the column's dtype holds
        return "–"
    return html.escape(str(v))


def empty_note(why: str) -> Markup:
    """What a table or a figure with no data shows in its place: the reason, as a paragraph.

    >>> str(empty_note("no configuration"))
    '<p class="empty">Nothing to show: no configuration.</p>'
    """
    return Markup(f'<p class="empty">Nothing to show: {html.escape(why)}.</p>')


def table_html(df: pd.DataFrame, out_dir=None, metric_names: bool = False) -> Markup:
    """``df`` as an HTML table (class ``t``), safe to place in the template.

    A plain row number is dropped and a named index (metric names, parameter
    names) becomes the first column; numbers print with 4 significant digits,
    missing values as "–", text escaped. With ``metric_names`` the cells of a
    ``metric`` column (and the index when ``df.attrs["index_is_metric"]``) link
    to their entries of ``glossary.html``, the page written beside the report
    (``out_dir`` is kept for callers; the link is the same from any folder),
    with the entry's first sentence as a tooltip.

    Booleans read as "yes" and "no". A frame without rows shows, in the
    table's place, why: ``df.attrs["empty_reason"]`` (a generic line without).

    Every header and every cell that is not a number is escaped, whatever its dtype.

    Parameters
    ----------
    df : pandas.DataFrame
        The table.
    out_dir : str or path-like, optional
        Kept for callers; the glossary links are the same from any folder.
    metric_names : bool, default=False
        Link metric names to their glossary entries.

    Returns
    -------
    markupsafe.Markup
        The ``<table>`` (or the note saying why there are no rows).

    See Also
    --------
    render_run_report : the report that places these tables.

    Examples
    --------
    >>> str(table_html(pd.DataFrame({"<a>": ["<b>"]}))).count("&lt;")
    2
    >>> "<td>yes</td>" in str(table_html(pd.DataFrame({"ships": [True]})))
    True
    """
    if len(df) == 0:
        return empty_note(df.attrs.get("empty_reason") or _NO_ROWS.removesuffix("."))
    metric_cols = _METRIC_COLUMNS + (("",) if df.attrs.get("index_is_metric") else ())
    if not (isinstance(df.index, pd.RangeIndex) and df.index.name is None):
        df = df.reset_index().rename(columns={"index": ""})
    # Every header and every cell that is not a number is escaped here, whatever its dtype (object,
    # str, string, categorical, Arrow), missing ones included: to_html(escape=False) writes them as
    # given, and skips formatters for missing cells (pd.NA would print as a raw "<NA>"). Columns go
    # by position, so repeated names keep their own.
    cols = {}
    for i, col in enumerate(df.columns):
        values = df.iloc[:, i]
        if metric_names and col in metric_cols:
            values = [_glossary_link(str(v)) for v in values]
        elif pd.api.types.is_bool_dtype(values.dtype) or not pd.api.types.is_numeric_dtype(values.dtype):
            values = [_word(v) for v in values]
        elif isinstance(values.dtype, pd.api.extensions.ExtensionDtype):  # Int64, Float64, Arrow numbers
            values = ["–" if _missing(v) else f"{v:.4g}" if isinstance(v, float) else str(v) for v in values]
        cols[i] = pd.Series(values, index=df.index, dtype=object) if isinstance(values, list) else values
    df = pd.DataFrame(cols, index=df.index).set_axis(_escaped_labels(df.columns), axis=1)
    return Markup(df.to_html(border=0, classes="t", float_format=lambda x: f"{x:.4g}", na_rep="–",
                             index=False, escape=False))


def _missing(value) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or array in an object cell is a value
        return False


def _escaped_labels(columns: pd.Index) -> pd.Index:
    """Column labels (each level of a MultiIndex) as escaped text."""
    if isinstance(columns, pd.MultiIndex):
        return pd.MultiIndex.from_tuples([tuple(html.escape(str(x)) for x in t) for t in columns],
                                         names=columns.names)
    return pd.Index([html.escape(str(c)) for c in columns], dtype=object)


def _section(sec, out_dir, metric_names: bool) -> dict:
    """A section for the template: tables given as DataFrames become Markup tables."""
    get = sec.get if isinstance(sec, dict) else (lambda k, d=None: getattr(sec, k, d))
    tables = []
    for caption, table in get("tables") or ():
        if isinstance(table, pd.DataFrame):
            table = table_html(table, out_dir, metric_names=metric_names)
        elif not hasattr(table, "__html__"):
            raise TypeError(f"table {caption!r}: expected a DataFrame or Markup, got {type(table).__name__}")
        tables.append((caption, table))
    figures = []
    for fig in get("figures") or ():  # (caption, PNG path), or (caption, None, why) for one with no data
        caption, src = fig[0], fig[1]
        figures.append((caption, None if src is None else str(src),
                        empty_note(fig[2] if len(fig) > 2 else _NO_ROWS.removesuffix(".")) if src is None else ""))
    return {"title": get("title", ""), "paragraphs": list(get("paragraphs") or ()),
            "preformatted": list(get("preformatted") or ()), "tables": tables, "figures": figures}


def render_run_report(path, *, facts, engines, ships, sections, parameters, versions, timings,
                      skipped=(), title: str = "thatchlab run") -> Path:
    """Write the main job's report to ``path`` from ``templates/run.html.j2``.

    Parameters
    ----------
    path : str or path-like
        The HTML file to write; figure paths and glossary links are relative to its folder.
    facts : list of dict
        ``{"label", "value", "note"}`` each: the header line (data, embedder, export...).
    engines : list of dict
        ``{"engine", "release", "ran", "values"}`` each: what each engine ran (the production
        release replayed, in words and values).
    ships : dict
        The "What ships, and why" section: ``{"paragraphs", "tables"}``.
    sections : list
        The job's sections, each a mapping or an object with ``title``,
        ``paragraphs``, ``preformatted`` (text shown as is), ``tables``
        (``(caption, DataFrame)``; metric names link to the glossary) and
        ``figures`` (``(caption, relative PNG path)``, or ``(caption, None, why)``
        for a figure the data cannot draw: the reason shows in its place).
    parameters : dict
        ``{"paragraphs": [...], "values": {name: {field: value}}}``, shown as JSON.
    versions, timings : dict
        ``{name: value}``, shown as tables.
    skipped : sequence of str, default=()
        The steps that had no log.
    title : str, default="thatchlab run"
        The page's title.

    Returns
    -------
    pathlib.Path
        ``path``; ``glossary.html`` is written beside it.

    See Also
    --------
    write_run_notebook : the notebook written beside the report.
    """
    path = Path(path)
    out_dir = path.parent
    context = {
        "title": title,
        "facts": [{"label": f["label"], "value": f["value"], "note": f.get("note", "")} for f in facts],
        "engines": list(engines),
        "skipped": list(skipped),
        "ships": _section({"title": "", **ships}, out_dir, metric_names=False),
        "sections": [_section(s, out_dir, metric_names=True) for s in sections],
        "parameters": _section({"paragraphs": parameters.get("paragraphs", ()),
                                "preformatted": [json.dumps(parameters["values"], indent=1, default=str)]},
                               out_dir, metric_names=False),
        "versions": table_html(pd.DataFrame({"version": pd.Series(versions, dtype=object)})),
        "timings": table_html(pd.DataFrame({"seconds": pd.Series(timings, dtype="float64")})),
    }
    text = _environment().get_template("run.html.j2").render(**context)
    path.write_text(text, encoding="utf-8")
    write_glossary(out_dir)  # the entries the metric names link to travel with the report
    return path
