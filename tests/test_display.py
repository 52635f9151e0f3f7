"""Result objects show as tables in a notebook (``_repr_html_``), like a DataFrame."""

from __future__ import annotations

import pandas as pd

from thatchlab.calibration import calibrate_from_shadow


def _shadow():
    now = pd.Timestamp("2026-03-01T00:00:00Z")
    return pd.DataFrame({
        "memory_id": ["m1", "m2", "m3"], "namespace": ["work", "work", "ops"],
        "source": ["user", "user", "api"],
        "observed_at": [now - pd.Timedelta(days=d) for d in (1, 2, 3)],
        "derived_confidence": [0.7, 0.9, 0.4], "recall_outcome": ["consumed", None, "unconsumed"],
    }), now


def test_a_calibration_report_shows_its_rows_as_a_table():
    obs, now = _shadow()
    html = calibrate_from_shadow(obs, now, days=30)._repr_html_()
    assert "<h4>Calibration report</h4>" in html
    assert "<b>observations</b>: 3" in html and "<b>groups</b>: 2" in html
    assert "<th>bucket_9</th>" in html and "<td>work</td>" in html and "<td>ops</td>" in html


def test_a_decision_shows_what_ships_and_its_evidence():
    import numpy as np

    from thatchlab.decide import decide, planted_sweep

    d = decide(planted_sweep(12, -0.05, np.random.default_rng(1)), "log_loss", n_boot=200)
    html = d._repr_html_()
    assert html.startswith("<div class='thatchlab-display'><h4>Decision: ")
    assert "<b>metric</b>: log_loss" in html
    assert "<i>evidence</i>" in html and "<th>ci_lower</th>" in html
    for parameter in d.evidence["parameter"]:
        assert f"<td>{parameter}</td>" in html


def test_a_fitter_shows_its_summary():
    from thatchlab.fit import PriorFitter

    signals = pd.DataFrame({"item_id": [f"i{j // 4}" for j in range(40)],
                            "signal": ["confirm", "disconfirm", "confirm", "soft"] * 10})
    assert "not fitted" in PriorFitter()._repr_html_()
    html = PriorFitter().fit(signals)._repr_html_()
    assert "<h4>PriorFitter</h4>" in html and "<i>summary_</i>" in html
    assert "<th>k</th>" in html and "<th>p0</th>" in html


def test_a_fleet_result_shows_pooled_and_per_user_tables():
    from thatchlab.replay.fleet import FleetResult

    res = FleetResult(per_user=pd.DataFrame({"user": ["a", "b"], "log_loss": [0.5, 0.6]}),
                      pooled={"n_users": 2, "log_loss": 0.55}, signals=pd.DataFrame(),
                      forecasts=pd.DataFrame(), embedder="lookup")
    html = res._repr_html_()
    assert "<h4>Fleet replay (prediction)</h4>" in html and "<b>users</b>: 2" in html
    assert "<i>pooled</i>" in html and "<i>per_user</i> (2 rows)" in html and "<td>b</td>" in html


def test_a_replay_result_shows_its_metrics_and_events():
    from thatchlab.embed import LookupEmbedder
    from thatchlab.replay import run

    emb = LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1], "I am writing tests now": [1, 0.1]})
    log = pd.DataFrame({"ts": ["2026-01-01T09:00:00Z", "2026-01-01T09:05:00Z"], "session": ["s1", "s2"],
                        "kind": ["prediction_update", "message"], "matcher": ["writing tests", None],
                        "statement": ["use pytest", None], "signal": ["confirm", None],
                        "text": [None, "I am writing tests now"]})
    res = run(log, embedder=emb, params={"k": 2.0})   # a flat mapping, as the command line takes
    assert res.params.k == 2.0 and res.params.p0 == 0.5
    html = res._repr_html_()
    assert "<h4>Replay</h4>" in html and "<b>engine</b>: prediction" in html
    assert "<i>metrics</i>" in html and "<th>interruption_rate</th>" in html and "<i>events</i> (2 rows)" in html


BAD = "<script>alert(1)</script>"


def _str_dtype():
    """pandas 3's default text dtype (on pandas 2.2 its forerunner, ``pyarrow_numpy``)."""
    import pandas as pd

    try:
        return pd.StringDtype("pyarrow", na_value=float("nan"))
    except TypeError:  # pandas 2.2
        return pd.StringDtype("pyarrow_numpy")
SAFE = "&lt;script&gt;alert(1)&lt;/script&gt;"


def test_notebook_displays_escape_every_cell_and_header_of_any_dtype():
    import pyarrow as pa

    from thatchlab.core.display import html_block

    frame = pd.DataFrame({
        "object": pd.Series([BAD], dtype=object), "string": pd.Series([BAD], dtype="string"),
        "str": pd.Series([BAD], dtype=_str_dtype()),
        "category": pd.Categorical([BAD]), "arrow": pd.Series([BAD], dtype=pd.ArrowDtype(pa.string())),
        BAD: [1.5]}).set_axis(pd.Index([BAD], name=BAD))
    html = html_block(BAD, {BAD: BAD}, {BAD: frame})
    assert "<script" not in html
    # title, fact name and value, table name; five cells, the index cell, a column and the index name
    assert html.count(SAFE) == 4 + 5 + 1 + 2


def test_store_matcher_and_statement_texts_are_escaped_in_a_replay_and_a_calibration_report():
    from thatchlab.embed import LookupEmbedder
    from thatchlab.replay import run

    ts = pd.Timestamp("2026-03-01T09:00:00Z")
    log = pd.DataFrame({"ts": [ts, ts + pd.Timedelta(seconds=1)], "session": [BAD, BAD],
                        "store": [BAD, BAD], "kind": ["prediction_update", "message"],
                        "matcher": [BAD, None], "statement": [BAD, None], "signal": ["confirm", None],
                        "text": [None, BAD]})
    res = run(log, "prediction", embedder=LookupEmbedder({BAD: [1.0, 0.0]}))
    html = res._repr_html_()
    assert "<script" not in html and SAFE in html
    obs, now = _shadow()
    obs["namespace"] = pd.Series([BAD] * 3, dtype="string")
    html = calibrate_from_shadow(obs, now, days=30)._repr_html_()
    assert "<script" not in html and f"<td>{SAFE}</td>" in html
