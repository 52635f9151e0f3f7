"""Rich display in notebooks: result objects show as a titled block of facts and tables.

A class mixes in :class:`RichDisplay` and says what it shows in
``_display_()``: a title, a mapping of one-line facts, and named
DataFrames. Jupyter calls ``_repr_html_`` (as it does for a DataFrame); long
tables are cut to ``max_rows`` rows with pandas' own ellipsis.

>>> import pandas as pd
>>> class Box(RichDisplay):
...     def _display_(self):
...         return "A box", {"size": 2}, {"contents": pd.DataFrame({"x": [1, 2]})}
>>> html = Box()._repr_html_()
>>> "<h4>A box</h4>" in html and "<b>size</b>: 2" in html and "<th>x</th>" in html
True
"""

from __future__ import annotations

import html

__all__ = ["RichDisplay", "html_block", "plural"]


def html_block(title: str, facts: dict | None = None, tables: dict | None = None, *,
               max_rows: int = 40) -> str:
    """HTML of a title, one line of ``facts`` and each of ``tables`` (name → DataFrame) under its name.

    Parameters
    ----------
    title : str
        The heading.
    facts : dict, optional
        Label → value, shown on one line (floats with six significant digits).
    tables : dict, optional
        Name → DataFrame (or None, skipped); an empty name shows the table without a caption.
    max_rows : int, default=40
        Rows shown per table.

    Returns
    -------
    str
        The HTML, escaped.

    Examples
    --------
    >>> html_block("Run", {"rows": 3}).splitlines()[1]
    '<p><b>rows</b>: 3</p>'
    """
    parts = [f"<div class='thatchlab-display'><h4>{html.escape(str(title))}</h4>"]
    if facts:
        line = " · ".join(f"<b>{html.escape(str(k))}</b>: {html.escape(_text(v))}" for k, v in facts.items())
        parts.append(f"<p>{line}</p>")
    for name, frame in (tables or {}).items():
        if frame is None:
            continue
        if name:
            rows = plural(len(frame), "row").replace(str(len(frame)), f"{len(frame):,}", 1)
            parts.append(f"<p><i>{html.escape(str(name))}</i> ({rows})</p>")
        parts.append(frame.to_html(max_rows=max_rows, notebook=True, border=0))
    parts.append("</div>")
    return "\n".join(parts)


def _text(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


class RichDisplay:
    """Mixin: ``_repr_html_`` from ``_display_() -> (title, facts, tables)``."""

    def _display_(self):  # pragma: no cover - every user overrides it
        raise NotImplementedError

    def _repr_html_(self) -> str:
        title, facts, tables = self._display_()
        return html_block(title, facts, tables)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, the word agreeing with the count.

    Parameters
    ----------
    n : int
        The count.
    word : str
        The singular.
    many : str, optional
        The plural, when adding ``s`` (or ``y`` → ``ies``) would be wrong.

    Returns
    -------
    str
        ``"{n} {word}"`` agreeing with ``n``.

    Examples
    --------
    >>> plural(1, "configuration"), plural(3, "configuration"), plural(2, "entry"), plural(0, "match", "matches")
    ('1 configuration', '3 configurations', '2 entries', '0 matches')
    """
    if n == 1:
        return f"{n} {word}"
    if many is None:
        many = word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"
    return f"{n} {many}"
