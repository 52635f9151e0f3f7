"""sweep on a Dask LocalCluster: the same results as the local run, no model on the workers."""

import pandas as pd
import pytest

from tests._sweep_logs import interaction_log
from thatchlab.sweep import sweep
from thatchlab.synth import BeliefWorld


def _modules():
    import sys

    heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
    return heavy, "thatchlab.replay._scoring_plan" in sys.modules


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as c:
        yield c


def test_grid_and_random_identical_to_local(client):
    log, emb = interaction_log(n_events=300, seed=2)
    grid = {"k": [1.0, 5.0, 20.0], "p0": [0.3, 0.5], "soft_weight": [0.25, 0.5]}
    local = sweep(log, grid, "log_loss", embedder=emb)
    remote = sweep(log, grid, "log_loss", embedder=emb, backend="dask", client=client, chunk_size=3)
    pd.testing.assert_frame_equal(local, remote)

    space = {"threshold": (0.4, 0.8), "strong_confidence": [0.6, 0.7], "k": (1.0, 30.0, "log")}
    local = sweep(log, space, "interruption_rate", embedder=emb, search="random", n_trials=6, seed=5)
    remote = sweep(log, space, "interruption_rate", embedder=emb, search="random", n_trials=6, seed=5,
                   backend="dask", client=client)
    pd.testing.assert_frame_equal(local, remote)
    # precomputed vectors: no worker ever imported an embedding model
    # (the workers did replay: the plan module is loaded there)
    assert client.run(_modules) == {w: ([], True) for w in client.scheduler_info()["workers"]}


def test_other_engine_and_optuna_on_dask(client):
    log = BeliefWorld(seed=1).log(n_memories=30, days=60)
    local = sweep(log, {"episodic": [3.0, 7.0, 14.0]}, "brier", engine="belief")
    remote = sweep(log, {"episodic": [3.0, 7.0, 14.0]}, "brier", engine="belief", backend="dask", client=client)
    pd.testing.assert_frame_equal(local, remote)
    opt = sweep(log, {"episodic": (1.0, 30.0)}, "brier", engine="belief", search="optuna", n_trials=4,
                backend="dask", client=client)
    assert 1 <= len(opt) <= 4 and opt["val_brier"].notna().all()
