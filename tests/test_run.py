"""The main job on the bundled data: every engine replayed, a sweep, the fits, a report, an export."""

import json
import shutil
import sqlite3

import pytest

from tests._main_job import main_job
from thatchlab.core.errors import InputError
from thatchlab.run import load_config, run_all
from thatchlab.store import import_sqlite


@pytest.fixture(scope="module")
def result(tmp_path_factory, real_embedder):
    """The main job on the bundled samples, run once per session (shared with test_run_notebook.py)."""
    return main_job(tmp_path_factory, real_embedder)


def test_every_engine_ran_and_nothing_was_skipped(result):
    assert result.skipped == []
    titles = " | ".join(s.title for s in result.sections)
    for word in ("Prediction engine: replay", "Behavior engine", "holdout sweep", "empirical-Bayes prior",
                 "Belief model", "Confidence calibration", "Anticipation"):
        assert word in titles
    assert result.metrics["belief replay and fit"]["time_only_transitions"] == 0


def test_report_has_figures_tables_params_versions_timings(result):
    html = result.report_path.read_text()
    assert result.report_path.name == "index.html"
    for needle in ("<h2>Parameters</h2>", "<h2>Versions</h2>", "<h2>Timings</h2>",
                   "sentence-transformers/all-MiniLM-L6-v2", "CONFIDENCE CALIBRATION REPORT"):
        assert needle in html
    figures = sorted(p.name for p in (result.out_dir / "figures").glob("*.png"))
    assert len(figures) >= 8
    for name in figures:
        assert f"figures/{name}" in html


def test_export_holds_every_engine_and_ships_only_what_the_decision_shipped(result):
    from thatchlab.core.params import ScoringParams
    from thatchlab.decide._core import EVIDENCE_COLUMNS

    back = import_sqlite(result.export_path)
    assert back.meta["engines"] == ["prediction", "behavior", "belief", "calibration", "anticipation"]
    assert back.prediction is not None and back.beliefs is not None and back.patterns is not None
    manifest = json.loads(result.manifest_path.read_text())
    records = manifest["decisions"]["prediction"]
    assert [r["parameter"] for r in records] == ["k", "p0", "threshold", "combined"]
    assert all(set(r) == set(EVIDENCE_COLUMNS) for r in records[:-1])
    shipped = {r["parameter"]: r["candidate"] for r in records[:-1] if r["shipped"]}
    # the exported parameters are production's defaults with only the shipped values changed
    assert manifest["params"]["prediction"] == ScoringParams().replace(**shipped).to_dict()
    assert manifest["unreviewed"] == {} and manifest["declared"] == {}
    assert manifest["environment"] == [f"THATCH_PREDICTION_THRESHOLD={shipped['threshold']:g}"
                                       for _ in [0] if "threshold" in shipped]
    evidence = result.sections[2].tables[0][1]
    assert list(evidence.columns) == list(EVIDENCE_COLUMNS)
    con = sqlite3.connect(result.export_path)
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_the_bundled_data_ships_exactly_the_planted_change(result):
    """data/README.md: the sample world plants K = 5 (production's: right) and P0 = 0.2
    (production's 0.5: wrong); the main job ships p0 near 0.2 with its evidence, and keeps K."""
    from thatchlab.synth.samples import SAMPLE_PRIOR

    manifest = json.loads(result.manifest_path.read_text())
    assert manifest["shipped"] == {"prediction": {"p0": pytest.approx(SAMPLE_PRIOR[1], abs=0.03)}}
    assert set(manifest["recommended_production_changes"]["prediction"]) == {"p0"}
    records = {r["parameter"]: r for r in manifest["decisions"]["prediction"]}
    assert records["p0"]["shipped"] and records["p0"]["ci_upper"] < 0
    assert not records["k"]["shipped"] and records["k"]["reason"].startswith("keeps k=5.0")
    combined = records["combined"]
    assert combined["shipped"] and combined["params"] == {"p0": manifest["shipped"]["prediction"]["p0"]}
    assert combined["ci_lower"] < combined["delta"] < combined["ci_upper"] < 0
    assert result.metrics["prediction sweep"]["shipped"] == "p0"


def test_fitted_half_lives_and_derive_coefficients_are_decided_on_held_out_data(result):
    """Fits are candidates like any other: fitted before the test stretch, tested on it, each with
    its evidence records and a combined record; on the bundled logs neither beats production."""
    manifest = json.loads(result.manifest_path.read_text())
    for key, metric in (("beliefs", "brier"), ("calibration", "derived_log_loss")):
        records = manifest["decisions"][key]
        assert records[-1]["parameter"] == "combined" and records[-1]["metric"] == metric
        assert all(not r["shipped"] for r in records)
        lo, hi = records[-1]["ci_lower"], records[-1]["ci_upper"]
        assert lo < 0 < hi  # the candidate's own interval: not supported
        assert {r["parameter"] for r in records[:-1]} <= set(manifest["params"][key])
    assert "beliefs" not in manifest["shipped"] and "calibration" not in manifest["shipped"]


def test_the_report_opens_with_what_ships_and_why(result):
    html = result.report_path.read_text()
    first = html.index("<h2>")
    assert html[first:].startswith("<h2>What ships, and why</h2>")
    head = html[first:html.index("<h2>", first + 1)]
    assert "Ships: prediction p0 = 0.2" in head and "recommended production change" in head
    for needle in ("intercept", "preference", "prior fit (K, P0)", "fitted on the log before the test stretch, "
                   "then tested", "behavior", "anticipation"):
        assert needle in head
    assert "as a whole it changes held-out log_loss by" in head


def _header_rows(text: str) -> dict:
    """``{engine: (ran with, values)}`` from the report's header table, unescaped (the production
    release column is read by :func:`_header_releases`)."""
    import html
    import re

    head = text[:text.index("<h2>")]
    cells = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td><code>(.*?)</code></td></tr>", head)
    return {html.unescape(e): (html.unescape(r), html.unescape(v)) for e, _, r, v in cells}


def _header_releases(text: str) -> dict:
    """``{engine: production release}`` from the report's header table."""
    import html
    import re

    head = text[:text.index("<h2>")]
    cells = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td><td><code>", head)
    return {html.unescape(e): html.unescape(r) for e, r, _ in cells}


def test_the_header_names_what_each_engine_ran_from_productions_values(result):
    """The header lists the values each engine ran, from production_params: production's, and says where
    production's values differ from thatchlab's class defaults (decay on recall off, no retention)."""
    from thatchlab.core.params.production import production_params

    text = result.report_path.read_text()
    rows = _header_rows(text)
    assert list(rows) == ["prediction", "behavior", "belief", "calibration", "anticipation"]
    for engine, (ran, values) in rows.items():
        assert ran.startswith("production's values")
        for name, value in production_params(engine).to_dict().items():
            assert f"{name} = {value:g}" in values if isinstance(value, float) else f"{name} = {value}" in values
    # the main job replays each system's newest release and says so
    assert _header_releases(text) == {"prediction": "thatch 07ecf87 (newest)", "behavior": "thatch 07ecf87 (newest)",
                                      "belief": "omi 17fecf7 (newest)", "calibration": "ai-memory 0a5770a (newest)",
                                      "anticipation": "mnemo seed (newest)"}
    assert json.loads(result.manifest_path.read_text())["releases"] == {
        "prediction": "07ecf87", "behavior": "07ecf87", "belief": "17fecf7", "calibration": "0a5770a",
        "anticipation": "seed"}
    assert rows["calibration"][0] == ("production's values; retention_days = 0, decay_on_recall = False are "
                                      "production's, where thatchlab's CalibrationParams() differs")
    assert "decay_on_recall = False" in rows["calibration"][1]
    # the release decides the item dedup scope and mnemo replays its SQL: no documented variant is replayed
    for engine in ("prediction", "anticipation"):
        assert rows[engine][0] == "production's values"
    assert "production default" not in text and "replayed under production&#39;s values" in text


def test_run_with_a_config_compares_against_the_configured_values(tmp_path, repo_root, real_embedder):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"prediction": {"threshold": 0.5}, "calibration": {"decay_on_recall": True}}))
    res = run_all(repo_root / "data", tmp_path / "out", config=cfg, embedder=real_embedder)
    manifest = json.loads(res.manifest_path.read_text())
    assert manifest["declared"] == {"prediction": {"threshold": 0.5}, "calibration": {"decay_on_recall": True}}
    assert manifest["unreviewed"] == {}
    records = {r["parameter"]: r for r in manifest["decisions"]["prediction"]}
    assert records["threshold"]["default"] == 0.5
    if records["threshold"]["shipped"]:
        assert manifest["environment"] == [f"THATCH_PREDICTION_THRESHOLD={records['threshold']['candidate']:g}"]
    else:
        assert manifest["params"]["prediction"]["threshold"] == 0.5 and manifest["environment"] == []
    text = res.report_path.read_text()
    assert "The configured values of prediction, calibration are taken as what production runs" in text
    rows = _header_rows(text)  # the header names what ran, production's only where it is
    assert rows["prediction"][0] == ("configured: threshold = 0.5 (production: 0.6); every other value is "
                                     "production's")
    assert rows["calibration"][0].startswith("configured: decay_on_recall = True (production: False); every "
                                             "other value is production's; retention_days = 0 is production's")
    assert "decay_on_recall = True" in rows["calibration"][1] and "threshold = 0.5" in rows["prediction"][1]
    assert rows["belief"][0] == "production's values"


def test_rerun_replaces_its_own_output(result, tmp_path, repo_root, real_embedder):
    out = shutil.copytree(result.out_dir, tmp_path / "run")  # the shared run stays as it is
    again = run_all(repo_root / "data", out, embedder=real_embedder, sweep_space={"k": [5.0], "threshold": [0.6]})
    assert again.export_path == out / result.export_path.name and again.report_path == out / "index.html"
    assert again.notebook_path == out / "run.ipynb"
    job = json.loads((out / "results" / "job.json").read_text())
    assert job["sweep"]["space"] == {"k": [5.0], "threshold": [0.6]}  # this run's, not the copied one's


def test_config_errors_are_clear(tmp_path):
    bad = tmp_path / "c.json"
    bad.write_text('{"predicton": {"k": 3}}')
    with pytest.raises(InputError, match="unknown section"):
        load_config(bad)
    with pytest.raises(InputError, match="no such config"):
        load_config(tmp_path / "missing.toml")
    (tmp_path / "d.toml").mkdir()
    with pytest.raises(InputError, match="d.toml: is a directory; expected a JSON or TOML config file"):
        load_config(tmp_path / "d.toml")
    good = tmp_path / "c.toml"
    good.write_text('[prediction]\nk = 3.0\n[sweep]\nholdout = 0.25\n')
    assert load_config(good) == {"prediction": {"k": 3.0}, "sweep": {"holdout": 0.25}}
    # a bad value, an unknown field, a section that is not a table: each names the file and section
    for text, expected in (('[prediction]\nk = -1.0\n', r"c.toml: section \[prediction\]: k: expected > 0"),
                           ('[belief]\nhalf_lifes = 3\n', r"c.toml: section \[belief\]: .*unknown parameter"),
                           ('calibration = 3\n', r"c.toml: section \[calibration\]: expected a table"),
                           ('[sweep]\nspaces = 1\n', r"c.toml: section \[sweep\]: unknown key")):
        good.write_text(text)
        with pytest.raises(InputError, match=expected):
            load_config(good)


def test_missing_data_dir(tmp_path):
    with pytest.raises(InputError, match="no such data directory"):
        run_all(tmp_path / "nope", tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds none of the logs the main job reads"):
        run_all(tmp_path / "empty", tmp_path / "out")
    assert not (tmp_path / "out" / "index.html").exists()


def test_report_links_every_metric_name_to_its_glossary_entry(result, repo_root):
    import re

    html = result.report_path.read_text()
    linked = set(re.findall(r'href="[^"]*glossary\.html#term-([A-Za-z0-9_-]+)"', html))
    assert {"log_loss", "interruption_rate", "wrong_silent_follow_rate"} <= linked
    # the entries travel with the report (issue 36 point 4): glossary.html beside index.html, never a docs build
    glossary = (result.out_dir / "glossary.html").read_text()
    anchors = set(re.findall(r'<dt id="term-([A-Za-z0-9_-]+)">', glossary))
    assert linked <= anchors, sorted(linked - anchors)
    assert "_build" not in html and "file://" not in html


def test_an_empty_pareto_front_says_why():
    """Issue 36 point 4: the figure and table of the Pareto front had no point, no row and no word why."""
    import numpy as np
    import pandas as pd

    from thatchlab.run._steps import _no_front

    rows = pd.DataFrame({"threshold": [0.5, 0.6], "val_interruption_rate": [0.4, 0.5],
                         "val_wrong_silent_follow_rate": [np.nan, np.nan]})
    assert _no_front(rows) == ("no message reached the strong regime with an outcome on validation under any "
                               "configuration, so wrong silent follows cannot be estimated")
    assert _no_front(rows.iloc[:0]) == "no configuration at production's K and P0 was scored"
    assert _no_front(rows.assign(val_interruption_rate=np.nan, val_wrong_silent_follow_rate=0.1)) == \
        "no live message fell on validation, so interruptions cannot be estimated"
