"""run_fleet on Dask packs several users into one task: the same replays, the same results."""

import math
import warnings

import pandas as pd
import pytest

from thatchlab.core.params import ScoringParams
from thatchlab.replay import fleet as fleet_mod
from thatchlab.replay import run_fleet
from thatchlab.synth import PreferenceWorld


@pytest.fixture(scope="module")
def world_logs():
    world = PreferenceWorld(n_users=7, n_situations=4, phrasings_per_situation=2, drift_rate=0.02, seed=3)
    log = world.log(200, soft_share=0.3)
    logs = {store: part.reset_index(drop=True) for store, part in log.groupby("store", sort=True)}
    return logs, world.lookup_embedder()


@pytest.fixture(scope="module")
def tasks(world_logs):
    logs, emb = world_logs
    users = fleet_mod._users(logs, "prediction")
    return fleet_mod.make_tasks(users, "prediction", ScoringParams(), emb)


def _same_result(a: dict, b: dict):
    assert a["user"] == b["user"] and a["n_log_rows"] == b["n_log_rows"]
    assert a["metrics"].keys() == b["metrics"].keys()
    for k, v in a["metrics"].items():
        w = b["metrics"][k]
        assert v == w or (isinstance(v, float) and math.isnan(v) and math.isnan(w)), k
    pd.testing.assert_frame_equal(a["forecasts"], b["forecasts"])
    pd.testing.assert_frame_equal(a["signals"], b["signals"])


@pytest.mark.parametrize("n_chunks", [1, 2, 3, 7, 50])
def test_chunks_cover_every_user_once_and_balance_log_lengths(tasks, n_chunks):
    chunks = fleet_mod._chunks(tasks, n_chunks)
    assert len(chunks) == min(n_chunks, len(tasks))
    assert sorted(j for c in chunks for j in c) == list(range(len(tasks)))
    assert all(c == sorted(c) for c in chunks)
    loads = [sum(len(tasks[j]["log"]) + 1 for j in c) for c in chunks]
    assert loads == sorted(loads, reverse=True)
    assert max(loads) - min(loads) <= max(len(t["log"]) + 1 for t in tasks)


def test_a_packed_task_replays_each_user_as_alone(tasks):
    packed = fleet_mod._pack(tasks)
    # each vector once, every user's texts named
    assert set(packed["passages"]) == set().union(*(t["passages"] for t in tasks))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        together = fleet_mod._replay_chunk(packed)
        alone = [fleet_mod.replay_user(t) for t in tasks]
    assert len(together) == len(alone)
    for a, b in zip(together, alone):
        _same_result(a, b)


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as c:
        yield c


@pytest.mark.parametrize("per_thread, max_users", [(1, 256), (1, 2)])  # 2 tasks; 4, two in flight
def test_dask_with_several_users_per_task_gives_the_sequential_result(world_logs, client, monkeypatch,
                                                                       per_thread, max_users):
    logs, emb = world_logs
    monkeypatch.setattr(fleet_mod, "TASKS_PER_THREAD", per_thread)
    monkeypatch.setattr(fleet_mod, "MAX_USERS_PER_TASK", max_users)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        seq = run_fleet(logs, embedder=emb)
        remote = run_fleet(logs, embedder=emb, backend="dask", client=client)
    pd.testing.assert_frame_equal(remote.per_user, seq.per_user)
    pd.testing.assert_frame_equal(remote.signals, seq.signals)
    pd.testing.assert_frame_equal(remote.forecasts, seq.forecasts)
    for k, v in seq.pooled.items():
        w = remote.pooled[k]
        assert v == w or (isinstance(v, float) and math.isnan(v) and math.isnan(w)), k
