"""replay.run_fleet: per-user replays against each user's own store, the same on every backend."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from thatchlab.core.errors import InputError
from thatchlab.core.params import ScoringParams
from thatchlab.fit import PriorFitter
from thatchlab.replay import FleetResult, run, run_fleet
from thatchlab.scoring import PredictionEngine
from thatchlab.synth import PreferenceWorld


@pytest.fixture(scope="module")
def fleet():
    world = PreferenceWorld(n_users=6, n_situations=5, phrasings_per_situation=3, drift_rate=0.02, seed=7)
    emb = world.lookup_embedder()
    log = world.log(240, soft_share=0.3)
    logs = {store: part.reset_index(drop=True) for store, part in log.groupby("store", sort=True)}
    # one user starts from a store of their own: an earlier replay's final state, as an engine
    first = next(iter(logs))
    earlier = world.log(40, seed=99)
    earlier = earlier[earlier["store"] == first]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # a short log: mostly silent, and says so
        start = PredictionEngine.from_tables(run(earlier, embedder=emb).tables)
    logs[first] = (logs[first], start)
    return logs, emb


@pytest.fixture(scope="module")
def sequential(fleet):
    logs, emb = fleet
    return run_fleet(logs, params=ScoringParams(k=3.0), embedder=emb)


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as c:
        yield c


def _same(a: FleetResult, b: FleetResult):
    pd.testing.assert_frame_equal(a.per_user, b.per_user)
    pd.testing.assert_frame_equal(a.signals, b.signals)
    pd.testing.assert_frame_equal(a.forecasts, b.forecasts)
    assert a.pooled.keys() == b.pooled.keys()
    for k, v in a.pooled.items():
        w = b.pooled[k]
        assert (v == w) or (isinstance(v, float) and math.isnan(v) and math.isnan(w)), k


def _heavy_modules():
    import sys

    return sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)


def test_each_user_replays_against_their_own_store(fleet, sequential):
    logs, emb = fleet
    res = sequential
    assert res.per_user["user"].tolist() == list(logs)
    for user, value in logs.items():
        log, initial = value if isinstance(value, tuple) else (value, None)
        alone = run(log, params=ScoringParams(k=3.0), embedder=emb, initial=initial)
        row = res.per_user.set_index("user").loc[user]
        for key, v in alone.metrics.items():
            if isinstance(v, str):
                assert row[key] == v, key
            else:
                assert row[key] == v or (math.isnan(row[key]) and math.isnan(v)), key
        mine = res.signals[res.signals["user"] == user]
        assert mine["item_id"].tolist() == [f"{user}/{i}" for i in alone.prior_signals()["item_id"]]
    # the user with a starting store carries its earlier signals too
    first = next(iter(logs))
    assert (res.signals["user"] == first).sum() > len(logs[first][1].tables["provenance"]) > 0


def test_pooled_metrics_are_those_of_all_events(fleet, sequential):
    res = sequential
    p = res.pooled
    assert p["n_users"] == len(fleet[0])
    assert p["n_events"] == int(res.per_user["n_events"].sum())
    assert p["n_forecasts"] == int(res.per_user["n_forecasts"].sum()) == len(res.forecasts)
    live = p["n_messages"] - p["n_skipped"]
    assert p["interruption_rate"] == (p["n_ambiguous"] + p["n_none"]) / live
    # pooled log-loss is the users' log-losses weighted by their forecast weights (soft = 0.25)
    fc = res.forecasts
    weight = pd.Series(np.where(fc["signal"] == "soft", 0.25, 1.0)).groupby(fc["user"].to_numpy()).sum()
    users = res.per_user.set_index("user")
    assert (fc["signal"] == "soft").any()
    assert np.isclose(p["log_loss"], float((users["log_loss"] * weight).sum() / weight.sum()), rtol=1e-9)
    # a population prior from every user's signals
    fit = PriorFitter().fit(res.signals)
    assert 0 < fit.p0_ < 1 and fit.n_items_ > 0


def test_dask_cluster_gives_the_sequential_result(fleet, sequential, client):
    logs, emb = fleet
    remote = run_fleet(logs, params=ScoringParams(k=3.0), embedder=emb, backend="dask", client=client)
    _same(remote, sequential)
    assert remote.backend == "dask"
    # workers got vectors, not the model
    assert client.run(_heavy_modules) == {w: [] for w in client.scheduler_info()["workers"]}


def test_loky_processes_give_the_sequential_result(fleet, sequential):
    logs, emb = fleet
    _same(run_fleet(logs, params=ScoringParams(k=3.0), embedder=emb, n_jobs=2), sequential)


def test_inputs_are_checked(fleet):
    logs, emb = fleet
    with pytest.raises(InputError, match="mapping"):
        run_fleet([1, 2], embedder=emb)
    with pytest.raises(InputError, match="at least one"):
        run_fleet({}, embedder=emb)
    with pytest.raises(InputError, match="DataFrame"):
        run_fleet({"u": "not a log"}, embedder=emb)
    with pytest.raises(InputError, match="backend"):
        run_fleet(logs, embedder=emb, backend="spark")
    with pytest.raises(InputError, match="engine"):
        run_fleet(logs, "belief", embedder=emb)
