"""Notebook renderings in reports/ are made from the current notebooks (checked without re-running)."""

import json
from pathlib import Path

import pandas as pd
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


# ------------------------------------------------------------------ the run report shows what it has (issue 36 pt 4)
def _render(tmp_path, sections):
    from thatchlab.report import render_run_report

    return render_run_report(tmp_path / "index.html", facts=[{"label": "Data", "value": "d"}], engines=[],
                             ships={"paragraphs": ["Ships: nothing."],
                                    "tables": [("", pd.DataFrame({"parameter": ["k", "p0"], "ships": [True, False]}))]},
                             sections=sections, parameters={"values": {}}, versions={"python": "3"},
                             timings={"replay": 1.0})


def test_an_empty_table_or_figure_says_why_in_its_place(tmp_path):
    empty = pd.DataFrame({"threshold": [], "val_interruption_rate": []})
    empty.attrs["empty_reason"] = ("no message reached the strong regime with an outcome on validation under any "
                                   "configuration, so wrong silent follows cannot be estimated")
    html = _render(tmp_path, [{"title": "Sweep", "tables": [("Pareto front", empty), ("Other", pd.DataFrame())],
                               "figures": [("Interruptions against wrong silent follows", None,
                                            "no configuration at production's K and P0 was scored")]}]).read_text()
    assert ('<h3>Pareto front</h3><p class="empty">Nothing to show: no message reached the strong regime with an '
            "outcome on validation under any configuration, so wrong silent follows cannot be estimated.</p>") in html
    assert '<h3>Other</h3><p class="empty">Nothing to show: no rows: the data gave nothing to show here.</p>' in html
    assert ("<h3>Interruptions against wrong silent follows</h3><p class=\"empty\">Nothing to show: no "
            "configuration at production&#x27;s K and P0 was scored.</p>") in html
    assert "<img" not in html


def test_booleans_read_as_words(tmp_path):
    html = _render(tmp_path, []).read_text()
    assert "<td>yes</td>" in html and "<td>no</td>" in html
    assert ">True<" not in html and ">False<" not in html


def test_glossary_travels_with_the_report(tmp_path):
    import re

    metrics = pd.DataFrame({"value": [0.5, 0.25, 3.0, 1.0]},
                           index=["log_loss", "val_brier", "n_calls_not_run", "not_a_metric"])
    metrics.attrs["index_is_metric"] = True
    html = _render(tmp_path, [{"title": "Replay", "tables": [("Replay metrics", metrics)]}]).read_text()
    glossary = (tmp_path / "glossary.html").read_text()
    links = re.findall(r'<a href="([^"]*)" title="([^"]*)">([^<]*)</a>', html)
    assert [(href, name) for href, _, name in links] == [
        ("glossary.html#term-log_loss", "log_loss"), ("glossary.html#term-val_-metric", "val_brier"),
        ("glossary.html#term-n_calls_not_run", "n_calls_not_run")]
    assert links[0][1].startswith("Prequential log-loss: before each confirm/disconfirm/soft signal")
    for href, _, _ in links:
        assert f'id="{href.split("#")[1]}"' in glossary
    assert "<td>not_a_metric</td>" in html  # a name the glossary does not define is not a dead link
    assert "_build" not in html and "file://" not in html


def test_the_packaged_glossary_is_the_documentation_glossary():
    """The report's glossary (package data, so it ships in the wheel) is docs/glossary.md, word for word."""
    packaged = ROOT / "thatchlab" / "report" / "templates" / "glossary.md"
    assert packaged.read_text() == (ROOT / "docs" / "glossary.md").read_text(), \
        "cp docs/glossary.md thatchlab/report/templates/glossary.md"


def test_plural_counts_agree_in_number():
    from thatchlab.core.display import plural

    assert [plural(n, "configuration") for n in (0, 1, 2)] == ["0 configurations", "1 configuration",
                                                               "2 configurations"]


# -- escaping: every header and cell of the run report's tables, whatever its dtype ------------

BAD = "<script>alert(1)</script>"
SAFE = "&lt;script&gt;alert(1)&lt;/script&gt;"


def _str_dtype():
    """pandas 3's default text dtype (on pandas 2.2 its forerunner, ``pyarrow_numpy``)."""
    import pandas as pd

    try:
        return pd.StringDtype("pyarrow", na_value=float("nan"))
    except TypeError:  # pandas 2.2
        return pd.StringDtype("pyarrow_numpy")


def _hostile_frame():
    """One hostile text in a column of each dtype a table can carry, and in the column names."""
    import pandas as pd
    import pyarrow as pa

    return pd.DataFrame({
        "object": pd.Series([BAD, None], dtype=object),
        "string": pd.Series([BAD, None], dtype="string"),
        "str": pd.Series([BAD, None], dtype=_str_dtype()),
        "category": pd.Categorical([BAD, None]),
        "arrow": pd.Series([BAD, None], dtype=pd.ArrowDtype(pa.string())),
        BAD: [1.5, float("nan")],
        "count": pd.array([3, None], dtype="Int64"),
    })


def test_report_tables_escape_every_cell_and_header_of_any_dtype():
    import pandas as pd

    from thatchlab.report import table_html

    out = str(table_html(_hostile_frame()))
    assert "<script" not in out
    assert out.count(SAFE) == 6  # five text columns and one column name
    assert "<NA>" not in out and "None" not in out  # missing cells of every dtype print as "–"
    rows = out.split("<tr>")[1:]  # the two body rows (the header row has a style)
    assert rows[0].count(f"<td>{SAFE}</td>") == 5 and "<td>1.5</td>" in rows[0] and "<td>3</td>" in rows[0]
    assert rows[1].count("<td>–</td>") == 7
    # a named index (here hostile) becomes the first column and is escaped as well
    indexed = _hostile_frame().set_index(pd.Index([BAD, "b"], dtype="string", name="<i>name</i>"))
    out = str(table_html(indexed))
    assert "<script" not in out and "<i>" not in out and out.count(SAFE) == 7
    assert "<th>&lt;i&gt;name&lt;/i&gt;</th>" in out
    # repeated column names keep their own cells; a MultiIndex header is escaped level by level
    twice = pd.concat([_hostile_frame()[["string"]], pd.DataFrame({"string": [1, 2]})], axis=1)
    assert "<td>1</td>" in str(table_html(twice)) and str(table_html(twice)).count(SAFE) == 1
    multi = pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([(BAD, "a"), (BAD, "b")]))
    assert "<script" not in str(table_html(multi))


def test_the_run_report_escapes_every_text_that_reaches_it(tmp_path):
    """Store, matcher and statement texts, session names and the texts of facts, captions and values."""
    import pandas as pd

    from thatchlab.report import render_run_report

    rules = pd.DataFrame({"store": pd.Series([BAD], dtype="string"), "matcher": pd.Categorical([BAD]),
                          "statement": pd.Series([BAD], dtype="str"), "session": [BAD]})
    section = {"title": BAD, "paragraphs": [BAD], "preformatted": [BAD], "tables": [(BAD, rules),
               (BAD, _hostile_frame())], "figures": [(BAD, "fig.png")]}
    path = render_run_report(
        tmp_path / "index.html", facts=[{"label": BAD, "value": BAD, "note": BAD}],
        engines=[{"engine": BAD, "release": BAD, "ran": BAD, "values": BAD}],
        ships={"paragraphs": [BAD], "tables": [("", rules)]}, sections=[section],
        parameters={"paragraphs": [BAD], "values": {"prediction": {"store": BAD}}},
        versions={BAD: BAD}, timings={BAD: 1.0}, skipped=[BAD], title=BAD)
    text = path.read_text(encoding="utf-8")
    assert "<script" not in text
    # 4 header and 4 cell texts per rules table (2), 6 in the hostile table, 15 in the texts around them
    assert text.count(SAFE) == 2 * 8 + 6 + 15
