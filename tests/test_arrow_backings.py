"""Readers' outputs handed on as Arrow-backed or categorical frames give exactly what the object frame
gives (issue 33 point 2): validators, replay, sweep, the prior fitter, the anticipation miners and the
fleet's Parquet reads. Calibration has its own module (``test_calibration_backings.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from thatchlab.anticipation import mine_sequential
from thatchlab.core.params.anticipation import SEQUENTIAL_MODES
from thatchlab.fit import PriorFitter
from thatchlab.logs import validate_event_log, validate_interaction_log
from thatchlab.replay import run
from thatchlab.sweep import sweep
from thatchlab.synth import PreferenceWorld


def _text_columns(df):
    return [c for c in df.columns if df[c].dtype == object
            and all(v is None or isinstance(v, str) for v in df[c].tolist())]


def backed(df, backing):
    """``df`` with its text columns in ``backing`` and its aware times as Arrow timestamps ("arrow")."""
    out = df.copy()
    text = _text_columns(df)
    if backing == "category":
        return out.astype({c: "category" for c in text})
    dtype = {"string[pyarrow]": "string[pyarrow]", "arrow": pd.ArrowDtype(pa.large_string()),
             "string": "string"}[backing]
    out = out.astype({c: dtype for c in text})
    if backing == "arrow":
        for c in df.columns:
            if isinstance(df[c].dtype, pd.DatetimeTZDtype):
                out[c] = df[c].astype(pd.ArrowDtype(pa.timestamp(df[c].dtype.unit, tz="UTC")))
    return out


BACKINGS = ["string[pyarrow]", "arrow", "category"]


@pytest.fixture(scope="module")
def world():
    w = PreferenceWorld(n_users=3, n_situations=4, phrasings_per_situation=2, seed=0)
    return w, w.log(40), w.lookup_embedder()


@pytest.mark.parametrize("backing", BACKINGS)
def test_interaction_log_validation(world, backing):
    _, log, _ = world
    want = validate_interaction_log(log)
    got = validate_interaction_log(backed(log, backing))
    pd.testing.assert_frame_equal(got, want)
    assert len(got) == 80 and str(got["ts"].dtype) == "datetime64[ns, UTC]"


@pytest.mark.parametrize("backing", BACKINGS)
def test_event_log_validation(backing):
    events = pd.DataFrame({"ts": pd.to_datetime(["2026-01-05T09:00:00Z", "2026-01-05T10:00:00Z"]),
                           "workspace": ["w", "w"], "session": ["s1", "s2"],
                           "name": ["deploy.success", "billing.spike"]})
    want = validate_event_log(events)
    got = validate_event_log(backed(events, backing))
    pd.testing.assert_frame_equal(got, want)
    assert got["name"].tolist() == ["deploy.success", "billing.spike"]


@pytest.mark.parametrize("backing", BACKINGS)
def test_blank_text_is_refused_in_every_backing(world, backing):
    _, log, _ = world
    bad = log.copy()
    row = int(np.flatnonzero((bad["kind"] == "message").to_numpy())[0])
    bad.loc[row, "text"] = "   "
    from thatchlab.core.errors import LogValidationError

    with pytest.raises(LogValidationError) as want:
        validate_interaction_log(bad)
    with pytest.raises(LogValidationError) as got:
        validate_interaction_log(backed(bad, backing))
    assert (got.value.row, got.value.column) == (want.value.row, want.value.column) == (row, "text")


@pytest.mark.parametrize("backing", BACKINGS)
def test_replay_equals_object_path(world, backing):
    _, log, emb = world
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        want = run(log, embedder=emb)
        got = run(backed(log, backing), embedder=emb)
    pd.testing.assert_frame_equal(got.events, want.events)
    pd.testing.assert_frame_equal(got.nudges, want.nudges)
    assert got.metrics == pytest.approx(want.metrics, nan_ok=True)
    assert got.metrics["n_events"] == 80


@pytest.mark.parametrize("backing", BACKINGS)
def test_sweep_equals_object_path(world, backing):
    _, log, emb = world
    space = {"k": [2.0, 5.0], "threshold": [0.5, 0.7]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        want = sweep(log, space, "brier", embedder=emb)
        got = sweep(backed(log, backing), space, "brier", embedder=emb)
    pd.testing.assert_frame_equal(got, want)
    assert len(got) == 4


def _signals(n=3000, seed=1):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "item_id": np.array([f"it{i}" for i in range(150)], dtype=object)[rng.integers(0, 150, n)],
        "signal": np.array(["create", "confirm", "disconfirm", "soft"], dtype=object)[
            rng.choice(4, n, p=[0.1, 0.5, 0.3, 0.1])]})


@pytest.mark.parametrize("backing", BACKINGS)
@pytest.mark.parametrize("soft", ["refusal", "fractional", "exclude"])
def test_prior_fit_equals_object_path(backing, soft):
    sig = _signals()
    want = PriorFitter(soft=soft).fit(sig)
    got = PriorFitter(soft=soft).fit(backed(sig, backing))
    assert (got.k_, got.p0_) == (want.k_, want.p0_)
    pd.testing.assert_frame_equal(got.counts_, want.counts_)
    pd.testing.assert_frame_equal(got.sequence_, want.sequence_)


@pytest.mark.parametrize("backing", BACKINGS)
def test_prior_fit_names_a_bad_row_in_every_backing(backing):
    from thatchlab.core.errors import InputError

    sig = _signals(20)
    sig.loc[7, "signal"] = "maybe"
    with pytest.raises(InputError, match="signals row 7, column 'signal'.*got 'maybe'"):
        PriorFitter().fit(backed(sig, backing))
    sig = _signals(20)
    sig.loc[4, "item_id"] = None
    with pytest.raises(InputError, match="signals row 4, column 'item_id'"):
        PriorFitter().fit(backed(sig, backing))


def _streams(n=600, seed=2):
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp("2026-01-01T00:00:00Z").value

    def times(k):
        return pd.to_datetime(np.sort(t0 + rng.integers(0, 20 * 86_400 * 10**9, k)), utc=True)

    ws = np.array(["w1", "w1", "w2"], dtype=object)
    entities = [["prod", "api"], None, ["billing"]]
    at = times(n)
    where = ws[rng.integers(0, 3, n // 4)].repeat(4)          # a session stays in one workspace
    events = pd.DataFrame({"ts": at, "workspace": where,
                           "session": [f"s{i // 4}" for i in range(n)],
                           "name": np.array([f"e.{i}" for i in range(6)], dtype=object)[rng.integers(0, 6, n)],
                           "entities": [entities[i % 3] for i in range(n)]})
    recalls = pd.DataFrame({"ts": at + pd.Timedelta(minutes=1), "workspace": where,
                            "session": [f"s{i // 4}" for i in range(n)],
                            "fact_id": np.array(["f0", "f1", "f2"], dtype=object)[np.arange(n) % 3],
                            "entities": [entities[i % 3] for i in range(n)]})
    return events, recalls


@pytest.mark.parametrize("backing", BACKINGS)
def test_every_anticipation_miner_equals_object_path(backing):
    from thatchlab.anticipation import mine

    events, recalls = _streams()
    want = mine(events, recalls, now="2026-01-22T00:00:00Z")
    got = mine(backed(events, backing), backed(recalls, backing), now="2026-01-22T00:00:00Z")
    pd.testing.assert_frame_equal(got, want)
    assert sorted(set(got["type"])) == ["co-occurrence", "conditional", "periodic", "sequential"]


@pytest.mark.parametrize("backing", BACKINGS)
@pytest.mark.parametrize("mode", SEQUENTIAL_MODES)
def test_sequential_miner_equals_object_path(backing, mode):
    events, _ = _streams()
    want = mine_sequential(events, window="24h", min_obs=3, min_conf=0.2, mode=mode)
    got = mine_sequential(backed(events, backing), window="24h", min_obs=3, min_conf=0.2, mode=mode)
    pd.testing.assert_frame_equal(got, want)
    assert len(got) > 0
