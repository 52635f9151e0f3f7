"""SweepDescription: a sweep result read once (engine, directions, clusters, identification, release)."""

import warnings

import numpy as np
import pandas as pd
import pytest

from thatchlab.core.errors import InputError
from thatchlab.core.params import ScoringParams
from thatchlab.decide import planted_sweep
from thatchlab.sweep import SweepDescription, config_id, describe, sweep
from thatchlab.synth import PreferenceWorld


@pytest.fixture(scope="module")
def fleet_sweep():
    w = PreferenceWorld(n_users=3, n_situations=4, seed=0)
    log = w.log(240)
    log["user"] = log["store"]  # each session belongs to one user's store: sessions nest in users
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return sweep(log, {"k": [2.0, 5.0], "threshold": [0.55, 0.6]}, ["log_loss", "interruption_rate"],
                     embedder=w.lookup_embedder())


def test_a_sweep_describes_its_engine_directions_clusters_and_identification(fleet_sweep):
    d = describe(fleet_sweep)
    assert isinstance(d, SweepDescription)
    assert d.engine == "prediction" and d.spec.name == "prediction"
    assert d.metrics == ("log_loss", "interruption_rate")
    assert (d.direction("log_loss"), d.direction("coverage"), d.direction("auc")) == ("min", "max", "max")
    assert d.minimizes("interruption_rate") and not d.minimizes("nudge_net_rate")
    # the per-cluster sums are the sweep's own (not a copy), at the session level, users above them
    assert d.clusters is fleet_sweep.attrs["clusters"] and d.unit == "session"
    assert list(d.cluster_parents) == ["user"]
    assert d.segments == ("val", "test") and d.holdout == "0.2"
    assert d.releases == ("07ecf87",) and d.release() == "07ecf87"  # thatch's latest release, replayed
    assert d.config_ids == frozenset(fleet_sweep["config_id"]) and len(d.config_ids) == 4
    # threshold moves no forecast: unidentified under log_loss by declaration
    assert d.identification("log_loss")["unidentified"] == ["threshold"]
    assert d.identification("log_loss")["swept"] == ["k", "threshold"]
    assert d.identification("interruption_rate")["declared"] == ["k", "threshold"]  # it may move it
    assert d.identification("log_loss") is d.identification("log_loss")  # computed once


def test_the_accessor_returns_one_description_until_the_frame_changes(fleet_sweep):
    frame = fleet_sweep.copy()
    frame.attrs = dict(fleet_sweep.attrs)
    first = frame.sweep.description
    assert frame.sweep.description is first and frame.sweep.engine == "prediction"
    assert frame.sweep.unit == "session"
    frame.attrs["metrics"] = ["log_loss"]
    assert frame.sweep.description is not first and frame.sweep.metrics == ("log_loss",)


def test_a_planted_frame_and_a_hand_built_one_describe_too():
    d = planted_sweep(12, 0.0, np.random.default_rng(0)).sweep
    assert (d.engine, d.metrics, d.unit, d.segments) == ("prediction", ("log_loss",), "session", ("val", "test"))
    assert len(d.clusters.labels["test"]) == 12 and dict(d.cluster_parents) == {}
    hand = pd.DataFrame({"k": [2.0, 5.0], "val_brier": [0.3, 0.2], "test_brier": [0.1, 0.25],
                         "engine": "prediction", "release": ["0.8.0", "0.8.0"],
                         "config_id": [config_id("prediction", ScoringParams(k=v)) for v in (2.0, 5.0)]})
    d = describe(hand)
    assert d.clusters is None and d.unit is None and d.metrics == () and d.holdout is None
    assert d.release() == "0.8.0" and d.segments == ("val", "test")


def test_several_releases_are_described_but_refused_as_one():
    hand = pd.DataFrame({"k": [2.0, 5.0], "val_brier": [0.3, 0.2], "engine": "prediction",
                         "release": ["0.8.0", "0.9.0"]})
    d = describe(hand)
    assert d.releases == ("0.8.0", "0.9.0")
    with pytest.raises(InputError, match="replay 2 production releases"):
        d.release()


def test_a_frame_without_an_engine_is_refused_with_the_readers_message():
    with pytest.raises(InputError, match="no 'engine' column"):
        describe(pd.DataFrame({"k": [1.0]}))
