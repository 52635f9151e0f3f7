"""Decisions are the only way out: every exported value is shipped, declared or unreviewed.

An export with values no decision shipped lists them under ``unreviewed`` (never as environment
lines or recommended changes), and a merge refuses it unless allowed; params that contradict
the decision beside them raise; a shipped value says where it goes; the combined record is
always there.
"""

import json
import sqlite3

import numpy as np
import pytest

from tests._ingest import cli
from tests._stores import PAIRS_DDL
from tests._vectors import basis
from thatchlab.core.errors import InputError, UnreviewedError
from thatchlab.core.params import CalibrationParams, ScoringParams
from thatchlab.core.params.production import SETTINGS, production_params, setting
from thatchlab.decide import Decision, decide
from thatchlab.decide.calibration_study import planted_sweep
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import PredictionEngine
from thatchlab.store import export_sqlite, merge_into

T = "2026-02-01T10:00:00Z"


@pytest.fixture
def engine():
    vecs = {"writing tests": basis(0), "use pytest": basis(1)}
    eng = PredictionEngine(LookupEmbedder(vecs, name="toy"), project_store="repo")
    eng.update("writing tests", "use pytest", "confirm", "x", now=T)
    return eng


def _production(path):
    con = sqlite3.connect(path)
    con.execute(PAIRS_DDL)  # today's thatch (07ecf87) creates it on every open, as the exports' release
    con.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, body TEXT)")
    con.execute("INSERT INTO entries (body) VALUES ('a memory')")
    con.commit()
    con.close()
    return path.read_bytes()


def _shipping(changed, metric="log_loss", delta=-0.05):
    """A decision that ships ``changed`` (a planted effect of 10+ standard errors)."""
    d = decide(planted_sweep(40, delta, np.random.default_rng(3), changed=changed, metric=metric),
               metric, n_boot=300)
    assert d.params == changed
    return d


def test_explicit_params_without_a_decision_are_unreviewed_and_merge_refuses_them(tmp_path, engine, capsys):
    res = export_sqlite(tmp_path / "e.db", prediction=engine, params=ScoringParams(k=1.0, threshold=0.3))
    manifest = json.loads(res.manifest_path.read_text())
    assert manifest["unreviewed"] == {"prediction": {"k": 1.0, "threshold": 0.3}}
    assert manifest["environment"] == [] and manifest["recommended_production_changes"] == {}
    assert "decisions" not in manifest and manifest["shipped"] == {}
    prod = tmp_path / "prod.db"
    before = _production(prod)
    with pytest.raises(UnreviewedError, match=r"k=1\.0, threshold=0\.3") as err:
        merge_into(res.path, prod)
    assert err.value.unreviewed == {"prediction": {"k": 1.0, "threshold": 0.3}}
    assert prod.read_bytes() == before and not (tmp_path / "prod.db.bak").exists()
    # the check reads the file's own meta: skipping the manifest does not get around it
    with pytest.raises(UnreviewedError):
        merge_into(res.path, prod, verify_manifest=False)
    code, out, err_text = cli(["merge", str(res.path), str(prod)], capsys)
    assert code == 2 and "k=1.0, threshold=0.3" in err_text and len(err_text.strip().splitlines()) == 1
    assert prod.read_bytes() == before
    code, out, _ = cli(["merge", str(res.path), str(prod), "--allow-unreviewed"], capsys)
    assert code == 0 and "unreviewed (prediction): k=1.0, threshold=0.3" in out
    got = merge_into(res.path, prod, allow_unreviewed=True)
    assert got.unreviewed == {"prediction": {"k": 1.0, "threshold": 0.3}}


def test_defaults_export_has_nothing_unreviewed_and_merges(tmp_path, engine):
    res = export_sqlite(tmp_path / "e.db", prediction=engine)
    manifest = json.loads(res.manifest_path.read_text())
    assert manifest["unreviewed"] == {} and manifest["declared"] == {} and manifest["environment"] == []
    prod = tmp_path / "prod.db"
    _production(prod)
    assert merge_into(res.path, prod).unreviewed == {}


def test_params_that_contradict_the_decision_raise_in_both_forms(tmp_path, engine):
    keeps = decide(planted_sweep(40, 0.0, np.random.default_rng(0)), "log_loss", n_boot=200)
    assert keeps.shipped_parameters() == [] and keeps.params.k == 5.0
    for params in (ScoringParams(k=1.0), {"prediction": ScoringParams(k=1.0)}):
        with pytest.raises(InputError, match=r"k=1\.0 but the decision ships k=5\.0"):
            export_sqlite(tmp_path / "x.db", prediction=engine, params=params, decision=keeps)
    assert not (tmp_path / "x.db").exists()
    # the same params as the decision's are fine
    export_sqlite(tmp_path / "ok.db", prediction=engine, params=ScoringParams(), decision=keeps)


def test_a_shipped_constant_is_a_recommended_change_with_its_evidence(tmp_path, engine):
    d = _shipping(ScoringParams(k=20.0))
    res = export_sqlite(tmp_path / "e.db", prediction=engine, decision=d)
    manifest = json.loads(res.manifest_path.read_text())
    assert manifest["recommended_production_changes"] == {"prediction": {"k": 20.0}}
    assert manifest["shipped"] == {"prediction": {"k": 20.0}}
    assert manifest["environment"] == [] and manifest["unreviewed"] == {}
    records = manifest["decisions"]["prediction"]
    k = next(r for r in records if r["parameter"] == "k")
    assert k["shipped"] is True and k["ci_upper"] < 0
    combined = records[-1]
    assert combined["parameter"] == "combined" and combined["shipped"] is True
    assert combined["params"] == {"k": 20.0} and combined["ci_lower"] < combined["delta"] < combined["ci_upper"] < 0
    assert combined["n_clusters"] == 40


def test_a_shipped_threshold_is_an_environment_line(tmp_path, engine):
    d = _shipping(ScoringParams(threshold=0.55), metric="interruption_rate")
    manifest = json.loads(export_sqlite(tmp_path / "e.db", prediction=engine, decision=d)
                          .manifest_path.read_text())
    assert manifest["environment"] == ["THATCH_PREDICTION_THRESHOLD=0.55"]
    assert manifest["recommended_production_changes"] == {}


def test_a_decision_that_ships_a_parameter_production_has_no_setting_for_is_refused(tmp_path, engine):
    d = _shipping(ScoringParams(k=20.0))
    forged = Decision.from_dict(d.to_dict())
    forged.params = forged.params.replace(conflict_margin=0.05)
    forged.evidence.loc[len(forged.evidence)] = {**forged.evidence.iloc[0].to_dict(), "parameter": "conflict_margin",
                                                 "shipped": True}
    with pytest.raises(InputError, match="ships conflict_margin, which production has no setting for"):
        export_sqlite(tmp_path / "e.db", prediction=engine, decision=forged)


def test_a_decision_round_trips_through_json_and_exports_the_same(tmp_path, engine):
    d = _shipping(ScoringParams(k=20.0))
    text = json.dumps(d.to_dict())
    back = Decision.from_dict(json.loads(text))
    assert back.params == d.params and back.default == d.default
    assert back.to_records() == d.to_records() and back.combined_record() == d.combined_record()
    a = json.loads(export_sqlite(tmp_path / "a.db", prediction=engine, decision=d).manifest_path.read_text())
    b = json.loads(export_sqlite(tmp_path / "b.db", prediction=engine, decision=back).manifest_path.read_text())
    for key in ("decisions", "recommended_production_changes", "environment", "unreviewed", "params"):
        assert a[key] == b[key], key
    edited = d.to_dict()
    edited["params"]["p0"] = 0.3
    with pytest.raises(InputError, match="edited or is corrupt"):
        Decision.from_dict(edited)
    with pytest.raises(InputError, match="not a thatchlab decision"):
        Decision.from_dict({"engine": "prediction"})


def test_the_reference_compares_with_production_s_values_not_class_defaults():
    assert production_params("calibration").decay_on_recall is False
    assert production_params("calibration").retention_days == 0.0
    assert CalibrationParams().decay_on_recall is True  # thatchlab's replay default differs
    assert setting("calibration", "decay_on_recall").name == "AI_MEMORY_CONFIDENCE_DECAY"
    assert setting("behavior", "threshold").name == "THATCH_BEHAVIOR_THRESHOLD"
    for engine in ("prediction", "behavior"):
        kinds = {name: s.kind for name, s in SETTINGS[engine].items()}
        assert [n for n, k in kinds.items() if k == "none"] == [
            "dedup_scope", "min_confidence", "strong_confidence", "strong_evidence", "conflict_margin"]
        assert [n for n, k in kinds.items() if k == "env"] == ["threshold"]
        assert [n for n, k in kinds.items() if k == "release"] == ["release"]


def test_a_declared_configuration_is_the_reference_and_ships_nothing(tmp_path, engine):
    runs = ScoringParams(threshold=0.5)
    res = export_sqlite(tmp_path / "e.db", prediction=engine, params=runs, declared={"prediction": runs})
    manifest = json.loads(res.manifest_path.read_text())
    assert manifest["declared"] == {"prediction": {"threshold": 0.5}}
    assert manifest["unreviewed"] == {} and manifest["environment"] == []
