"""thatchlab.replay.calibration, thatchlab.logs.recall and the "calibration" store section."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

from thatchlab.calibration import CalibrationParams, calibrate_from_shadow, decayed, derive
from thatchlab.core.errors import InputError, LogValidationError, StoreWriteError
from thatchlab.logs import write_table
from thatchlab.logs.recall import RECALL_COLUMNS, read_recall_log, validate_recall_log
from thatchlab.replay.calibration import decay_ranking_study, decay_touches, run_calibration
from thatchlab.store import export_sqlite, import_sqlite
from thatchlab.synth.recall import RecallWorld


@pytest.fixture(scope="module")
def world():
    return RecallWorld(n_memories=40, n_recalls=600, days=90, seed=5)


@pytest.fixture
def tiny_log():
    return pd.DataFrame({
        "ts": ["2026-01-11T00:00:00Z", "2026-01-21T00:00:00Z", "2026-01-21T00:00:00Z", "2026-02-20T00:00:00Z"],
        "recall_id": ["r1", "r2", "r2", "r3"], "memory_id": ["a", "a", "b", "a"],
        "namespace": ["work", "work", "home", "work"], "source": ["user", "user", "api", "user"],
        "caller_confidence": [0.8, 0.8, 0.6, 0.8],
        "created_at": ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-01-20T00:00:00Z",
                       "2026-01-01T00:00:00Z"],
        "is_atom": [True, True, False, True], "corroboration": [3, 3, 0, 3],
        "rank": [1, 1, 2, 1], "score": [3.0, 2.5, 2.0, 2.9], "consumed": [1, 0, None, 0],
    })


# ---------------------------------------------------------------- recall log


def test_validate_recall_log_types(tiny_log):
    v = validate_recall_log(tiny_log)
    assert list(v.columns) == list(RECALL_COLUMNS)
    assert str(v["ts"].dtype) == "datetime64[ns, UTC]"
    assert v["consumed"].tolist()[:2] == [True, False] and pd.isna(v["consumed"][2])
    assert v["is_atom"].dtype == bool and v["corroboration"].dtype == np.int64
    assert tiny_log["consumed"].tolist()[0] == 1  # input untouched


@pytest.mark.parametrize("column,value,expected", [
    ("caller_confidence", 1.5, "in_range"),
    ("ts", "2026-01-01 00:00:00", "timezone-aware"),
    ("is_atom", "maybe", "true or false"),
    ("corroboration", 1.5, "whole number"),
    ("memory_id", "", "non-empty"),
    ("consumed", 3, "null when not judged"),
])
def test_validate_recall_log_errors_name_row_and_column(tiny_log, column, value, expected):
    bad = tiny_log.astype(object).copy()
    bad.loc[2, column] = value
    with pytest.raises(LogValidationError) as err:
        validate_recall_log(bad, source="x.jsonl")
    assert err.value.row == 2 and err.value.column == column and expected in str(err.value)
    valid, rejected = validate_recall_log(bad, errors="report")
    assert len(valid) == 3 and rejected["row"].tolist() == [2]


def test_validate_recall_log_missing_column(tiny_log):
    with pytest.raises(LogValidationError, match="created_at"):
        validate_recall_log(tiny_log.drop(columns="created_at"))


def test_recall_log_round_trips_through_jsonl_and_csv(tmp_path, world):
    for name in ("log.jsonl", "log.csv"):
        write_table(world.log, tmp_path / name)
        back = read_recall_log(tmp_path / name)
        pd.testing.assert_frame_equal(back, validate_recall_log(world.log))


# ---------------------------------------------------------------- decay on touches


def test_decay_touches_equal_one_at_a_time_updates(tiny_log):
    log = validate_recall_log(tiny_log)
    codes, _ = pd.factorize(log["memory_id"])
    before, after = decay_touches(log["ts"].array.asi8, log["created_at"].array.asi8, codes,
                                  log["caller_confidence"].to_numpy(), 30.0)
    # reference: production's recall path, one touch at a time
    conf, stamp = {}, {}
    ref_before, ref_after = [], []
    for row in log.itertuples():
        c = conf.get(row.memory_id, row.caller_confidence)
        since = stamp.get(row.memory_id, row.created_at)
        ref_before.append(c)
        c = decayed(c, (row.ts - since) / pd.Timedelta(days=1), 30.0)
        conf[row.memory_id], stamp[row.memory_id] = c, row.ts
        ref_after.append(c)
    assert before.tolist() == ref_before and after.tolist() == ref_after
    # touches compound to the total decay since creation
    assert after[3] == pytest.approx(decayed(0.8, 50.0, 30.0), rel=1e-14)


# ---------------------------------------------------------------- replay


def test_run_calibration_tiny(tiny_log):
    res = run_calibration(tiny_log, CalibrationParams(window_days=60))
    obs = res.observations
    assert len(obs) == 4  # rate 1.0 samples every touch
    # the shadow row keeps the caller's value before this touch decays it
    assert obs["caller_confidence"].iloc[0] == 0.8
    assert obs["caller_confidence"].iloc[1] == pytest.approx(decayed(0.8, 10.0))
    assert obs["derived_confidence"].iloc[0] == derive(10.0, True, 3)
    assert obs["recall_outcome"].tolist() == ["consumed", "consumed", None, "consumed"]
    mem = res.memories.set_index("id")
    assert mem.loc["a", "confidence"] == pytest.approx(decayed(0.8, 50.0), rel=1e-14)
    assert mem.loc["a", "confidence_source"] == "decayed"
    assert mem.loc["a", "confidence_decayed_at"] == pd.Timestamp("2026-02-20T00:00:00Z")
    assert res.metrics["n_judged"] == 3 and res.metrics["consumption_rate"] == pytest.approx(1 / 3)
    assert len(res.reports) == 1 and res.report.total_observations == 4
    assert set(res.reliability["confidence"]) == {"caller", "derived"}
    assert all(isinstance(v, (int, float)) for v in res.metrics.values())


def test_run_calibration_no_decay_keeps_caller_values(tiny_log):
    res = run_calibration(tiny_log, CalibrationParams(decay_on_recall=False))
    assert res.observations["caller_confidence"].tolist() == [0.8, 0.8, 0.6, 0.8]
    assert set(res.memories["confidence_source"]) == {"caller_provided"}
    assert res.memories["confidence_decayed_at"].isna().all()


def test_run_calibration_auto_confidence_stores_signals(tiny_log):
    res = run_calibration(tiny_log, CalibrationParams(auto_confidence=True, decay_on_recall=False))
    mem = res.memories.set_index("id")
    assert mem.loc["a", "confidence"] == derive(0.0, True, 3)
    assert json.loads(mem.loc["a", "confidence_signals"])["atom_derivation"] is True
    assert set(mem["confidence_source"]) == {"auto_derived"}


def test_run_calibration_sampling_is_seeded(world):
    a = run_calibration(world.log, sample_rate=0.3, seed=7)
    b = run_calibration(world.log, sample_rate=0.3, seed=7)
    keep = np.random.default_rng(7).random(len(world.log)) < 0.3
    assert pd.Series(a.metrics).equals(pd.Series(b.metrics))
    pd.testing.assert_frame_equal(a.observations, b.observations)
    assert len(a.observations) == int(keep.sum()) == a.metrics["n_observations"]
    assert a.events["sampled"].tolist() == keep.tolist()
    assert len(run_calibration(world.log, sample_rate=0.0).observations) == 0


def test_run_calibration_windows_and_metrics(world):
    res = run_calibration(world.log, CalibrationParams(window_days=30))
    assert len(res.reports) == 3  # a 90-day log cut into 30-day windows ending at the last recall
    last = pd.Timestamp(world.log["ts"].max())
    assert res.windows["window_end"].max() == last
    # the divergence's access counts: each memory's recall touches up to the window's end (all, here)
    touches = world.log.groupby("memory_id").size()
    memories = pd.DataFrame({"id": touches.index.to_numpy(object), "access_count": touches.to_numpy()})
    direct = calibrate_from_shadow(res.observations, last, 30, memories=memories)
    assert direct.to_json() == res.report.to_json()
    m = res.metrics
    assert 0 < m["derived_brier"] < 1 and 0 <= m["caller_ece"] <= 1 and m["n_recalls"] == 600
    # caller values are over-confident in this world; the planted truth is a derive, so derived wins
    assert m["derived_log_loss"] < m["caller_log_loss"]


def test_run_calibration_rejects_bad_input(tiny_log):
    with pytest.raises(InputError):
        run_calibration(tiny_log.iloc[0:0])
    # a flat mapping is the defaults with those fields changed (as the command line takes it)
    from thatchlab.core.errors import ParamsError
    from thatchlab.core.params import CalibrationParams

    assert run_calibration(tiny_log, params={"half_life_days": 3}).params == CalibrationParams(half_life_days=3)
    with pytest.raises(ParamsError, match="expected CalibrationParams or a mapping"):
        run_calibration(tiny_log, params=3)


def test_decay_ranking_study(world):
    study = decay_ranking_study(world.log, half_lives=(1.0, 30.0, float("inf")))
    assert study["top1_changed"].iloc[-1] == 0.0  # no decay changes nothing
    assert study["top1_changed"].iloc[0] >= study["top1_changed"].iloc[1]
    assert study["n_recalls"].nunique() == 1 and study["n_recalls"].iloc[0] == 200


# ---------------------------------------------------------------- store section


def test_store_round_trip(tmp_path, world):
    res = run_calibration(world.log, sample_rate=0.5, seed=1)
    out = export_sqlite(tmp_path / "cal.db", calibration=res)
    assert out.counts == {"memories": res.metrics["n_memories"],
                          "confidence_shadow_observations": res.metrics["n_observations"]}
    back = import_sqlite(tmp_path / "cal.db").calibration
    pd.testing.assert_frame_equal(back.memories, res.memories, check_dtype=False)
    pd.testing.assert_frame_equal(back.observations, res.observations, check_dtype=False)
    with sqlite3.connect(tmp_path / "cal.db") as c:
        cols = [r[1] for r in c.execute("PRAGMA table_info(memories)")]
        text = c.execute("SELECT confidence_decayed_at FROM memories LIMIT 1").fetchone()[0]
    assert cols == ["id", "confidence", "confidence_source", "confidence_signals", "confidence_decayed_at"]
    assert pd.Timestamp(text).tzinfo is not None
    meta = json.loads((tmp_path / "cal.manifest.json").read_text())
    assert meta["params"]["calibration"]["half_life_days"] == 30.0


def test_store_rejects_bad_source_atomically(tmp_path, world):
    res = run_calibration(world.log)
    res.state.memories.loc[0, "confidence_source"] = "guessed"
    with pytest.raises(StoreWriteError):
        export_sqlite(tmp_path / "bad.db", calibration=res)
    assert not (tmp_path / "bad.db").exists()


def test_decay_touches_exact_with_sub_second_times(tiny_log):
    log = tiny_log.assign(ts=["2026-01-11T00:00:00.123Z", "2026-01-21T00:00:00.001Z",
                              "2026-01-21T00:00:00.002Z", "2026-02-20T00:00:00.777Z"])
    log = validate_recall_log(log)
    codes, _ = pd.factorize(log["memory_id"])
    _, after = decay_touches(log["ts"].array.asi8, log["created_at"].array.asi8, codes,
                             log["caller_confidence"].to_numpy(), 30.0)
    step1 = decayed(0.8, (log["ts"][0] - log["created_at"][0]) / pd.Timedelta(days=1))
    step2 = decayed(step1, (log["ts"][1] - log["ts"][0]) / pd.Timedelta(days=1))
    assert after[1] == step2
